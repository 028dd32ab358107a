"""`sparktui export` under dcgm-exporter's names (fleet/dcgm.py): the names, types, HELP texts
and labels a fleet's dashboards already query, checked against dcgm-exporter's own published
text (tests/data/dcgm/, sources in SOURCES.md). NVML is the fake (no driver here)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from sparktui.core.config import Config
from sparktui.fleet import dcgm
from sparktui.fleet import exporter as ex
from sparktui.probes import nvml
from sparktui.probes.sampler import Sampler
from sparktui.testing.fake_nvml import gb10_loaded, h200

DATA = Path(__file__).parent / "data" / "dcgm"
_SERIES = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)\{(.*)\} (\S+)$")


def published_counters() -> list[tuple[str, str, str]]:
    rows = []
    for line in (DATA / "default-counters.csv").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, kind, help_ = (x.strip() for x in line.split(",", 2))
            rows.append((name, kind, help_))
    return rows


def label_keys(line: str) -> list[str]:
    m = _SERIES.match(line)
    assert m, line
    return re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="(?:[^"\\]|\\.)*"', m.group(2))


def sample_of(fake, hostname: str = "spark-1") -> str:
    nvml.set_backend(fake)
    try:
        s = Sampler(Config(), interval_s=0.2, processes_every_s=1.0)
        return dcgm.text(s.take(), s.static(), hostname)
    finally:
        nvml.set_backend(None)


def test_names_types_and_help_texts_are_dcgm_exporters_own():
    assert [(n, k, h) for n, k, h, _, _ in dcgm.FIELDS] == published_counters()


def test_a_gb10_sample_carries_dcgm_exporters_labels_in_its_order_and_its_units():
    text = sample_of(gb10_loaded().set(temp_c=72, power_w=80.5, sm_mhz=2405, util_gpu=97))
    real = [l for l in (DATA / "scrape-h100.txt").read_text().splitlines() if not l.startswith("#")]
    published = label_keys(real[0])[:6]  # the six labels; newer releases append DCGM_FI_DRIVER_VERSION
    assert published == list(dcgm.LABELS)
    series = [l for l in text.splitlines() if not l.startswith("#")]
    assert len(series) == 5 and all(label_keys(l) == published for l in series)
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    values = {name: fams[name].samples[0].value for name in ("DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_TEMP",
                                                              "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_UTIL")}
    # MHz (not sparktui's Hz), °C, W, percent (not sparktui's 0-1 ratio): dcgm-exporter's units
    assert values == {"DCGM_FI_DEV_SM_CLOCK": 2405, "DCGM_FI_DEV_GPU_TEMP": 72, "DCGM_FI_DEV_POWER_USAGE": 80.5,
                      "DCGM_FI_DEV_GPU_UTIL": 97}
    labels = fams["DCGM_FI_DEV_SM_CLOCK"].samples[0].labels
    assert labels == {"gpu": "0", "UUID": "GPU-5b7f3c1e-0000-4000-8000-00000000gb10", "pci_bus_id": "0000000F:01:00.0",
                      "device": "nvidia0", "modelName": "NVIDIA GB10", "Hostname": "spark-1"}
    assert "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n" in text  # no _total: dcgm-exporter's name
    assert re.search(r"^DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION\{.*\} 1236547000$", text, re.M)


def test_no_framebuffer_series_ever_not_even_where_nvml_has_memory():
    for fake in (gb10_loaded(), h200()):
        text = sample_of(fake)
        assert "DCGM_FI_DEV_GPU_TEMP" in text and "FB_" not in text


def test_a_field_nvml_does_not_give_is_no_series_and_an_unread_fact_no_label():
    fake = gb10_loaded().fail("energy_mj", "util").fail("pci")
    text = sample_of(fake)
    assert "TOTAL_ENERGY" not in text and "GPU_UTIL" not in text  # NOT_SUPPORTED: absent, never 0
    line = next(l for l in text.splitlines() if l.startswith("DCGM_FI_DEV_GPU_TEMP{"))
    assert label_keys(line) == ["gpu", "UUID", "device", "modelName", "Hostname"]
    assert dcgm.text(None, None, "x") == "" and dcgm.text({"gpus": [{"index": 0, "temp_c": float("nan")}]}, None, "x") == ""


@pytest.mark.parametrize("host", ['spark"1', "spark\\1", "spark\n1", 'a",evil="1'])
def test_a_host_name_is_one_label_value_whatever_it_holds(host):
    text = sample_of(gb10_loaded(), hostname=host)
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    for fam in fams.values():
        assert [s.labels["Hostname"] for s in fam.samples] == [host]
        assert "evil" not in fam.samples[0].labels


needs_promtool = pytest.mark.skipif(not shutil.which("promtool"), reason="promtool not installed (.ci/run installs it)")


def lint(text: str) -> list[str]:
    run = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    problems = [l for l in (run.stdout + run.stderr).splitlines() if l.strip()]
    assert (run.returncode == 0) == (not problems), (run.returncode, problems)
    return problems


@needs_promtool
def test_promtool_finds_nothing_in_sparktuis_series_and_in_the_dcgm_ones_only_what_dcgm_exporter_draws():
    """promtool's lint wants snake_case labels and `_total` on counters; dcgm-exporter's published
    text draws exactly those findings (UUID, modelName, Hostname; the energy counter's name). The
    names are theirs and dashboards query them as they are: the same findings, nothing more."""
    import time

    nvml.set_backend(gb10_loaded())
    cfg = Config()
    exp = ex.Exporter(cfg, ids=["G3", "G4"], host_label="spark-1", sampler=Sampler(cfg, interval_s=0.05, processes_every_s=0.2))
    try:
        exp.start(tick_s=0.05)
        deadline = time.monotonic() + 10
        while len(exp.checks.snapshot()) < 2 or exp.sampler.history.latest is None:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        text = exp.text().decode()
    finally:
        exp.stop()
        nvml.set_backend(None)
    ours = text[:text.index("# HELP DCGM_")]
    theirs = text[len(ours):]
    assert "sparktui_check_status" in ours and "DCGM_FI_DEV_SM_CLOCK" in theirs
    assert lint(ours) == []
    published = (DATA / "scrape-h100.txt").read_text() + (
        "# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).\n"
        "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"
        'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-x",modelName="NVIDIA H100 80GB HBM3",Hostname="h"} 1\n')
    kinds = lambda findings: {f.split(" ", 1)[1] for f in findings}  # noqa: E731 - the finding without the name
    found = lint(theirs)
    assert {f.split(" ", 1)[0] for f in found} == set(dcgm.NAMES)
    assert kinds(found) == kinds(lint(published)) == {
        "label names should be written in 'snake_case' not 'camelCase'", 'counter metrics should have "_total" suffix'}
