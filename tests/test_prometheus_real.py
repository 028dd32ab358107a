"""The shipped alert rules and Grafana dashboard against a real Prometheus scraping a real
`sparktui export` on loopback. NVML is the GB10 fake (no driver here); Prometheus, promtool, the
HTTP scrape and the rule evaluation are the real ones (.ci/run installs Debian's prometheus)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from sparktui.core.config import Config
from sparktui.fleet import exporter as ex
from sparktui.probes import nvml
from sparktui.probes.sampler import Sampler
from sparktui.testing.fake_nvml import gb10_loaded

DOCS = Path(__file__).resolve().parents[1] / "docs"
RULES = DOCS / "prometheus-alerts.yml"
HOST = "spark-test"

needs_prometheus = pytest.mark.skipif(not (shutil.which("prometheus") and shutil.which("promtool")),
                                      reason="prometheus/promtool not installed (.ci/run installs Debian's prometheus)")


@needs_prometheus
def test_promtool_accepts_the_rules_and_their_unit_tests_pass():
    check = subprocess.run(["promtool", "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "SUCCESS: 11 rules found" in check.stdout
    # the timing of every alert: when it starts firing and what keeps it quiet
    unit = subprocess.run(["promtool", "test", "rules", "prometheus-alerts.test.yml"], cwd=DOCS,
                          capture_output=True, text=True, timeout=60)
    assert unit.returncode == 0 and "SUCCESS" in unit.stdout, unit.stdout + unit.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _until(what: str, fetch, pred, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while True:
        value = fetch()
        if pred(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; last: {json.dumps(value)[:2000]}")
        time.sleep(0.2)


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory):
    """A hot GB10 (86 °C, SW thermal slowdown active) behind `sparktui export`, scraped every
    second by a real Prometheus that loads the shipped rules and evaluates them every second.
    Shared by this module's tests: Prometheus takes about 5 s to start its first scrape."""
    tmp_path = tmp_path_factory.mktemp("prometheus")
    with pytest.MonkeyPatch.context() as mp:
        for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):  # as conftest's isolated_dirs
            (tmp_path / var.lower()).mkdir()
            mp.setenv(var, str(tmp_path / var.lower()))
        yield from _prometheus(tmp_path)


def _prometheus(tmp_path: Path):
    fake = gb10_loaded().set(temp_c=86, reasons=0x20)
    nvml.set_backend(fake)
    cfg = Config()
    exp = ex.Exporter(cfg, ids=["G3", "G4", "G5", "G6"], host_label=HOST,
                      sampler=Sampler(cfg, interval_s=0.2, processes_every_s=1.0))
    exp.start(tick_s=0.2)
    host, port = exp.serve("127.0.0.1", 0)
    (tmp_path / "prometheus.yml").write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"rule_files: [{json.dumps(str(RULES))}]\n"
        "scrape_configs:\n"
        f"  - job_name: sparktui\n    static_configs: [{{targets: [\"{host}:{port}\"]}}]\n")
    web = f"127.0.0.1:{_free_port()}"
    proc = subprocess.Popen(
        ["prometheus", f"--config.file={tmp_path / 'prometheus.yml'}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address={web}", "--log.level=warn"],
        stdout=subprocess.DEVNULL, stderr=open(tmp_path / "prometheus.log", "w"))
    client = httpx.Client(base_url=f"http://{web}", timeout=5)

    def ready():
        if proc.poll() is not None:
            raise AssertionError("prometheus exited: " + (tmp_path / "prometheus.log").read_text()[-2000:])
        try:
            return client.get("/-/ready").status_code
        except httpx.TransportError:
            return None

    try:
        _until("prometheus ready", ready, lambda code: code == 200)
        yield client, exp
    finally:
        client.close()
        proc.terminate()
        proc.wait(10)
        exp.stop()
        nvml.set_backend(None)


def _api(client: httpx.Client, path: str, **params):
    resp = client.get(f"/api/v1/{path}", params=params)
    body = resp.json()
    assert resp.status_code == 200 and body["status"] == "success", body
    return body["data"]


def _query(client: httpx.Client, expr: str) -> list[dict]:
    return _api(client, "query", query=expr)["result"]


