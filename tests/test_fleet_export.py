"""`sparktui export`: a real HTTP server on loopback, scraped with httpx and parsed with
prometheus_client's own parser. NVML is the GB10 fake (the only fake: no driver here)."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings
from sparktui.fleet import exporter as ex
from sparktui.gotchas import REGISTRY
from sparktui.probes import nvml
from sparktui.probes.sampler import Sampler
from sparktui.testing.fake_nvml import gb10_loaded


@pytest.fixture
def fake_gb10():
    fake = gb10_loaded().set(temp_c=86, reasons=0x20)  # hot, SW thermal slowdown active
    nvml.set_backend(fake)
    yield fake
    nvml.set_backend(None)


def _scrape(url: str) -> dict:
    resp = httpx.get(url, timeout=5)
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/plain")
    return {f.name: f for f in text_string_to_metric_families(resp.text)}


def _wait_for(url: str, pred, timeout: float = 8.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        fams = _scrape(url)
        if pred(fams) or time.monotonic() > deadline:
            return fams
        time.sleep(0.05)


@pytest.fixture
def running(fake_gb10):
    cfg = Config()
    sampler = Sampler(cfg, interval_s=0.05, processes_every_s=0.2)
    exp = ex.Exporter(cfg, ids=["G3", "G4", "G5", "G6"], host_label="spark-test", sampler=sampler)
    exp.start(tick_s=0.05)
    host, port = exp.serve("127.0.0.1", 0)
    yield exp, f"http://{host}:{port}/metrics"
    exp.stop()


def test_scrape_carries_check_status_and_telemetry(running):
    exp, url = running
    _wait_for(url, lambda f: len(f["sparktui_check_status"].samples) == 4)
    for _ in range(20):  # G6 scans the real process table, where parallel tests start servers:
        before = {g: c.verdict.status for g, c in exp.checks.snapshot().items()}  # compare a scrape
        fams = _scrape(url)                                                     # with a verdict that
        judged = exp.checks.snapshot()                                          # held still around it
        if {g: c.verdict.status for g, c in judged.items()} == before:
            break
    status = {s.labels["id"]: s for s in fams["sparktui_check_status"].samples}
    assert set(status) == {"G3", "G4", "G5", "G6"}
    for gid, s in status.items():
        assert s.labels["host"] == "spark-test"
        assert s.labels["title"] == REGISTRY[gid].title
        assert s.value == ex.STATUS_CODE[judged[gid].verdict.status]
    assert status["G5"].value == 4  # intrusive measurement never run: skip
    # one-hot state: exactly one 1 per check, and it names the same status
    by_id: dict[str, dict[str, float]] = {}
    for s in fams["sparktui_check_state"].samples:
        by_id.setdefault(s.labels["id"], {})[s.labels["state"]] = s.value
    for gid, states in by_id.items():
        assert set(states) == set(ex.STATES)
        assert sum(states.values()) == 1
        assert states[judged[gid].verdict.status.value] == 1

    gpu = {"host": "spark-test", "gpu": "0"}
    temp = fams["sparktui_gpu_temperature_celsius"].samples
    assert [(s.labels, s.value) for s in temp] == [(gpu, 86.0)]
    assert fams["sparktui_gpu_power_watts"].samples[0].value == 80.0
    clocks = {s.labels["clock"]: s.value for s in fams["sparktui_gpu_clock_hertz"].samples}
    assert clocks == {"sm": 2405e6, "graphics": 2405e6}  # memory clock is N/A on GB10: no series
    assert fams["sparktui_gpu_power_limit_watts"].samples == []  # NOT_SUPPORTED: absent, not zero
    reasons = {s.labels["reason"]: s.value for s in fams["sparktui_gpu_clock_event_reason"].samples}
    assert reasons["sw_thermal_slowdown"] == 1 and reasons["hw_slowdown"] == 0
    held = fams["sparktui_gpu_clock_event_seconds"]
    assert held.type == "counter" and held.samples[0].name == "sparktui_gpu_clock_event_seconds_total"
    by_reason = {s.labels["reason"]: s.value for s in held.samples}
    assert by_reason["sw_thermal_slowdown"] == pytest.approx(0.903158)  # FIELD-FACTS: 903158 us on a GB10
    assert by_reason["sw_power_cap"] == pytest.approx(0.165687) and by_reason["hw_power_brake_slowdown"] == 0
    mem = {s.labels["field"]: s.value for s in fams["sparktui_memory_bytes"].samples}
    assert mem["MemAvailable"] > 0 and mem["MemTotal"] >= mem["MemAvailable"]
    assert fams["sparktui_nvml_up"].samples[0].value == 1
    assert fams["sparktui_info"].samples[0].labels["host"] == "spark-test"


def test_a_slow_check_does_not_block_scrapes(fake_gb10):
    """The check thread may sit in a slow probe (a torch import on the target); scrapes answer."""
    cfg = Config()
    started, release = threading.Event(), threading.Event()

    def slow_collect(names, cfg):
        started.set()
        release.wait(10)
        return Readings({n: Reading(n, None, error="slow test probe") for n in names})

    exp = ex.Exporter(cfg, ids=["G9"], host_label="h", sampler=Sampler(cfg, interval_s=0.05), collect=slow_collect)
    exp.start(tick_s=0.05)
    host, port = exp.serve("127.0.0.1", 0)
    try:
        assert started.wait(5)
        t0 = time.monotonic()
        fams = _scrape(f"http://{host}:{port}/metrics")
        assert time.monotonic() - t0 < 1.0
        assert fams["sparktui_check_status"].samples == []  # not judged yet: no series, no guess
        release.set()
        fams = _wait_for(f"http://{host}:{port}/metrics", lambda f: f["sparktui_check_status"].samples)
        assert fams["sparktui_check_status"].samples[0].value == 3  # probes unavailable -> unknown
    finally:
        release.set()
        exp.stop()


def test_scheduler_reruns_on_cadence():
    now = [1000.0]
    calls: list[list[str]] = []

    def collect(names, cfg):
        calls.append(list(names))
        return Readings()

    sch = ex.CheckScheduler(Config(), ["G4", "G9"], lambda: Readings(), collect=collect, clock=lambda: now[0])
    assert sch.due() == ["G4", "G9"]
    sch.run(sch.due())
    assert sch.due() == []
    now[0] += REGISTRY["G4"].cadence_s
    assert sch.due() == ["G4"]  # G9 has no cadence: hourly
    now[0] += ex.SLOW_RERUN_S
    assert sch.due() == ["G4", "G9"]
    assert sch.snapshot()["G9"].runs == 1


@pytest.mark.parametrize("text, expected", [
    ("127.0.0.1:9400", ("127.0.0.1", 9400)), ("9400", ("127.0.0.1", 9400)), (":9400", ("127.0.0.1", 9400)),
    ("[::1]:9400", ("::1", 9400)), ("localhost:0", ("localhost", 0)),
])
def test_parse_listen(text, expected):
    assert ex.parse_listen(text) == expected


def test_bad_listen_values():
    for bad in ("127.0.0.1", "host:http", "[::1]9400", "1.2.3.4:70000"):
        with pytest.raises(ex.ListenError):
            ex.parse_listen(bad)


def test_non_loopback_is_refused_without_allow_remote(capsys):
    from sparktui.cli.main import main

    assert ex.is_loopback("127.0.0.1") and ex.is_loopback("::1") and ex.is_loopback("localhost")
    assert not ex.is_loopback("0.0.0.0") and not ex.is_loopback("192.168.1.20")
    assert main(["export", "--listen", "0.0.0.0:9400"]) == 64
    assert "not a loopback address" in capsys.readouterr().err


def test_g10_left_out_when_run_from_root():
    ids, notes = ex.default_ids(Config(), cwd="/")
    assert "G10" not in ids and "G10" in notes[0]
    assert "G10" in ex.default_ids(Config(), cwd="/home/me/train")[0]


def _queried_metrics(text: str) -> set[str]:
    """Metric names a PromQL text uses (identifiers followed by a selector or used bare), minus
    PromQL's own functions and keywords."""
    words = set(re.findall(r"\b(sparktui_[a-z_]+)\b", text))
    return {w for w in words if not w.endswith(("_bucket", "_count", "_sum"))}


