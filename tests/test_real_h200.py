"""Judges on what a real GPU machine answered (tests/data/h200: an H200 under a torch matmul load,
and a snapshot of the same machine). Not a GB10, but real NVML, a real driver and a CUDA torch."""

from __future__ import annotations

import json
from pathlib import Path

from sparktui.cli.main import EXIT_WARN, main
from sparktui.core.recording import read_recording, readings_from_recording
from sparktui.core.config import Config
from sparktui.gotchas import REGISTRY

DATA = Path(__file__).parent / "data" / "h200"


def test_the_matmul_recording_shows_power_capping_with_its_counter():
    rec = read_recording(DATA / "load-matmul.jsonl")
    assert rec.problems == [] and len(rec.samples) == 154
    g = [s["gpus"][0] for s in rec.samples]
    assert max(x["power_w"] for x in g) > 690 and min(x["power_w"] for x in g) < 80
    assert all(x["errors"] == {} for x in g)  # an H200 answers every field
    v = REGISTRY["G4"].judge(readings_from_recording(rec), Config())
    assert v.status.value == "warn" and v.summary.startswith("power capping")
    ev = {e.what: e.value for e in v.evidence}
    assert ev["SW power capping (NVML field 74)"].startswith("+120.2 s")  # recorded as power_viol_ns (field 74)
    assert ev["rated power"] == "700 W (NVML enforced limit)"


def test_inside_the_container_g6_says_it_cannot_see_the_host(capsys):
    assert main(["check", "--replay", str(DATA / "load-matmul.jsonl"), "G6", "--json"]) == 3
    (g6,) = json.loads(capsys.readouterr().out)["checks"]
    assert g6["status"] == "unknown" and "host processes not visible" in g6["summary"]


def test_the_h200_snapshot_judged_offline(capsys):
    rc = main(["check", "--snapshot", str(DATA / "snapshot.json"), "G1", "G7", "G9", "--json"])
    got = {c["id"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert rc == EXIT_WARN
    assert got["G1"]["status"] == "ok" and "CUDA 13.0" in got["G1"]["summary"] and "not a GB10" in got["G1"]["summary"]
    assert got["G7"]["status"] == "skip" and "NVIDIA H200 (sm_90)" in got["G7"]["summary"]
    assert got["G9"]["status"] == "warn" and "inside docker" in got["G9"]["summary"]
    snap = json.loads((DATA / "snapshot.json").read_text())
    torch = snap["readings"]["target"]["data"]["torch"]
    assert (torch["version"], torch["cuda"], torch["nccl"]) == ("2.11.0+cu130", "13.0", "2.28.9")
