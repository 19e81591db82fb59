#!/usr/bin/env bash
# `atomzero serve` end to end in a real browser: makes a tiny run (configs/ci.toml, two
# generations), starts `atomzero serve` on a free localhost port and runs
# scripts/serve_browser.mjs in headless Debian chromium through playwright-core (both
# installed by scripts/browser-env.sh): the dashboard shows the run's generations and a new one
# appears live, a game is stepped through with the keys (explosions highlighted, the search's
# policy shown), and a whole game is played against the best network by clicking squares. The
# screenshots are kept in $ATOMZERO_SCREENSHOTS (default ~/.cache/atomzero/serve-screenshots).
# About 30 s once installed.
#
# If chromium or playwright-core cannot be installed the check FAILS (unlike the Python
# cross-checks, which skip): the web page has no other test of its scripts. Set
# ATOMZERO_SKIP_BROWSER=1 to skip it on purpose, with a printed SKIP line.
# ATOMZERO_SERVE_CONFIG=FILE makes the run from another config (e.g. another variant).
#
# Usage: bash scripts/checks/serve-browser.sh   (also run by scripts/test.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/atomzero/target}"
shots="${ATOMZERO_SCREENSHOTS:-$HOME/.cache/atomzero/serve-screenshots}"

if [ "${ATOMZERO_SKIP_BROWSER:-}" = 1 ]; then
  echo "SKIP serve-browser: ATOMZERO_SKIP_BROWSER=1"
  exit 0
fi
work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2> /dev/null || true; wait "$server_pid" 2> /dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

if ! env_out=$(bash scripts/browser-env.sh 2> "$work/env.err"); then
  cat "$work/env.err" >&2
  echo "FAIL serve-browser: could not install chromium or playwright-core (see above;" \
    "ATOMZERO_SKIP_BROWSER=1 skips this check)" >&2
  exit 1
fi
chromium=$(sed -n 1p <<< "$env_out")
modules=$(sed -n 2p <<< "$env_out")

cargo build --release --locked -p atomzero --quiet
bin="$CARGO_TARGET_DIR/release/atomzero"
"$bin" run --config "${ATOMZERO_SERVE_CONFIG:-configs/ci.toml}" --dir "$work/run" > "$work/run.log"

# Port 0: the server picks a free port and prints its address on its first line, read here
# through a FIFO (with a time limit) as soon as it is written.
mkfifo "$work/serve.out"
"$bin" serve --run "$work/run" --addr 127.0.0.1:0 --poll-ms 200 > "$work/serve.out" 2> "$work/serve.err" &
server_pid=$!
exec 3< "$work/serve.out"
line=""
read -r -t 60 line <&3 || true
url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/' <<< "$line" || true)
[ -n "$url" ] || { echo "atomzero serve did not print its address: $line" >&2; cat "$work/serve.err" >&2; exit 1; }
echo "atomzero serve at $url (run in $work/run)"

rm -rf "$shots"
node scripts/serve_browser.mjs --url "$url" --run "$work/run" --bin "$bin" --shots "$shots" \
  --chromium "$chromium" --modules "$modules"
echo "screenshots: $shots"
