"""`sparktui export` under load and against hostile clients: a real server on 127.0.0.1:0.

What was seen (issue 15): a listen backlog of 5 (1.5 % of 200 concurrent scrapes timed out), the
metrics on any path, and a scrape rendering the metrics itself (so it waited on whatever the
collectors waited on). The NVML here is the GB10 fake."""

from __future__ import annotations

import gzip
import io
import re
import socket
import threading
import time

import pytest
from hypothesis import given, settings, strategies as st

from sparktui.core.config import Config
from sparktui.fleet import exporter as ex
from sparktui.fleet.metrics_server import MAX_HEAD_BYTES, MetricsServer
from sparktui.probes import nvml
from sparktui.probes.sampler import Sampler
from sparktui.testing.fake_nvml import gb10_loaded
from sparktui.testing.http_load import get, percentile, scrape_many
from tests.ui.waiting import polled as _wait_until

P99_BOUND_S = 2.0  # generous: 2 shared cores, other tests running beside this one


@pytest.fixture
def exporter():
    nvml.set_backend(gb10_loaded())
    cfg = Config()
    exp = ex.Exporter(cfg, ids=["G3", "G4"], host_label="load", sampler=Sampler(cfg, interval_s=0.05))
    exp.start(tick_s=0.05)
    host, port = exp.serve("127.0.0.1", 0)
    yield exp, host, port
    exp.stop()
    nvml.set_backend(None)


@pytest.fixture
def server():
    """A bare MetricsServer with short deadlines, serving a known page."""
    srv = MetricsServer("text/plain; version=0.0.4; charset=utf-8", head_timeout_s=0.5, send_timeout_s=0.5,
                        max_connections=8)
    srv.publish(b"# the page\nsparktui_info 1\n")
    host, port = srv.start("127.0.0.1", 0)
    yield srv, host, port
    srv.stop()


def _raw(host: str, port: int, data: bytes, timeout: float = 5.0, wait_s: float = 0.0) -> tuple[int, dict[str, str], bytes]:
    """One request on a blocking socket -> (status, headers, body). ``wait_s``: the client reads its
    answer only that long after sending (a busy scraper): by then a server that closed with the
    request unread has reset the connection."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(data)
        time.sleep(wait_s)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    status_line, *lines = head.decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, body


def _raw_late(host: str, port: int, data: bytes) -> tuple[int, dict[str, str], bytes]:
    return _raw(host, port, data, wait_s=0.3)




# -- load ------------------------------------------------------------------------------------------

def test_200_concurrent_scrapes_all_answer_with_bounded_latency(exporter):
    exp, host, port = exporter
    results = scrape_many(host, port, 200)
    failed = [r.error or r.status for r in results if r.status != 200]
    assert failed == []
    assert all(b"sparktui_info{" in r.body for r in results)
    assert percentile([r.latency_s for r in results], 99) < P99_BOUND_S


# A second process that only sleeps 0.05 s in a loop: how late the machine itself woke it, over the
# same window. A stall the OS imposes on every process (two suites on two shared cores) is not the
# sampler starving behind the server (that would be this process's threads, e.g. the GIL), so it is
# allowed for; a starved sampler still fails, since the canary does not share its interpreter.
CANARY = """
import select, sys, time
tick, last, worst, late = 0.05, time.monotonic(), 0.0, 0.0
print("ready", flush=True)
while not select.select([sys.stdin], [], [], tick)[0]:
    now = time.monotonic()
    worst, late, last = max(worst, now - last - tick), late + max(0.0, now - last - tick), now
