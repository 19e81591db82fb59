#!/usr/bin/env python3
"""Differential test of our rules against Fairy-Stockfish (pyffish).

Reads the output of `crates/rules/examples/dump_games.rs` (one tab-separated line per position:
GAME, PLY, FEN, sorted UCI legal moves, outcome or `-`, UCI move played or `-`) from a file or
stdin and checks every position against `pyffish` for the same variant:

- moves: the set of legal moves (`pyffish.legal_moves`) equals ours;
- after: the position after the move played (`pyffish.get_fen`) equals the next line's FEN
  (board, side to move, castling rights, clocks; an en-passant field that differs only counts
  if the two FENs then have different legal moves, since we write the square only when an
  en-passant capture is legal);
- end: game ends agree where both define them. A king lost (exploded or captured) must be an
  immediate game end for pyffish or leave it without legal moves, with the same winner;
  checkmate and stalemate must leave pyffish without moves with the same result; a position
  where pyffish has no legal moves (it generates none once its rules end the game) must be
  ended for us too; the 50-move rule and threefold repetition (`pyffish.is_optional_game_end`,
  given the moves since the last irreversible move) must agree wherever either could apply
  (halfmove clock at 100, a position occurring for the third time, or an end of ours).
  pyffish results are relative to the side to move (+-VALUE_MATE or 0).

Insufficient material (where we end the game for it) is compared but only counted as a note
(listed with --verbose): the lichess atomic rule and pyffish's generic
`has_insufficient_material` helper (which never applies to the extinction variants
nocheckatomic and atomar) are different definitions.

Every pyffish call costs about 1.5 ms (it re-initialises engine tables), so the script makes
about two per position (legal moves, position after the move) and the others only where needed.

Prints each mismatch with the FEN and the differences, then
`fsf-diff VARIANT: N positions, M mismatches`; exits 1 if there were mismatches.

Usage: fsf_diff.py --variant NAME [--verbose] [FILE]
"""

import argparse
import sys
from collections import Counter

import pyffish as sf

MAX_SHOWN = 20  # mismatches printed in full per kind; all are counted
DECISIVE_ENDS = ("king exploded", "king captured", "checkmate", "stalemate")
OPTIONAL_ENDS = ("fifty-move rule", "threefold repetition")


def sign(x):
    return (x > 0) - (x < 0)


def parse_outcome(text):
    """`1-0 king exploded` -> ('1-0', 'king exploded'); `-` -> None."""
    if text == "-":
        return None
    result, _, termination = text.partition(" ")
    return result, termination


def expected_value_sign(result, turn):
    """Our result as the sign of a pyffish value relative to the side to move."""
    if result == "1/2-1/2":
        return 0
    winner = "w" if result == "1-0" else "b"
    return 1 if winner == turn else -1


