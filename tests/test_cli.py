"""The headless CLI, run as a user would: a real subprocess, real exit codes, real JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


from sparktui.cli.main import EXIT_CONFIG, EXIT_OK, EXIT_USAGE, main
from sparktui.testing import fake_nvml
from tests.standins.make import make_standin

ENV_KEEP = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "COLUMNS", "LINES")}  # a terminal size is the test's to set


def run_cli(*args, cwd=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "sparktui", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout, env={**ENV_KEEP, "NO_COLOR": "1"})


def test_check_json_on_a_machine_without_a_gpu_has_every_id_and_no_traceback(tmp_path):
    """No driver and no torch, injected (NVML's library missing at sparktui's NVML boundary, a target
    interpreter without torch), so this holds on a GPU machine too."""
    py = make_standin(tmp_path, "no_torch")
    env = fake_nvml.subprocess_env(tmp_path, "FakeNvml([], library_missing=True)", {**ENV_KEEP, "NO_COLOR": "1"})
    p = subprocess.run([sys.executable, "-m", "sparktui", "check", "--json", "--python", py, "--path", str(tmp_path)],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120, env=env)
    assert "Traceback" not in p.stderr, p.stderr
    doc = json.loads(p.stdout)
    assert doc["schema"] == 1 and doc["kind"] == "sparktui-check"
    assert [c["id"] for c in doc["checks"]] == [f"G{i}" for i in range(1, 15)]
    for c in doc["checks"]:
        assert {"id", "title", "status", "summary", "evidence", "fix"} <= set(c)
        assert c["status"] in ("ok", "warn", "fail", "unknown", "skip")
        assert c["evidence"] or c["status"] in ("skip", "unknown"), c
    by_id = {c["id"]: c for c in doc["checks"]}
    # no NVIDIA driver here: nothing GPU-side may claim ok
    assert by_id["G7"]["status"] == "unknown"
    assert by_id["G1"]["status"] == "unknown"
    assert doc["host"]["hostname"]
    assert p.returncode in (0, 1, 2, 3)


def test_exit_code_follows_the_worst_status(tmp_path):
    # A snapshot where NVML names an H200 (G7 skips) -> exit 0 for G7 alone.
    snap = tmp_path / "s.json"
    snap.write_text(json.dumps({"kind": "sparktui-snapshot", "schema": 1, "readings": {
        "nvml": {"probe": "nvml", "data": {"devices": [{"index": 0, "name": {"value": "NVIDIA H200"},
                                                        "compute_capability": {"value": [9, 0]}}]}}}}))
    assert run_cli("check", "G7", "--snapshot", str(snap)).returncode == 0
    # ... and a GB10 whose torch build targets only sm_90 -> G7 fails -> exit 2.
    snap.write_text(json.dumps({"kind": "sparktui-snapshot", "schema": 1, "readings": {
        "nvml": {"probe": "nvml", "data": {"devices": [{"index": 0, "name": {"value": "NVIDIA GB10"},
                                                        "compute_capability": {"value": [12, 1]}}]}},
        "target": {"probe": "target", "data": {"torch_cuda": {"available": True, "arch_list": ["sm_80", "sm_90"]}}}}}))
    p = run_cli("check", "G7", "--snapshot", str(snap))
    assert p.returncode == 2, p.stdout
    assert "G7" in p.stdout and "fail" in p.stdout and "sm_90" in p.stdout


def test_snapshot_then_check_snapshot_gives_the_same_verdicts(tmp_path):
    snap = tmp_path / "snap.json"
    p = run_cli("snapshot", "-o", str(snap), "--python", sys.executable, "--path", str(tmp_path), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    doc = json.loads(snap.read_text())
    assert {"host", "nvml", "target", "cudalibs", "meminfo"} <= set(doc["readings"])
    live = json.loads(run_cli("check", "G1", "G7", "--json", "--python", sys.executable, cwd=tmp_path).stdout)
    again = json.loads(run_cli("check", "G1", "G7", "--json", "--snapshot", str(snap)).stdout)
    assert [(c["id"], c["status"], c["summary"]) for c in live["checks"]] == \
           [(c["id"], c["status"], c["summary"]) for c in again["checks"]]
    assert again["source"] == f"snapshot {snap}"


def test_explain_prints_the_card():
    p = run_cli("explain", "g4")
    assert p.returncode == 0
    assert p.stdout.startswith("# G4: ") and "## Fix" in p.stdout and "```" in p.stdout


def test_usage_errors_exit_64(capsys):
    assert main(["explain", "G99"]) == EXIT_USAGE
    assert "unknown gotcha" in capsys.readouterr().err
    assert main(["check", "G0"]) == EXIT_USAGE
    assert main(["--no-such-flag"]) == EXIT_USAGE
    assert main(["check", "--snapshot", "/nonexistent/snap.json"]) == EXIT_USAGE


def test_bad_config_exits_78_with_the_key(tmp_path, capsys):
    bad = tmp_path / "c.toml"
    bad.write_text("[thermal]\nhot_c = 'very'\n")
    assert main(["check", "G7", "--config", str(bad)]) == EXIT_CONFIG
    err = capsys.readouterr().err
    assert "[thermal] hot_c: expected a number" in err and "Traceback" not in err


def test_list_names_every_check(capsys):
    assert main(["list"]) == EXIT_OK
    out = capsys.readouterr().out.splitlines()
    assert [l.split()[0] for l in out] == [f"G{i}" for i in range(1, 15)]


def sparktui_interrupted(tmp_path, args: list[str], ready) -> tuple[str, str, float, int]:
    """Run ``sparktui ARGS``, wait until ``ready(proc)`` returns, send Ctrl-C; (stdout, stderr,
    seconds from the signal to the exit, exit code)."""
    import signal
    import time

    p = subprocess.Popen([sys.executable, "-m", "sparktui", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd=tmp_path, env={**ENV_KEEP, "NO_COLOR": "1"})
    try:
        ready(p)
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=25)
    finally:
        p.kill()
    return out, err, time.monotonic() - sent, p.returncode


def test_ctrl_c_during_check_watch_judges_what_was_sampled(tmp_path):
    """`check --watch 10` cut short by Ctrl-C prints verdicts from the samples it has, at once."""
    import time

    def sampling(p) -> None:
        deadline = time.monotonic() + 20
        while "sampling telemetry" not in (p.stderr.readline() or "") and time.monotonic() < deadline:
            pass
        time.sleep(1.5)

    out, err, took, code = sparktui_interrupted(tmp_path, ["check", "G3", "G4", "--watch", "10", "--json"], sampling)
    assert took < 5, "Ctrl-C must not wait out the 10-minute window"
    assert "interrupted: judging what was read so far" in err and "Traceback" not in err
    got = {c["id"]: c for c in json.loads(out)["checks"]}
    assert set(got) == {"G3", "G4"} and got["G3"]["status"] in ("ok", "warn", "skip")  # /proc/meminfo was read
    if got["G3"]["status"] == "skip":  # a machine without a unified CPU-GPU pool (an x86 CI runner): says why
        assert got["G3"]["summary"].startswith("does not apply: ")
    assert code == 130  # a look cut short never exits as if it were whole


@pytest.mark.parametrize("before", [True, False])
def test_shared_options_count_before_or_after_the_subcommand(tmp_path, before):
    """`sparktui --python X snapshot` and `sparktui snapshot --python X` read the same interpreter
    (a subcommand's default used to overwrite what came before it)."""
    from tests.standins.make import make_standin

    py = make_standin(tmp_path, "undefined_symbol")  # any stand-in: its path shows up as the interpreter
    opts = ["--python", py, "--timeout", "2", "--path", str(tmp_path)]
    out = tmp_path / "snap.json"
    argv = (opts + ["snapshot", "-o", str(out)]) if before else (["snapshot", "-o", str(out)] + opts)
    assert main(argv) == 0
    doc = json.loads(out.read_text())
    assert doc["readings"]["target"]["data"]["interpreter"] == py
    assert doc["readings"]["tpscan"]["data"]["paths"][0]["abs"] == str(tmp_path)


@pytest.mark.parametrize("argv, flag", [
    (["--replay", "x.jsonl", "snapshot", "-o", "-"], "--replay"),
    (["--bell", "check"], "--bell"),
    (["--speed", "4", "report"], "--speed"),
    (["--record", "r.jsonl", "export"], "--record"),
])
def test_dashboard_options_with_a_subcommand_that_ignores_them_are_refused(capsys, argv, flag):
    assert main(argv) == 64
    err = capsys.readouterr().err
    assert f"{flag} is a dashboard option" in err


def test_snapshot_to_a_folder_or_a_missing_folder_is_refused_before_probing(tmp_path, capsys):
    import time as _time

    t0 = _time.monotonic()
    assert main(["snapshot", "-o", str(tmp_path)]) == EXIT_USAGE
    assert "is a folder" in capsys.readouterr().err
    assert main(["snapshot", "-o", str(tmp_path / "no" / "such" / "x.json")]) == EXIT_USAGE
    assert "does not exist" in capsys.readouterr().err
    assert _time.monotonic() - t0 < 2  # no probe ran


def test_a_snapshot_with_a_malformed_field_is_a_clear_error(tmp_path, capsys):
    snap = tmp_path / "s.json"
    snap.write_text(json.dumps({"kind": "sparktui-snapshot", "schema": 1, "host": {}, "readings": {
        "meminfo": {"probe": "meminfo", "data": {}, "started_at": "yesterday"}}}))
    assert main(["check", "G3", "--snapshot", str(snap)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "reading 'meminfo' is malformed" in err and "yesterday" in err and "Traceback" not in err


def test_a_bug_exits_70_with_one_line_not_1_which_means_a_warning(monkeypatch, capsys):
    import sparktui.cli.main as cli

    def broken(args):
        raise KeyError("boom")

    monkeypatch.setattr(cli, "cmd_list", broken)
    monkeypatch.delenv("SPARKTUI_DEBUG", raising=False)
    assert cli.main(["list"]) == 70
    err = capsys.readouterr().err.strip()
    assert err.startswith("sparktui: internal error (a bug, please report it): KeyError: 'boom'") and "\n" not in err


def test_plain_sparktui_without_a_terminal_prints_the_checklist_once(capsys):
    """`sparktui | cat`, cron, `ssh host sparktui`: no full-screen app waiting forever."""
    demo = os.path.join(os.path.dirname(__file__), "..", "src", "sparktui", "data", "gb10-demo.jsonl")
    assert main(["--replay", demo]) == 2  # the demo records G1, G6 and G9 failing
    out, err = capsys.readouterr()
    assert "not a terminal" in err and "\x1b[" not in out
    assert all(f"G{i} " in out for i in (1, 3, 4, 6, 9))


@pytest.mark.parametrize("value", ["0", "-1", "nan", "abc"])
def test_watch_must_be_minutes_above_zero(capsys, value):
    assert main(["check", "G4", "--watch", value]) == EXIT_USAGE
    assert "--watch" in capsys.readouterr().err


# -- bad input never exits 70 (audit of 2026-12-04) ----------------------------------------------

_SNAP = Path(__file__).resolve().parent / "data" / "h200" / "snapshot.json"
_HUGE = "1" + "0" * 400  # an integer no float can hold


def _mutations():
    """(name, JSON text): each reading's data, each of its top-level fields and each top-level
    field of the document replaced by null, a string, a list and a huge number."""
    doc = json.loads(_SNAP.read_text())
    out = []
    values = {"null": None, "str": "x", "list": [], "huge": "HUGE"}

    def dump(d):
        return json.dumps(d).replace('"HUGE"', _HUGE)

    for key in list(doc):
        for vn, v in values.items():
            out.append((f"doc.{key}={vn}", dump({**doc, key: v})))
    for name, r in doc["readings"].items():
        for vn, v in values.items():
            out.append((f"{name}.data={vn}", dump({**doc, "readings": {**doc["readings"], name: {**r, "data": v}}})))
            out.append((f"{name}.started_at={vn}",
                        dump({**doc, "readings": {**doc["readings"], name: {**r, "started_at": v}}})))
        for field in list(r.get("data") or {})[:12]:
            for vn, v in values.items():
                data = {**r["data"], field: v}
                out.append((f"{name}.{field}={vn}",
                            dump({**doc, "readings": {**doc["readings"], name: {**r, "data": data}}})))
    out.append(("deep", "[" * 100000 + "]" * 100000))
    return out


def test_mutated_snapshots_never_exit_70(tmp_path, capsys):
    assert _SNAP.is_file()
    bad = []
    for i, (name, text) in enumerate(_mutations()):
        f = tmp_path / f"m{i}.json"
        f.write_text(text)
        for cmd in (["check", "--snapshot", str(f)], ["report", "--snapshot", str(f), "-o", "-"],
                    ["preflight", "--snapshot", str(f)], ["peers", "--snapshot", str(f)]):
            rc = main(cmd)
            err = capsys.readouterr().err
            if rc == 70 or "Traceback" in err:
                bad.append((name, cmd[0], rc, err.strip().splitlines()[-1:]))
    assert not bad, bad[:10]


@pytest.mark.parametrize("header", [
    '{"type":"header","kind":"sparktui-recording","schema":1,"host":"abc"}',
    '{"type":"header","kind":"sparktui-recording","schema":1,"host":[1]}',
    '{"type":"header","kind":"sparktui-recording","schema":1,"started_at":' + _HUGE + '}',
    '{"type":"header","kind":"sparktui-recording","schema":1,"interval_s":' + _HUGE + '}',
    "[" * 100000 + "]" * 100000,
])
def test_bad_recording_headers_are_named_not_crashing(tmp_path, capsys, header):
    f = tmp_path / "r.jsonl"
    f.write_text(header + '\n{"type":"sample","t":' + _HUGE + '}\n{"type":"sample","t":1,"mem":{"MemAvailable":' + _HUGE + '}}\n')
    for cmd in (["check", "--replay", str(f)], ["report", "--replay", str(f), "-o", "-"], ["preflight", "--replay", str(f)]):
        rc = main(cmd)
        err = capsys.readouterr().err
        assert rc != 70 and "Traceback" not in err, (cmd, err)
        # a bad header field is ignored with a note (the samples still count); deep JSON is refused
        if cmd[0] == "check":  # check names every problem on stderr
            assert ("ignored" in err) if "kind" in header else (rc == EXIT_USAGE and "nested too deeply" in err)


@pytest.mark.parametrize("gid", ["G²", "²", "G٣", "G" + "9" * 5000])
def test_odd_digit_ids_are_usage_errors(gid, capsys):
    assert main(["explain", gid]) == EXIT_USAGE
    assert main(["check", "--snapshot", str(_SNAP), gid]) == EXIT_USAGE


@pytest.mark.parametrize("argv", [
    ["record", "-o", "x.jsonl", "--duration", "inf"], ["record", "-o", "x.jsonl", "--duration", "1e10"],
    ["record", "-o", "x.jsonl", "--interval", "inf"], ["record", "-o", "x.jsonl", "--processes-every", "nan"],
    ["bandwidth", "--size", "1e308"], ["check", "--watch", "1e300"], ["record", "-o", "-"],
    ["check", "--replay", "r.jsonl", "--snapshot", "s.json"], ["check", "--replay", "r.jsonl", "--watch", "1"],
    ["check", "--python", ""], ["check", "--api-url", ""], ["export", "--listen", ""],
])
def test_absurd_or_conflicting_options_are_usage_errors(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == EXIT_USAGE
    assert "Traceback" not in capsys.readouterr().err


def test_infinite_config_values_are_config_errors(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[telemetry]\ncheck_window_s = inf\n")
    assert main(["check", "--config", str(cfg), "--snapshot", str(_SNAP)]) == EXIT_CONFIG


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_fifos_and_devices_are_refused_not_read(tmp_path, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert main(["check", "--config", str(fifo), "--snapshot", str(_SNAP)]) == EXIT_CONFIG
    assert main(["check", "--snapshot", str(fifo)]) == EXIT_USAGE
    assert main(["check", "--replay", str(fifo)]) == EXIT_USAGE
    assert main(["record", "-o", str(fifo)]) == EXIT_USAGE
    if os.path.exists("/dev/zero"):
        assert main(["check", "--replay", "/dev/zero"]) == EXIT_USAGE
        assert main(["check", "--snapshot", "/dev/zero"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "not a regular file" in err and "Traceback" not in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_a_pins_fifo_is_refused_not_waited_on(tmp_path):
    from sparktui.probes import pins

    fifo = tmp_path / "pins.txt"
    os.mkfifo(fifo)
    ps = pins.load(fifo)
    assert ps.errors and "not a regular file" in ps.errors[0]
    req = tmp_path / "req.txt"
    req.write_text(f"-r {fifo}\n")
    assert any("not a regular file" in e for e in pins.load(req).errors)


@pytest.mark.parametrize("cmd", [["snapshot", "-o", "s.json"], ["report", "-o", "-"], ["preflight"]])
def test_ctrl_c_with_a_hung_python_is_prompt(tmp_path, cmd):
    """Ctrl-C during snapshot/report/preflight with a hung --python used to wait out --timeout."""
    import time

    hang = tmp_path / "python"
    hang.write_text("#!/bin/sh\nsleep 60\n")
    hang.chmod(0o755)
    out, err, took, code = sparktui_interrupted(
        tmp_path, [*cmd, "--python", str(hang), "--timeout", "30", "--path", str(tmp_path)], lambda p: time.sleep(3))
    assert took < 8, "Ctrl-C must not wait out the probe's --timeout"
    assert "interrupted" in err and "Traceback" not in err
    assert code != 70
    if cmd[0] == "snapshot":
        assert code == 130 and not (tmp_path / "s.json").exists()


# --- --python must name an executable (issue 12, class 10) ---------------------------------------

def _bad_interpreters(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """kind -> (--python value, what the message must say)."""
    folder = tmp_path / "venv"
    folder.mkdir()
    plain = tmp_path / "python-not-executable"
    plain.write_text("#!/bin/sh\n")
    plain.chmod(0o644)
    return {"missing": ("/no/such/python", "/no/such/python: no such file"),
            "folder": (str(folder), f"{folder}: is a folder, not an interpreter (give its bin/python)"),
            "not executable": (str(plain), f"{plain}: not executable"),
            "not on PATH": ("python-sparktui-nonesuch", "python-sparktui-nonesuch: no such command on PATH")}


@pytest.mark.parametrize("cmd", [
    ["check"], ["preflight"], ["snapshot", "-o", "s.json"], ["report"], ["bandwidth", "--yes", "--force"], [],
    ["record", "-o", "r.jsonl", "--duration", "1"], ["check", "--snapshot", "nonexistent.json"],
], ids=["check", "preflight", "snapshot", "report", "bandwidth", "dashboard", "record", "check-snapshot"])
def test_a_python_that_cannot_run_is_a_usage_error_for_every_command(tmp_path, cmd):
    """Exit 64 with the path named, before any probe runs: nothing written, nothing measured."""
    value, said = _bad_interpreters(tmp_path)["missing"]
    p = run_cli(*cmd, "--python", value, "--path", str(tmp_path), cwd=tmp_path)
    assert p.returncode == EXIT_USAGE, (p.stdout, p.stderr)
    assert p.stderr.startswith(f"sparktui: --python {said}; give the training environment's interpreter")
    assert p.stdout == "" and "Traceback" not in p.stderr
    assert not (tmp_path / "s.json").exists() and not (tmp_path / "r.jsonl").exists()


@pytest.mark.parametrize("kind", ["folder", "not executable", "not on PATH"])
def test_each_kind_of_unusable_python_is_named(tmp_path, kind):
    value, said = _bad_interpreters(tmp_path)[kind]
    p = run_cli("preflight", "--python", value, cwd=tmp_path)
    assert p.returncode == EXIT_USAGE and f"--python {said};" in p.stderr and "PASSED" not in p.stdout


def test_a_bare_python_name_on_path_and_a_full_path_are_accepted(tmp_path):
    for value in (Path(sys.executable).name, sys.executable):
        p = run_cli("check", "G3", "--python", value, cwd=tmp_path)
        assert p.returncode != EXIT_USAGE, p.stderr


def test_a_config_python_that_cannot_run_is_a_config_error_where_it_would_run(tmp_path):
    conf = tmp_path / "c.toml"
    conf.write_text('[target]\npython = "~/venvs/train/bin/python"\n')
    p = run_cli("check", "G1", "--config", str(conf), cwd=tmp_path)
    assert p.returncode == EXIT_CONFIG
    assert p.stderr.strip() == (f"sparktui: config error: {conf}: [target] python: ~/venvs/train/bin/python: no such "
                                "file (~ is not expanded here: write the full path); give the training environment's interpreter")
    # a flag overrides the bad value; judging a snapshot never starts it, so the config does not block
    assert run_cli("check", "G3", "--config", str(conf), "--python", sys.executable, cwd=tmp_path).returncode != EXIT_CONFIG
    snap = tmp_path / "s.json"
    snap.write_text(json.dumps({"kind": "sparktui-snapshot", "schema": 1, "readings": {}}))
    assert run_cli("check", "G3", "--config", str(conf), "--snapshot", str(snap), cwd=tmp_path).returncode == 3
