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

if [ -x "$bin" ] && check "$bin"; then
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

flags=(-std=c++17 -O2 -DNDEBUG -DIS_64BIT -DLARGEBOARDS -DALLVARS -DPRECOMPUTED_MAGICS
  -DNNUE_EMBEDDING_OFF)
sources=()
for f in "$src"/*.cpp "$src"/syzygy/*.cpp "$src"/nnue/*.cpp "$src"/nnue/features/*.cpp; do
  case "$(basename "$f")" in pyffish.cpp | ffishjs.cpp) continue ;; esac
  sources+=("$f")
done
jobs="${JOBS:-$(nproc)}"
echo "fairy-stockfish.sh: compiling ${#sources[@]} files with ${CXX:-g++} ($jobs jobs, a few minutes)" >&2
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
echo "$bin"
