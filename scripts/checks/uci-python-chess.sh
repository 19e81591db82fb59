#!/usr/bin/env bash
# The UCI engine driven by python-chess (pinned in scripts/requirements.txt), as GUIs and
# lichess-bot drive it: scripts/uci_check.py plays whole atomic games through
# chess.engine.SimpleEngine on python-chess's AtomicBoard (UCI_Variant=atomic, every move
# checked legal there), with a freshly initialised tiny net (exported as safetensors) and with
# no model (the shipped network); checks `go infinite` + `stop`, junk input followed by
# `isready`, and 1+0.1 games against the clock; then plays as lichess-bot does: `atomzero` started
# with no command, lichess-bot's default uci_options (less SyzygyPath, as docs/engine.md says),
# ponder on, clocks with increment, `ucinewgame` between games, `bestmove (none)` after a game,
# `score mate N` as Fairy-Stockfish scores it. Skips (exit 0, with the reason) only if the
# Python packages cannot be installed. About 30 s.
#
# Usage: bash scripts/checks/uci-python-chess.sh   (also run by scripts/test.sh)
set -euo pipefail
source "$(dirname "$0")/../check-common.sh"
python_or_skip uci-python-chess "python-chess"

cargo build --release --locked -p atomzero --quiet
bin="$CARGO_TARGET_DIR/release/atomzero"

"$bin" export --model random --seed 1 --out "$work/net.safetensors" > /dev/null
"$python" scripts/uci_check.py --engine "$bin" --model "$work/net.safetensors"
"$python" scripts/uci_check.py --engine "$bin"
