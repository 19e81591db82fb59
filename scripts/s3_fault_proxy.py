"""A faulty network in front of a local S3 server, for scripts/checks/s3-faults.sh.

  python scripts/s3_fault_proxy.py LISTEN_PORT UPSTREAM_PORT SEED LOG

An HTTP/1.1 proxy on 127.0.0.1:LISTEN_PORT that forwards every request to the S3 server on
127.0.0.1:UPSTREAM_PORT and, for a seeded share of them, fails the way networks fail:

  drop      the request reaches the server (a PUT is stored) but the connection is closed
            before any reply: the client cannot know whether its write happened
  delay     the reply comes 0.2 to 1.5 s late
  truncate  the reply's headers promise the whole body, then the connection closes halfway
            through it
  refuse    the connection is closed before the request is forwarded

Which requests fail is decided by a generator seeded with SEED, in the order requests arrive
(so runs differ in which request meets which fault, never in the shares). Besides the seeded
share, the first GET of a replay shard (`.shard`) is always truncated and the first PUT of one
always dropped, so that every run meets the two faults that could lose or corrupt games. Every
fault is logged to LOG as one line `<n> <fault> <method> <path>`; at exit (SIGTERM) the counts
are printed. Standard library only.
"""

import http.client
import http.server
import random
import signal
import socketserver
import sys
import threading
import time

SHARES = [("drop", 0.06), ("delay", 0.06), ("truncate", 0.06), ("refuse", 0.03)]

listen_port, upstream_port, seed, log_path = (
    int(sys.argv[1]),
    int(sys.argv[2]),
    int(sys.argv[3]),
    sys.argv[4],
)
rng = random.Random(seed)
lock = threading.Lock()
counts = {"requests": 0, **{name: 0 for name, _ in SHARES}}
log = open(log_path, "a", buffering=1)


# The fault every run meets once: (method, what the first such request of a shard gets).
FIRST_ON_SHARDS = {"GET": "truncate", "PUT": "drop"}
first_done = set()


def choose(method, path):
    with lock:
        counts["requests"] += 1
        n = counts["requests"]
        x = rng.random()
        delay = 0.2 + 1.3 * rng.random()
        first = FIRST_ON_SHARDS.get(method)
        if first and method not in first_done and path.split("?")[0].endswith(".shard"):
            first_done.add(method)
            counts[first] += 1
            return n, first, delay
        for name, share in SHARES:
            if x < share:
                counts[name] += 1
                return n, name, delay
            x -= share
        return n, None, delay


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def handle_one(self):
        n, fault, delay = choose(self.command, self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if fault:
            log.write(f"{n} {fault} {self.command} {self.path}\n")
        if fault == "refuse":
            self.close_connection = True
            return
        upstream = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=120)
        headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
        upstream.request(self.command, self.path, body=body, headers=headers)
        reply = upstream.getresponse()
        data = reply.read()
        upstream.close()
        if fault == "drop":
            self.close_connection = True
            return
        if fault == "delay":
            time.sleep(delay)
        self.send_response_only(reply.status, reply.reason)
        for k, v in reply.getheaders():
            if k.lower() not in ("connection", "transfer-encoding", "content-length"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        if fault == "truncate" and self.command != "HEAD" and len(data) > 1:
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_one


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def report(*_):
    print("fault proxy: " + ", ".join(f"{k} {v}" for k, v in counts.items()), flush=True)
    sys.exit(0)


signal.signal(signal.SIGTERM, report)
Server(("127.0.0.1", listen_port), Proxy).serve_forever()
