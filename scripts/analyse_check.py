"""Reads `atomzero analyse` output back with python-chess (an independent PGN reader and atomic
implementation) and checks it against the games analysed.

1. --games (real games, e.g. from `atomzero match --pgn`) and --analysed (their analysis): the
   same games with the same moves; python-chess reads every game without errors; every move
   has an `[%eval]` (python-chess's `GameNode.eval()`), a score for White, and a decisive game's
   last move `#0` read as the loser being mated; judgement NAGs are only $6, $2 and $4, each with
   lichess's word and "X was best." in its comment; every variation starts with a legal move
   other than the one played.
2. A planted blunder: the first game's moves up to the first position (from ply 6) where the side
   to move has a move after which the opponent explodes its king at once, then that move and the
   explosion, analysed through `atomzero analyse -` (standard input): the blunder must carry
   $4, "Blunder. ... was best.", and an eval of mate in 1 for the opponent.

Exits 1 with the reason on any failure. Usage:
    python scripts/analyse_check.py --engine BIN --games GAMES.pgn --analysed ANALYSED.pgn \
        [--analyse-args "--nodes 200"]
"""

import argparse
import io
import shlex
import subprocess
import sys

import chess
import chess.engine
import chess.pgn
import chess.variant

WORDS = {6: "Inaccuracy", 2: "Mistake", 4: "Blunder"}


def fail(message):
    print(f"analyse-check: FAIL: {message}")
    sys.exit(1)


def read_all(text):
    games, stream = [], io.StringIO(text)
    while (game := chess.pgn.read_game(stream)) is not None:
        if game.errors:
            fail(f"python-chess could not read a game: {game.errors}")
        games.append(game)
    return games


def check_game(original, analysed, index):
    moves = [m.uci() for m in original.mainline_moves()]
    if [m.uci() for m in analysed.mainline_moves()] != moves:
        fail(f"game {index}: the analysed moves differ from the original")
    if not isinstance(analysed.board(), chess.variant.AtomicBoard):
        fail(f"game {index}: not read as atomic ({analysed.headers.get('Variant')})")
    judged = variations = 0
    for node in analysed.mainline():
        score = node.eval()
        if score is None:
            fail(f"game {index} {node.move}: no [%eval] in {node.comment!r}")
        for nag in node.nags:
            if nag not in WORDS:
                fail(f"game {index} {node.move}: unexpected NAG ${nag}")
            if f"{WORDS[nag]}." not in node.comment or "was best." not in node.comment:
                fail(f"game {index} {node.move}: ${nag} without its comment: {node.comment!r}")
            judged += 1
        for variation in node.parent.variations[1:]:
            if variation.move not in node.parent.board().legal_moves or variation.move == node.move:
                fail(f"game {index}: variation {variation.move} at {node.move} is not another legal move")
            variations += 1
    last = analysed.end()
    board = last.board()
    if board.is_variant_end() or board.is_checkmate():
        loser = board.turn
        if last.eval().pov(loser) != chess.engine.Mate(0):
            fail(f"game {index}: the last move's eval {last.eval()} is not #0 against the loser")
    return len(moves), judged, variations


def explosion_after(board, move):
    """A reply to `move` that blows up the mover's king at once, if there is one."""
    board.push(move)
    try:
        for reply in board.legal_moves:
            board.push(reply)
            ended = board.is_variant_end()
            board.pop()
            if ended:
                return reply
        return None
    finally:
        board.pop()


def planted(engine, games, analyse_args):
    """The first game cut where a blunder is possible (another move being safe), then the
    blunder and the explosion, analysed through standard input."""
    source = games[0]
    board = source.board()
    moves = list(source.mainline_moves())
    for ply in range(len(moves)):
        if ply >= 6 and not board.is_game_over():
            replies = {move: explosion_after(board, move) for move in board.legal_moves}
            losing = [m for m, r in replies.items() if r is not None]
            if losing and len(losing) < len(replies):
                return build(source, ply, losing[0], replies[losing[0]], engine, analyse_args)
        board.push(moves[ply])
    fail("no position with a possible blunder in the first game")


def build(source, ply, blunder, reply, engine, analyse_args):
    game = chess.pgn.Game()
    game.setup(source.board())
    game.headers["Variant"] = "Atomic"
    game.headers["White"], game.headers["Black"] = "planted", "planted"
    node = game
    for move in list(source.mainline_moves())[:ply] + [blunder, reply]:
        node = node.add_variation(move)
    game.headers["Result"] = node.board().result()
    text = str(game)
    out = subprocess.run([engine, "analyse", "-", "-q"] + shlex.split(analyse_args), input=text,
                         capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        fail(f"atomzero analyse - failed: {out.stderr}")
    analysed = read_all(out.stdout)[0]
    nodes = list(analysed.mainline())
    node = nodes[ply]
    if node.move != blunder:
        fail(f"the planted blunder is not at ply {ply + 1}")
    mover = not node.board().turn
    if 4 not in node.nags or "Blunder." not in node.comment or "was best." not in node.comment:
        fail(f"the planted blunder {node.san()} is not marked: nags {node.nags}, {node.comment!r}")
    if node.eval().pov(not mover) != chess.engine.Mate(1):
        fail(f"after the blunder the eval is {node.eval()}, not mate in 1 for the opponent")
    return f"{node.parent.board().fullmove_number}. {node.san()} {' '.join('$%d' % n for n in node.nags)} {{{node.comment}}}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--engine", required=True, help="the atomzero binary")
    parser.add_argument("--games", required=True)
    parser.add_argument("--analysed", required=True)
    parser.add_argument("--analyse-args", default="--nodes 200")
    args = parser.parse_args()
    originals = read_all(open(args.games).read())
    analysed = read_all(open(args.analysed).read())
    if len(originals) != len(analysed) or not originals:
        fail(f"{len(originals)} games analysed into {len(analysed)}")
    totals = [0, 0, 0]
    for i, (original, annotated) in enumerate(zip(originals, analysed), 1):
        for t, n in enumerate(check_game(original, annotated, i)):
            totals[t] += n
    print(f"analyse-check: {len(analysed)} games, {totals[0]} moves read back by python-chess, each "
          f"with [%eval]; {totals[1]} judged moves with lichess's words; {totals[2]} variations, all legal")
    marked = planted(args.engine, originals, args.analyse_args)
    print(f"analyse-check: planted blunder marked: {marked}")


if __name__ == "__main__":
    main()
