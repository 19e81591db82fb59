#!/usr/bin/env python3
"""A test suite of the engine's own blunders, and a runner that scores engine settings on it.

Issue 42's inner loop: a match at 0.5 s a move takes an hour and measures ±40 Elo; the positions
where the engine actually lost games to Fairy-Stockfish are a faster, sharper screen for a search
change (does it still play the move that lost?). A screen, not a verdict: the suite is made of
the baseline's own failures, so any change that merely *differs* from the baseline looks better on
it (the baseline re-run in the same command is the control); a change is kept only by a match.

make: replays lost games with Fairy-Stockfish (scripts/loss_analysis.py's swing: the first move of
the player after which FSF's eval at --depth dropped by --swing cp to below -swing/2), confirms
each swing at --confirm-depth, and writes an EPD line per confirmed blunder made in a position
not yet lost (FSF's eval at least --min-ce for the side to move):

  <fen> am <played SAN>; bm <FSF's best SAN>; ce <FSF eval of the position, cp, side to move>;
  id "<pgn> game <n> ply <p>"; c0 "after <FSF eval after the blunder>";

run: plays every position with each engine (`go movetime T`, a fresh game each time, engines
interleaved position by position) and judges each engine's move by FSF at --depth: a move fails
if it is a swing by the same rule (ce - eval after >= swing and eval after <= -swing/2). Prints
each engine's solved count, its mean nodes a move, and the positions where it and the first
engine (the control) differ, counted.

docs/experiments/blunders-0500.epd is such a suite (45 positions from the engine's games against
Fairy-Stockfish at 0.5 and 1 s a move); docs/experiments.md ("A suite of the engine's own
blunders") has what it showed.

Usage:
  python scripts/blunder_suite.py make --fsf FSF --out suite.epd PGN:PLAYER [PGN:PLAYER ...]
      [--depth 11] [--confirm-depth 14] [--swing 300]
  python scripts/blunder_suite.py run --fsf FSF --epd suite.epd --movetime 500
      --engine "base=atomzero uci" --engine "t22=atomzero uci ## PolicyTemperature=2.2" [--depth 14]
      [--nodes N] [--min-ce -100]
  An engine's own limit: `## go.depth=8` (or go.nodes=N, go.movetime=MS) among its options.
"""

import argparse
import os
import shlex
import sys

import chess
import chess.engine
import chess.variant

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from loss_analysis import MATE_CP, analyse_game, cp_of, fmt, lost_games  # noqa: E402


STARTED = []


def fail(message):
    """Quits every engine started (their threads would keep the process alive) and exits."""
    for eng in STARTED:
        try:
            eng.quit()
        except Exception:  # noqa: BLE001 - best effort on the way out
            pass
    sys.exit(message)


def start(command):
    """A UCI engine from a command line, or exit naming the command and the problem."""
    try:
        eng = chess.engine.SimpleEngine.popen_uci(command)
    except (OSError, chess.engine.EngineError) as e:
        fail(f"{command}: cannot start the engine: {e}")
    STARTED.append(eng)
    return eng


def fsf_engine(path):
    fsf = start(path)
    fsf.configure({"Threads": 1, "Hash": 64})
    return fsf


def fsf_eval(fsf, board, depth, color):
    """FSF's eval for `color` at `depth`, from a cleared hash (a new game each call)."""
    if board.is_game_over():
        outcome = board.outcome()
        if outcome.winner is None:
            return 0
        return MATE_CP if outcome.winner == color else -MATE_CP
    info = fsf.analyse(board, chess.engine.Limit(depth=depth), game=object())
    return cp_of(info["score"], color)


def is_swing(before, after, swing):
    return before - after >= swing and after <= -swing // 2


def make(args):
    for spec in args.games:
        path, _, player = spec.rpartition(":")
        if not path or not player:
            sys.exit(f"{spec}: expected PGN:PLAYER (the games PLAYER lost)")
        if not os.path.isfile(path):
            sys.exit(f"{path}: no such file")
    fsf = fsf_engine(args.fsf)
    written = scanned = unconfirmed = 0
    with open(args.out, "w") as out:
        for spec in args.games:
            path, _, player = spec.rpartition(":")
            for index, game in lost_games(path, player):
                scanned += 1
                s = analyse_game(game, player, fsf, args.depth, args.swing)
                if s is None:
                    continue
                where = f"{path} game {index} ply {s['ply']}"
                board = chess.variant.AtomicBoard(s["fen"])
                color = board.turn
                played = chess.Move.from_uci(s["played"])
                info = fsf.analyse(board, chess.engine.Limit(depth=args.confirm_depth), game=object())
                before = cp_of(info["score"], color)
                best = info.get("pv", [None])[0]
                if before < args.min_ce:
                    print(f"{where}: already lost before the swing ({fmt(before)} at depth "
                          f"{args.confirm_depth})", flush=True)
                    continue
                after_board = board.copy()
                after_board.push(played)
                after = fsf_eval(fsf, after_board, args.confirm_depth, color)
                if best is None or best == played or not is_swing(before, after, args.swing):
                    unconfirmed += 1
                    print(f"{where}: swing not confirmed at depth {args.confirm_depth} "
                          f"({fmt(before)} -> {fmt(after)})", flush=True)
                    continue
                line = board.epd(am=[played], bm=[best], ce=before,
                                 id=f"{os.path.basename(path)} game {index} ply {s['ply']}",
                                 c0=f"after {fmt(after)}")
                out.write(line + "\n")
                out.flush()
                written += 1
                print(line, flush=True)
    print(f"made: {scanned} lost games, {written} confirmed blunders, {unconfirmed} not confirmed")
    fsf.quit()


