#!/usr/bin/env bash
# The wgpu backend for real, on Mesa's software Vulkan driver (lavapipe): installs
# mesa-vulkan-drivers from Debian's packages if it is missing, then runs atomzero-nn's
# `wgpu_forward_matches_cpu` (one forward pass of a tiny SE net on wgpu against the CPU backend,
# tolerance 1e-3; it prints the adapter and the largest difference). Skips (exit 0, with the
# reason) only if the driver cannot be installed. It builds with the `gpu-check` profile
# (Cargo.toml: opt-level 1, no debug info): Burn's crates are built again with the wgpu
# feature, and at the release profile's opt-level 3 that took 29 minutes on 2 cores from an
# empty target dir (2026-11-23); at opt-level 1 it took 11 min 16 s (2026-11-25, different
# days, not interleaved). Warm, it only rebuilds what changed. The test itself takes ~60 s
# (kernel compilation on the CPU).
#
# Usage: bash scripts/checks/wgpu-lavapipe.sh   (also run by scripts/test.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/atomzero/target}"

icd_present() { ls /usr/share/vulkan/icd.d/lvp_icd*.json > /dev/null 2>&1; }
if ! icd_present; then
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo -n"; fi
  log=$(mktemp)
  if ! { $sudo apt-get update -qq && \
         DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq mesa-vulkan-drivers; } \
       > "$log" 2>&1 || ! icd_present; then
    echo "SKIP wgpu on lavapipe: could not install mesa-vulkan-drivers ($(tail -n 1 "$log"))"
    rm -f "$log"
    exit 0
  fi
  rm -f "$log"
fi

# Mesa's loader wants a runtime directory (it complains on stderr without one).
if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -d "$XDG_RUNTIME_DIR" ]; then
  XDG_RUNTIME_DIR=$(mktemp -d)
  export XDG_RUNTIME_DIR
  trap 'rm -rf "$XDG_RUNTIME_DIR"' EXIT
fi

cargo test --profile gpu-check --locked -p atomzero-nn --features wgpu --test wgpu \
  wgpu_forward_matches_cpu \
  -- --exact --nocapture 2>&1 | grep -E "wgpu adapter|wgpu vs cpu|test result|panicked|error" 
test "${PIPESTATUS[0]}" = 0
