#!/usr/bin/env bash
# A trainer and two self-play workers over S3 through a faulty network (issue 44): the same
# local S3 server as s3-workers.sh (moto), but every atomzero process talks to it through
# scripts/s3_fault_proxy.py, which drops, delays and truncates a seeded share of the requests
# (and refuses some connections).
#
# The check passes only if
# - the trainer finishes its generations and both workers stop by themselves, exit 0;
# - every fault kind was injected, among them a truncated GET of a shard (its reply cut
#   halfway through the body) and a dropped PUT of a shard (stored by the server, the reply
#   never sent: the worker cannot know its write happened);
# - every warning any process printed is a retry note of the store (`... (attempt N;
#   retrying in T s)`): no shard was skipped or "not counted", nothing corrupt was read;
# - scripts/s3_check.py (boto3, straight to the server) finds every uploaded shard whole and
#   counted in at most one generation, each worker's counted shards its first ones (none
#   skipped), every manifest's counts equal to its shards', every generation with its games,
#   and log.txt with each generation once; and each worker's own count of what it uploaded
#   equal to what the store holds from it.
# The proxy's fault counts and the retries by operation are printed. Skips (exit 0, with the
# reason) only if the Python packages cannot be installed. About a minute on 2 cores once built
# (51 to 71 s in four runs here; in one, 31 s of the trainer's 57 s were the store's backoff
# between retries).
#
# Usage: bash scripts/checks/s3-faults.sh   (also run by scripts/test.sh)
set -euo pipefail
source "$(dirname "$0")/../check-common.sh"
ATOMZERO_VENV="${ATOMZERO_S3_VENV:-$HOME/.cache/atomzero/venv-s3}" \
  python_or_skip s3-faults "moto[server], boto3" scripts/requirements-s3.txt

cargo build --release --locked -p atomzero --quiet
bin="$CARGO_TARGET_DIR/release/atomzero"

pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    kill -9 "$pid" 2> /dev/null || true
    wait "$pid" 2> /dev/null || true
  done
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
# Waits up to $2 seconds for process $1 to exit; returns its exit status (124 on time-out).
wait_for() {
  local pid=$1 deadline=$((SECONDS + $2))
  while kill -0 "$pid" 2> /dev/null; do
    if [ $SECONDS -ge $deadline ]; then return 124; fi
    sleep 0.2
  done
  wait "$pid"
}
fail() {
  echo "FAIL s3-faults: $1" >&2
  for f in trainer.err wa.log wb.log; do
    echo "== $f (last 20 lines)" >&2
    tail -n 20 "$work/$f" >&2 || true
  done
  exit 1
}

s3_port=$(free_port)
"$python" -m moto.server -H 127.0.0.1 -p "$s3_port" > "$work/moto.log" 2>&1 &
pids+=($!)
proxy_port=$(free_port)
seed=44
"$python" scripts/s3_fault_proxy.py "$proxy_port" "$s3_port" "$seed" "$work/faults.log" > "$work/proxy.out" 2>&1 &
proxy=$!
pids+=($proxy)
wait_port "$s3_port" || fail "the S3 server did not start"
wait_port "$proxy_port" || fail "the fault proxy did not start"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_DEFAULT_REGION=us-east-1
export AWS_ALLOW_HTTP=true
bucket=atomzero-faults
AWS_ENDPOINT_URL="http://127.0.0.1:$s3_port" "$python" scripts/s3_check.py prepare "$bucket" > /dev/null

# Two generations, so that a shard could be counted twice; the test-sized config.
generations=2
games=16
sed -e "s/^generations = .*/generations = $generations/" \
    -e "s/^games_per_generation = .*/games_per_generation = $games/" configs/ci.toml > "$work/s3.toml"
url="s3://$bucket/run"

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
wait_for "$trainer" 300 || status=$?
echo "== trainer (exit $status)"
cat "$work/trainer.log"
[ "$status" -eq 0 ] || fail "the trainer exited with $status"
for w in wa wb; do
  pid_var="worker_$w"
  status=0
  wait_for "${!pid_var}" 120 || status=$?
  echo "== worker $w (exit $status): $(grep -c 'uploaded selfplay' "$work/$w.log") shards uploaded"
  [ "$status" -eq 0 ] || fail "worker $w exited with $status"
done
kill -TERM "$proxy"
wait "$proxy" 2> /dev/null || true
cat "$work/proxy.out"

# Every kind of fault happened, including the two that matter most for shards.
for kind in drop delay truncate refuse; do
  grep -q "^[0-9]* $kind " "$work/faults.log" || fail "the proxy injected no '$kind' fault"
done
grep -q "^[0-9]* truncate GET /$bucket/run/selfplay/.*\.shard" "$work/faults.log" ||
  fail "no GET of a shard was truncated"
grep -q "^[0-9]* drop PUT /$bucket/run/selfplay/.*\.shard" "$work/faults.log" ||
  fail "no PUT of a shard was dropped"
echo "faults on shards: $(grep -c "truncate GET /$bucket/run/selfplay/" "$work/faults.log") truncated GETs," \
  "$(grep -c "drop PUT /$bucket/run/selfplay/" "$work/faults.log") dropped PUTs"

# The only warnings are the store's retry notes: nothing skipped, nothing read corrupt.
retry_note='^warning: (get|put|list|delete) .* \(attempt [0-9]+; retrying in [0-9.]+ s\)$'
others=$(cat "$work/trainer.err" "$work/wa.log" "$work/wb.log" | grep '^warning: ' | grep -Ev "$retry_note" || true)
[ -z "$others" ] || fail "warnings other than retries: $(echo "$others" | head -n 5)"
echo "retries reported: $(cat "$work/trainer.err" "$work/wa.log" "$work/wb.log" | grep -Eo '^warning: (get|put|list|delete) ' |
  cut -d' ' -f2 | sort | uniq -c | tr -s ' ' | tr '\n' ';')"

# Straight to the server: every shard whole and counted once, every worker's counted shards
# its first ones, every generation complete.
verified=$(AWS_ENDPOINT_URL="http://127.0.0.1:$s3_port" "$python" scripts/s3_check.py verify "$bucket" run "$generations" "$games") ||
  fail "scripts/s3_check.py verify: $verified"
echo "$verified"
# What each worker says it uploaded is what the store holds: no shard stored twice or lost.
for w in wa wb; do
  said=$(grep -Eo "^worker $w-[0-9a-f]+: the run is finished; uploaded [0-9]+ games in [0-9]+ shards" "$work/$w.log") ||
    fail "worker $w did not say what it uploaded"
  read -r name games shards < <(echo "$said" | sed -E 's/^worker ([^:]+): .* uploaded ([0-9]+) games in ([0-9]+) shards/\1 \2 \3/')
  grep -qx "worker $name: $shards shards, $games games in the store" <<< "$verified" ||
    fail "worker $name uploaded $games games in $shards shards; the store holds otherwise"
done
echo "both workers' uploads are in the store, once each"
