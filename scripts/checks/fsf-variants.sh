#!/usr/bin/env bash
# Differential test against Fairy-Stockfish (pyffish, pinned in scripts/requirements.txt): plays
# random games with crates/rules/examples/dump_games.rs and has scripts/fsf_diff.py compare every
# position's legal moves, the position after each move and the game ends with pyffish, for
# atomic, nocheckatomic and atomar. Skips (exit 0, with the reason) if pyffish cannot be
# installed. Seeds are fixed, so a run is reproducible.
#
# Each pyffish call costs ~1.5 ms (it re-initialises engine tables), about 3 ms a position; the
# game counts keep the three variants, run side by side, well under a minute on two cores.
#
# Usage: bash scripts/checks/fsf-variants.sh   (also run by scripts/test.sh)
set -euo pipefail
source "$(dirname "$0")/../check-common.sh"
python_or_skip fsf-variants "pyffish"

cargo build --release --locked -p atomzero-rules --example dump_games --quiet
dump="$CARGO_TARGET_DIR/release/examples/dump_games"

# variant games seed: 3,100-3,700 positions each. Games run to 400 plies so that the fixed
# seeds also reach checkmate, the fifty-move rule, threefold repetition, insufficient material
# and (nocheckatomic) moves that explode both kings.
runs=("atomic 25 1" "nocheckatomic 50 2" "atomar 20 3")
pids=()
for run in "${runs[@]}"; do
  read -r variant games seed <<< "$run"
  (
    "$dump" --variant "$variant" --games "$games" --seed "$seed" --max-plies 400 \
      | "$python" scripts/fsf_diff.py --variant "$variant"
  ) > "$work/$variant.out" 2>&1 &
  pids+=($!)
done

status=0
for i in "${!runs[@]}"; do
  read -r variant _ <<< "${runs[$i]}"
  wait "${pids[$i]}" || status=1
  cat "$work/$variant.out"
done
exit "$status"
