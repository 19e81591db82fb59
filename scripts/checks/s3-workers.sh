#!/usr/bin/env bash
# Self-play workers and a trainer over S3, against a real S3 server on this machine: moto in
# server mode (pinned in scripts/requirements.txt), on a free loopback port.
#
# 1. Creates a bucket and checks that the server honours conditional writes (If-None-Match
#    and If-Match; the racing-writers count is reported, moto does not serialise them).
# 2. Starts one `atomzero trainer` and two `atomzero worker`s on s3://atomzero-ci/run with a
#    test-sized config (configs/ci.toml, 3 generations of 16 games); kills one worker with
#    SIGKILL once it has uploaded a shard, and starts another.
# 3. The trainer must finish its 3 generations and the workers must stop by themselves; then
#    scripts/s3_check.py checks with boto3 that every uploaded shard is whole and readable,
#    counted in at most one generation, and that every generation got its games.
# Skips (exit 0, with the reason) only if the Python packages cannot be installed. About a
# minute.
#
# Usage: bash scripts/checks/s3-workers.sh   (also run by scripts/test.sh)
set -euo pipefail
source "$(dirname "$0")/../check-common.sh"
# Its own venv and requirements: the S3 server needs none of the other checks' packages.
ATOMZERO_VENV="${ATOMZERO_S3_VENV:-$HOME/.cache/atomzero/venv-s3}" \
  python_or_skip s3-workers "moto[server], boto3" scripts/requirements-s3.txt

cargo build --release --locked -p atomzero --quiet
bin="$CARGO_TARGET_DIR/release/atomzero"

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2> /dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$python" -m moto.server -H 127.0.0.1 -p "$port" > "$work/moto.log" 2>&1 &
pids+=($!)
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_DEFAULT_REGION=us-east-1
export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_ALLOW_HTTP=true
for _ in $(seq 300); do
  "$python" -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2> /dev/null && break
  sleep 0.1
done
bucket=atomzero-ci
"$python" scripts/s3_check.py prepare "$bucket"

generations=3
games=16
sed -e "s/^generations = .*/generations = $generations/" \
    -e "s/^games_per_generation = .*/games_per_generation = $games/" configs/ci.toml > "$work/s3.toml"
url="s3://$bucket/run"

# Waits up to $2 seconds for process $1 to exit; returns its exit status (124 on time-out).
wait_for() {
  local pid=$1 deadline=$((SECONDS + $2))
  while kill -0 "$pid" 2> /dev/null; do
    if [ $SECONDS -ge $deadline ]; then return 124; fi
    sleep 0.2
  done
  wait "$pid"
}

"$bin" worker --run "$url" --name wa --threads 1 --poll 0.2 --cache "$work/cache-a" > "$work/wa.log" 2>&1 &
worker_a=$!
pids+=($worker_a)
"$bin" worker --run "$url" --name wb --threads 1 --poll 0.2 --cache "$work/cache-b" > "$work/wb.log" 2>&1 &
worker_b=$!
pids+=($worker_b)
"$bin" trainer --run "$url" --config "$work/s3.toml" --poll 0.2 --cache "$work/cache-t" > "$work/trainer.log" 2> "$work/trainer.err" &
trainer=$!
pids+=($trainer)

first=$("$python" scripts/s3_check.py wait-shard "$bucket" run/selfplay/wa- 300)
kill -9 "$worker_a"
wait "$worker_a" 2> /dev/null || true
echo "kill -9 worker wa (pid $worker_a) after it uploaded $first"
"$bin" worker --run "$url" --name wc --threads 1 --poll 0.2 --cache "$work/cache-c" > "$work/wc.log" 2>&1 &
worker_c=$!
pids+=($worker_c)
echo "started worker wc (pid $worker_c)"

status=0
wait_for "$trainer" 600 || status=$?
echo "== trainer (exit $status)"
cat "$work/trainer.log"
if [ "$status" -ne 0 ]; then
  cat "$work/trainer.err"
  exit 1
fi
for w in wb wc; do
  pid=$worker_b
  [ "$w" = wc ] && pid=$worker_c
  status=0
  wait_for "$pid" 120 || status=$?
  echo "== worker $w (exit $status)"
  cat "$work/$w.log"
  [ "$status" -eq 0 ] || exit 1
done
echo "== worker wa (killed)"
cat "$work/wa.log"
"$python" scripts/s3_check.py verify "$bucket" run "$generations" "$games"

# The trainer's ingest rate from this S3 server (list, download, decode; shards of the
# default config's 250 games).
"$bin" bench ingest --run "s3://$bucket/bench" --shards 40 --games 250
