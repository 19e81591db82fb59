#!/usr/bin/env bash
# A CUDA binary on a machine without an NVIDIA driver (CI): `gpu-check --device cuda`,
# `bench net --device cuda` and `run --config configs/default.toml` (device = "cuda") must
# each print exactly one line naming the driver's library (libcuda.so.1) and exit non-zero,
# without a panic or a backtrace. And the same binary on the CPU: two generations of
# configs/ci.toml with Burn's trainer (the second restores the first's optimizer state, which
# Burn puts on its default device: the GPU in this build, unless the binary pins it to the
# CPU as crates/cli/src/main.rs does) must finish. Skipped (exit 0) where a driver is installed.
#
# Usage: bash scripts/cuda-no-driver.sh BINARY
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:?usage: scripts/cuda-no-driver.sh BINARY}
if ldconfig -p 2> /dev/null | grep -q 'libcuda\.so\.1 '; then
  echo "SKIP cuda-no-driver: this machine has an NVIDIA driver (libcuda.so.1); run scripts/gpu-check.sh"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
for command in "gpu-check --device cuda" "bench net --device cuda --config tiny" \
  "run --config configs/default.toml --dir $work/run"; do
  status=0
  # shellcheck disable=SC2086 # the words of $command are the arguments
  "$bin" $command > "$work/out" 2>&1 || status=$?
  lines=$(wc -l < "$work/out")
  echo "atomzero $command -> exit $status, $lines line(s): $(head -c 400 "$work/out")"
  if [ "$status" = 0 ] || [ "$lines" != 1 ] || ! grep -q 'libcuda\.so\.1' "$work/out" ||
    grep -qi 'panicked\|backtrace' "$work/out"; then
    echo "FAILED: expected one line naming libcuda.so.1 and a non-zero exit status"
    failed=1
  fi
done
# The CPU path of the same binary, through a resumed optimizer.
sed -e 's/^\[train\]$/[train]\nbackend = "burn"/' configs/ci.toml > "$work/ci-burn.toml"
grep -q '^backend = "burn"$' "$work/ci-burn.toml" || { echo "FAILED: configs/ci.toml has no [train] table"; exit 1; }
status=0
"$bin" run --config "$work/ci-burn.toml" --dir "$work/cpu-run" > "$work/out" 2>&1 || status=$?
echo "atomzero run --config configs/ci.toml (device cpu, train.backend = \"burn\") -> exit $status; $(grep -c '^gen ' "$work/out") generation lines"
if [ "$status" != 0 ] || ! grep -q '^gen   2 ' "$work/out" || grep -qi 'panicked' "$work/out"; then
  echo "FAILED: expected generations 1 and 2 to finish on the cpu; the run printed:"
  tail -n 20 "$work/out"
  failed=1
fi
exit "$failed"