class Checker:
    def __init__(self, variant, verbose=False):
        self.variant = variant
        self.verbose = verbose
        self.positions = 0
        self.mismatches = Counter()
        self.notes = Counter()
        self.shown = Counter()

    def mismatch(self, kind, ctx, detail):
        self.mismatches[kind] += 1
        if self.shown[kind] < MAX_SHOWN:
            self.shown[kind] += 1
            print(f"MISMATCH {kind} [{self.variant} game {ctx['game']} ply {ctx['ply']}]")
            print(f"  fen: {ctx['fen']}")
            for line in detail:
                print(f"  {line}")

    def note(self, kind, ctx, detail):
        self.notes[kind] += 1
        if self.verbose:
            print(f"note {kind} [{self.variant} game {ctx['game']} ply {ctx['ply']}]: "
                  f"{ctx['fen']}: {detail}")

    def legal(self, fen, moves=()):
        return set(sf.legal_moves(self.variant, fen, list(moves)))

    def check_game(self, lines):
        v = self.variant
        for i, ctx in enumerate(lines):
            self.positions += 1
            fen = ctx["fen"]
            fields = fen.split()
            turn, halfmoves = fields[1], int(fields[4])
            ours = set(ctx["moves"])
            theirs = self.legal(fen)

            # Legal moves.
            if ours != theirs:
                self.mismatch("moves", ctx, [
                    f"only ours ({len(ours - theirs)}): {' '.join(sorted(ours - theirs))}",
                    f"only fsf  ({len(theirs - ours)}): {' '.join(sorted(theirs - ours))}",
                    f"ours: {' '.join(sorted(ours))}",
                    f"fsf:  {' '.join(sorted(theirs))}",
                ])

            # The position after the move played.
            if ctx["played"] != "-":
                if ctx["played"] not in theirs:
                    self.mismatch("after", ctx, [f"move {ctx['played']} is illegal for fsf"])
                elif i + 1 < len(lines):
                    self.check_after(ctx, lines[i + 1])

            # Game ends. pyffish generates no legal moves once the variant's rules end the game
            # (`generate<LEGAL>` returns nothing on an immediate game end), so with equal move
            # sets only positions without moves or with an end of ours need the extra calls:
            # each pyffish call costs about 1.5 ms of engine re-initialisation.
            outcome = parse_outcome(ctx["outcome"])
            termination = outcome[1] if outcome else None
            if termination in DECISIVE_ENDS or not theirs:
                self.check_end(ctx, outcome, turn, theirs, ours)
            elif termination == "insufficient material":
                w, b = sf.has_insufficient_material(v, fen, [])
                if not (w and b):
                    self.note("insufficient-material", ctx,
                              f"ours: {ctx['outcome']}; fsf (white, black) insufficient = {(w, b)}")
            if theirs and (halfmoves >= 100 or termination in OPTIONAL_ENDS
                           or self.occurrences(lines, i) >= 3):
                self.check_optional_end(lines, i, ctx, termination, halfmoves)

    def check_end(self, ctx, outcome, turn, theirs, ours):
        v, fen = self.variant, ctx["fen"]
        immediate, imm_value = sf.is_immediate_game_end(v, fen, [])
        fsf_ended = immediate or not theirs
        fsf_value = imm_value if immediate else (sf.game_result(v, fen, []) if not theirs else None)
        if outcome and outcome[1] in DECISIVE_ENDS:
            want = expected_value_sign(outcome[0], turn)
            if not fsf_ended:
                self.mismatch("end", ctx, [
                    f"ours: {ctx['outcome']}; fsf: game goes on "
                    f"({len(theirs)} legal moves, no immediate end)"])
            elif sign(fsf_value) != want:
                self.mismatch("end", ctx, [
                    f"ours: {ctx['outcome']} (value sign {want:+d} for side to move {turn}); "
                    f"fsf: value {fsf_value} (immediate end: {immediate})"])
        elif fsf_ended:
            self.mismatch("end", ctx, [
                f"ours: {ctx['outcome']} with {len(ours)} legal moves; fsf: game over, "
                f"value {fsf_value} for side to move {turn} (immediate end: {immediate})"])

    @staticmethod
    def occurrences(lines, i):
        """How often the position of line i (placement, turn, castling, en passant) occurred
        since the last irreversible move, itself included."""
        fields = lines[i]["fen"].split()
        key = fields[:4]
        start = i - min(int(fields[4]), i)
        return sum(1 for j in range(start, i + 1) if lines[j]["fen"].split()[:4] == key)

    def check_after(self, ctx, nxt):
        v = self.variant
        fsf_fen = sf.get_fen(v, ctx["fen"], [ctx["played"]])
        ours = nxt["fen"].split()
        theirs = fsf_fen.split()
        same = ours[:3] == theirs[:3] and ours[4:] == theirs[4:]
        if same and ours[3] != theirs[3]:
            # An en-passant square only matters if it changes the legal moves.
            same = self.legal(nxt["fen"]) == self.legal(fsf_fen)
        if not same:
            self.mismatch("after", ctx, [
                f"after {ctx['played']}: ours {nxt['fen']}",
                f"after {ctx['played']}: fsf  {fsf_fen}"])

    def check_optional_end(self, lines, i, ctx, termination, halfmoves):
        """50-move rule and threefold repetition, from the last irreversible move on."""
        start = i - min(halfmoves, i)
        moves = [lines[j]["played"] for j in range(start, i)]
        optional, _ = sf.is_optional_game_end(self.variant, lines[start]["fen"], moves)
        ours = termination in OPTIONAL_ENDS
        if optional != ours:
            self.mismatch("end", ctx, [
                f"ours: {ctx['outcome']} (halfmove clock {halfmoves}); "
                f"fsf optional game end (50 moves / repetition): {optional}",
                f"moves since last irreversible move: {' '.join(moves)}"])


def read_games(stream):
    game, lines = None, []
    for raw in stream:
        raw = raw.rstrip("\n")
        if not raw:
            continue
        parts = raw.split("\t")
        if len(parts) != 6:
            sys.exit(f"fsf_diff: malformed line (want 6 tab-separated fields): {raw!r}")
        ctx = {"game": parts[0], "ply": int(parts[1]), "fen": parts[2],
               "moves": parts[3].split(), "outcome": parts[4], "played": parts[5]}
        if ctx["game"] != game and lines:
            yield lines
            lines = []
        game = ctx["game"]
        lines.append(ctx)
    if lines:
        yield lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", required=True, help="pyffish variant name, e.g. nocheckatomic")
    ap.add_argument("file", nargs="?", help="dump_games output (default: stdin)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every note")
    args = ap.parse_args()
    if args.variant not in sf.variants():
        sys.exit(f"fsf_diff: pyffish {sf.version()} does not know variant {args.variant!r}")
    checker = Checker(args.variant, args.verbose)
    stream = open(args.file) if args.file else sys.stdin
    with stream:
        for lines in read_games(stream):
            checker.check_game(lines)
    total = sum(checker.mismatches.values())
    if checker.notes:
        notes = ", ".join(f"{n} {k}" for k, n in sorted(checker.notes.items()))
        print(f"fsf-diff {args.variant}: notes (not mismatches): {notes}")
    if total:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(checker.mismatches.items()))
        print(f"fsf-diff {args.variant}: mismatches by kind: {kinds}")
    print(f"fsf-diff {args.variant}: {checker.positions} positions, {total} mismatches")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
