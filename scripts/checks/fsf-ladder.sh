#!/usr/bin/env bash
# The Fairy-Stockfish rungs of the ladder, end to end: builds the engine with
# scripts/fairy-stockfish.sh (cached after the first build, ~2 min), then plays short matches
# through `atomzero match` with the `fsf:` player specs: Fairy-Stockfish at depth 1 must beat
# the random player in every game, and at depth 5 must outscore depth 1 over 20 games from the
# opening book (depths 1, 2 and 3 play about evenly against each other in atomic: 20-game
# matches scored 52% and 47% for depth 2 and 3 against depth 1, depth 5 75%). Fixed seeds;
# depth-limited single-threaded Fairy-Stockfish is deterministic.
# Skips (exit 0, with the reason) only if the sdist cannot be downloaded (no registry access).
#
# Usage: bash scripts/checks/fsf-ladder.sh   (also run by scripts/test.sh)
set -euo pipefail
source "$(dirname "$0")/../check-common.sh"

if ! fsf=$(bash scripts/fairy-stockfish.sh 2> "$work/fsf.err"); then
  if grep -qi 'pip download\|could not\|network\|connection' "$work/fsf.err"; then
    echo "SKIP fsf-ladder: $(grep -v '^[[:space:]]*$' "$work/fsf.err" | tail -n 1)"
    exit 0
  fi
  cat "$work/fsf.err" >&2
  exit 1
fi
export ATOMZERO_FSF="$fsf"
cargo build --release --locked -p atomzero --quiet
bin="$CARGO_TARGET_DIR/release/atomzero"

score() { # prints the first engine's points as "W-L-D" from the match's last score line
  grep '^Score of' "$1" | tail -n 1
}

"$bin" match --engine fsf:depth=1 --engine random --games 6 --seed 3 --concurrency 2 \
  > "$work/random.out"
line=$(score "$work/random.out")
echo "$line"
[[ "$line" =~ :\ 6\ -\ 0\ -\ 0 ]] || { echo "fsf:depth=1 dropped points to random" >&2; exit 1; }

"$bin" match --engine fsf:depth=5 --engine fsf:depth=1 --games 20 --seed 5 --concurrency 2 \
  --openings crates/eval/tests/data/atomic-openings.epd > "$work/depth.out"
line=$(score "$work/depth.out")
echo "$line"
read -r wins losses _draws < <(sed -E 's/.*: ([0-9]+) - ([0-9]+) - ([0-9]+).*/\1 \2 \3/' <<< "$line")
if (( wins <= losses )); then
  echo "fsf:depth=5 did not outscore fsf:depth=1" >&2
  exit 1
fi
echo "fsf-ladder: ok"
