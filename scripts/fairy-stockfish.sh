#!/usr/bin/env bash
# Builds Fairy-Stockfish (the strongest atomic engine) once and prints the path of its UCI
# binary. Its C++ source ships in the pyffish source distribution on PyPI: this script downloads
# that sdist with pip (pinned version and SHA-256), compiles the engine (every src/*.cpp and the
# syzygy and NNUE sources except the Python/JS bindings) with g++ into a cache directory, checks
# that the binary answers `uci` with atomic among its variants, and prints its path. Later calls
# print the cached path at once.
#
# The ladder uses it through `fsf:depth=N` / `fsf:nodes=N` / `fsf:movetime=MS` player specs
# (crates/eval/src/spec.rs), which find the binary through $ATOMZERO_FSF or this script's cache.
# No NNUE net is embedded (-DNNUE_EMBEDDING_OFF), so the engine plays atomic with its classical
# evaluation, which is how it is rated here.
#
# It is built as Fairy-Stockfish's own Makefile builds its fast 8x8 engines (ARCH=x86-64-bmi2,
# largeboards=no): -O3, 64-bit bitboards, and the host's POPCNT, PEXT (BMI2) and AVX2 where
# /proc/cpuinfo lists them. Until 2026-12-03 this script built with -O2 and -DLARGEBOARDS
# (128-bit bitboards) and none of them: 1.2-2x fewer nodes per second, about 75 Elo at 0.1 s
# a move (docs/experiments.md, "The Fairy-Stockfish we measured against"). The flags are
# written beside the binary (build-flags); a cached binary built with other flags is rebuilt.
#
# Usage: bash scripts/fairy-stockfish.sh      (prints e.g. ~/.cache/atomzero/fairy-stockfish/0.0.90/fairy-stockfish)
# Env:   ATOMZERO_CACHE (default ~/.cache/atomzero), CXX (default g++), JOBS (default nproc)
set -euo pipefail

version=0.0.90
sha256=4a79601d85f392bce03705a275fb5f03dc44a554b26d32d518fb6887d772f701
cache="${ATOMZERO_CACHE:-$HOME/.cache/atomzero}/fairy-stockfish/$version"
bin="$cache/fairy-stockfish"

check() {
  # The engine must start, speak UCI and offer atomic.
  printf 'uci\nquit\n' | timeout 20 "$1" 2> /dev/null | grep -q 'option name UCI_Variant.* var atomic'
}

flags=(-std=c++17 -O3 -DNDEBUG -DIS_64BIT -DALLVARS -DNNUE_EMBEDDING_OFF)
cpu_flags=" $(grep -m1 '^flags' /proc/cpuinfo 2> /dev/null | cut -d: -f2) "
if [[ "$cpu_flags" == *" popcnt "* && "$cpu_flags" == *" sse4_2 "* ]]; then
  flags+=(-DUSE_POPCNT -msse4.2 -mpopcnt -DUSE_SSE41 -msse4.1 -DUSE_SSSE3 -mssse3 -DUSE_SSE2 -msse2)
fi
# PEXT only where it is fast: AMD before Zen 3 (CPU family 25) runs it in microcode, and a PEXT
# build searched 0.68 million nodes per second on a Zen 2 EPYC against 0.85 million without it
# (as Stockfish's Makefile and its get_native_properties.sh choose x86-64-avx2 there).
cpu_vendor=$(grep -m1 '^vendor_id' /proc/cpuinfo 2> /dev/null | cut -d: -f2 | tr -d ' ')
cpu_family=$(grep -m1 '^cpu family' /proc/cpuinfo 2> /dev/null | cut -d: -f2 | tr -d ' ')
slow_pext=false
[[ "$cpu_vendor" == AuthenticAMD && "${cpu_family:-0}" -lt 25 ]] && slow_pext=true
[[ "$cpu_flags" == *" bmi2 "* && $slow_pext == false ]] && flags+=(-DUSE_PEXT -mbmi2)
[[ "$cpu_flags" == *" avx2 "* ]] && flags+=(-DUSE_AVX2 -mavx2)

if [ -x "$bin" ] && [ "$(cat "$cache/build-flags" 2> /dev/null)" = "${flags[*]}" ] && check "$bin"; then
  echo "$bin"
  exit 0
fi

command -v "${CXX:-g++}" > /dev/null || { echo "fairy-stockfish.sh: ${CXX:-g++} not found" >&2; exit 1; }
mkdir -p "$cache"
work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "fairy-stockfish.sh: downloading the pyffish $version source distribution" >&2
python3 -m pip download --quiet --disable-pip-version-check --no-binary :all: --no-deps \
  "pyffish==$version" -d "$work" >&2
sdist="$work/pyffish-$version.tar.gz"
got=$(sha256sum "$sdist" | cut -d' ' -f1)
if [ "$got" != "$sha256" ]; then
  echo "fairy-stockfish.sh: $sdist has SHA-256 $got, expected $sha256" >&2
  exit 1
fi
tar xzf "$sdist" -C "$work"
src="$work/pyffish-$version/src"

sources=()
for f in "$src"/*.cpp "$src"/syzygy/*.cpp "$src"/nnue/*.cpp "$src"/nnue/features/*.cpp; do
  case "$(basename "$f")" in pyffish.cpp | ffishjs.cpp) continue ;; esac
  sources+=("$f")
done
jobs="${JOBS:-$(nproc)}"
echo "fairy-stockfish.sh: compiling ${#sources[@]} files with ${CXX:-g++} ${flags[*]} ($jobs jobs, a few minutes)" >&2
mkdir -p "$work/obj"
printf '%s\n' "${sources[@]}" | xargs -P "$jobs" -I{} sh -c \
  'f="$1"; shift; o="$0/$(echo "$f" | md5sum | cut -c1-12).o"; "${CXX:-g++}" "$@" -c "$f" -o "$o"' \
  "$work/obj" {} "${flags[@]}"
"${CXX:-g++}" -o "$work/fairy-stockfish" "$work"/obj/*.o -pthread

if ! check "$work/fairy-stockfish"; then
  echo "fairy-stockfish.sh: the built engine does not answer 'uci' with atomic among its variants" >&2
  exit 1
fi
mv -f "$work/fairy-stockfish" "$bin.tmp"
mv -f "$bin.tmp" "$bin"
echo "${flags[*]}" > "$cache/build-flags.tmp"
mv -f "$cache/build-flags.tmp" "$cache/build-flags"
echo "$bin"
