"""`sparktui preflight`: exit codes for launch scripts (`sparktui preflight && torchrun ...`).

Default: only a failure blocks (exit 2); warnings and unknowns are printed and pass (exit 0).
--strict: a warning exits 1 and an unknown 3, so only an all-clear starts the job."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sparktui.cli.main import main
from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings, write_snapshot
from sparktui.gotchas import REGISTRY
from sparktui.runner import collect
from tests.standins.make import make_standin

GIB = 1024 ** 3


def _snapshot(tmp_path: Path, **readings: dict | None) -> str:
    r = Readings()
    for name, data in readings.items():
        r.add(Reading(name, data, error=None if data is not None else f"{name} unavailable (test)", source=name,
                      started_at=1.0))
    path = tmp_path / "snap.json"
    write_snapshot(path, r, {"hostname": "spark-1"}, "0.1.0")
    return str(path)


def _mem(avail_gib: float) -> dict:
    return {"MemTotal": int(121.7 * GIB), "MemAvailable": int(avail_gib * GIB), "MemFree": int(avail_gib * GIB),
            "Buffers": 0, "Cached": 0, "SReclaimable": 0, "Shmem": 0, "SwapTotal": 0, "SwapFree": 0}


@pytest.mark.parametrize("avail, strict, code, word", [
    (100.0, False, 0, "PASSED"),
    (100.0, True, 0, "PASSED"),
    (2.0, False, 0, "PASSED"),  # G3 warns: printed, does not block
    (2.0, True, 1, "FAILED on G3"),
])
def test_warnings_block_only_with_strict(tmp_path, capsys, avail, strict, code, word):
    snap = _snapshot(tmp_path, meminfo=_mem(avail), nvml=None)
    assert main(["preflight", "G3", "--snapshot", snap] + (["--strict"] if strict else [])) == code
    out = capsys.readouterr().out.strip().splitlines()
    assert word in out[-1]
    if avail < 8:
        assert out[0].startswith("G3") and "warn" in out[0] and "under the 8 GiB floor" in out[0]
    else:
        assert len(out) == 1  # nothing to report: one line


def test_unknown_passes_by_default_and_exits_3_with_strict(tmp_path, capsys):
    snap = _snapshot(tmp_path, meminfo=None)
    assert main(["preflight", "G3", "--snapshot", snap]) == 0
    assert "G3   ? unknown" in capsys.readouterr().out
    assert main(["preflight", "G3", "--snapshot", snap, "--strict"]) == 3


def test_a_failure_blocks_with_one_line_per_problem(tmp_path, capsys):
    """A stand-in training interpreter whose torch dies on an undefined CUDA symbol: G1 fails."""
    py = make_standin(tmp_path, "undefined_symbol")
    cfg = Config().with_overrides(target={"python": py, "cuda_smoke": False})
    r = collect(["target", "cudalibs", "meminfo"], cfg)
    r.add(Reading("nvml", None, error="nvmlInit failed: LIBRARY_NOT_FOUND", source="NVML"))
    path = tmp_path / "broken.json"
    write_snapshot(path, r, {"hostname": "spark-1"}, "0.1.0")
    assert main(["preflight", "G1", "G3", "--snapshot", str(path)]) == 2
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("G1   ✘ fail") and "undefined symbol" in lines[0]
    assert lines[-1].startswith("preflight: FAILED on G1") and "sparktui check -v G1" in lines[-1]
    assert all(len(line) < 260 for line in lines)


def test_default_runs_every_non_intrusive_check_and_refuses_intrusive_ones(tmp_path, capsys):
    snap = _snapshot(tmp_path, meminfo=_mem(100))
    assert main(["preflight", "--snapshot", snap, "--json"]) in (0, 2)
    doc = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in doc["checks"]] == [g for g in REGISTRY if not REGISTRY[g].intrusive]
    assert "G5" not in [c["id"] for c in doc["checks"]]
    assert main(["preflight", "G5"]) == 64
    assert "intrusive" in capsys.readouterr().err


def test_preflight_on_the_shipped_recording_fails_on_what_it_records(capsys):
    """The GB10 demo recording: a CUDA 12.8 torch (G1), an uncapped server beside training (G6)
    and a drifted stack (G9) block; --replay works before or after the subcommand."""
    demo = str(Path(__file__).resolve().parents[1] / "src" / "sparktui" / "data" / "gb10-demo.jsonl")
    for argv in (["preflight", "--replay", demo], ["--replay", demo, "preflight"]):
        assert main(argv) == 2
        out = capsys.readouterr().out.strip().splitlines()
        assert out[-1].startswith("preflight: FAILED on G1, G6, G9 (")
        assert out[-1].endswith("details: sparktui check -v G1 G6 G9")
        assert {line.split()[0] for line in out[:-1]} >= {"G1", "G6", "G9", "G3", "G4"}
    assert main(["preflight", "--replay", demo, "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["source"] == "recording gb10-demo.jsonl" and doc["host"]["hostname"] == "spark-demo"
    assert "G5" not in [c["id"] for c in doc["checks"]]


def test_preflight_replay_refuses_a_bad_file_and_the_snapshot_alternative(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not a recording\n")
    assert main(["preflight", "--replay", str(bad)]) == 64
    assert "bad.jsonl" in capsys.readouterr().err
    snap = _snapshot(tmp_path, meminfo=_mem(100))
    assert main(["preflight", "--replay", str(bad), "--snapshot", snap]) == 64
    assert "alternatives" in capsys.readouterr().err
