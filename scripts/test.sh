#!/usr/bin/env bash
# The whole test suite: every crate's tests (release profile, so the binary and the tests share
# one build of the dependencies), then the published perft suites through the CLI, then the
# cross-checks against independent implementations that live outside Cargo (Python).
#
# Usage: bash scripts/test.sh        (from anywhere inside the repository)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/atomzero/target}"

echo "== cargo test (release profile)"
cargo test --release --workspace --locked

bin="$CARGO_TARGET_DIR/release/atomzero"
cargo build --release --locked -p atomzero --quiet

echo "== perft: published atomic suite (full depth)"
"$bin" perft --suite crates/rules/tests/data/atomic.perft
echo "== perft: published variant suites (full depth)"
"$bin" perft --suite crates/rules/tests/data/atomic-variants.perft
echo "== perft: the Balanced start (full depth; checked against shakmaty and Fairy-Stockfish)"
"$bin" perft --suite crates/rules/tests/data/balanced.perft
echo "== perft: the bomb variant (full depth; checked against python-chess + our own detonation code)"
"$bin" perft --suite crates/rules/tests/data/bomb.perft

times=()
for script in scripts/checks/*.sh; do
  [ -e "$script" ] || continue
  echo "== $script"
  t0=$SECONDS
  bash "$script"
  times+=("$(printf '%5d s  %s' $((SECONDS - t0)) "$script")")
done
echo "== check times"
printf '%s\n' "${times[@]}"
echo "== all tests passed"
