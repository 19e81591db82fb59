#!/usr/bin/env python3
"""Where did the engine lose? Replays match games with Fairy-Stockfish and finds, in each game a
named player lost, the move where Fairy-Stockfish's evaluation swung against it; then asks that
player's engine, at several thinking times, what it makes of that position.

Used for issue 42 (strength that grows with time). For every lost game it prints one line:

  game 7 ply 23 (black) played d8d4, fsf best e7e5: +0.45 -> #-3 | refutation c3d5 e7d6 d5c7
    | engine at the position: 0.5s d8d4 cp -12 (nodes 6123) ; 2.0s e7e5 cp 30 ; ...
    | engine after the blunder (to move: opponent): 0.5s c3d5 cp 850 ...

and a summary: how many swings were forced mates (king explosions) and at what distance, how
often the engine with more time avoids its own move, and how often the engine, once the blunder
is on the board, sees the refutation at once (then the move was a search failure at the root,
not blindness of the network).

Usage:
  python scripts/loss_analysis.py --pgn games.pgn --player NAME --fsf PATH --engine "atomzero uci"
      [--depth 14] [--times 0.5,2,5] [--swing 300] [--json out.jsonl]
"""

import argparse
import json
import shlex
import sys

import chess
import chess.engine
import chess.pgn
import chess.variant

MATE_CP = 10000


def cp_of(score: chess.engine.PovScore, color: chess.Color) -> int:
    """Centipawns for `color`, mates as +-(MATE_CP - distance)."""
    s = score.pov(color)
    if s.is_mate():
        m = s.mate()
        return MATE_CP - abs(m) if m > 0 else -(MATE_CP - abs(m))
    return s.score()


def fmt(cp: int) -> str:
    if cp >= MATE_CP - 500:
        return f"#{MATE_CP - cp}"
    if cp <= -(MATE_CP - 500):
        return f"#-{MATE_CP + cp}"
    return f"{cp / 100:+.2f}"


def lost_games(path, player):
    """(index from 1, game) for each game of the PGN file at `path` that `player`, a White or
    Black tag, lost."""
    with open(path) as f:
        index = 0
        while True:
            game = chess.pgn.read_game(f)
            if game is None:
                return
            index += 1
            result = game.headers.get("Result")
            white, black = game.headers.get("White"), game.headers.get("Black")
            if (result == "1-0" and black == player) or (result == "0-1" and white == player):
                yield index, game


def analyse_game(game, player, fsf, depth, swing):
    """The first move of `player` after which FSF's eval (for the player) dropped by `swing`
    cp or more, ending below -swing/2 (or a forced mate against it)."""
    board = game.board()
    color = chess.WHITE if game.headers.get("White") == player else chess.BLACK
    prev = None
    for ply, move in enumerate(game.mainline_moves()):
        if board.turn == color:
            before = fsf.analyse(board, chess.engine.Limit(depth=depth))
            cp_before = cp_of(before["score"], color)
            best = before.get("pv", [None])[0]
            fen = board.fen()
            board.push(move)
            if board.is_game_over():
                prev = None
                continue
            after = fsf.analyse(board, chess.engine.Limit(depth=depth))
            cp_after = cp_of(after["score"], color)
            if cp_before - cp_after >= swing and cp_after <= -swing // 2 and move != best:
                return {
                    "ply": ply,
                    "color": "white" if color == chess.WHITE else "black",
                    "fen": fen,
                    "played": move.uci(),
                    "fsf_best": best.uci() if best else None,
                    "before": cp_before,
                    "after": cp_after,
                    "refutation": [m.uci() for m in after.get("pv", [])[:8]],
                    "fen_after": board.fen(),
                }
            prev = cp_after
        else:
            board.push(move)
    return None


def engine_view(engine, fen, times):
    out = []
    for t in times:
        board = chess.variant.AtomicBoard(fen)
        info = engine.analyse(board, chess.engine.Limit(time=t), game=object())
        pv = info.get("pv", [])
        out.append({
            "time": t,
            "move": pv[0].uci() if pv else None,
            "cp": cp_of(info["score"], board.turn) if "score" in info else None,
            "nodes": info.get("nodes"),
            "pv": [m.uci() for m in pv[:6]],
        })
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pgn", required=True)
    ap.add_argument("--player", required=True, help="the White/Black tag of the engine analysed")
    ap.add_argument("--fsf", required=True)
    ap.add_argument("--engine", required=True, help="command line of the engine analysed")
    ap.add_argument("--depth", type=int, default=14)
    ap.add_argument("--times", default="0.5,2,5")
    ap.add_argument("--swing", type=int, default=300)
    ap.add_argument("--json")
    args = ap.parse_args()
    times = [float(t) for t in args.times.split(",") if t]

    fsf = chess.engine.SimpleEngine.popen_uci(args.fsf)
    fsf.configure({"Threads": 1, "Hash": 64})
    eng = chess.engine.SimpleEngine.popen_uci(shlex.split(args.engine))
    out = open(args.json, "w") if args.json else None

    lost = mates = avoided = sees = found = 0
    for index, game in lost_games(args.pgn, args.player):
        lost += 1
        s = analyse_game(game, args.player, fsf, args.depth, args.swing)
        if s is None:
            print(f"game {index}: lost, no single swing of {args.swing} cp found", flush=True)
            continue
        found += 1
        mate = s["after"] <= -(MATE_CP - 500)
        mates += mate
        s["game"] = index
        s["engine_here"] = engine_view(eng, s["fen"], times)
        s["engine_after"] = engine_view(eng, s["fen_after"], times[:1])
        if any(v["move"] != s["played"] for v in s["engine_here"][1:]):
            avoided += 1
        a = s["engine_after"][0]
        if a["move"] == (s["refutation"][0] if s["refutation"] else None):
            sees += 1
        here = " ; ".join(
            f"{v['time']}s {v['move']} {fmt(v['cp']) if v['cp'] is not None else '?'} (n {v['nodes']})"
            for v in s["engine_here"]
        )
        print(
            f"game {index} ply {s['ply']} ({s['color']}) played {s['played']}, fsf best {s['fsf_best']}: "
            f"{fmt(s['before'])} -> {fmt(s['after'])} | refutation {' '.join(s['refutation'])}\n"
            f"    engine here: {here}\n"
            f"    engine after the blunder: {a['move']} {fmt(a['cp']) if a['cp'] is not None else '?'} "
            f"(n {a['nodes']}) pv {' '.join(a['pv'])}",
            flush=True,
        )
        if out:
            out.write(json.dumps(s) + "\n")
            out.flush()
    print(
        f"summary: {lost} lost games, {found} with a swing of >= {args.swing} cp; "
        f"{mates} swings to a forced mate; with more time the engine plays another move in {avoided}; "
        f"after the blunder the engine's first choice is the refutation in {sees}"
    )
    fsf.quit()
    eng.quit()


if __name__ == "__main__":
    sys.exit(main())
