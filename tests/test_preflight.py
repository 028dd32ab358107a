"""`sparktui preflight`: exit codes for launch scripts (`sparktui preflight && torchrun ...`).

Default: a failure blocks (exit 2); an unknown that a broken input caused (the target interpreter
missing, hung or without torch, scan paths or a pins file that do not exist), or a run where no
check was decided at all, blocks (exit 3); other warnings and unknowns are printed and pass.
--allow-unknown lets every unknown pass; --strict: a warning exits 1 and any unknown 3."""

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


def _scan(tmp_path: Path, paths: list[dict] | None = None) -> dict:
    """A tensor-parallel scan that read one config and found no TP setting (G10 ok)."""
    return {"paths": paths or [{"path": str(tmp_path), "status": "scanned"}], "files_read": 1, "bytes_read": 120,
            "dirs_walked": 1, "matches": [], "matches_total": 0, "files": {}, "skipped": {}}


SPARK_HOST = {"hostname": "spark-1", "system": "Linux", "machine": "aarch64", "dmi_product": "NVIDIA DGX Spark"}


def _mem(avail_gib: float) -> dict:
    return {"MemTotal": int(121.7 * GIB), "MemAvailable": int(avail_gib * GIB), "MemFree": int(avail_gib * GIB),
            "Buffers": 0, "Cached": 0, "SReclaimable": 0, "Shmem": 0, "SwapTotal": 0, "SwapFree": 0}


@pytest.mark.parametrize("avail, strict, code, word", [
    (100.0, False, 0, "PASSED"),
    (100.0, True, 0, "PASSED"),
    (2.0, False, 0, "PASSED"),  # G3 warns: printed, does not block
    (2.0, True, 1, "FAILED: warned on G3"),
])
def test_warnings_block_only_with_strict(tmp_path, capsys, avail, strict, code, word):
    # a Spark whose NVML could not be read: the host reading says aarch64, so G3 judges the unified pool
    # (without it G3 cannot tell unified memory from an x86 host without a GPU: unknown, tested in G3's tests)
    snap = _snapshot(tmp_path, meminfo=_mem(avail), nvml=None, host=SPARK_HOST)
    assert main(["preflight", "G3", "--snapshot", snap] + (["--strict"] if strict else [])) == code
    out = capsys.readouterr().out.strip().splitlines()
    assert word in out[-1]
    if avail < 8:
        assert out[0].startswith("G3") and "warn" in out[0] and "under the 8 GiB floor" in out[0]
    else:
        assert len(out) == 1  # nothing to report: one line


def test_an_unknown_not_caused_by_a_broken_input_passes_by_default_and_exits_3_with_strict(tmp_path, capsys):
    """G3 cannot read meminfo (not visible here); G10 read a config: something was checked."""
    snap = _snapshot(tmp_path, meminfo=None, tpscan=_scan(tmp_path))
    assert main(["preflight", "G3", "G10", "--snapshot", snap]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0].startswith("G3   ? unknown")
    assert out[1] == "not checked: G3 (does not block): cannot be seen here (reasons above)"
    assert out[-1].startswith("preflight: PASSED (2 checks: 1 ok, 1 unknown); ")
    assert main(["preflight", "G3", "G10", "--snapshot", snap, "--strict"]) == 3
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith("preflight: FAILED: unknown: G3 (")
    assert main(["preflight", "G3", "G10", "--snapshot", snap, "--strict", "--allow-unknown"]) == 0


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
    assert lines[-1].startswith("preflight: FAILED: failed on G1") and "sparktui check -v G1" in lines[-1]
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
        assert out[-1].startswith("preflight: FAILED: failed on G1, G6, G9 (")
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


# --- class 10: preflight never passes on nothing ------------------------------------------------

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

from tests.standins.make import make_script  # noqa: E402

ENV = {**{k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "COLUMNS", "LINES")}, "NO_COLOR": "1"}


