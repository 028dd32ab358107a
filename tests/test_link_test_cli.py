"""`sparktui link-test`: G12's opt-in all_reduce_perf run across two Sparks, from the command line.

Stand-ins on PATH: an `mpirun` that runs the binary it was given (the last program in its argv) on
this host, and an `all_reduce_perf` that prints a real two-Spark table with a chosen bus bandwidth."""

from __future__ import annotations

import io
import json
import os
import shutil
import re
import stat
import sys
from pathlib import Path

import pytest

from sparktui import probes
from sparktui.cli import linktest
from sparktui.cli.main import main
from sparktui.core.readings import Reading
from tests.gotchas.builders import REAL_TABLE, link_scan as scan, spark

MPIRUN = """#!/bin/sh
# a stand-in launcher: log the argv, then run the program after the mpirun options with its arguments
echo "$@" > "$(dirname "$0")/mpirun.argv"
while [ $# -gt 0 ]; do
  case "$1" in
    -np|-H|-x) shift 2 ;;
    --mca) shift 3 ;;
    *) break ;;
  esac
done
exec "$@"
"""


def _exe(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _table(busbw: float) -> str:
    return REAL_TABLE.replace("23.72   23.72", f"{busbw:5.2f}   {busbw:5.2f}").replace(
        "23.73   23.73", f"{busbw:5.2f}   {busbw:5.2f}").replace("23.7236", f"{busbw:.4f}")


@pytest.fixture
def bin_dir(tmp_path, monkeypatch):
    """An empty PATH folder, plus the few system tools the stand-ins' shell scripts use (not all of
    /usr/bin: a GPU machine may have a real mpirun there); the link probe reads a fake Spark's /sys."""
    d = tmp_path / "bin"
    d.mkdir()
    tools = tmp_path / "system-tools"
    tools.mkdir()
    for name in ("sh", "cat", "dirname"):
        (tools / name).symlink_to(shutil.which(name))
    monkeypatch.setenv("PATH", f"{d}{os.pathsep}{tools}")
    data = scan(spark(tmp_path / "root"))
    monkeypatch.setattr(probes, "safe_read", lambda name, cfg=None: Reading(name, data, source="test", started_at=1.0))
    return d


def _standins(d: Path, busbw: float, rc: int = 0) -> None:
    _exe(d / "mpirun", MPIRUN)
    (d / "table.txt").write_text(_table(busbw))
    _exe(d / "all_reduce_perf", f"#!/bin/sh\ncat '{d / 'table.txt'}'\nexit {rc}\n")


def _no_tty(monkeypatch, answer: str = "y\n") -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(answer))  # isatty() is False


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_without_the_binaries_it_prints_the_command_to_run_and_refuses(bin_dir, capsys, monkeypatch):
    _no_tty(monkeypatch)
    assert main(["link-test", "--peer", "spark-2", "--yes"]) == 4
    out, err = capsys.readouterr()
    assert "not found here" in err and "mpirun -np 2 -H" in err and "spark-2:1" in err
    # the settings the link probe read reach the command: both NIC halves, the interface, RoCE v2 GID 3
    assert "NCCL_IB_HCA=roceP2p1s0f1,rocep1s0f1" in err and re.search(r"NCCL_SOCKET_IFNAME=en[pP]\w*1s0f1np1 ", err)
    assert "NCCL_IB_GID_INDEX=3" in err and "all_reduce_perf -b 16G -e 16G" in err
    assert "skip" in out and not (bin_dir / "mpirun.argv").exists()


def test_only_mpirun_missing_is_named_and_refused_json(bin_dir, capsys, monkeypatch):
    _standins(bin_dir, 23.7)
    (bin_dir / "mpirun").unlink()
    assert main(["link-test", "--peer", "spark-2", "--yes", "--json"]) == 4
    doc = json.loads(capsys.readouterr().out)
    assert doc["result"]["status"] == "refused" and doc["result"]["summary"].startswith("mpirun not found")
    assert doc["verdict"]["status"] == "skip" and doc["result"]["command"].startswith("mpirun -np 2")


@pytest.mark.parametrize("busbw,code,status", [(23.72, 0, "ok"), (22.0, 0, "ok"), (21.9, 1, "warn"),
                                               (3.1, 1, "warn")])
