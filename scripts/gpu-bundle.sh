#!/usr/bin/env bash
# Packs what scripts/gpu-check.sh needs on a GPU machine that has the NVIDIA driver and
# nothing else (no CUDA toolkit, no Vulkan loader, no internet) into gpu-bundle/ (ignored by
# git; hand it over with the working tree):
#   atomzero.xz          the binary of scripts/cuda-build.sh (release profile), debug info
#                        stripped, xz -9 (xz is on every Debian/Ubuntu base system; the check
#                        falls back to Python's lzma)
#   cuda/nvvm/libdevice/libdevice.10.bc   NVIDIA's math library for kernels that call
#                        exp/log/tanh/erf (the check sets CUDA_PATH=gpu-bundle/cuda)
#   lib/                 Debian's Vulkan loader (libvulkan1) and glvnd's libGLdispatch/libGLX
#                        (the driver's Vulkan ICD needs them), for the wgpu route; used only
#                        where the machine has no loader of its own
#   MANIFEST             what was packed: commit, features, sizes, sha256
# and prints the bundle's total size; the device machine takes at most 64 MiB together with
# the working tree, so this fails above 56 MiB.
#
# Usage: bash scripts/gpu-bundle.sh [--features LIST] [--profile NAME]
#   --features  default cuda,wgpu: both routes
#   --profile   default release (the one to measure with); CI's gpu-check profile (opt-level 1)
#               makes a bundle fit only for `scripts/gpu-check.sh --cpu`, the rehearsal
set -euo pipefail
cd "$(dirname "$0")/.."
features=cuda,wgpu
profile=release
while [ $# -gt 0 ]; do
  case "$1" in
    --features) features=${2:?--features needs a list}; shift 2 ;;
    --profile) profile=${2:?--profile needs a name}; shift 2 ;;
    *) echo "gpu-bundle: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
limit=$((56 * 1024 * 1024))

bin=$(bash scripts/cuda-build.sh --features "$features" --profile "$profile" | tail -n 1)
out=gpu-bundle
rm -rf "$out.tmp"
mkdir -p "$out.tmp/cuda/nvvm/libdevice" "$out.tmp/lib"

# The binary: debug info (line tables of the release profile) stripped, symbols kept for
# readable panics; compressed.
objcopy --strip-debug "$bin" "$out.tmp/atomzero"
xz -9 -T0 -c "$out.tmp/atomzero" > "$out.tmp/atomzero.xz"
unpacked=$(stat -c %s "$out.tmp/atomzero")
rm "$out.tmp/atomzero"

# libdevice: a toolkit's, or the copy cuda-build.sh took from PyPI.
libdevice=""
for root in "${CUDA_PATH:-}" /usr/local/cuda /opt/cuda /usr/lib/cuda "$HOME/.cache/atomzero/cuda"; do
  if [ -n "$root" ] && [ -f "$root/nvvm/libdevice/libdevice.10.bc" ]; then
    libdevice="$root/nvvm/libdevice/libdevice.10.bc"
    break
  fi
done
[ -n "$libdevice" ] || { echo "gpu-bundle: no libdevice.10.bc (scripts/cuda-build.sh fetches it)" >&2; exit 1; }
cp "$libdevice" "$out.tmp/cuda/nvvm/libdevice/"

# The Vulkan loader, from Debian's package (no install needed: apt-get download + dpkg-deb).
case ",$features," in
  *,wgpu,*)
    debs=$(mktemp -d)
    # The loader, and glvnd's dispatch libraries: the NVIDIA driver's Vulkan ICD
    # (libGLX_nvidia.so.0) needs libGLdispatch.so.0. On an H200 with the driver only, the
    # loader alone found "no adapter" (docs/gpu.md).
    (cd "$debs" && apt-get download -qq libvulkan1 libglvnd0 libglx0 > /dev/null 2>&1)
    for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$debs/root"; done
    cp -L "$debs"/root/usr/lib/*/libvulkan.so.1 "$debs"/root/usr/lib/*/libGLdispatch.so.0 \
      "$debs"/root/usr/lib/*/libGLX.so.0 "$out.tmp/lib/"
    rm -rf "$debs"
    ;;
esac

{
  echo "commit $(git rev-parse HEAD)$(git diff --quiet HEAD -- . ':!gpu-bundle' || echo ' (with uncommitted changes)')"
  echo "features $features, profile $profile, built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "binary $unpacked bytes unpacked; needs glibc >= $(objdump -T "$bin" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1 | cut -d_ -f2)"
  echo "dynamic libraries: $(objdump -p "$bin" | awk '/NEEDED/ { printf "%s ", $2 }')"
  (cd "$out.tmp" && find . -type f ! -name MANIFEST -printf '%P\n' | sort | xargs sha256sum)
} > "$out.tmp/MANIFEST"
rm -rf "$out"
mv "$out.tmp" "$out"
total=$(du -sb "$out" | cut -f1)
cat "$out/MANIFEST" >&2
echo "gpu-bundle: $out/ is $total bytes ($(( total / 1024 / 1024 )) MiB; atomzero.xz $(stat -c %s "$out/atomzero.xz") bytes)" >&2
if [ "$total" -gt "$limit" ]; then
  echo "gpu-bundle: larger than $((limit / 1024 / 1024)) MiB: it does not fit beside the working tree" >&2
  exit 1
fi
echo "$out"
