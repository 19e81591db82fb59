"""Atomic positions with a forced mate, and Fairy-Stockfish's mate distance for each.

Plays seeded random atomic games with python-chess (`chess.variant.AtomicBoard`), asks
Fairy-Stockfish (`UCI_Variant atomic`, one thread) for a fixed-depth search of each position
reached, and keeps the positions it scores `mate N` with 1 <= |N| <= --max-moves, at most
--per-distance of each N. Prints one line per position:

    <FEN>;<N>

N counts moves of the side to move as UCI does: positive when it mates, negative when it is
mated. The output is the test data of crates/mcts/tests/mate.rs
(crates/mcts/tests/data/fsf-mates.txt), which checks atomzero's exact mate search against it.

A search engine's `mate N` is a mate it found, not always the shortest (pruning can hide a
faster one): --verify checks every line of a file by brute force on python-chess's own atomic
rules (an independent implementation): the side to move wins within 2N-1 plies and not within
2N-3 (or, for N < 0, loses within 2|N| plies whatever it plays and not within 2|N|-2).

Usage:
    python scripts/fsf_mates.py --fsf "$(bash scripts/fairy-stockfish.sh)" > mates.txt
    python scripts/fsf_mates.py --fsf BIN --check mates.txt   # re-asks FSF, exits 1 on a difference
    python scripts/fsf_mates.py --verify mates.txt            # brute force, exits 1 on a difference
"""

import argparse
import random
import sys

import chess
import chess.engine
import chess.variant


def mate_of(engine, board, depth):
    info = engine.analyse(board, chess.engine.Limit(depth=depth))
    return info["score"].relative.mate()


def generate(engine, args):
    rng = random.Random(args.seed)
    wanted = [n for m in range(1, args.max_moves + 1) for n in (m, -m)]
    found = {n: 0 for n in wanted}
    seen = set()
    games = 0
    while any(found[n] < args.per_distance for n in wanted) and games < args.max_games:
        games += 1
        board = chess.variant.AtomicBoard()
        while not board.is_game_over() and board.ply() < 120:
            fen = board.fen()
            if board.ply() >= 4 and fen not in seen:
                seen.add(fen)
                mate = mate_of(engine, board, args.depth)
                if mate is not None and mate in found and found[mate] < args.per_distance:
                    found[mate] += 1
                    print(f"{fen};{mate}", flush=True)
            board.push(rng.choice(list(board.legal_moves)))
    print(f"fsf_mates: {sum(found.values())} positions from {games} games "
          f"({', '.join(f'{n}: {c}' for n, c in found.items())})", file=sys.stderr)


def check(engine, args):
    differences = 0
    lines = [l for l in open(args.check) if l.strip() and not l.startswith("#")]
    for line in lines:
        fen, expected = line.strip().rsplit(";", 1)
        mate = mate_of(engine, chess.variant.AtomicBoard(fen), args.depth)
        if mate != int(expected):
            differences += 1
            print(f"fsf_mates: {fen}: file says mate {expected}, Fairy-Stockfish says {mate}")
    print(f"fsf_mates: {len(lines) - differences} of {len(lines)} positions agree")
    sys.exit(1 if differences else 0)


class BruteForce:
    """Exact mate search on python-chess's atomic rules (the same definition as
    crates/mcts/src/mate.rs: repetitions are not looked at)."""

    @staticmethod
    def over(board):
        return board.outcome() is not None or board.halfmove_clock >= 100

    def wins_within(self, board, plies):
        us = board.turn
        moves = sorted(board.legal_moves, key=lambda m: not board.is_capture(m))
        for move in moves:
            board.push(move)
            try:
                if self.over(board):
                    outcome = board.outcome()
                    if outcome is not None and outcome.winner == us:
                        return True
                elif plies >= 3 and self.loses_within(board, plies - 1):
                    return True
            finally:
                board.pop()
        return False

    def loses_within(self, board, plies):
        them = not board.turn
        for move in list(board.legal_moves):
            board.push(move)
            try:
                if self.over(board):
                    outcome = board.outcome()
                    if outcome is None or outcome.winner != them:
                        return False
                elif not self.wins_within(board, plies - 1):
                    return False
            finally:
                board.pop()
        return True

    def decided_within(self, board, n, plies):
        if plies <= 0:
            return False
        return self.wins_within(board, plies) if n > 0 else self.loses_within(board, plies)


def verify(args):
    solver = BruteForce()
    differences = 0
    lines = [l for l in open(args.verify) if l.strip() and not l.startswith("#")]
    for line in lines:
        fen, n = line.strip().rsplit(";", 1)
        n = int(n)
        board = chess.variant.AtomicBoard(fen)
        plies = 2 * n - 1 if n > 0 else -2 * n
        exact = solver.decided_within(board, n, plies) and not solver.decided_within(board, n, plies - 2)
        if not exact:
            differences += 1
            print(f"fsf_mates: {fen}: mate {n} is not the exact distance on python-chess's rules")
    print(f"fsf_mates: {len(lines) - differences} of {len(lines)} mate distances exact by brute force")
    sys.exit(1 if differences else 0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fsf", help="the Fairy-Stockfish binary")
    parser.add_argument("--depth", type=int, default=14)
    parser.add_argument("--max-moves", type=int, default=3)
    parser.add_argument("--per-distance", type=int, default=6)
    parser.add_argument("--max-games", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--check", help="a file of FEN;N lines to check with Fairy-Stockfish")
    parser.add_argument("--verify", help="a file of FEN;N lines to check by brute force")
    args = parser.parse_args()
    if args.verify:
        verify(args)
    if not args.fsf:
        parser.error("--fsf is needed unless --verify is given")
    with chess.engine.SimpleEngine.popen_uci(args.fsf) as engine:
        engine.configure({"Threads": 1})  # UCI_Variant: python-chess sets it from the board
        if args.check:
            check(engine, args)
        else:
            generate(engine, args)


if __name__ == "__main__":
    main()