def parse_engine(spec):
    name, _, rest = spec.partition("=")
    cmd, _, opts = rest.partition(" ## ")
    options, limit = {}, {}
    for o in filter(None, (x.strip() for x in opts.split(","))):
        k, _, v = o.partition("=")
        if k in ("go.depth", "go.nodes", "go.movetime"):
            limit[k[3:]] = int(v)
        else:
            options[k] = v
    return name, cmd, options, limit


def run(args):
    positions = []
    with open(args.epd) as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                board, ops = chess.variant.AtomicBoard.from_epd(line)
            except ValueError as e:
                sys.exit(f"{args.epd}:{number}: not an EPD line: {e}")
            if not isinstance(ops.get("ce"), int) or not ops.get("am"):
                sys.exit(f"{args.epd}:{number}: needs `am` (the blunder) and `ce` (FSF's eval), as `make` writes")
            if ops["ce"] >= args.min_ce:
                positions.append((board, ops))
    if args.limit:
        positions = positions[: args.limit]
    if not positions:
        sys.exit(f"{args.epd}: no position with ce >= {args.min_ce}")
    fsf = fsf_engine(args.fsf)
    engines = []
    for spec in args.engine:
        name, cmd, options, limit = parse_engine(spec)
        eng = start(shlex.split(cmd))
        if options:
            try:
                eng.configure(options)
            except chess.engine.EngineError as e:
                fail(f"engine {name}: {e}")
        if "movetime" in limit:
            limit = chess.engine.Limit(time=limit["movetime"] / 1000)
        elif limit:
            limit = chess.engine.Limit(**limit)
        elif args.nodes:
            limit = chess.engine.Limit(nodes=args.nodes)
        else:
            limit = chess.engine.Limit(time=args.movetime / 1000)
        engines.append((name, eng, limit))
    judged = {}
    solved = {n: [] for n, _, _ in engines}
    nodes = {n: [] for n, _, _ in engines}
    for i, (board, ops) in enumerate(positions):
        color = board.turn
        line = []
        for name, eng, limit in engines:
            res = eng.play(board, limit, game=object(),
                           info=chess.engine.INFO_BASIC)
            move = res.move
            if res.info.get("nodes") is not None:
                nodes[name].append(res.info["nodes"])
            key = (board.fen(), move.uci())
            if key not in judged:
                after = board.copy()
                after.push(move)
                judged[key] = fsf_eval(fsf, after, args.depth, color)
            ok = move not in ops.get("am", []) and not is_swing(ops["ce"], judged[key], args.swing)
            solved[name].append(ok)
            line.append(f"{name} {board.san(move)} {'ok' if ok else 'FAIL'} ({fmt(judged[key])})")
        print(f"{i + 1:3d} {ops.get('id', '')}: " + " | ".join(line), flush=True)
    n = len(positions)
    base = engines[0][0]
    for name, _, _ in engines:
        s = solved[name]
        mean_nodes = sum(nodes[name]) / len(nodes[name]) if nodes[name] else float("nan")
        extra = ""
        if name != base:
            gain = sum(1 for a, b in zip(s, solved[base]) if a and not b)
            loss = sum(1 for a, b in zip(s, solved[base]) if b and not a)
            extra = f"; against {base}: solves {gain} it fails, fails {loss} it solves"
        print(f"{name}: solved {sum(s)}/{n} ({100 * sum(s) / n:.1f}%), mean nodes {mean_nodes:.0f}{extra}")
    for _, eng, _ in engines:
        eng.quit()
    fsf.quit()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("--fsf", required=True)
    m.add_argument("--out", required=True)
    m.add_argument("--depth", type=int, default=11)
    m.add_argument("--confirm-depth", type=int, default=14)
    m.add_argument("--swing", type=int, default=300)
    m.add_argument("--min-ce", type=int, default=-100,
                   help="only positions FSF scores at least this for the side to move (not yet lost)")
    m.add_argument("games", nargs="+", help="PGN:PLAYER, the games PLAYER lost")
    r = sub.add_parser("run")
    r.add_argument("--fsf", required=True)
    r.add_argument("--epd", required=True)
    r.add_argument("--movetime", type=int, default=500, help="ms a move")
    r.add_argument("--nodes", type=int, default=0, help="a fixed node count a move instead of --movetime")
    r.add_argument("--depth", type=int, default=14)
    r.add_argument("--swing", type=int, default=300)
    r.add_argument("--min-ce", type=int, default=-100,
                   help="only positions whose ce is at least this (not yet lost)")
    r.add_argument("--limit", type=int, default=0, help="only the first N positions")
    r.add_argument("--engine", action="append", required=True,
                   help='NAME=COMMAND [## Option=value,...]; the first is the control')
    args = ap.parse_args()
    return make(args) if args.cmd == "make" else run(args)


if __name__ == "__main__":
    sys.exit(main())
