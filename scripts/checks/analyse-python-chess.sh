#!/usr/bin/env bash
# `atomzero analyse` read back by python-chess (pinned in scripts/requirements.txt): four real
# atomic games (`atomzero match` of the shipped network against alphabeta:depth=2, --pgn) are
# analysed at 200 playouts a position on two threads, and scripts/analyse_check.py checks with
# python-chess that every move has its [%eval], the judgement NAGs carry lichess's words, every
# variation is legal and the games are unchanged; then a blunder planted in the first game (a
# move that lets the opponent explode the king at once) must be marked $4 when analysed from
# standard input. Skips (exit 0, with the reason) only if the Python packages cannot be
# installed. About 10 s.
#
# Usage: bash scripts/checks/analyse-python-chess.sh   (also run by scripts/test.sh)
set -euo pipefail
source "$(dirname "$0")/../check-common.sh"
python_or_skip analyse-python-chess "python-chess"

cargo build --release --locked -p atomzero --quiet
bin="$CARGO_TARGET_DIR/release/atomzero"

"$bin" match --engine net:shipped,nodes=32 --engine alphabeta:depth=2 --games 4 --seed 5 \
  --pgn "$work/games.pgn" > /dev/null
"$bin" analyse "$work/games.pgn" --nodes 200 --threads 2 --out "$work/analysed.pgn"
"$python" scripts/analyse_check.py --engine "$bin" --games "$work/games.pgn" \
  --analysed "$work/analysed.pgn" --analyse-args "--nodes 200"