def test_shipped_dashboard_and_alerts_query_only_what_the_exporter_serves(running):
    """A rule or panel naming a metric the exporter does not serve never fires and never draws."""
    _, url = running
    fams = _wait_for(url, lambda f: len(f["sparktui_check_status"].samples) == 4)
    served = set()
    for fam in fams.values():
        served |= {s.name for s in fam.samples} | {fam.name}
    docs = Path(__file__).resolve().parents[1] / "docs"
    board = json.loads((docs / "grafana-dashboard.json").read_text())
    exprs = [t["expr"] for p in board.get("panels", []) for t in p.get("targets", []) if "expr" in t]
    assert len(exprs) >= 8
    rules = (docs / "prometheus-alerts.yml").read_text()
    rule_exprs = re.findall(r"^\s+expr:\s*(.+)$", rules, re.M)
    assert len(rule_exprs) >= 4 and len(re.findall(r"^\s+- alert:", rules, re.M)) == len(rule_exprs)
    for text in exprs + rule_exprs:
        missing = _queried_metrics(text) - served
        assert not missing, f"{text!r} queries {sorted(missing)}, which `sparktui export` does not serve"


def test_an_extra_colon_is_not_mistaken_for_a_non_loopback_address():
    with pytest.raises(ex.ListenError, match="IPv6 address goes in brackets"):
        ex.parse_listen("127.0.0.1:0:0")


