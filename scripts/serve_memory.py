"""The resident memory of `atomzero serve` over a few thousand requests (issue 44).

  python3 scripts/serve_memory.py BINARY RUN_DIR [REQUESTS] [CONCURRENCY] [SEED]

Starts `BINARY serve --run RUN_DIR` on a free loopback port and sends REQUESTS (default 3000)
requests from CONCURRENCY (default 16) threads, a seeded mix of what the pages and a hostile
user ask for: the pages, the dashboard's summary, game listings and games of every shard and
PGN, the networks, new games against a random network (all of them, so networks are loaded and
dropped) with an engine move each, and bad requests (traversal, bad numbers, an unknown game,
a body over the 4 KiB limit). Prints the server's resident set size (VmRSS of
/proc/PID/status) before the first request and after every 500, its peak (VmHWM) and its
thread count, and the answers by status. Standard library only; Linux only (reads /proc).
"""

import json
import random
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor


def proc_status(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def mib(field):
    return int(field.split()[0]) / 1024


def request(base, method, path, body=None):
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=120) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def main():
    binary, run_dir = sys.argv[1], sys.argv[2]
    total = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
    concurrency = int(sys.argv[4]) if len(sys.argv) > 4 else 16
    seed = int(sys.argv[5]) if len(sys.argv) > 5 else 44
    server = subprocess.Popen([binary, "serve", "--run", run_dir, "--addr", "127.0.0.1:0"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = server.stdout.readline()
        match = re.search(r"http://([0-9.:]+)/", line)
        if not match:
            sys.exit(f"serve did not start: {line!r}")
        base = f"http://{match.group(1)}"
        pid = server.pid
        status, body = request(base, "GET", "/api/games")
        files = [f["file"] for f in json.loads(body)["files"]]
        status, body = request(base, "GET", "/api/networks")
        networks = [n["name"] for n in json.loads(body)["networks"]]
        print(f"{binary}: {len(files)} game files, {len(networks)} networks in {run_dir}")
        start = proc_status(pid)
        print(f"{'requests':>9} {'RSS MiB':>8} {'threads':>8} {'s':>6}")
        print(f"{0:>9} {mib(start['VmRSS']):>8.1f} {start['Threads']:>8} {0:>6.1f}")

        rng = random.Random(seed)
        plans = []
        for _ in range(total):
            x = rng.random()
            file = rng.choice(files)
            if x < 0.10:
                plans.append(("GET", rng.choice(["/", "/games", "/play"]), None))
            elif x < 0.30:
                plans.append(("GET", "/api/summary", None))
            elif x < 0.38:
                plans.append(("GET", "/api/games", None))
            elif x < 0.53:
                plans.append(("GET", "/api/games/file?file=" + urllib.parse.quote(file), None))
            elif x < 0.68:
                path = f"/api/games/game?file={urllib.parse.quote(file)}&index={rng.randrange(4)}"
                plans.append(("GET", path, None))
            elif x < 0.73:
                plans.append(("GET", "/api/networks", None))
            elif x < 0.88:
                plans.append(("PLAY", rng.choice(networks), None))
            else:
                plans.append(rng.choice([
                    ("GET", "/run/../../etc/passwd", None),
                    ("GET", "/run/%2e%2e/%2e%2e/etc/passwd", None),
                    ("GET", "/run/log.txt", None),
                    ("GET", "/api/games/game?file=x&index=zz", None),
                    ("GET", "/api/play/999999", None),
                    ("POST", "/api/play", b"{" + b" " * 5000 + b"}"),
                    ("POST", "/api/play", b"not json"),
                ]))

        statuses = {}
        lock = threading.Lock()
        done = [0]
        began = time.monotonic()

        def one(plan):
            method, path, body = plan
            if method == "PLAY":
                status, reply = request(base, "POST", "/api/play",
                                        {"network": path, "nodes": 64, "color": "black"})
                if status in (200, 201):
                    game = json.loads(reply)["id"]
                    status, _ = request(base, "POST", f"/api/play/{game}/engine")
            else:
                status, _ = request(base, method, path, body)
            with lock:
                statuses[status] = statuses.get(status, 0) + 1
                done[0] += 1
                if done[0] % 500 == 0:
                    s = proc_status(pid)
                    print(f"{done[0]:>9} {mib(s['VmRSS']):>8.1f} {s['Threads']:>8} "
                          f"{time.monotonic() - began:>6.1f}", flush=True)

        with ThreadPoolExecutor(concurrency) as pool:
            list(pool.map(one, plans))
        end = proc_status(pid)
        print(f"peak RSS (VmHWM) {mib(end['VmHWM']):.1f} MiB; final RSS {mib(end['VmRSS']):.1f} MiB, "
              f"{end['Threads']} threads; answers by status: "
              + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items())))
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