def _cli(tmp_path: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """`sparktui ARGS` as a launch script runs it: a real process, its own XDG dirs."""
    env = {**ENV, **{v: str(tmp_path / v.lower()) for v in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")}}
    return subprocess.run([sys.executable, "-m", "sparktui", *args], capture_output=True, text=True, cwd=tmp_path,
                          env=env, timeout=timeout)


def _project(tmp_path: Path) -> str:
    """A training project whose one config has no tensor parallelism: G10 is decided (ok)."""
    d = tmp_path / "proj"
    d.mkdir(exist_ok=True)
    (d / "train.yaml").write_text("model: llama-3.1-8b\nlr: 2.0e-5\ntensor_model_parallel_size: 1\n")
    return str(d)


def test_a_missing_python_stops_the_launch_with_a_usage_error(tmp_path):
    """The issue's own line: `sparktui preflight --python /no/such/python && torchrun ...` launched."""
    launched = tmp_path / "launched"
    p = subprocess.run(["sh", "-c", f"'{sys.executable}' -m sparktui preflight --python /no/such/python && touch '{launched}'"],
                       capture_output=True, text=True, cwd=tmp_path, env=ENV, timeout=120)
    assert p.returncode == 64 and not launched.exists()
    assert "PASSED" not in p.stdout and p.stdout == ""
    assert p.stderr.startswith("sparktui: --python /no/such/python: no such file;")


def _interpreter(tmp_path: Path, kind: str) -> str:
    if kind == "hung":
        return make_standin(tmp_path, "hang_import")
    if kind == "without torch":  # site-packages switched off: a real Python with no torch at all
        return make_script(tmp_path, "python-notorch", f"exec '{sys.executable}' -S \"$@\"\n")
    if kind == "cannot start":  # executable, but its #! line names no interpreter: exec fails
        p = tmp_path / "python-badshebang"
        p.write_text("#!/no/such/interp\n")
        p.chmod(0o755)
        return str(p)
    if kind == "not a python":  # answers, but with nothing the probe can read
        return make_script(tmp_path, "python-garbage", "echo 'hello from a wrapper'\nexit 0\n")
    raise AssertionError(kind)


@pytest.mark.parametrize("kind, why", [
    ("hung", "'import torch' hung: no answer after 2.0 s during 'import torch'; killed"),
    ("without torch", "no torch installed in "),
    ("cannot start", "it could not be run: cannot start "),
    ("not a python", "never ran: the interpreter never started its stages"),
])
def test_an_unknown_from_a_broken_interpreter_blocks_and_allow_unknown_accepts_it(tmp_path, kind, why):
    py = _interpreter(tmp_path, kind)
    argv = ["preflight", "G1", "G10", "--python", py, "--timeout", "2", "--no-cuda-smoke", "--path", _project(tmp_path)]
    p = _cli(tmp_path, *argv)
    assert p.returncode == 3, p.stdout + p.stderr
    lines = p.stdout.strip().splitlines()
    assert lines[0].startswith("G1   ? unknown")
    blocked = next(line for line in lines if line.startswith("not checked: "))
    assert blocked.startswith("not checked: G1 (blocks; --allow-unknown accepts it): "
                              "the target interpreter (--python / [target] python): ")
    assert why in blocked
    assert lines[-1].startswith("preflight: FAILED: unknown: G1 (2 checks: 1 ok, 1 unknown); details: sparktui check -v G1")
    ok = _cli(tmp_path, *argv, "--allow-unknown", "--json")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    doc = json.loads(ok.stdout)
    assert doc["passed"] is True and doc["allow_unknown"] is True and doc["blockers"] == []
    assert [(m["id"], m["cause"], m["blocks"]) for m in doc["not_checked"]] == [("G1", "broken input", True)]
    assert why in doc["not_checked"][0]["why"]


def test_a_healthy_interpreter_is_no_broken_input(tmp_path):
    """The GB10-looking stand-in: G1 judged (unknown only for want of NVML here, which does not block)."""
    py = make_standin(tmp_path, "ok_gb10")
    p = _cli(tmp_path, "preflight", "G1", "G10", "--python", py, "--no-cuda-smoke", "--path", _project(tmp_path), "--json")
    doc = json.loads(p.stdout)
    assert all(m["cause"] != "broken input" for m in doc["not_checked"]), doc["not_checked"]
    assert p.returncode == (0 if all(not m["blocks"] for m in doc["not_checked"]) else 3)


def test_scan_paths_that_do_not_exist_are_a_broken_input(tmp_path):
    """`--path ./confgs` (a typo) used to pass: G10 unknown, nothing scanned."""
    p = _cli(tmp_path, "preflight", "G3", "G10", "--path", "/no/such/project")
    assert p.returncode == 3, p.stdout
    assert ("not checked: G10 (blocks; --allow-unknown accepts it): "
            "the scan paths (--path / [scan] paths): /no/such/project: missing") in p.stdout
    assert _cli(tmp_path, "preflight", "G3", "G10", "--path", "/no/such/project", "--allow-unknown").returncode == 0
    both = _cli(tmp_path, "preflight", "G3", "G10", "--path", "/no/such/project", "--path", _project(tmp_path))
    assert both.returncode == 3 and "/no/such/project: missing" in both.stdout  # one typo hides its configs too
    assert _cli(tmp_path, "preflight", "G3", "G10", "--path", _project(tmp_path)).returncode == 0


def test_a_pins_file_that_does_not_exist_is_a_broken_input(tmp_path):
    r = Readings()
    r.add(Reading("pins", None, error="pins file unusable: /no/such/pins.txt: no such file", source="/no/such/pins.txt"))
    r.add(Reading("tpscan", _scan(tmp_path), source="scan"))
    path = tmp_path / "s.json"
    write_snapshot(path, r, {"hostname": "spark-1"}, "0.1.0")
    assert main(["preflight", "G9", "G10", "--snapshot", str(path), "--pins", "/no/such/pins.txt"]) == 3
    assert main(["preflight", "G9", "G10", "--snapshot", str(path)]) == 0  # the shipped set: not the user's input


def test_when_nothing_could_be_decided_the_gate_does_not_pass(tmp_path, capsys):
    snap = _snapshot(tmp_path, meminfo=None)
    assert main(["preflight", "G3", "--snapshot", snap]) == 3
    out = capsys.readouterr().out.strip().splitlines()
    assert out[1] == ("not checked: G3 (blocks; --allow-unknown accepts it): no check could be decided, "
                      "so nothing was verified")
    assert out[-1].startswith("preflight: FAILED: unknown: G3 (1 check: 1 unknown)")
    assert main(["preflight", "G3", "--snapshot", snap, "--allow-unknown"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == (
        "preflight: PASSED (1 check: 1 unknown); warnings do not block (use --strict to make them); "
        "unknowns do not block (--allow-unknown)")


def test_a_skip_alone_is_not_nothing_checked_with_unknowns(tmp_path, capsys):
    """G7 skips off SM121; no unknown at all: nothing to block."""
    nv = {"devices": [{"index": 0, "name": {"value": "NVIDIA H200"}, "compute_capability": {"value": [9, 0]}}]}
    snap = _snapshot(tmp_path, nvml=nv)
    assert main(["preflight", "G7", "--snapshot", snap]) == 0


def test_strict_with_allow_unknown_still_blocks_on_a_warning(tmp_path, capsys):
    snap = _snapshot(tmp_path, meminfo=_mem(2.0), tpscan=_scan(tmp_path))
    assert main(["preflight", "G3", "G10", "--snapshot", snap, "--strict", "--allow-unknown"]) == 1
    snap = _snapshot(tmp_path, meminfo=_mem(100.0), nvml=None, tpscan=_scan(tmp_path))
    assert main(["preflight", "G3", "G7", "G10", "--snapshot", snap, "--strict", "--allow-unknown"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1].endswith("unknowns do not block (--allow-unknown)")


def test_a_recording_without_a_target_reading_is_no_broken_input(capsys):
    """The shipped recording fails on what it records; its absent readings are not the user's input."""
    from sparktui.cli.fleet import broken_inputs

    demo = str(Path(__file__).resolve().parents[1] / "src" / "sparktui" / "data" / "gb10-demo.jsonl")
    assert main(["preflight", "G3", "G4", "--replay", demo, "--json"]) in (0, 1, 2)
    doc = json.loads(capsys.readouterr().out)
    assert all(m["cause"] != "broken input" for m in doc["not_checked"])
    assert broken_inputs(Readings(), Config()) == {}


@pytest.mark.parametrize("stage, status, broken", [
    ("import torch", "hung", True), ("torch.cuda", "hung", True), ("first .cuda()", "hung", True),
    ("import torch", "cancelled", True), ("import torch", "not reached", True), ("python", "not reached", True),
    ("import torch", "done", False), ("first .cuda()", "not reached", False), ("import torch", "crashed", False),
])
def test_which_target_stages_make_a_broken_input(stage, status, broken):
    """A hang or cancel anywhere, or the interpreter never reaching python/import torch, is broken
    input; a crash is not (G1 fails on it: evidence, not a blind spot)."""
    from sparktui.cli.fleet import broken_inputs

    stages = {s: {"status": "done"} for s in ("python", "packages", "cudart", "import torch", "torch.cuda", "first .cuda()")}
    stages[stage] = {"status": status, "error": "why"}
    t = {"interpreter": "/home/spark/venvs/train/bin/python", "stages": stages, "packages": {"torch": "2.9.0+cu130"}}
    r = Readings()
    r.add(Reading("target", t, source="test"))
    assert ("target" in broken_inputs(r, Config())) is broken


def test_no_torch_is_broken_only_when_no_torch_is_registered():
    """`No module named 'torch'` with torch's metadata present is a broken install: G1 fails on it."""
    from sparktui.cli.fleet import broken_inputs

    err = {"status": "error", "error_type": "ModuleNotFoundError", "error": "No module named 'torch'"}
    stages = {"python": {"status": "done"}, "import torch": err}
    for pkgs, broken in (({}, True), ({"torch": "2.9.0+cu130"}, False)):
        r = Readings()
        r.add(Reading("target", {"interpreter": "/usr/bin/python3", "stages": stages, "packages": pkgs}, source="t"))
        assert broken_inputs(r, Config()) == ({"target": "no torch installed in /usr/bin/python3"} if broken else {})
