#!/usr/bin/env python3
"""Independent perft of the bomb variant (issue 26), for cross-checking atomzero.

Standard-chess moves come from python-chess (``chess.Board``, its own move generator); the
variant's own parts are written here from the rules in docs/variants.md, without atomzero's
code: the setup phase (the side to move chooses any non-king piece as its bomb, White first,
then Black, then White plays), the bombs carried by their pieces (a promoted pawn bomb stays
the bomb, a rook bomb that castles moves with the rook, a captured bomb is gone, en passant
included), and the detonation: it removes the bomb and every piece on the 8 squares around
it (pawns and kings too, both colours); it is legal when it removes the mover's own king
(it loses), or the enemy king, or leaves the mover's king unattacked. A position without
both kings has no moves.

Reads a perft suite in atomzero's format (``id``, ``# variant bomb``, ``epd <FEN> bombs:W,B``,
``perft DEPTH NODES``), where a bomb is a square, ``-`` (none), ``*`` (detonated: none) or
``?`` (not chosen yet: ``?,?`` with White to move, ``<square>,?`` with Black to move).
For every line within the node budget it counts the nodes itself, compares with the file and,
with ``--engine``, with ``atomzero perft --variant bomb --fen ... --depth ...``.

Usage: bomb_perft.py SUITE [--engine PATH] [--max-nodes N]
Exit status 1 on any disagreement.
"""

import argparse
import subprocess
import sys

import chess


class State:
    """A full bomb-variant state: a python-chess board (standard chess), the bombs and the
    setup phase (``pending``: the colours that still have to choose, in order)."""

    def __init__(self, board, bombs, pending):
        self.board = board
        self.bombs = bombs  # {chess.WHITE: square or None, chess.BLACK: ...}
        self.pending = pending  # list of colours still to choose, the side to move first


def parse_state(epd):
    fields = epd.split()
    if not fields or not fields[-1].startswith("bombs:"):
        raise ValueError(f"no bombs field: {epd}")
    white, black = fields[-1][len("bombs:"):].split(",")
    board = chess.Board(" ".join(fields[:-1]))
    bombs, pending = {}, []
    for color, token in ((chess.WHITE, white), (chess.BLACK, black)):
        if token == "?":
            pending.append(color)
            bombs[color] = None
        elif token in ("-", "*"):
            bombs[color] = None
        else:
            bombs[color] = chess.parse_square(token)
    if pending and board.turn != pending[0]:
        raise ValueError(f"setup phase with the wrong side to move: {epd}")
    return State(board, bombs, pending)


def blast(square):
    """The squares a detonation on `square` clears (the 3x3 block around it)."""
    return chess.SquareSet(chess.BB_KING_ATTACKS[square]) | chess.SquareSet(chess.BB_SQUARES[square])


def has_both_kings(board):
    return board.king(chess.WHITE) is not None and board.king(chess.BLACK) is not None


def detonation_legal(board, bomb):
    us = board.turn
    removed = blast(bomb)
    own_king = board.king(us)
    enemy_king = board.king(not us)
    if own_king in removed or enemy_king in removed:
        return True
    after = board.copy(stack=False)
    for sq in removed:
        after.remove_piece_at(sq)
    return not after.is_attacked_by(not us, own_king)


def children(state):
    """Yields the successor states (one per legal move)."""
    board = state.board
    if state.pending:
        us = board.turn
        for sq in chess.SquareSet(board.occupied_co[us] & ~board.kings):
            b = board.copy(stack=False)
            b.turn = not us
            b.ep_square = None
            bombs = dict(state.bombs)
            bombs[us] = sq
            yield State(b, bombs, state.pending[1:])
        return
    if not has_both_kings(board):
        return
    us = board.turn
    for move in board.legal_moves:
        bombs = dict(state.bombs)
        mine, theirs = bombs[us], bombs[not us]
        if board.is_castling(move):
            # Standard castling only (king e-file, corner rooks).
            rank = 0 if us == chess.WHITE else 7
            kingside = board.is_kingside_castling(move)
            rook_from = chess.square(7 if kingside else 0, rank)
            rook_to = chess.square(5 if kingside else 3, rank)
            if mine == rook_from:
                bombs[us] = rook_to
        else:
            if mine == move.from_square:
                bombs[us] = move.to_square
            captured = move.to_square
            if board.is_en_passant(move):
                captured = move.to_square ^ 8
            if theirs is not None and theirs == captured:
                bombs[not us] = None
        b = board.copy(stack=False)
        b.push(move)
        yield State(b, bombs, [])
    bomb = state.bombs[us]
    if bomb is not None and detonation_legal(board, bomb):
        b = board.copy(stack=False)
        removed = blast(bomb)
        for sq in removed:
            b.remove_piece_at(sq)
        b.castling_rights &= ~int(removed)
        b.ep_square = None
        b.turn = not us
        bombs = {c: (None if s is not None and s in removed else s) for c, s in state.bombs.items()}
        yield State(b, bombs, [])


def count_moves(state):
    return sum(1 for _ in children(state))


def perft(state, depth):
    if depth == 0:
        return 1
    if depth == 1:
        return count_moves(state)
    return sum(perft(child, depth - 1) for child in children(state))


def engine_perft(engine, epd, depth):
    out = subprocess.run(
        [engine, "perft", "--variant", "bomb", "--fen", epd, "--depth", str(depth)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    for line in out.splitlines():
        if line.startswith("Nodes searched:"):
            return int(line.split(":")[1])
    raise RuntimeError(f"no node count from {engine}: {out}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite")
    parser.add_argument("--engine", help="atomzero binary to compare with")
    parser.add_argument("--max-nodes", type=int, default=300_000)
    args = parser.parse_args()

    ident, epd, variant = None, None, None
    checked = skipped = failures = 0
    with open(args.suite) as f:
        for raw in f:
            line = raw.strip()
            if line.startswith("#"):
                comment = line[1:].strip()
                if comment.startswith("variant "):
                    variant = comment.split()[1]
                continue
            if line.startswith("id "):
                ident, epd, variant = line[3:].strip(), None, None
            elif line.startswith("epd "):
                epd = line[4:].strip()
            elif line.startswith("perft "):
                _, depth, expected = line.split()
                depth, expected = int(depth), int(expected)
                if variant != "bomb":
                    raise SystemExit(f"{ident}: not a bomb-variant line")
                if expected > args.max_nodes:
                    skipped += 1
                    continue
                ours = perft(parse_state(epd), depth)
                verdict = "ok" if ours == expected else "MISMATCH"
                engine_note = ""
                if args.engine:
                    theirs = engine_perft(args.engine, epd, depth)
                    engine_note = f", atomzero {theirs}"
                    if theirs != ours:
                        verdict = "MISMATCH"
                if verdict != "ok":
                    failures += 1
                checked += 1
                print(f"{verdict:8} {ident} depth {depth}: python {ours}, file {expected}{engine_note}")
    print(f"{checked} checked, {failures} mismatches, {skipped} over the node budget")
    sys.exit(1 if failures or checked == 0 else 0)


if __name__ == "__main__":
    main()
