#!/usr/bin/env bash
# Builds the atomzero binary with `--features cuda`, linked, on a machine that reaches only the
# package registries (no GitHub), and prints the binary's path as its last line.
#
# cubecl-cuda 0.11 turns kernels into PTX with LLVM's NVPTX backend, linked statically
# (cubecl-llvm). Its build dependency tracel-llvm-bundler downloads an LLVM 23 bundle from
# GitHub releases unless `<data dir>/tracel/tracel-llvm-<version>/.tracel-llvm-installed`
# exists, and cubecl-llvm's build script then asks `<that dir>/bin/llvm-config --link-static`
# for the flags. This script makes that directory itself, over Debian's LLVM 22 (`llvm-22-dev`
# from bookworm-security; LLVM 22 has every C function cubecl-llvm and pliron-llvm call):
#   - bin/llvm-config: a wrapper around Debian's llvm-config that drops Polly from `--libs`
#     (not installed, not needed), keeps only the system libraries LLVM's code in the binary
#     uses (`-lrt -ldl -lm -lz -lzstd`; Debian also lists libz3 as a full path, which the
#     bundler would turn into `-llibz3`, and libxml2) and names lib/ as `--libdir`;
#   - lib/: links to Debian's static LLVM libraries, and to the static libstdc++, zlib and zstd,
#     which the linker then finds before the shared ones: the binary needs only glibc and
#     libgcc_s (no LLVM, libstdc++ or CUDA toolkit at run time);
#   - .tracel-llvm-installed, so nothing is downloaded.
# The directory lives under this project's cache (XDG_DATA_HOME is pointed there for the build
# only), not in ~/.local/share, so other projects' cubecl builds are not affected.
#
# At run time the binary needs the NVIDIA driver (libcuda.so.1) and nothing else, except for
# kernels that call exp/log/tanh/erf (softmax, sigmoid): those link NVIDIA's libdevice.10.bc,
# which cubecl looks for under `$CUDA_PATH/nvvm/libdevice/` (or /usr/local/cuda, /opt/cuda).
# Unless a toolkit's copy is found, the script takes it from the PyPI wheel
# nvidia-cuda-nvcc-cu12 (once) and says which CUDA_PATH to set.
#
# Usage: bash scripts/cuda-build.sh [--profile NAME] [--features LIST]
#   --profile   cargo profile (default release; CI uses gpu-check, see Cargo.toml)
#   --features  cargo features of the atomzero crate (default cuda; `cuda,wgpu` builds both)
# Environment: CARGO_TARGET_DIR (the target dir used is "$CARGO_TARGET_DIR-cuda", default
# ~/.cache/atomzero/target-cuda, so the CPU build's artifacts are never touched; `cuda` and
# `cuda,wgpu` share it, so the second only builds what the wgpu feature changes),
# ATOMZERO_LLVM_CONFIG (an llvm-config of LLVM 22 or newer other than Debian's
# /usr/lib/llvm-22/bin/llvm-config), CUDARC_CUDA_VERSION (the CUDA driver API the bindings
# target, default 12080: drivers of CUDA 12.8 or newer).
# Everything but the last line goes to stderr. A second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release
features=cuda
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile=${2:?--profile needs a name}; shift 2 ;;
    --features) features=${2:?--features needs a list}; shift 2 ;;
    *) echo "cuda-build: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
case ",$features," in
  *,cuda,*) ;;
  *) echo "cuda-build: --features must include cuda (got '$features')" >&2; exit 2 ;;
esac

say() { echo "cuda-build: $*" >&2; }
cache="$HOME/.cache/atomzero"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$cache/target}-cuda"

# --- 1. Packages: Debian's LLVM 22 with its static libraries, static zlib and zstd, a C++
# compiler (cubecl-llvm compiles two small C++ shims against LLVM's headers).
llvm_config=${ATOMZERO_LLVM_CONFIG:-/usr/lib/llvm-22/bin/llvm-config}
gcc_lib() { g++ -print-file-name="$1" 2> /dev/null || true; }
have_packages() {
  [ -x "$llvm_config" ] && command -v g++ > /dev/null &&
    [ -f "$("$llvm_config" --libdir)/libLLVMNVPTXCodeGen.a" ] &&
    [ -f "$(gcc_lib libstdc++.a)" ] && [ -f "$(gcc_lib libz.a)" ] && [ -f "$(gcc_lib libzstd.a)" ]
}
if ! have_packages; then
  if [ -n "${ATOMZERO_LLVM_CONFIG:-}" ]; then
    say "$llvm_config: not an LLVM with static libraries and NVPTX (or g++, libstdc++.a, libz.a, libzstd.a missing)"
    exit 1
  fi
  packages=(llvm-22-dev libzstd-dev zlib1g-dev g++)
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo -n"; fi
  say "installing ${packages[*]} (apt)"
  export DEBIAN_FRONTEND=noninteractive
  if ! $sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" > /dev/null; then
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" > /dev/null
  fi
  have_packages || { say "the packages are installed but $llvm_config or a static library is still missing"; exit 1; }
