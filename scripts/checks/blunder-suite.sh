#!/usr/bin/env bash
# scripts/blunder_suite.py end to end (issue 42's screen of the engine's own blunders): from one
# real game the engine lost to Fairy-Stockfish at 0.5 s a move (scripts/checks/blunder-game.pgn,
# Change 17's match), `make` with a 200 cp swing must find the one blunder Fairy-Stockfish
# confirms at depth 14 (exd5, where c3 holds: ce -14, after it -2.43; the figures are those of
# scripts/fairy-stockfish.sh's build since 2026-12-03, 64-bit bitboards) and write it as an EPD
# line with `am`/`bm`/`ce`; `run` must then judge Fairy-Stockfish itself (1,000,000 nodes; at
# 400,000 it still plays g4) as avoiding it and report our engine's move (64 playouts) in the
# summary; a suite line without `am`/`ce` is refused
# with its file and line. Depth- and node-limited single-threaded
# Fairy-Stockfish is deterministic. Skips (exit 0, with the reason) only if the Python packages or
# Fairy-Stockfish cannot be installed. About 10 s.
#
# Usage: bash scripts/checks/blunder-suite.sh   (also run by scripts/test.sh)
set -euo pipefail
source "$(dirname "$0")/../check-common.sh"
python_or_skip blunder-suite "python-chess"
if ! fsf=$(bash scripts/fairy-stockfish.sh 2> "$work/fsf.err"); then
  echo "SKIP blunder-suite: $(grep -v '^[[:space:]]*$' "$work/fsf.err" | tail -n 1)"
  exit 0
fi
cargo build --release --locked -p atomzero --quiet
bin="$CARGO_TARGET_DIR/release/atomzero"

"$python" scripts/blunder_suite.py make --fsf "$fsf" --out "$work/suite.epd" \
  --swing 200 scripts/checks/blunder-game.pgn:atomzero > "$work/make.log"
want='rnbqkb1r/1pp3pp/p4p1n/3pp3/3PP3/N6P/PPP2PP1/R1BQKBNR w KQkq - am exd5; bm c3; ce -14; id "blunder-game.pgn game 1 ply 5"; c0 "after -2.43";'
if [ "$(cat "$work/suite.epd")" != "$want" ]; then
  echo "blunder-suite: make wrote"; cat "$work/suite.epd"; echo "expected"; echo "$want"
  cat "$work/make.log"; exit 1
fi
"$python" scripts/blunder_suite.py run --fsf "$fsf" --epd "$work/suite.epd" --nodes 1000000 \
  --swing 200 --engine "fsf=$fsf" > "$work/fsf.log"
grep -q '^fsf: solved 1/1 ' "$work/fsf.log" || { echo "blunder-suite: FSF not judged as solving"; cat "$work/fsf.log"; exit 1; }
"$python" scripts/blunder_suite.py run --fsf "$fsf" --epd "$work/suite.epd" --nodes 64 --swing 200 \
  --engine "az=$bin uci" --engine "az-t22=$bin uci ## PolicyTemperature=2.2" > "$work/az.log"
grep -q '^az: solved [01]/1 (.*), mean nodes' "$work/az.log" || { echo "blunder-suite: no summary"; cat "$work/az.log"; exit 1; }
grep -q '^az-t22: solved [01]/1 .*; against az: ' "$work/az.log" || { echo "blunder-suite: no comparison"; cat "$work/az.log"; exit 1; }
printf 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - bm e4;\n' > "$work/bad.epd"
if "$python" scripts/blunder_suite.py run --fsf "$fsf" --epd "$work/bad.epd" --engine "az=$bin uci" \
  2> "$work/bad.err"; then
  echo "blunder-suite: a suite line without am/ce was accepted"; exit 1
fi
grep -q 'bad.epd:1: needs `am`' "$work/bad.err" || { echo "blunder-suite: no clear error"; cat "$work/bad.err"; exit 1; }
echo "blunder-suite: the blunder found and judged ($(grep -c . "$work/suite.epd") position); $(grep '^az:' "$work/az.log")"
