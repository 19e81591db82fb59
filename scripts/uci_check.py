"""Drives `atomzero uci` the way GUIs and lichess-bot do, and checks it with python-chess.

1. python-chess's `chess.engine` (SimpleEngine.popen_uci) plays whole atomic games on a
   `chess.variant.AtomicBoard`, so python-chess sets `UCI_Variant atomic` itself (it refuses to
   unless the engine announces the option with `atomic` among its values). Every move the engine
   sends must be legal on the AtomicBoard. Games: the engine against itself with the given model,
   and the engine (no --model: the network shipped in the binary) against a seeded random mover
   with each colour.
2. Raw protocol over a pipe, every read with a timeout: `uci` lists `UCI_Variant` with `atomic`
   as the first value; `go infinite` then `stop` answers a legal `bestmove` within 2 s; junk
   lines and malformed commands are answered with `info string` and `isready` still gets
   `readyok`, then a search still works; `quit` ends the process.
3. 1+0.1 games (1 s each, 0.1 s increment) of the engine against itself with the clocks kept
   here from wall time, including process and pipe latency: no side may run out of time.
   New games start until --clock-plies plies were played (weak nets end games fast).
4. lichess-bot's way (its lib/engine_wrapper.py over python-chess): the binary started with no
   command (`atomzero`, `--model=NET` as lichess-bot's engine_options write it), configured
   with lichess-bot's default uci_options less SyzygyPath (as docs/engine.md says; with it,
   configure must fail and name the option); whole games at 1+0.1 with ponder on, clocks kept
   here, info=INFO_ALL (every reply has a score and, with UCI_ShowWDL, a wdl), a process per
   game as lichess-bot starts (ping and quit at its end) and one process for two games with
   `ucinewgame` between them, against a second engine process at 32 playouts a move (it often
   plays the predicted move, so ponderhit and stop both happen; a game is cut at
   --lichess-bot-plies); a standard-chess board is refused by python-chess before anything is
   sent (the variant to accept is atomic only), a finished game answers `bestmove (none)`
   (python-chess: no move), and proven positions are scored `mate N` as Fairy-Stockfish scores
   them (crates/mcts/tests/data/fsf-mates.txt).

Exits 1 with the reason on any failure. Usage:
    python scripts/uci_check.py --engine BIN [--model NET.safetensors]
"""

import argparse
import logging
import queue
import random
import subprocess
import sys
import threading
import time

import chess
import chess.engine
import chess.variant


def fail(message):
    print(f"uci-check: FAIL: {message}")
    sys.exit(1)


def play_game(engine, board, white, black, limit, max_plies, rng):
    """Plays from `board`; `white`/`black` are "engine" or "random". Returns the plies."""
    plies = 0
    while not board.is_game_over() and plies < max_plies:
        mover = white if board.turn == chess.WHITE else black
        if mover == "random":
            move = rng.choice(list(board.legal_moves))
        else:
            result = engine.play(board, limit)
            move = result.move
            if move is None or move not in board.legal_moves:
                fail(f"engine sent {move} in {board.fen()}, not a legal atomic move")
        board.push(move)
        plies += 1
    return plies


def python_chess_games(args):
    rng = random.Random(1)
    command = [args.engine, "uci"] + (["--model", args.model] if args.model else [])
    with chess.engine.SimpleEngine.popen_uci(command, timeout=30) as engine:
        variant = engine.options.get("UCI_Variant")
        if variant is None or "atomic" not in variant.var:
            fail(f"UCI_Variant option lacks atomic: {variant}")
        board = chess.variant.AtomicBoard()
        plies = play_game(engine, board, "engine", "engine", chess.engine.Limit(nodes=48), 400, rng)
        print(f"uci-check: self-play game with {args.model or 'the shipped network'}: {plies} plies, "
              f"result {board.result(claim_draw=True)}, every move legal on python-chess's AtomicBoard")
    with chess.engine.SimpleEngine.popen_uci([args.engine, "uci"], timeout=30) as engine:
        for white, black in (("engine", "random"), ("random", "engine")):
            board = chess.variant.AtomicBoard()
            plies = play_game(engine, board, white, black, chess.engine.Limit(nodes=48), 400, rng)
            print(f"uci-check: engine (shipped network) {white} vs {black}: {plies} plies, "
                  f"result {board.result(claim_draw=True)}, every move legal")


