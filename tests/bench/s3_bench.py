#!/usr/bin/python3
"""trainio's S3 client against a reference client (boto3, Debian's python3-boto3) making the same
requests at the same concurrency on the same objects, against one s3rver on loopback.

    python3 tests/bench/s3_bench.py [--build build] [--repeat 1] [--in-flight 1,8,32] [--sizes 64K,1M,8M]

For each object size and number of requests in flight, each side PUTs the objects, then GETs
each back whole, IN_FLIGHT at a time: trainio's side is tests/bench/s3_requests.cpp (one thread
and one client per request in flight), boto3's is one client with max_pool_connections=IN_FLIGHT
shared by IN_FLIGHT threads (boto3's transfer manager does the same with max_concurrency, but would
split an 8 MiB object into parts: these are single PUTs and GETs on both sides). Bodies go as
UNSIGNED-PAYLOAD on both sides, one try each. Sides alternate; the median of --repeat runs is taken.

Prints throughput (MiB/s) of each side and trainio / boto3, with the server's CPU use during each
side's run (its CPU seconds / the seconds of the timed PUT and GET phases): near 1.0, the single-threaded Node.js server is the
limit, and the ratio says how little each client adds, not how fast it could go.
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

BOTO3_SIDE = """
import json, sys, time, threading, boto3, botocore.auth
from botocore.config import Config
endpoint, bucket, prefix, objects, size, in_flight = sys.argv[1:4] + [int(x) for x in sys.argv[4:7]]
botocore.auth.S3SigV4Auth._should_sha256_sign_payload = lambda self, request: False
s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="S3RVER", aws_secret_access_key="S3RVER",
                  region_name="us-east-1", config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1},
                                                         max_pool_connections=max(10, in_flight)))
body, out = b"x" * size, {}
for phase in ("put", "get"):
    times, lock, it = [], threading.Lock(), iter(range(objects))
    def work():
        while True:
            with lock:
                i = next(it, None)
            if i is None:
                return
            t = time.perf_counter()
            if phase == "put":
                s3.put_object(Bucket=bucket, Key=prefix + str(i), Body=body)
            else:
                s3.get_object(Bucket=bucket, Key=prefix + str(i))["Body"].read()
            with lock:
                times.append((time.perf_counter() - t) * 1e3)
    threads = [threading.Thread(target=work) for _ in range(in_flight)]
    t0 = time.perf_counter()
    for t in threads: t.start()
    for t in threads: t.join()
    seconds = time.perf_counter() - t0
    times.sort()
    out[phase] = {"mib_per_s": size * objects / seconds / 2**20, "p50_ms": times[len(times) // 2],
                  "p99_ms": times[min(len(times) - 1, int(0.99 * (len(times) - 1) + 0.5))]}
print("json: " + json.dumps(out))
"""


def size_of(text):
    units = {"K": 1024, "M": 1024 ** 2}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)


def label(size):
    return f"{size // 1024} KiB" if size < 1024 ** 2 else f"{size // 1024 ** 2} MiB"


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--in-flight", default="1,8,32")
    p.add_argument("--sizes", default="64K,1M,8M")
    p.add_argument("--megabytes", type=int, default=64, help="MiB each side moves per case and phase (at least 32 objects, 4 per request in flight)")
    a = p.parse_args()
    bench = os.path.join(a.build, "tests", "bench", "trainio_s3_bench")
    s3rver = os.path.join(a.build, "test-tools", "node_modules", ".bin", "s3rver")
    if not os.path.exists(s3rver):
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix",
                        os.path.join(a.build, "test-tools"), "s3rver@3.7.1"], check=True)
    work = tempfile.mkdtemp(prefix="trainio-s3-bench-")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    server = subprocess.Popen([s3rver, "-d", os.path.join(work, "s3"), "-a", "127.0.0.1", "-p", str(port),
                               "--configure-bucket", "bench", "--silent"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    rows = []
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        for size in (size_of(s) for s in a.sizes.split(",")):
            for in_flight in (int(n) for n in a.in_flight.split(",")):
                # At least 4 requests per request in flight: throughput of a stream, not of one wave.
                objects = max(32, 4 * in_flight, a.megabytes * 1024 ** 2 // size)
                runs = {"trainio": [], "boto3": []}
                for r in range(a.repeat):
                    for side in ("trainio", "boto3"):
                        prefix = f"{side}-{size}-{in_flight}-{r}/"
                        args = [endpoint, "bench", prefix, str(objects), str(size), str(in_flight)]
                        cmd = [bench] + args if side == "trainio" else ["/usr/bin/python3", "-c", BOTO3_SIDE] + args
                        cpu0 = cpu_seconds(server.pid)
                        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
                        result = json.loads(next(l for l in out.splitlines() if l.startswith("json: "))[6:])
                        # The server is idle while a side starts (Python's imports): its CPU
                        # seconds over the timed PUT and GET phases' seconds.
                        timed = sum(size * objects / 2 ** 20 / result[ph]["mib_per_s"] for ph in ("put", "get"))
                        result["server_cpu"] = (cpu_seconds(server.pid) - cpu0) / timed
                        runs[side].append(result)
                for phase in ("put", "get"):
                    def med(side, key):
                        return statistics.median(x[phase][key] for x in runs[side])
                    ours, theirs = med("trainio", "mib_per_s"), med("boto3", "mib_per_s")
                    cpu = {s: statistics.median(x["server_cpu"] for x in runs[s]) for s in runs}
                    rows.append((phase.upper(), label(size), in_flight, ours, theirs, ours / theirs,
                                 med("trainio", "p50_ms"), med("boto3", "p50_ms"), cpu["trainio"], cpu["boto3"]))
                    print("{:<4} {:>7} {:>3} in flight: trainio {:8.1f} MiB/s, boto3 {:8.1f} MiB/s, ratio {:5.2f}; "
                          "p50 {:.2f} / {:.2f} ms; server CPU {:.2f} / {:.2f} (PUT and GET together)".format(*rows[-1]),
                          flush=True)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)
    worst = min(r[5] for r in rows)
    print(f"lowest ratio trainio / boto3: {worst:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
