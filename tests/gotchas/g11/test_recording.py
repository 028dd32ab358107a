"""G11 in recordings: `sparktui record` keeps the kernel_log reading, so `check --replay` judges G11."""

from __future__ import annotations

import json

from sparktui.cli.main import EXIT_FAIL, main
from sparktui.live.recorder import recorded_probes
from sparktui.core.readings import Reading
from sparktui.core.recording import RecordingWriter, header, read_recording
from sparktui.probes import kernel_log, nvml
from sparktui.testing import fake_nvml

# a real OOM kill as dmesg prints it (the summary line, then the kill with its RSS)
OOM_LINES = (
    "[ 5000.1] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,"
    "global_oom,task_memcg=/user.slice/user-1000.slice/session-3.scope,task=python3,pid=9123,uid=1000\n"
    "[ 5000.2] Out of memory: Killed process 9123 (python3) total-vm:130000000kB, anon-rss:118000000kB, "
    "file-rss:2048kB, shmem-rss:0kB, UID:1000 pgtables:240000kB oom_score_adj:0\n"
)
QUIET_LINES = "[    0.000000] Booting Linux on physical CPU 0x0000000000 [0x410fd871]\n" * 3


def _recording(tmp_path, readings: dict) -> str:
    path = tmp_path / "r.jsonl"
    head = header(interval_s=1.0, host={"hostname": "spark"}, static={}, version="test", started_at=0.0)
    with RecordingWriter(path, head) as w:
        w.sample({"t": 1.0, "gpus": [{"index": 0, "temp_c": 60, "errors": {}}], "mem": {"MemAvailable": 1, "MemTotal": 2}})
        if readings:
            w.readings({k: r.to_dict() for k, r in readings.items()})
    return str(path)


def _record(tmp_path, seconds: float):
    """`sparktui record` for ``seconds`` on a fake loaded GB10; the recording's path."""
    nvml.set_backend(fake_nvml.gb10_loaded())
    try:
        out = tmp_path / "run.jsonl"
        assert main(["record", "-o", str(out), "--interval", "0.05", "--duration", str(seconds),
                     "--processes-every", "0.1"]) == 0
    finally:
        nvml.set_backend(None)
    return out


def _g11(capsys, path: str) -> dict | None:
    main(["check", "--replay", path, "--json"])
    checks = json.loads(capsys.readouterr().out)["checks"]
    return next((v for v in checks if v["id"] == "G11"), None)


def test_record_writes_the_kernel_log_reading():
    assert "kernel_log" in recorded_probes()


def test_a_recorded_oom_kill_replays_to_g11_fail(tmp_path, capsys):
    log = tmp_path / "dmesg.txt"
    log.write_text(QUIET_LINES + OOM_LINES)
    r = kernel_log.read_file(str(log))
    assert r.data["counts"]["oom_kill"] == 1  # one incident, the two lines merged
    g11 = _g11(capsys, _recording(tmp_path, {"kernel_log": r}))
    assert g11 is not None and g11["status"] == "fail"
    assert "OOM killer killed python3 (pid 9123, 112.5 GiB)" in g11["summary"]


def test_a_recorded_quiet_log_replays_to_g11_ok_and_an_unreadable_one_to_unknown(tmp_path, capsys):
    log = tmp_path / "dmesg.txt"
    log.write_text(QUIET_LINES)
    assert _g11(capsys, _recording(tmp_path, {"kernel_log": kernel_log.read_file(str(log))}))["status"] == "ok"
    denied = Reading("kernel_log", None, error="/dev/kmsg: Operation not permitted; journalctl: exit 1; "
                     + kernel_log.GRANT_HINT, source="/dev/kmsg")
    g11 = _g11(capsys, _recording(tmp_path, {"kernel_log": denied}))
    assert g11["status"] == "unknown" and "Operation not permitted" in g11["summary"]


def test_a_recording_without_a_kernel_log_reading_does_not_claim_g11(tmp_path, capsys):
    assert _g11(capsys, _recording(tmp_path, {})) is None


def test_record_then_replay_end_to_end(tmp_path, capsys, monkeypatch):
    """`sparktui record` on a machine whose kernel log holds an OOM kill: the replay fails G11."""
    log = tmp_path / "dmesg.txt"
    log.write_text(QUIET_LINES + OOM_LINES)
    monkeypatch.setattr(kernel_log, "read", lambda cfg=None, **kw: kernel_log.read_file(str(log)))
    out = _record(tmp_path, 0.3)
    capsys.readouterr()
    assert '"kernel_log"' in out.read_text()  # written as a readings line
    assert read_recording(out).problems == []
    assert main(["check", "--replay", str(out), "--json"]) == EXIT_FAIL
    g11 = next(v for v in json.loads(capsys.readouterr().out)["checks"] if v["id"] == "G11")
    assert g11["status"] == "fail" and "pid 9123" in g11["summary"]


def test_an_oom_kill_during_the_recording_is_in_its_replay(tmp_path, capsys, monkeypatch):
    """The kernel log is read at the start of `record` and again as it ends: a kill that happens
    while it records (here: written into the log after the first read) fails G11 in the replay."""
    import threading

    log = tmp_path / "dmesg.txt"
    log.write_text(QUIET_LINES)
    first_read = threading.Event()

    def read(cfg=None, **kw):
        r = kernel_log.read_file(str(log))
        first_read.set()
        return r

    monkeypatch.setattr(kernel_log, "read", read)

    def oom_later():
        first_read.wait(10)
        with log.open("a") as f:
            f.write(OOM_LINES)

    killer = threading.Thread(target=oom_later, daemon=True)
    killer.start()
    out = _record(tmp_path, 0.5)
    killer.join(5)
    capsys.readouterr()
    assert out.read_text().count('"kernel_log"') >= 2  # at the start, and again at the end
    assert main(["check", "--replay", str(out), "--json"]) == EXIT_FAIL
    g11 = next(v for v in json.loads(capsys.readouterr().out)["checks"] if v["id"] == "G11")
    assert g11["status"] == "fail" and "pid 9123" in g11["summary"]
