"""Helpers of scripts/checks/s3-workers.sh and s3-faults.sh, against a local S3 server (moto in server mode),
with boto3 as an independent S3 client.

  prepare BUCKET          create the bucket; check that the server honours conditional writes
                          (If-None-Match: * and If-Match), which the run's create-only names
                          and best.json compare-and-swap rely on; report how many of 16
                          racing writers win (moto may let more than one through)
  wait-shard BUCKET PREFIX TIMEOUT
                          wait until a key under PREFIX exists; print it
  verify BUCKET RUN GENERATIONS GAMES_PER_GENERATION
                          check a finished run: every uploaded shard is a whole, readable shard
                          (magic, version, both CRC-32s, zlib payload); every manifest lists
                          existing shards with their true game counts and enough games; no
                          shard is counted twice; each worker's shards are numbered without a
                          gap and its counted ones are its first (none skipped); log.txt has
                          every generation once; run.json says finished; best.json names a
                          network that exists. Prints each worker's shards and games

Environment: AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_DEFAULT_REGION.
"""

import json
import os
import struct
import sys
import threading
import time
import zlib

import boto3
import botocore


def client():
    return boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"])


def refused(call):
    """True if `call` fails with 412 Precondition Failed."""
    try:
        call()
    except botocore.exceptions.ClientError as e:
        return e.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    return False


