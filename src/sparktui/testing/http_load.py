"""Many concurrent HTTP requests from one asyncio loop, for the exporter's load test and benchmark
(tests/test_exporter_load.py, benchmarks/exporter_load.py). Raw sockets, one request a
connection: what 200 Prometheus servers scraping at the same moment look like to the server."""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass


@dataclass
class Result:
    status: int | None  # None: no answer (the error says why)
    latency_s: float
    body: bytes = b""
    error: str | None = None


async def request(host: str, port: int, raw: bytes, timeout_s: float = 10.0) -> Result:
    """Send ``raw`` on a new connection and read the answer until the server closes it."""
    t0 = time.perf_counter()
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout_s)
        try:
            writer.write(raw)
            data = await asyncio.wait_for(reader.read(), timeout_s - (time.perf_counter() - t0))
        finally:
            writer.close()
    except (OSError, asyncio.TimeoutError) as e:
        return Result(None, time.perf_counter() - t0, error=repr(e))
    latency = time.perf_counter() - t0
    head, _, body = data.partition(b"\r\n\r\n")
    try:
        status = int(head.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return Result(None, latency, error=f"no status line in {data[:80]!r}")
    return Result(status, latency, body)


def get(path: str = "/metrics", method: str = "GET") -> bytes:
    return f"{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n".encode()


async def _many(host: str, port: int, n: int, raw: bytes, timeout_s: float) -> list[Result]:
    return list(await asyncio.gather(*(request(host, port, raw, timeout_s) for _ in range(n))))


def scrape_many(host: str, port: int, n: int, raw: bytes | None = None, timeout_s: float = 10.0) -> list[Result]:
    """``n`` requests started at the same moment; their results in order."""
    return asyncio.run(_many(host, port, n, raw or get(), timeout_s))


def percentile(values: list[float], p: float) -> float:
    """The ``p``-th percentile (nearest rank) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]