def _kernel_log_collect(data, error=None):
    def collect(names, cfg):
        return Readings({n: Reading(n, data if n == "kernel_log" else None, error=error or "not in this test")
                         for n in names})
    return collect


def test_kernel_events_are_counted_per_kind_from_g11s_reading(fake_gb10):
    """An Xid and two OOM kills this boot (counts as probes/kernel_log.read gives them)."""
    counts = {"xid": 1, "nv_no_memory": 0, "oom_kill": 2, "aer": 0, "soft_lockup": 0}
    events = [{"kind": "xid", "t": 1.0, "text": "NVRM: Xid (PCI:000f:01:00): 13, pid=7781, name=python3, x", "xid": 13,
               "pci": "000f:01:00", "pid": 7781, "name": "python3", "device": "GPU (nvidia)"}] + [
              {"kind": "oom_kill", "t": 2.0, "text": "Out of memory: Killed process 9123 (python3)", "pid": 9123,
               "name": "python3", "rss_kb": 118000000, "anon_rss_kb": 118000000}] * 2
    data = {"source": "kmsg", "boot_id": "b", "lines_read": 900, "events": events, "truncated": False,
            "counts": counts, "note": None}
    cfg = Config()
    exp = ex.Exporter(cfg, ids=["G11"], host_label="h", sampler=Sampler(cfg, interval_s=0.05),
                      collect=_kernel_log_collect(data))
    exp.start(tick_s=0.05)
    host, port = exp.serve("127.0.0.1", 0)
    try:
        fams = _wait_for(f"http://{host}:{port}/metrics", lambda f: f["sparktui_kernel_events"].samples)
        fam = fams["sparktui_kernel_events"]
        assert fam.type == "counter" and {s.name for s in fam.samples} == {"sparktui_kernel_events_total"}
        assert {s.labels["kind"]: s.value for s in fam.samples} == {k: float(v) for k, v in counts.items()}
        assert all(s.labels["host"] == "h" for s in fam.samples)
        assert fams["sparktui_check_status"].samples[0].value == 2  # G11 fail
    finally:
        exp.stop()


def test_an_unreadable_kernel_log_has_no_kernel_event_series(fake_gb10):
    cfg = Config()
    exp = ex.Exporter(cfg, ids=["G11"], host_label="h", sampler=Sampler(cfg, interval_s=0.05),
                      collect=_kernel_log_collect(None, error="/dev/kmsg: Operation not permitted"))
    exp.start(tick_s=0.05)
    host, port = exp.serve("127.0.0.1", 0)
    try:
        fams = _wait_for(f"http://{host}:{port}/metrics", lambda f: f["sparktui_check_status"].samples)
        assert fams["sparktui_check_status"].samples[0].value == 3  # unknown
        assert fams["sparktui_kernel_events"].samples == []  # unread is not zero events
    finally:
        exp.stop()


@pytest.mark.parametrize("data", [None, {}, {"counts": None}, {"counts": {"xid": -1}}, {"counts": {"xid": True}},
                                  {"counts": {"xid": "3"}}, {"counts": []}])
def test_kernel_counts_of_a_malformed_reading_is_none(data):
    assert ex.kernel_counts(data) is None


def test_kernel_counts_keeps_well_formed_counts():
    assert ex.kernel_counts({"counts": {"xid": 0, "aer": 4}}) == {"xid": 0, "aer": 4}


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), None, "86", True, 10**400])
def test_a_value_no_gpu_reports_is_no_series(value):
    """A NaN temperature (an edited recording, a driver bug) is no sample, not a NaN a dashboard draws."""
    from prometheus_client.core import GaugeMetricFamily

    fam = GaugeMetricFamily("sparktui_gpu_temperature_celsius", "GPU temperature", labels=["host", "gpu"])
    ex._put(fam, ["h", "0"], value)
    assert fam.samples == []
    ex._put(fam, ["h", "0"], 86)
    assert [s.value for s in fam.samples] == [86.0]