def race(s3, bucket, key, write):
    """16 threads run write(client, i) at once; returns how many succeeded."""
    barrier = threading.Barrier(16)
    wins = []

    def go(i):
        c = client()
        barrier.wait()
        try:
            write(c, i)
            wins.append(i)
        except botocore.exceptions.ClientError:
            pass

    threads = [threading.Thread(target=go, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return len(wins)


def prepare(bucket):
    s3 = client()
    s3.create_bucket(Bucket=bucket)
    key = "conditional-write-probe"
    first = s3.put_object(Bucket=bucket, Key=key, Body=b"1", IfNoneMatch="*")
    assert refused(lambda: s3.put_object(Bucket=bucket, Key=key, Body=b"2", IfNoneMatch="*")), \
        "the server overwrote an existing object despite If-None-Match: *"
    second = s3.put_object(Bucket=bucket, Key=key, Body=b"3", IfMatch=first["ETag"])
    assert refused(lambda: s3.put_object(Bucket=bucket, Key=key, Body=b"4", IfMatch=first["ETag"])), \
        "the server accepted If-Match with a stale ETag"
    creates = race(s3, bucket, key + "-race",
                   lambda c, i: c.put_object(Bucket=bucket, Key=key + "-race", Body=str(i).encode(),
                                             IfNoneMatch="*"))
    etag = second["ETag"]
    swaps = race(s3, bucket, key,
                 lambda c, i: c.put_object(Bucket=bucket, Key=key, Body=str(i).encode(), IfMatch=etag))
    # At least one racing writer must win. More than one is moto's doing, not ours: it checks
    # the condition and then writes without a lock (seen: 2 of 16 swaps on a loaded machine),
    # where AWS S3 lets only the first conditional write to finish succeed. This check's single
    # trainer never races itself, so moto still tests what the run does; the count is reported.
    assert creates >= 1 and swaps >= 1, f"racing writes: {creates} creates, {swaps} swaps won"
    for k in (key, key + "-race"):
        s3.delete_object(Bucket=bucket, Key=k)
    print("conditional writes: If-None-Match: * refused on an existing key, If-Match refused with "
          f"a stale ETag; 16 racing creates -> {creates} won, 16 racing swaps -> {swaps} won"
          + ("" if creates == swaps == 1 else " (moto does not serialise racing conditional writes)"))


def keys(s3, bucket, prefix):
    out = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        out.extend(o["Key"] for o in page.get("Contents", []))
    return out


def wait_shard(bucket, prefix, timeout):
    s3 = client()
    deadline = time.monotonic() + float(timeout)
    while time.monotonic() < deadline:
        found = [k for k in keys(s3, bucket, prefix) if k.endswith(".shard")]
        if found:
            print(sorted(found)[0])
            return
        time.sleep(0.2)
    sys.exit(f"no shard under {prefix} after {timeout} s")


def read_shard(data, name):
    """Checks a replay shard (layout: crates/replay/src/format.rs); returns (games, targets)."""
    assert data[:8] == b"AZREPLAY", f"{name}: bad magic"
    version, games, targets, meta_len, payload_len, payload_crc = struct.unpack_from("<IIIIQI", data, 8)
    assert version in (1, 2, 3, 4, 5), f"{name}: format {version}"
    header_end = 36 + meta_len
    (header_crc,) = struct.unpack_from("<I", data, header_end)
    assert zlib.crc32(data[:header_end]) == header_crc, f"{name}: header CRC"
    json.loads(data[36:header_end])
    payload = data[header_end + 4:]
    assert len(payload) == payload_len, f"{name}: payload is {len(payload)} bytes, header says {payload_len}"
    assert zlib.crc32(payload) == payload_crc, f"{name}: payload CRC"
    zlib.decompress(payload)
    return games, targets


def verify(bucket, run, generations, games_per_generation):
    s3 = client()
    generations, games_per_generation = int(generations), int(games_per_generation)
    get = lambda key: s3.get_object(Bucket=bucket, Key=f"{run}/{key}")["Body"].read()
    shard_keys = [k[len(run) + 1:] for k in keys(s3, bucket, f"{run}/selfplay/") if k.endswith(".shard")]
    shards = {}
    for key in shard_keys:
        assert key.count("/") == 2, f"{key}: not a worker shard"
        shards[key] = read_shard(get(key), key)
    workers = sorted({k.split("/")[1] for k in shards})
    counted = {}
    for g in range(1, generations + 1):
        manifest = json.loads(get(f"generations/{g:06d}.json"))
        assert manifest["format"] == 1 and manifest["generation"] == g, manifest
        games = 0
        for entry in manifest["shards"]:
            key = entry["key"]
            assert key in shards, f"generation {g} lists {key}, which is not in the store"
            assert key not in counted, f"{key} counted in generations {counted[key]} and {g}"
            counted[key] = g
            assert (entry["games"], entry["targets"]) == shards[key], f"{key}: manifest counts differ"
            games += entry["games"]
        assert games >= games_per_generation, f"generation {g}: {games} games"
    log = get("log.txt").decode().splitlines()
    logged = [line.split(" |")[0] for line in log]
    assert logged == [f"gen {g:>3}" for g in range(generations + 1)], logged
    state = json.loads(get("run.json"))
    assert state.get("finished") is True and state["generation"] == generations + 1, state
    best = json.loads(get("models/best.json"))["best"]
    get(f"models/{best}")
    get(f"models/{best[:-len('.safetensors')]}.json")
    # A worker uploads its shards one after another (000000, 000001, ...) and the trainer
    # counts every shard it lists: so each worker's counted shards are its first ones, with no
    # gap. A shard missing below a counted one was skipped: lost.
    for worker in workers:
        numbers = sorted(int(k.split("/")[2].split(".")[0]) for k in shards if k.split("/")[1] == worker)
        assert numbers == list(range(len(numbers))), f"{worker}: shard numbers {numbers} have gaps"
        mine = sorted(int(k.split("/")[2].split(".")[0]) for k in counted if k.split("/")[1] == worker)
        assert mine == list(range(len(mine))), f"{worker}: counted shards {mine} skip some"
        games = sum(shards[k][0] for k in shards if k.split("/")[1] == worker)
        print(f"worker {worker}: {len(numbers)} shards, {games} games in the store")
    left = len(shards) - len(counted)
    print(f"verified: {len(shards)} shards from {len(workers)} workers, all readable; "
          f"{len(counted)} counted once each in {generations} generations, every worker's first "
          f"ones with no gap, {left} uploaded after the last generation closed (not counted); "
          f"log has generations 0-{generations}; best network {best}")
    return workers


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    {"prepare": prepare, "wait-shard": wait_shard, "verify": verify}[command](*args)
