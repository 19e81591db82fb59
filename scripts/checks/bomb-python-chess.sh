#!/usr/bin/env bash
# The bomb variant's perft (crates/rules/tests/data/bomb.perft) against an independent count:
# scripts/bomb_perft.py takes python-chess's standard-chess legal moves (pinned in
# scripts/requirements.txt) and adds the setup choices, the bombs' bookkeeping and the
# detonation with its own explosion and legality code; on every suite line up to the node
# budget it compares its count with the file and with `atomzero perft --variant bomb`. Then
# `atomzero perft --suite` checks every line of the file (all depths). Skips (exit 0, with the
# reason) only if the Python packages cannot be installed. About 30 s (python-chess counts
# ~20,000 nodes/s).
#
# Usage: bash scripts/checks/bomb-python-chess.sh [MAX_NODES]   (also run by scripts/test.sh)
set -euo pipefail
source "$(dirname "$0")/../check-common.sh"
python_or_skip bomb-python-chess "python-chess"

cargo build --release --locked -p atomzero --quiet
bin="$CARGO_TARGET_DIR/release/atomzero"
suite=crates/rules/tests/data/bomb.perft

"$python" scripts/bomb_perft.py "$suite" --engine "$bin" --max-nodes "${1:-60000}"
"$bin" perft --variant bomb --suite "$suite"
