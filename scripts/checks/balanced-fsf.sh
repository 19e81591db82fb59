#!/usr/bin/env bash
# Perft of the Balanced start (White removes a pawn, then Black moves) against Fairy-Stockfish
# for atomic, nocheckatomic and atomar, depths 1-4: scripts/balanced_fsf_perft.py sums
# Fairy-Stockfish's `go perft` over the 16 positions after a removal. Builds the engine with
# scripts/fairy-stockfish.sh (cached); skips (exit 0, with the reason) only if its sdist cannot
# be downloaded. Shakmaty checks atomic in `cargo test` (crates/rules/tests/balanced.rs).
#
# Usage: bash scripts/checks/balanced-fsf.sh   (also run by scripts/test.sh)
set -euo pipefail
source "$(dirname "$0")/../check-common.sh"

if ! fsf=$(bash scripts/fairy-stockfish.sh 2> "$work/fsf.err"); then
  if grep -qi 'pip download\|could not\|network\|connection' "$work/fsf.err"; then
    echo "SKIP balanced-fsf: $(grep -v '^[[:space:]]*$' "$work/fsf.err" | tail -n 1)"
    exit 0
  fi
  cat "$work/fsf.err" >&2
  exit 1
fi
cargo build --release --locked -p atomzero --quiet
python3 scripts/balanced_fsf_perft.py "$fsf" "$CARGO_TARGET_DIR/release/atomzero" 4
