"""`sparktui export` under 200 concurrent scrapes (issue 15: backlog 5, 1.5 % of them timed out).

Starts the exporter on 127.0.0.1:0 over the GB10 fake NVML (sampling every --interval s, checks
G3 G4 G6 rerunning), then fires --waves waves of --concurrency scrapes started at the same moment,
one connection each, and prints latency p50/p99/max, errors, and the sampler's gaps while they ran
(a scrape must never hold sampling up). Then 50 stalled clients (half a request head each) and one
normal scrape beside them. --baseline runs the same waves against prometheus_client's
start_http_server (what `export` used before) for comparison; only sparktui's figures are judged.

    python benchmarks/exporter_load.py [--concurrency 200] [--waves 10] [--interval 0.1] [--baseline]

Exit 1 when a target is missed: every scrape answered 200, p99 < --p99-target s, the largest
sampling gap < interval + --jitter-target s, the scrape beside the stalled clients < 1 s.
"""

from __future__ import annotations

import argparse
import platform
import socket
import sys
import time

from sparktui.core.config import Config
from sparktui.fleet.exporter import Exporter
from sparktui.probes import nvml
from sparktui.probes.sampler import Sampler
from sparktui.testing.fake_nvml import gb10_loaded
from sparktui.testing.http_load import percentile, scrape_many


def waves(host: str, port: int, n: int, count: int) -> tuple[list[float], list[str], float, float]:
    """(latencies of the answered, errors, start, end) over ``count`` waves of ``n`` scrapes."""
    latencies, errors = [], []
    t0 = time.time()
    for _ in range(count):
        for r in scrape_many(host, port, n, timeout_s=10.0):
            if r.status == 200:
                latencies.append(r.latency_s)
            else:
                errors.append(r.error or f"HTTP {r.status}")
    return latencies, errors, t0, time.time()


def describe(name: str, latencies: list[float], errors: list[str], total: int) -> str:
    lat = (f"p50 {percentile(latencies, 50) * 1000:.1f} ms, p99 {percentile(latencies, 99) * 1000:.1f} ms, "
           f"max {max(latencies) * 1000:.1f} ms" if latencies else "no answers")
    kinds = sorted(set(errors))[:3]
    return f"{name}: {total - len(errors)}/{total} answered 200; {lat}; errors {len(errors)}{' ' + str(kinds) if kinds else ''}"


def stalled_then_scrape(host: str, port: int, n: int = 50) -> float:
    """Seconds one scrape takes while ``n`` clients sit on half a request head."""
    stalled = [socket.create_connection((host, port)) for _ in range(n)]
    try:
        for s in stalled:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        r = scrape_many(host, port, 1, timeout_s=10.0)[0]
        return r.latency_s if r.status == 200 else float("inf")
    finally:
        for s in stalled:
            s.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--concurrency", type=int, default=200)
    ap.add_argument("--waves", type=int, default=10)
    ap.add_argument("--interval", type=float, default=0.1, help="sampling interval, s")
    ap.add_argument("--p99-target", type=float, default=1.0)
    ap.add_argument("--jitter-target", type=float, default=0.1)
    ap.add_argument("--baseline", action="store_true", help="also run prometheus_client's start_http_server")
    a = ap.parse_args()

    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S %Z')}  {platform.node()}  {platform.machine()}  "
          f"{len(__import__('os').sched_getaffinity(0))} CPUs  Python {platform.python_version()}")
    print(f"# python benchmarks/exporter_load.py {' '.join(sys.argv[1:])}")
    nvml.set_backend(gb10_loaded())
    cfg = Config()
    exp = Exporter(cfg, ids=["G3", "G4", "G6"], host_label="bench", sampler=Sampler(cfg, interval_s=a.interval))
    exp.start(tick_s=0.1)
    host, port = exp.serve("127.0.0.1", 0)
    total = a.concurrency * a.waves
    try:
        scrape_many(host, port, 1)  # warm: imports, first render
        latencies, errors, t0, t1 = waves(host, port, a.concurrency, a.waves)
        stamps = [s["t"] for s in exp.sampler.history.samples() if t0 <= s["t"] <= t1]
        beside_stalled = stalled_then_scrape(host, port)
        if a.baseline:
            from prometheus_client import start_http_server

            old, _ = start_http_server(0, addr="127.0.0.1", registry=exp.registry)
            try:
                base = waves("127.0.0.1", old.server_address[1], a.concurrency, a.waves)
            finally:
                old.shutdown()
                old.server_close()
    finally:
        exp.stop()
        nvml.set_backend(None)

    gaps = [b - c for c, b in zip(stamps, stamps[1:])]
    print(describe(f"sparktui export, {a.waves} waves of {a.concurrency} concurrent scrapes", latencies, errors, total))
    if gaps:
        print(f"sampling every {a.interval:g} s while they ran ({t1 - t0:.1f} s): {len(stamps)} samples "
              f"(expected ~{(t1 - t0) / a.interval:.0f}); gap mean {sum(gaps) / len(gaps) * 1000:.1f} ms, "
              f"p99 {percentile(gaps, 99) * 1000:.1f} ms, max {max(gaps) * 1000:.1f} ms")
    print(f"one scrape beside 50 stalled clients: {beside_stalled * 1000:.1f} ms")
    if a.baseline:
        print(describe("baseline prometheus_client start_http_server (not judged)", base[0], base[1], total))

    misses = []
    if errors:
        misses.append(f"{len(errors)} scrapes not answered 200")
    if not latencies or percentile(latencies, 99) >= a.p99_target:
        misses.append(f"p99 not under {a.p99_target:g} s")
    if not gaps or max(gaps) >= a.interval + a.jitter_target:
        misses.append(f"a sampling gap over {a.interval + a.jitter_target:g} s")
    if beside_stalled >= 1.0:
        misses.append("the scrape beside stalled clients took 1 s or more")
    print("FAIL: " + "; ".join(misses) if misses else "ok: every target met")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
