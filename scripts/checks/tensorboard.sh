#!/usr/bin/env bash
# TensorBoard event files against TensorBoard's own reader (tensorboard pinned in
# scripts/requirements.txt): a short `atomzero run` on configs/ci.toml writes training scalars
# (by step) and self-play / gate / evaluation scalars (by generation); scripts/tb_check.py
# loads the directory with tensorboard's EventAccumulator and requires every documented tag with
# the expected number of points and finite values. Skips (exit 0, with the reason) only if the
# Python packages cannot be installed. About 5 s.
#
# Usage: bash scripts/checks/tensorboard.sh   (also run by scripts/test.sh)
set -euo pipefail
source "$(dirname "$0")/../check-common.sh"
python_or_skip tensorboard "tensorboard"

cargo build --release --locked -p atomzero --quiet
bin="$CARGO_TARGET_DIR/release/atomzero"
"$bin" run --config configs/ci.toml --dir "$work/run" > "$work/run.log"
"$python" scripts/tb_check.py "$work/run/tensorboard" --generations 2 --steps 20 --log-every 2
