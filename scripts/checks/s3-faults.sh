#!/usr/bin/env bash
# A trainer and two self-play workers over S3 through a faulty network (issue 44): the same
# local S3 server as s3-workers.sh (moto), but every client talks to it through
# scripts/s3_fault_proxy.py, which drops, delays and truncates a seeded share of the requests
# (and refuses some connections). The run must finish its generations, and scripts/s3_check.py
# (boto3, straight to the server) must find every uploaded shard whole and counted in exactly
# one generation, every generation with its games: nothing lost, nothing read corrupt. The
# proxy's fault counts are printed. Skips (exit 0, with the reason) only if the Python
# packages cannot be installed. About a minute.
#
# Usage: bash scripts/s3-faults.sh   (not yet in scripts/checks/, so not run by scripts/test.sh:
# move it there once it has passed on this machine)
set -euo pipefail
source "$(dirname "$0")/check-common.sh"
ATOMZERO_VENV="${ATOMZERO_S3_VENV:-$HOME/.cache/atomzero/venv-s3}" \
  python_or_skip s3-faults "moto[server], boto3" scripts/requirements-s3.txt

cargo build --release --locked -p atomzero --quiet
bin="$CARGO_TARGET_DIR/release/atomzero"

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2> /dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wait_port() {
  for _ in $(seq 300); do
    "$python" -c "import socket; socket.create_connection(('127.0.0.1', $1), 1)" 2> /dev/null && return 0
    sleep 0.1
  done
  return 1
}
s3_port=$(free_port)
"$python" -m moto.server -H 127.0.0.1 -p "$s3_port" > "$work/moto.log" 2>&1 &
pids+=($!)
proxy_port=$(free_port)
seed=44
"$python" scripts/s3_fault_proxy.py "$proxy_port" "$s3_port" "$seed" "$work/faults.log" > "$work/proxy.out" 2>&1 &
proxy=$!
pids+=($proxy)
wait_port "$s3_port"
wait_port "$proxy_port"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_DEFAULT_REGION=us-east-1
export AWS_ALLOW_HTTP=true
bucket=atomzero-faults
AWS_ENDPOINT_URL="http://127.0.0.1:$s3_port" "$python" scripts/s3_check.py prepare "$bucket" > /dev/null

generations=2
games=16
sed -e "s/^generations = .*/generations = $generations/" \
    -e "s/^games_per_generation = .*/games_per_generation = $games/" configs/ci.toml > "$work/s3.toml"
url="s3://$bucket/run"

wait_for() {
  local pid=$1 deadline=$((SECONDS + $2))
  while kill -0 "$pid" 2> /dev/null; do
    if [ $SECONDS -ge $deadline ]; then return 124; fi
    sleep 0.2
  done
  wait "$pid"
}

export AWS_ENDPOINT_URL="http://127.0.0.1:$proxy_port"
for w in wa wb; do
  "$bin" worker --run "$url" --name "$w" --threads 1 --poll 0.2 --cache "$work/cache-$w" > "$work/$w.log" 2>&1 &
  pids+=($!)
  eval "worker_$w=$!"
done
"$bin" trainer --run "$url" --config "$work/s3.toml" --poll 0.2 --cache "$work/cache-t" > "$work/trainer.log" 2> "$work/trainer.err" &
trainer=$!
pids+=($trainer)

status=0
wait_for "$trainer" 600 || status=$?
echo "== trainer (exit $status)"
cat "$work/trainer.log"
if [ "$status" -ne 0 ]; then
  cat "$work/trainer.err"
  exit 1
fi
for w in wa wb; do
  pid_var="worker_$w"
  status=0
  wait_for "${!pid_var}" 180 || status=$?
  echo "== worker $w (exit $status)"
  tail -n 5 "$work/$w.log"
  [ "$status" -eq 0 ] || exit 1
done
echo "== what the faults cost (retries reported by the store)"
grep -h -c -i "retry\|retrying" "$work/trainer.err" "$work/wa.log" "$work/wb.log" || true
kill -TERM "$proxy"
wait "$proxy" 2> /dev/null || true
cat "$work/proxy.out"
faults=$(wc -l < "$work/faults.log")
echo "faults injected: $faults (by kind: $(cut -d' ' -f2 "$work/faults.log" | sort | uniq -c | tr -s ' ' | tr '\n' ';'))"
if [ "$faults" -lt 1 ]; then
  echo "FAIL: the proxy injected no fault" >&2
  exit 1
fi
# Straight to the server: every shard whole and counted once, every generation complete.
AWS_ENDPOINT_URL="http://127.0.0.1:$s3_port" "$python" scripts/s3_check.py verify "$bucket" run "$generations" "$games"
