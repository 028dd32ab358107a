"""A journalctl that has written the whole journal is not killed while it exits.

A process closes its output a moment before it exits. read_journal used to reap (SIGKILL the group)
as soon as the output ended, so on a loaded machine a complete read came back as "journalctl exited
-9" and G11 said the kernel log could not be read (it failed the hostile-input suite under load,
where `cat` stood in for journalctl). The stand-ins here close their output and linger before
exiting, which makes that moment long enough to hit every time.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from sparktui.core import children
from sparktui.probes import kernel_log

XID = json.dumps({"MESSAGE": "NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=x", "__REALTIME_TIMESTAMP": "1700000000000000"})


def stand_in(tmp_path: Path, linger_s: float, rc: int = 0) -> Path:
    """A journalctl that prints one record, closes stdout and stderr, lingers, then exits ``rc``."""
    (tmp_path / "rec.json").write_text(XID + "\n")
    fake = tmp_path / "journalctl"
    fake.write_text(f"#!/bin/sh\ncat {tmp_path / 'rec.json'}\nexec >&- 2>&-\nsleep {linger_s}\nexit {rc}\n")
    fake.chmod(0o755)
    return fake


def test_a_journalctl_that_lingers_after_its_output_is_read_not_killed(tmp_path):
    col, note = kernel_log.read_journal((str(stand_in(tmp_path, 0.5)),), timeout_s=10)
    data = col.data("boot", note)
    assert [(e["kind"], e["xid"]) for e in data["events"]] == [("xid", 79)]
    assert data["lines_read"] == 1
    assert children.running() == []


def test_its_own_exit_status_is_still_the_verdict_on_the_read(tmp_path):
    with pytest.raises(RuntimeError, match="^journalctl exited 3: no message$"):
        kernel_log.read_journal((str(stand_in(tmp_path, 0.2, rc=3)),), timeout_s=10)


def test_one_that_never_exits_after_its_output_is_stopped_at_the_deadline(tmp_path):
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="^journalctl ran past 1 s and was stopped$"):
        kernel_log.read_journal((str(stand_in(tmp_path, 600)),), timeout_s=1)
    assert time.monotonic() - t0 < 5
    assert children.running() == []


def test_the_follower_that_ends_by_itself_reports_its_exit_status_not_a_kill(tmp_path):
    errors: list[str] = []
    f = kernel_log.JournalFollower(lambda ev: None, errors.append, cmd=(str(stand_in(tmp_path, 0.5, rc=0)),)).start()
    assert f._thread is not None
    f._thread.join(10)
    assert errors == ["journalctl exited 0: no message"] and f.events == 1
    f.stop()
