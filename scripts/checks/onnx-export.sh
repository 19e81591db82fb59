#!/usr/bin/env bash
# ONNX export against onnxruntime (pinned with numpy and python-chess in
# scripts/requirements.txt): `atomzero export --reference` writes 100 positions from random
# games (both colours to move), their encoded planes and the net's own outputs;
# scripts/onnx_check.py runs the ONNX file with onnxruntime and requires the same outputs within
# 1e-4, the documented interface and metadata, and planes that match an independent encoding of
# each FEN with python-chess. Three nets: a fresh tiny net, a fresh default-size net (squeeze-
# excitation), and a tiny net after a few training steps (batch norm statistics that are not
# the initial ones, so the folding matters). Skips (exit 0, with the reason) only if the Python
# packages cannot be installed. Seeds are fixed. About 10 s.
#
# Usage: bash scripts/checks/onnx-export.sh   (also run by scripts/test.sh)
set -euo pipefail
source "$(dirname "$0")/../check-common.sh"
python_or_skip onnx-export "onnxruntime/numpy/chess"

cargo build --release --locked -p atomzero --quiet
bin="$CARGO_TARGET_DIR/release/atomzero"

"$bin" export --model random --net tiny --seed 1 --out "$work/tiny.onnx" --reference "$work/tiny"
"$python" scripts/onnx_check.py --onnx "$work/tiny.onnx" --reference "$work/tiny"

"$bin" export --model random --net default --seed 2 --out "$work/default.onnx" \
  --reference "$work/default"
"$python" scripts/onnx_check.py --onnx "$work/default.onnx" --reference "$work/default"

"$bin" selfplay --model random --games 16 --seed 3 --out "$work/selfplay" > /dev/null
"$bin" train --data "$work/selfplay" --out "$work/train" --steps 5 > /dev/null
# Through safetensors export (load, check, save) first, then ONNX from the copy.
"$bin" export --model "$work/train/model.safetensors" --out "$work/trained.safetensors"
"$bin" export --model "$work/trained.safetensors" --out "$work/trained.onnx" --seed 4 \
  --reference "$work/trained"
"$python" scripts/onnx_check.py --onnx "$work/trained.onnx" --reference "$work/trained"