class Pipe:
    """`atomzero uci` on pipes with a reader thread, so every read can time out."""

    def __init__(self, command):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, bufsize=0)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in self.process.stdout:
            self.lines.put(raw.decode("utf-8", "replace").rstrip("\r\n"))
        self.lines.put(None)

    def send(self, data):
        if isinstance(data, str):
            data = (data + "\n").encode()
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def expect(self, predicate, timeout, what):
        """Lines up to and including the first that satisfies `predicate`."""
        deadline = time.monotonic() + timeout
        seen = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                fail(f"no {what} within {timeout} s; got {seen[-5:]}")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                fail(f"engine exited (code {self.process.poll()}) while waiting for {what}; "
                     f"got {seen[-5:]}")
            seen.append(line)
            if predicate(line):
                return seen

    def drain(self, seconds):
        """The lines that arrive within `seconds`."""
        deadline = time.monotonic() + seconds
        lines = []
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                fail(f"engine exited (code {self.process.poll()})")
            lines.append(line)
        return lines

    def close(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def bestmove_of(lines):
    return lines[-1].split()[1]


def raw_protocol(args):
    pipe = Pipe([args.engine, "uci"] + (["--model", args.model] if args.model else []))
    try:
        pipe.send("uci")
        lines = pipe.expect(lambda l: l == "uciok", 10, "uciok")
        variant = [l for l in lines if l.startswith("option name UCI_Variant ")]
        if not variant or variant[0].split(" var ")[1].split()[0] != "atomic":
            fail(f"UCI_Variant must list atomic first: {variant}")
        pipe.send("setoption name UCI_Variant value atomic")
        pipe.send("isready")
        pipe.expect(lambda l: l == "readyok", 30, "readyok")

        # go infinite, wait for the search to report, then stop: bestmove within 2 s.
        pipe.send("position startpos moves e2e4 d7d5")
        pipe.send("go infinite")
        lines = pipe.expect(lambda l: l.startswith("info ") and " nodes " in l, 10, "an info line")
        # No bestmove before stop, however long the search has run.
        early = lines + pipe.drain(0.3)
        if any(l.startswith("bestmove") for l in early):
            fail(f"bestmove before stop under go infinite: {early}")
        stopped = time.monotonic()
        pipe.send("stop")
        lines = pipe.expect(lambda l: l.startswith("bestmove"), 2, "bestmove after stop")
        latency = time.monotonic() - stopped
        board = chess.variant.AtomicBoard()
        for uci in ("e2e4", "d7d5"):
            board.push_uci(uci)
        move = chess.Move.from_uci(bestmove_of(lines))
        if move not in board.legal_moves:
            fail(f"bestmove {move} after stop is illegal in {board.fen()}")
        print(f"uci-check: go infinite + stop: bestmove {move} {latency * 1000:.0f} ms after stop")

        # Garbage: unknown commands, malformed arguments, illegal moves, binary, a long line.
        junk = [
            "hello engine", "", "   ", "go nodes banana", "go wtime -5 btime x",
            "position fen not/a/fen w - - 0 1", "position startpos moves e2e5",
            "position startpos moves e2e4 e7e5 e1e3", "position", "setoption name NoSuch value 3",
            "setoption name Threads value -1", "setoption name UCI_Variant value crazyhouse",
            "setoption name Hash value 99999999999999999999", "position fen 8/8/8/8/8/8/8/8 w - - 0 1",
            "stop", "ponderhit", "register later", "debug maybe",
        ]
        for line in junk:
            pipe.send(line)
        pipe.send(b"\xff\xfe\x00garbage\x80\n")
        pipe.send("x" * 100_000)
        pipe.send("isready")
        lines = pipe.expect(lambda l: l == "readyok", 10, "readyok after junk")
        errors = [l for l in lines if l.startswith("info string")]
        if not errors:
            fail("junk input was not answered with any 'info string' line")
        if pipe.process.poll() is not None:
            fail("engine died on junk input")
        # Still plays: the last valid position is searched after the junk.
        pipe.send("ucinewgame")
        pipe.send("position startpos")
        pipe.send("go nodes 32")
        lines = pipe.expect(lambda l: l.startswith("bestmove"), 10, "bestmove after junk")
        if chess.Move.from_uci(bestmove_of(lines)) not in chess.variant.AtomicBoard().legal_moves:
            fail(f"bestmove after junk is illegal: {lines[-1]}")
        print(f"uci-check: {len(junk) + 2} junk lines: {len(errors)} 'info string' answers, "
              f"readyok, then a legal bestmove")
        pipe.send("quit")
        try:
            pipe.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            fail("engine did not exit after quit")
    finally:
        pipe.close()


def clock_game(args):
    """1+0.1 games of the engine against itself, clocks kept here from wall time (so process
    and pipe latency count against the engine), until --clock-plies plies were played."""
    base, increment = 1.0, 0.1
    command = [args.engine, "uci"] + (["--model", args.model] if args.model else [])
    slowest, lowest, plies, games = 0.0, base, 0, 0
    with chess.engine.SimpleEngine.popen_uci(command, timeout=30) as engine:
        engine.ping()  # loads the model before the clocks start
        while plies < args.clock_plies:
            board = chess.variant.AtomicBoard()
            clocks = {chess.WHITE: base, chess.BLACK: base}
            games += 1
            while not board.is_game_over() and plies < args.clock_plies:
                limit = chess.engine.Limit(white_clock=clocks[chess.WHITE],
                                           black_clock=clocks[chess.BLACK],
                                           white_inc=increment, black_inc=increment)
                start = time.monotonic()
                result = engine.play(board, limit, game=games)
                spent = time.monotonic() - start
                slowest = max(slowest, spent)
                clocks[board.turn] -= spent
                lowest = min(lowest, clocks[board.turn])
                if clocks[board.turn] < 0:
                    fail(f"lost on time in game {games} at ply {board.ply()}: "
                         f"{spent * 1000:.0f} ms spent, clock {clocks[board.turn] * 1000:.0f} ms")
                clocks[board.turn] += increment
                if result.move not in board.legal_moves:
                    fail(f"engine sent {result.move} in {board.fen()}")
                board.push(result.move)
                plies += 1
    print(f"uci-check: 1+0.1: {plies} plies in {games} games with {args.model or 'the shipped network'}, "
          f"slowest move {slowest * 1000:.0f} ms, lowest clock after a move "
          f"{lowest * 1000:.0f} ms: never out of time")


# lichess-bot's config.yml.default `engine.uci_options` (lichess-bot 2024-2025).
LICHESS_BOT_UCI_OPTIONS = {
    "Move Overhead": 100,
    "Threads": 4,
    "Hash": 512,
    "SyzygyPath": "./syzygy/",
    "UCI_ShowWDL": True,
}


class SentLines(logging.Handler):
    """Counts the commands python-chess sends (its debug log: `<engine>: << line`)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.counts = {}

    def emit(self, record):
        message = record.getMessage()
        if ": << " in message:
            word = message.split(": << ", 1)[1].split(" ")[0]
            if word == "go" and " ponder" in message:
                word = "go ponder"
            self.counts[word] = self.counts.get(word, 0) + 1


def lichess_bot_games(args):
    """The engine driven as lichess-bot drives it (lib/engine_wrapper.py): see the module
    documentation. lichess-bot starts a process per game (configure, play, ping, quit); the
    first process here plays two games (`ucinewgame` between them), the second one game. As
    lichess-bot does, our first move of a game is a fixed time without pondering (10 s there,
    0.2 s here) and our clock is handed over less a move overhead (2 s there, 0.1 s here)."""
    sent = SentLines()
    logger = logging.getLogger("chess.engine")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    command = [args.engine] + ([f"--model={args.model}"] if args.model else [])
    base, increment, overhead = 1.0, 0.1, 0.1
    # lichess-bot drops the options python-chess manages (UCI_Variant, Ponder, MultiPV...).
    options = {n: v for n, v in LICHESS_BOT_UCI_OPTIONS.items()
               if not chess.engine.Option(n, "", None, None, None, None).is_managed()}
    with chess.engine.SimpleEngine.popen_uci(command, timeout=30) as engine:
        try:
            engine.configure(options)
            fail("configure with SyzygyPath was accepted: the engine does not probe tablebases")
        except chess.engine.EngineError as e:
            if "SyzygyPath" not in str(e):
                fail(f"configure failed for another reason: {e}")
    del options["SyzygyPath"]

    plies, moves, ponderhits, slowest, games, finished = 0, 0, 0, 0.0, 0, 0
    logger.addHandler(sent)
    with chess.engine.SimpleEngine.popen_uci(command, timeout=30) as opponent:
        for games_in_process in (2, 1):
            with chess.engine.SimpleEngine.popen_uci(command, timeout=30) as engine:
                engine.configure(options)
                if games == 0:
                    # A standard game: python-chess refuses before sending anything.
                    try:
                        engine.play(chess.Board(), chess.engine.Limit(nodes=10))
                        fail("UCI_Variant chess was accepted")
                    except chess.engine.EngineError as e:
                        refused = str(e)
                for _ in range(games_in_process):
                    games += 1
                    board = chess.variant.AtomicBoard()
                    clocks = {chess.WHITE: base, chess.BLACK: base}
                    ours = chess.WHITE if games % 2 == 1 else chess.BLACK
                    predicted, first = None, True
                    while not board.is_game_over() and board.ply() < args.lichess_bot_plies:
                        if board.turn != ours:
                            move = opponent.play(board, chess.engine.Limit(nodes=32), game=games).move
                            ponderhits += move == predicted
                            board.push(move)
                            plies += 1
                            continue
                        if first:
                            limit = chess.engine.Limit(time=0.2)
                        else:
                            handed = dict(clocks)
                            handed[ours] = max(0.001, clocks[ours] - overhead)
                            limit = chess.engine.Limit(white_clock=handed[chess.WHITE],
                                                       black_clock=handed[chess.BLACK],
                                                       white_inc=increment, black_inc=increment)
                        start = time.monotonic()
                        result = engine.play(board, limit, game=games, ponder=not first,
                                             info=chess.engine.INFO_ALL)
                        spent = time.monotonic() - start
                        if not first:
                            slowest = max(slowest, spent)
                            clocks[ours] -= spent
                            if clocks[ours] < 0:
                                fail(f"lost on time in lichess-bot game {games} at ply {board.ply()}")
                            clocks[ours] += increment
                        first = False
                        if result.move not in board.legal_moves:
                            fail(f"engine sent {result.move} in {board.fen()}")
                        if "score" not in result.info or "wdl" not in result.info:
                            fail(f"no score or wdl with UCI_ShowWDL on: {result.info}")
                        predicted = result.ponder
                        board.push(result.move)
                        plies += 1
                        moves += 1
                    # Over with no legal move (an exploded king, checkmate, stalemate): asked
                    # anyway, the engine has no move (bestmove (none)). Draws by repetition or
                    # material still have moves, which the engine plays, as Stockfish does.
                    if not any(board.legal_moves):
                        finished += 1
                        over = engine.play(board, chess.engine.Limit(time=0.05), game=games)
                        if over.move is not None:
                            fail(f"a finished game got the move {over.move}")
                engine.ping()
                engine.quit()
    logger.removeHandler(sent)
    # Both engines' commands are counted (only ours ponders): each kind must have happened.
    for word in ("ucinewgame", "go ponder", "ponderhit", "stop", "quit"):
        if not sent.counts.get(word):
            fail(f"python-chess never sent {word!r} to the engines: {sent.counts}")
    print(f"uci-check: lichess-bot style: `{' '.join(command)}` with {options}: {games} games at "
          f"1+0.1 with ponder in 2 processes, {plies} plies, {moves} engine moves, {ponderhits} "
          f"predicted replies played, {finished} finished games answered with no move, slowest "
          f"move on the clock {slowest * 1000:.0f} ms, never out of time; sent {sent.counts}; "
          f"chess refused ({refused})")

    with chess.engine.SimpleEngine.popen_uci(command, timeout=30) as engine:
        # Proven positions are scored as Fairy-Stockfish scores them.
        agreed = 0
        mates = [l.strip().rsplit(";", 1) for l in open(args.mates) if l.strip() and not l.startswith("#")]
        for fen, expected in mates[:12]:
            info = engine.analyse(chess.variant.AtomicBoard(fen), chess.engine.Limit(nodes=3000),
                                  game=f"mate {fen}")
            mate = info["score"].relative.mate()
            if mate is not None and mate != int(expected):
                fail(f"{fen}: engine says mate {mate}, Fairy-Stockfish mate {expected}")
            agreed += mate is not None
        if agreed < 8:
            fail(f"only {agreed} of 12 proven positions scored as mates")
        print(f"uci-check: {agreed} of 12 positions scored mate N, each N Fairy-Stockfish's "
              f"(a position not proven in 3000 playouts would be scored in cp)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--engine", required=True, help="the atomzero binary")
    parser.add_argument("--model", help="network for the engine (default: none)")
    parser.add_argument("--clock-plies", type=int, default=60)
    parser.add_argument("--lichess-bot-plies", type=int, default=80, help="plies a game at most")
    parser.add_argument("--mates", default="crates/mcts/tests/data/fsf-mates.txt")
    args = parser.parse_args()
    python_chess_games(args)
    raw_protocol(args)
    clock_game(args)
    lichess_bot_games(args)


if __name__ == "__main__":
    main()