fi
llvm_version=$("$llvm_config" --version)
if [ "${llvm_version%%.*}" -lt 22 ]; then
  say "$llvm_config is LLVM $llvm_version; cubecl-llvm needs LLVM 22 or newer"
  exit 1
fi

# --- 2. The bundle directory tracel-llvm-bundler looks for, named after the version in
# Cargo.lock.
bundler=$(awk '/^name = "tracel-llvm-bundler"$/ { getline; gsub(/"/, "", $3); print $3 }' Cargo.lock)
[ -n "$bundler" ] || { say "tracel-llvm-bundler is not in Cargo.lock"; exit 1; }
export XDG_DATA_HOME="$cache/llvm-shim"
llvm_dir="$XDG_DATA_HOME/tracel/tracel-llvm-$bundler"
mkdir -p "$llvm_dir/bin" "$llvm_dir/lib"
# Links and the marker are written only when missing or different: the build scripts of
# tracel-llvm-bundler and cubecl-llvm rerun when these files change, and everything that
# depends on them (cubek, burn) is rebuilt after them.
link() { [ "$(readlink "$2" 2> /dev/null)" = "$1" ] || ln -sfn "$1" "$2"; }
for lib in "$("$llvm_config" --libdir)"/lib*.a; do
  link "$lib" "$llvm_dir/lib/$(basename "$lib")"
done
for lib in libstdc++.a libz.a libzstd.a; do
  link "$(gcc_lib "$lib")" "$llvm_dir/lib/$lib"
done
wrapper=$(cat << EOF
#!/bin/sh
# Written by atomzero's scripts/cuda-build.sh: LLVM $llvm_version ($llvm_config) as
# tracel-llvm-bundler's bundle (see that script).
case " \$* " in
  *" --libdir "*) echo "$llvm_dir/lib" ;;
  *" --libs "*) "$llvm_config" "\$@" | tr ' ' '\n' | grep -v '^-lPolly' | tr '\n' ' '; echo ;;
  *" --system-libs "*) echo "-lrt -ldl -lm -lz -lzstd" ;;
  *) exec "$llvm_config" "\$@" ;;
esac
EOF
)
if [ "$(cat "$llvm_dir/bin/llvm-config" 2> /dev/null)" != "$wrapper" ]; then
  printf '%s\n' "$wrapper" > "$llvm_dir/bin/llvm-config.tmp"
  chmod +x "$llvm_dir/bin/llvm-config.tmp"
  mv "$llvm_dir/bin/llvm-config.tmp" "$llvm_dir/bin/llvm-config"
fi
[ -f "$llvm_dir/.tracel-llvm-installed" ] || touch "$llvm_dir/.tracel-llvm-installed"

# --- 3. Build. cudarc's build script would ask nvcc for the CUDA version (none here).
export CUDARC_CUDA_VERSION="${CUDARC_CUDA_VERSION:-12080}"
say "LLVM $llvm_version as tracel-llvm $bundler; cargo build --profile $profile --features $features (target dir $CARGO_TARGET_DIR)"
start=$SECONDS
cargo build --locked --profile "$profile" -p atomzero --features "$features" >&2
dir=$profile
[ "$profile" = dev ] && dir=debug
bin="$CARGO_TARGET_DIR/$dir/atomzero"
say "built in $((SECONDS - start)) s"
# .ci/run builds this stage only when the target dir holds a finished build (see there).
touch "$CARGO_TARGET_DIR/$dir/.cuda-build-finished"

# --- 4. libdevice.10.bc for the kernels that need it, unless a toolkit has it.
libdevice=""
for root in "${CUDA_PATH:-}" /usr/local/cuda /opt/cuda /usr/lib/cuda; do
  if [ -n "$root" ] && [ -f "$root/nvvm/libdevice/libdevice.10.bc" ]; then
    libdevice="$root/nvvm/libdevice/libdevice.10.bc"
    break
  fi
done
if [ -z "$libdevice" ]; then
  cuda_path="$cache/cuda"
  libdevice="$cuda_path/nvvm/libdevice/libdevice.10.bc"
  if [ ! -f "$libdevice" ]; then
    say "fetching libdevice.10.bc from the PyPI wheel nvidia-cuda-nvcc-cu12"
    wheels=$(mktemp -d)
    trap 'rm -rf "$wheels"' EXIT
    python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$wheels" \
      nvidia-cuda-nvcc-cu12 >&2
    mkdir -p "$(dirname "$libdevice")"
    python3 - "$wheels" "$libdevice" << 'EOF'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith("nvvm/libdevice/libdevice.10.bc"))
    with open(sys.argv[2] + ".tmp", "wb") as out:
        out.write(z.read(name))
EOF
    mv "$libdevice.tmp" "$libdevice"
  fi
  say "libdevice: $libdevice (set CUDA_PATH=$cuda_path when running on a machine without the CUDA toolkit)"
else
  say "libdevice: $libdevice"
fi
echo "$bin"
