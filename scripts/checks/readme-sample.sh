#!/usr/bin/env bash
# The README's quick-start sample is what the current binary prints: starts
# `atomzero run --config configs/tiny.toml` in a scratch directory, takes its first two lines
# (the run header and generation 0: the seeded initial network measured against the
# baselines, which is deterministic on any machine) and checks that the README's sample block
# begins with the same two lines: the same words, and the same numbers within 10% (or 5 units)
# each, ignoring only the trailing wall time (`| 13 s`). Generation 0 is seeded, but the
# network's last bits differ between SIMD paths (AVX2, AVX-512), which can change a move of
# one game, so numbers are compared with a tolerance; a stale sample (another initial network,
# other baselines or games) differs by more. The run is stopped once generation 0 is printed
# (~15 s). Later lines of the sample depend on training, which is not bit-reproducible, so
# they are a record of one run rather than a prediction.
#
# Usage: bash scripts/checks/readme-sample.sh   (also run by scripts/test.sh)
set -euo pipefail
source "$(dirname "$0")/../check-common.sh"
root=$(pwd)

cargo build --release --locked -p atomzero --quiet
bin="$CARGO_TARGET_DIR/release/atomzero"

(cd "$work" && exec "$bin" run --config "$root/configs/tiny.toml") > "$work/out" 2>&1 &
pid=$!
# Follow the output until generation 0's line (tail -f wakes on writes; no fixed sleep).
timeout 600 tail -n +1 -f "$work/out" | grep -m 1 -q '^gen   0 ' || true
kill "$pid" 2> /dev/null || true
wait "$pid" 2> /dev/null || true

strip() { sed -E 's/ \| [0-9]+ s$//'; }
actual=$(grep -m 2 -E '^(new run in|gen   0 )' "$work/out" | strip)
expected=$(awk '/^```text$/ { inside = 1; next } inside && /^```$/ { exit } inside' README.md \
  | head -n 2 | strip)
if [ "$(wc -l <<< "$actual")" -ne 2 ]; then
  echo "readme-sample: the run did not print its header and generation 0:" >&2
  cat "$work/out" >&2
  exit 1
fi
words() { sed -E 's/[0-9]+(\.[0-9]+)?/N/g'; }
numbers() { grep -oE '[0-9]+(\.[0-9]+)?' | tr '\n' ' '; }
close=$(awk -v a="$(numbers <<< "$expected")" -v b="$(numbers <<< "$actual")" 'BEGIN {
  n = split(a, x, " "); m = split(b, y, " ")
  if (n != m) { print "no"; exit }
  for (i = 1; i <= n; i++) {
    d = x[i] - y[i]; if (d < 0) d = -d
    if (d > 5 && d > 0.1 * x[i]) { print "no"; exit }
  }
  print "yes"
}')
if [ "$(words <<< "$actual")" != "$(words <<< "$expected")" ] || [ "$close" != yes ]; then
  echo "readme-sample: README.md's quick-start sample differs from what the binary prints" >&2
  diff <(echo "$expected") <(echo "$actual") >&2 || true
  exit 1
fi
echo "readme-sample: ok ($(sed -n 2p <<< "$actual" | cut -c1-60)...)"