@needs_prometheus
def test_real_prometheus_evaluates_the_shipped_rules_on_the_exporters_series(prometheus):
    client, exp = prometheus
    # every check's one-hot state has been scraped (4 checks x 5 states)
    _until("check states scraped", lambda: _query(client, "sparktui_check_state"), lambda r: len(r) == 20)
    _until("two scrapes of the counters", lambda: _query(client, "count_over_time(up[1m])"),
           lambda r: r and float(r[0]["value"][1]) >= 3)
    target = _api(client, "targets")["activeTargets"][0]
    assert target["health"] == "up" and target["lastError"] == ""

    # every rule loaded and evaluated without error (a bad vector match is only caught here)
    def rules():
        return [rule for g in _api(client, "rules")["groups"] for rule in g["rules"]]
    evaluated = _until("all rules evaluated", rules,
                       lambda rs: len(rs) == 11 and all(r.get("lastEvaluation", "").startswith("2") and
                                                        not r["lastEvaluation"].startswith("0001") for r in rs))
    assert {r["name"]: r["health"] for r in evaluated} == {r["name"]: "ok" for r in evaluated}, \
        [(r["name"], r.get("lastError")) for r in evaluated if r["health"] != "ok"]

    # the hot fake with SW thermal slowdown: the raw-reason alert is pending (its `for` not yet
    # run out); the power-delivery alert stays quiet because a thermal reason explains the clocks
    alerts = _api(client, "alerts")["alerts"]
    by_name = {}
    for a in alerts:
        by_name.setdefault(a["labels"]["alertname"], []).append(a)
    (slow,) = by_name["SparkThermalSlowdown"]
    assert slow["state"] == "pending" and slow["labels"]["host"] == HOST and slow["labels"]["gpu"] == "0"
    assert "SparkLowClocksUnderLoad" not in by_name and "SparktuiExporterDown" not in by_name
    assert "SparktuiNvmlUnreadable" not in by_name and "SparktuiTelemetryStale" not in by_name

    # SparkThrottling follows G4's own verdict; active thermal slowdown is direct evidence for it
    g4 = exp.checks.snapshot()["G4"].verdict.status.value
    assert g4 in ("warn", "fail")
    (throttling,) = by_name["SparkThrottling"]
    assert throttling["state"] == "pending" and throttling["labels"]["state"] == g4
    # G5 (intrusive, never run) is skip: no alert of the check family names it
    assert not [a for a in alerts if a["labels"].get("id") == "G5"]


@needs_prometheus
def test_every_grafana_panel_query_returns_series_from_a_real_scrape(prometheus):
    client, _ = prometheus
    _until("three scrapes", lambda: _query(client, "count_over_time(up[1m])"),
           lambda r: r and float(r[0]["value"][1]) >= 3)
    board = json.loads((DOCS / "grafana-dashboard.json").read_text())
    (var,) = board["templating"]["list"]
    assert var["query"]["query"] == "label_values(sparktui_info, host)"
    assert _api(client, "label/host/values", **{"match[]": "sparktui_info"}) == [HOST]
    exprs = [(p["title"], t["expr"]) for p in board["panels"] for t in p.get("targets", []) if "expr" in t]
    assert len(exprs) >= 8
    for title, expr in exprs:
        result = _query(client, expr.replace("$host", HOST))
        assert result, f"panel {title!r}: {expr!r} returned nothing from a real scrape"
        assert all(r["metric"].get("host") in (HOST, None) for r in result)


@needs_prometheus
def test_a_real_prometheus_keeps_the_dcgm_names_and_types_a_fleets_dashboards_query(prometheus):
    client, _ = prometheus
    temp = _until("DCGM_FI_DEV_GPU_TEMP scraped", lambda: _query(client, 'DCGM_FI_DEV_GPU_TEMP{Hostname="spark-test"}'),
                  lambda r: len(r) == 1)
    assert float(temp[0]["value"][1]) == 86 and temp[0]["metric"]["modelName"] == "NVIDIA GB10"
    assert temp[0]["metric"]["pci_bus_id"] == "0000000F:01:00.0" and temp[0]["metric"]["device"] == "nvidia0"
    meta = _api(client, "metadata")
    assert meta["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"][0]["type"] == "counter"
    assert meta["DCGM_FI_DEV_GPU_UTIL"][0]["unit"] in ("", None) and meta["DCGM_FI_DEV_GPU_UTIL"][0]["type"] == "gauge"
    assert not [m for m in meta if m.startswith("DCGM_FI_DEV_FB_")]
