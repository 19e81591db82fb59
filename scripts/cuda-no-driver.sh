#!/usr/bin/env bash
# A CUDA binary on a machine without an NVIDIA driver (CI): `gpu-check --device cuda`,
# `bench net --device cuda` and `run --config configs/default.toml` (device = "cuda") must
# each print exactly one line naming the driver's library (libcuda.so.1) and exit non-zero,
# without a panic or a backtrace. Skipped (exit 0) where a driver is installed.
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
exit "$failed"