print(worst, late, flush=True)
"""


def test_sampling_keeps_its_interval_while_200_scrapes_run(exporter):
    import subprocess
    import sys

    exp, host, port = exporter
    canary = subprocess.Popen([sys.executable, "-I", "-S", "-c", CANARY], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert canary.stdout is not None and canary.stdout.readline().strip() == "ready"
    t0 = time.time()
    rounds = 0
    # at least 2 s of scraping: over a half-second window, one scheduler stall of a loaded machine
    # (0.29 s, seen in a soak at -n 4 on 2 CPUs) took 40% of the samples and failed the count
    while rounds < 3 or time.time() - t0 < 2.0:
        assert all(r.status == 200 for r in scrape_many(host, port, 200))
        rounds += 1
    t1 = time.time()
    os_worst, os_late = map(float, canary.communicate("", timeout=30)[0].split())
    stamps = [s["t"] for s in exp.sampler.history.samples() if t0 <= s["t"] <= t1]
    expected = max(0.0, t1 - t0 - os_late) / exp.sampler.interval_s
    assert len(stamps) >= 0.6 * expected, f"{len(stamps)} samples in {t1 - t0:.2f} s at 0.05 s (OS stalls {os_late:.2f} s)"
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    assert max(gaps) < 0.5 + os_worst, f"largest gap {max(gaps):.3f} s; the machine's own worst stall {os_worst:.3f} s"


def test_a_render_that_hangs_does_not_hold_a_scrape(exporter, monkeypatch):
    """The text is rendered off the request path: a scrape sends the last text at once."""
    exp, host, port = exporter
    assert _wait_until(lambda: b"sparktui_gpu_temperature_celsius{" in _raw(host, port, get())[2])
    entered, release = threading.Event(), threading.Event()
    real = exp.collect

    def stuck_collect():
        entered.set()
        release.wait(10)
        yield from real()

    monkeypatch.setattr(exp, "collect", stuck_collect)
    try:
        assert entered.wait(5)  # the render thread is inside collect, holding nothing a scrape needs
        t0 = time.monotonic()
        status, _, body = _raw(host, port, get())
        assert time.monotonic() - t0 < 1.0
        assert status == 200 and b"sparktui_gpu_temperature_celsius{" in body
    finally:
        release.set()


def test_50_stalled_clients_do_not_stop_a_scrape(exporter):
    """Slowloris: half a request head each, then nothing."""
    exp, host, port = exporter
    stalled = [socket.create_connection((host, port)) for _ in range(50)]
    try:
        for s in stalled:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        t0 = time.monotonic()
        status, _, _ = _raw(host, port, get())
        assert status == 200 and time.monotonic() - t0 < 1.0
    finally:
        for s in stalled:
            s.close()


def test_a_stalled_client_is_dropped_after_the_head_deadline(server):
    srv, host, port = server
    with socket.create_connection((host, port), timeout=5) as s:
        s.sendall(b"GET /metrics HTTP/1.1\r\n")
        t0 = time.monotonic()
        assert s.recv(100) == b""  # closed, no answer
        assert 0.4 < time.monotonic() - t0 < 3.0
    assert _wait_until(lambda: srv.open_connections == 0)


def test_a_client_that_never_reads_is_dropped_after_the_send_deadline(server):
    srv, host, port = server
    srv.publish(b"x" * (32 << 20))  # far more than the socket buffers hold
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((host, port))
    try:
        s.sendall(get())
        assert srv.open_connections == 1 or _wait_until(lambda: srv.open_connections == 1)
        assert _wait_until(lambda: srv.open_connections == 0, timeout=5.0)
    finally:
        s.close()


def test_connections_over_the_limit_get_503_and_the_rest_still_answer(server):
    srv, host, port = server
    held = [socket.create_connection((host, port)) for _ in range(srv.max_connections)]
    try:
        assert _wait_until(lambda: srv.open_connections == srv.max_connections)
        status, _, body = _raw(host, port, get())
        assert status == 503 and b"too many connections" in body
    finally:
        for s in held:
            s.close()
    assert _wait_until(lambda: srv.open_connections == 0)
    assert _raw(host, port, get())[0] == 200


def test_the_503_of_a_connection_over_the_limit_reaches_a_client_that_reads_late(server):
    """The 503 is sent before the request is read; closing with the request unread made the kernel
    reset the connection, and the client got ECONNRESET instead of the 503 (every time on the lent
    16-CPU H200 machine; here only when the client reads late, as this one does)."""
    srv, host, port = server
    held = [socket.create_connection((host, port)) for _ in range(srv.max_connections)]
    try:
        assert _wait_until(lambda: srv.open_connections == srv.max_connections)
        status, _, body = _raw_late(host, port, get())
        assert status == 503 and body == b"too many connections\n"
    finally:
        for s in held:
            s.close()


@pytest.mark.parametrize("body_bytes", [10, 200_000])
def test_an_answer_before_an_unread_body_reaches_a_client_that_reads_late(server, body_bytes):
    """A body is never read (405, then close): the 405 must still arrive, not a reset."""
    _, host, port = server
    req = (b"POST /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" % body_bytes) + b"x" * body_bytes
    try:
        status, headers, _ = _raw_late(host, port, req)
    except ConnectionResetError:
        if body_bytes > 64 * 1024:  # more than the server reads while it lingers: a reset may come
            return
        raise
    assert status == 405 and headers["allow"] == "GET, HEAD"


# -- what is answered where ----------------------------------------------------------------------

@pytest.mark.parametrize("request_bytes, status", [
    (get("/metrics"), 200),
    (get("/metrics?name[]=sparktui_info"), 200),
    (get("/"), 200),
    (get("/favicon.ico"), 404),
    (get("/metricsx"), 404),
    (get("/../metrics"), 404),
    (get("/metrics", "POST"), 405),
    (get("/metrics", "DELETE"), 405),
    (b"GET /metrics\r\n\r\n", 400),  # HTTP/0.9
    (b"\x16\x03\x01\x00\xa5\x01\x00\x00\r\n\r\n", 400),  # a TLS hello
    (b"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n", 400),
    (b"GET /metrics HTTP/1.1\r\nX-Big: " + b"a" * MAX_HEAD_BYTES + b"\r\n\r\n", 431),
])
def test_paths_methods_and_malformed_requests(server, request_bytes, status):
    srv, host, port = server
    got, headers, body = _raw(host, port, request_bytes)
    assert got == status
    if status == 200 and b"/metrics" in request_bytes.split(b"\r\n")[0]:
        assert body == b"# the page\nsparktui_info 1\n"
        assert headers["content-type"].startswith("text/plain")
    if status == 405:
        assert headers["allow"] == "GET, HEAD"
    if status == 404:
        assert b"/metrics" in body and b"sparktui_info" not in body


def test_head_gives_the_headers_of_get_without_a_body(server):
    srv, host, port = server
    status, headers, body = _raw(host, port, get("/metrics", "HEAD"))
    assert status == 200 and body == b""
    assert int(headers["content-length"]) == len(b"# the page\nsparktui_info 1\n")


def test_gzip_when_asked(server):
    srv, host, port = server
    status, headers, body = _raw(host, port, b"GET /metrics HTTP/1.1\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n")
    assert status == 200 and headers["content-encoding"] == "gzip"
    assert gzip.decompress(body) == b"# the page\nsparktui_info 1\n"


def test_keep_alive_answers_several_requests_on_one_connection(server):
    srv, host, port = server
    with socket.create_connection((host, port), timeout=5) as s:
        s.sendall(b"GET /metrics HTTP/1.1\r\n\r\nGET /nope HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    assert re.findall(rb"HTTP/1.1 (\d+)", data) == [b"200", b"404", b"200"]


def test_a_published_page_replaces_the_old_one_whole(server):
    srv, host, port = server
    srv.publish(b"new page\n")
    assert _raw(host, port, get())[2] == b"new page\n"


def test_an_address_in_use_raises_oserror_and_leaves_no_thread():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        before = threading.active_count()
        with pytest.raises(OSError):
            MetricsServer("text/plain").start("127.0.0.1", taken.getsockname()[1])
        assert _wait_until(lambda: threading.active_count() == before)


@settings(max_examples=300)
@given(st.binary(max_size=300) | st.lists(st.sampled_from([b"GET", b" ", b"/metrics", b"HTTP/1.1", b"\r\n", b":",
                                                             b"Connection", b"close", b"\x00", b"HEAD", b"?"]),
                                           max_size=30).map(b"".join))
def test_any_request_head_gets_an_http_answer_never_an_exception(head):
    answer = MetricsServer("text/plain").answer(head + b"\r\n\r\n")
    assert answer.status in (200, 400, 404, 405)


def test_export_on_a_port_in_use_exits_69_with_the_reason():
    nvml.set_backend(gb10_loaded())
    err = io.StringIO()
    try:
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            code = ex.run_export(Config(), f"127.0.0.1:{port}", False, ["G3"], "h", stop=threading.Event(), err=err)
    finally:
        nvml.set_backend(None)
    assert code == 69
    assert err.getvalue() == f"sparktui export: cannot listen on 127.0.0.1:{port}: Address already in use\n"


def test_scrapes_answer_while_g10_scans_hostile_launch_scripts(tmp_path):
    """Seen: a launch script with 40,000 blank lines after a setting took G10's scan 83 s, and every
    /metrics request timed out while it ran. Now the scan runs in the check thread, the page is
    the last one rendered, and a scrape answers at once however long the scan takes."""
    # the seen shape, 40 times over: about a second of scanning here (each file takes ~25 ms since
    # issue 22's linear context reading; two files, enough before, were scanned between two scrapes)
    for i in range(40):
        (tmp_path / f"launch{i}.sh").write_text("tensor_parallel_size=2\n" + "\n" * 80_000 + "x\n")
    nvml.set_backend(gb10_loaded())
    cfg = Config().with_overrides(scan={"paths": [str(tmp_path)]})
    exp = ex.Exporter(cfg, ids=["G10"], host_label="h", sampler=Sampler(cfg, interval_s=0.05))
    try:
        exp.start(tick_s=0.05)
        host, port = exp.serve("127.0.0.1", 0)
        during: list[float] = []
        while not exp.checks.snapshot():
            t0 = time.monotonic()
            status, _, _ = _raw(host, port, get())
            if not exp.checks.snapshot():  # G10 still scanning when this scrape was answered
                during.append(time.monotonic() - t0)
            assert status == 200
        assert len(during) >= 3 and max(during) < 1.0, during
        assert _wait_until(lambda: b'sparktui_check_status{host="h",id="G10"' in _raw(host, port, get())[2])
    finally:
        exp.stop()
        nvml.set_backend(None)
