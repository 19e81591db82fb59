"""Perft of the Balanced start checked against Fairy-Stockfish (an independent implementation).

The Balanced start has White remove one of the 16 pawns before Black's first move; Fairy-
Stockfish has no such phase, so the count is taken on the 16 positions after a removal (FENs
written here from the start position's text, Black to move) with `go perft DEPTH-1`, summed,
and compared with `atomzero perft --start balanced --variant V --depth DEPTH`.

Usage: python3 scripts/balanced_fsf_perft.py FAIRY_STOCKFISH ATOMZERO [MAX_DEPTH]
Standard library only. Exits non-zero on any mismatch.
"""

import re
import subprocess
import sys

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
# Fairy-Stockfish's built-in variants that are ours under the same name.
VARIANTS = ["atomic", "nocheckatomic", "atomar"]


def removal_fens():
    """The 16 FENs after a removal: White's pawns a2..h2, then Black's a7..h7."""
    for row in (6, 1):  # rows of the placement field, from the 8th rank down
        for file in range(8):
            cells = [list(r) if r != "8" else [" "] * 8 for r in START.split("/")]
            cells[row][file] = " "
            rows = []
            for cell_row in cells:
                text, empty = "", 0
                for c in cell_row:
                    if c == " ":
                        empty += 1
                        continue
                    if empty:
                        text, empty = text + str(empty), 0
                    text += c
                rows.append(text + (str(empty) if empty else ""))
            yield "/".join(rows) + " b KQkq - 0 1"


def fsf_counts(fsf, variant, max_depth):
    """Fairy-Stockfish's Balanced perft for depths 1..max_depth."""
    commands = [f"setoption name UCI_Variant value {variant}"]
    fens = list(removal_fens())
    for fen in fens:
        for depth in range(1, max_depth):
            commands += [f"position fen {fen}", f"go perft {depth}"]
    commands.append("quit")
    out = subprocess.run(
        [fsf], input="\n".join(commands) + "\n", capture_output=True, text=True, check=True
    ).stdout
    nodes = [int(m) for m in re.findall(r"^Nodes searched: (\d+)", out, re.M)]
    if len(nodes) != len(fens) * (max_depth - 1):
        sys.exit(f"fairy-stockfish answered {len(nodes)} perft counts, wanted more:\n{out[-500:]}")
    per_depth = max_depth - 1
    return [len(fens)] + [sum(nodes[i::per_depth]) for i in range(per_depth)]


def ours(atomzero, variant, depth):
    out = subprocess.run(
        [atomzero, "perft", "--start", "balanced", "--variant", variant, "--depth", str(depth)],
        capture_output=True, text=True, check=True,
    ).stdout
    return int(re.search(r"^Nodes searched: (\d+)", out, re.M).group(1))


def main():
    fsf, atomzero = sys.argv[1], sys.argv[2]
    max_depth = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    failed = False
    for variant in VARIANTS:
        theirs = fsf_counts(fsf, variant, max_depth)
        mine = [ours(atomzero, variant, d) for d in range(1, max_depth + 1)]
        status = "ok" if mine == theirs else "MISMATCH"
        failed |= mine != theirs
        print(f"balanced {variant}: atomzero {mine} fairy-stockfish {theirs} {status}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
