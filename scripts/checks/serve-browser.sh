#!/usr/bin/env bash
# `atomzero serve` end to end in a real browser: makes a tiny run (configs/ci.toml, two
# generations), starts `atomzero serve` on a free localhost port and runs
# scripts/serve_browser.mjs in headless Debian chromium through playwright-core (both
# installed by scripts/browser-env.sh): the dashboard shows the run's generations and a new one
# appears live, a game is stepped through with the keys (explosions highlighted, the search's
# policy shown), and a whole game is played against the best network by clicking squares; a
# second server shows a made-up run of 120 generations with eval_games = 0: charts first, the
# generations table paged, the line saying how to rate the networks. The
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
server_pids=()
cleanup() {
  for pid in "${server_pids[@]}"; do kill "$pid" 2> /dev/null || true; wait "$pid" 2> /dev/null || true; done
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

# A run at a real run's size for the dashboard's layout: 120 generations in timeline.jsonl
# (the format `atomzero run` writes) and eval_games = 0 (a run that rates nothing), with the
# tiny run's config; no games or networks are needed for the dashboard.
big_generations=120
mkdir -p "$work/big"
sed 's/^eval_games = .*/eval_games = 0/' "$work/run/config.toml" > "$work/big/config.toml"
grep -q '^eval_games = 0$' "$work/big/config.toml" || { echo "no eval_games line in config.toml" >&2; exit 1; }
for g in $(seq 0 $((big_generations - 1))); do
  printf '{"format":1,"generation":%d,"best":"%06d","elapsed_secs":%d,"cpu_secs":%d,"cores":2}\n' \
    "$g" "$g" $((g * 30)) $((g * 55))
done > "$work/big/timeline.jsonl"

# Port 0: each server picks a free port and prints its address on its first line, read here
# through a FIFO (with a time limit) as soon as it is written. Sets $url and $server_pids.
server_pids=()
serve() {
  local dir=$1 name=$2 line=""
  mkfifo "$work/$name.out"
  "$bin" serve --run "$dir" --addr 127.0.0.1:0 --poll-ms 200 > "$work/$name.out" 2> "$work/$name.err" &
  server_pids+=($!)
  exec {fd}< "$work/$name.out"
  read -r -t 60 line <&"$fd" || true
  url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/' <<< "$line" || true)
  [ -n "$url" ] || { echo "atomzero serve did not print its address: $line" >&2; cat "$work/$name.err" >&2; exit 1; }
}
serve "$work/big" big
big_url=$url
serve "$work/run" serve
echo "atomzero serve at $url (run in $work/run), $big_url ($big_generations generations)"

rm -rf "$shots"
node scripts/serve_browser.mjs --url "$url" --run "$work/run" --bin "$bin" --shots "$shots" \
  --chromium "$chromium" --modules "$modules" --big-url "$big_url" --big-generations "$big_generations"
echo "screenshots: $shots"