def test_with_yes_it_runs_and_judges_the_bus_bandwidth(bin_dir, busbw, code, status, capsys):
    _standins(bin_dir, busbw)
    assert main(["link-test", "--peer", "spark-2", "--yes", "--json"]) == code
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"]["status"] == status and doc["result"]["busbw_gbs"] == pytest.approx(busbw)
    assert doc["verdict"]["id"] == "G12"
    argv = (bin_dir / "mpirun.argv").read_text()
    assert "spark-2:1" in argv and "NCCL_IB_HCA=roceP2p1s0f1,rocep1s0f1" in argv


def test_default_like_figure_table_says_default_settings_and_exits_1(bin_dir, capsys):
    _standins(bin_dir, 3.0)
    assert main(["link-test", "--peer", "spark-2", "--yes"]) == 1
    out = capsys.readouterr().out
    assert "3.00 GB/s" in out and "default settings" in out and "warn" in out


def test_a_failing_run_is_unknown_never_ok(bin_dir, capsys):
    _standins(bin_dir, 23.7, rc=1)
    assert main(["link-test", "--peer", "spark-2", "--yes", "--json"]) == 3
    assert json.loads(capsys.readouterr().out)["verdict"]["status"] == "unknown"


def test_a_refusal_framed_in_dashes_is_summarised_by_its_words(bin_dir, capsys):
    """Open MPI as root prints its refusal between lines of dashes (seen on the H200 machine): the
    summary is the refusal, not the frame."""
    _exe(bin_dir / "mpirun", "#!/bin/sh\necho ------------------ >&2\n"
                             "echo 'mpirun has detected an attempt to run as root.' >&2\necho >&2\n"
                             "echo 'Running as root is *strongly* discouraged' >&2\necho ------------------ >&2\nexit 1\n")
    _exe(bin_dir / "all_reduce_perf", "#!/bin/sh\nexit 0\n")
    assert main(["link-test", "--peer", "spark-2", "--yes", "--json"]) == 3
    summary = json.loads(capsys.readouterr().out)["verdict"]["summary"]
    assert summary == "all_reduce_perf exited 1: mpirun has detected an attempt to run as root."


def test_garbage_output_is_unknown(bin_dir, capsys):
    _standins(bin_dir, 23.7)
    (bin_dir / "table.txt").write_text("mpirun: ssh: connect to host spark-2 port 22: No route to host\n")
    assert main(["link-test", "--peer", "spark-2", "--yes", "--json"]) == 3
    assert "no bus bandwidth" in json.loads(capsys.readouterr().out)["verdict"]["summary"]


def test_no_tty_and_no_yes_refuses_without_running(bin_dir, capsys, monkeypatch):
    _standins(bin_dir, 23.7)
    _no_tty(monkeypatch)
    assert main(["link-test", "--peer", "spark-2"]) == 4
    assert "--yes" in capsys.readouterr().err
    assert not (bin_dir / "mpirun.argv").exists()


def test_on_a_terminal_it_asks_and_a_no_runs_nothing(bin_dir, capsys, monkeypatch):
    _standins(bin_dir, 23.7)
    monkeypatch.setattr(sys, "stdin", _Tty("n\n"))
    assert main(["link-test", "--peer", "spark-2"]) == 4
    out, err = capsys.readouterr()
    assert "Continue? [y/N]" in out and "mpirun -np 2" in err and "not confirmed" in err
    assert not (bin_dir / "mpirun.argv").exists()


def test_on_a_terminal_a_yes_runs_it(bin_dir, capsys, monkeypatch):
    _standins(bin_dir, 23.7)
    monkeypatch.setattr(sys, "stdin", _Tty("y\n"))
    assert main(["link-test", "--peer", "spark-2"]) == 0
    assert (bin_dir / "mpirun.argv").exists() and "23.70 GB/s" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["link-test"], ["link-test", "--peer", "-rf"], ["link-test", "--peer", "a b"]])
def test_no_or_bad_peer_is_a_usage_error(bin_dir, argv, capsys):
    assert main(argv + ["--yes"]) == 64
    err = capsys.readouterr().err
    assert "link-test" in err and ("--peer" in err or "host" in err)  # the message names the command and why


def test_verdict_of_a_refusal_is_skip_not_ok():
    v = linktest.verdict_of({"status": "refused", "command": "mpirun ...", "summary": "not confirmed"})
    assert v.status.value == "skip" and "not measured" in v.summary
