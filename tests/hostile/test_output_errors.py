"""Writing output is ordinary I/O, never a bug: a reader that quits, a closed stdout, a full disk and
an output encoding without ✔ each used to exit 70 ("internal error") with a traceback's last line.

Each case runs the real CLI in a subprocess (`check --snapshot` judges a saved H200 snapshot: fast,
no GPU needed), since what matters is the descriptor the process really has."""

from __future__ import annotations

import errno
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sparktui.cli.common import EXIT_BROKEN_PIPE, EXIT_IOERR
from sparktui.cli.main import main

SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "h200" / "snapshot.json"
CHECK = [sys.executable, "-m", "sparktui", "check", "--snapshot", str(SNAPSHOT)]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "SPARKTUI_DEBUG")}
    return {**env, "COLUMNS": "100", **extra}


def _verdict_code() -> int:
    """The exit code `check` gives this snapshot when its output is written normally."""
    return subprocess.run(CHECK, capture_output=True, env=_env(), timeout=60).returncode


def test_the_snapshot_judges_to_a_verdict_code():
    assert _verdict_code() in (0, 1, 2, 3)


def test_a_reader_that_quits_ends_it_quietly_with_141():
    """`sparktui check | head -1`: the read end is closed before sparktui writes, so the first write
    meets EPIPE every time (with `head` it depends on timing)."""
    p = subprocess.Popen(CHECK, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == EXIT_BROKEN_PIPE
    assert err == "", "quiet, as any filter: no 'internal error', no 'Exception ignored', no traceback"


def test_help_into_a_closed_pipe_is_quiet_too():
    p = subprocess.Popen([sys.executable, "-m", "sparktui", "check", "--help"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=_env())
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == EXIT_BROKEN_PIPE and err == ""


def test_a_closed_stdout_is_one_line_and_exit_74():
    """`sparktui check >&-`: Python starts with sys.stdout None (it was AttributeError, exit 70)."""
    r = subprocess.run(CHECK, stderr=subprocess.PIPE, env=_env(), timeout=60, preexec_fn=lambda: os.close(1))
    assert r.returncode == EXIT_IOERR
    assert r.stderr.decode() == "sparktui: cannot write stdout: Bad file descriptor\n"


def test_a_closed_stdout_does_not_matter_to_a_command_that_writes_a_file(tmp_path):
    out = tmp_path / "report.md"
    r = subprocess.run([sys.executable, "-m", "sparktui", "report", "--snapshot", str(SNAPSHOT), "-o", str(out)],
                       stderr=subprocess.PIPE, env=_env(), timeout=60, preexec_fn=lambda: os.close(1))
    assert r.returncode == 0, r.stderr.decode()
    assert out.read_text().startswith("# sparktui report")


@pytest.mark.parametrize("args", [[], ["--json"], ["-v"]])
def test_a_full_disk_on_stdout_is_one_line_and_exit_74(args):
    """`sparktui check > /dev/full` (was OSError ENOSPC, exit 70)."""
    with open("/dev/full", "w") as full:
        r = subprocess.run(CHECK + args, stdout=full, stderr=subprocess.PIPE, env=_env(), timeout=60)
    assert r.returncode == EXIT_IOERR
    assert r.stderr.decode() == "sparktui: cannot write stdout: No space left on device\n"


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_an_output_encoding_without_the_glyphs_gets_ascii_stand_ins_and_the_verdict_code(encoding):
    """`PYTHONIOENCODING=ascii sparktui check` (was UnicodeEncodeError on ✔, exit 70)."""
    r = subprocess.run(CHECK + ["-v"], capture_output=True, env=_env(PYTHONIOENCODING=encoding), timeout=60)
    assert r.returncode == _verdict_code(), r.stderr.decode()
    out = r.stdout.decode(encoding)
    assert "G1   + ok " in out and "✔" not in out
    assert r.stderr.decode(encoding) == ""


def test_json_stays_json_in_ascii():
    import json

    r = subprocess.run(CHECK + ["--json"], capture_output=True, env=_env(PYTHONIOENCODING="ascii"), timeout=60)
    assert r.returncode == _verdict_code()
    assert json.loads(r.stdout.decode("ascii"))["kind"] == "sparktui-check"


class _FailingStdout(io.StringIO):
    """A stdout whose device fails (EIO) once anything is flushed to it."""

    def flush(self) -> None:
        raise OSError(errno.EIO, "Input/output error")


def test_an_io_error_on_stdout_in_process_is_74_and_stdout_is_given_back(monkeypatch, capsys):
    failing = _FailingStdout()
    monkeypatch.setattr(sys, "stdout", failing)
    assert main(["list"]) == EXIT_IOERR
    assert sys.stdout is failing, "main puts back the stdout it was given"
    assert "sparktui: cannot write stdout: Input/output error" in capsys.readouterr().err


def test_an_oserror_that_is_not_stdouts_is_still_a_bug(monkeypatch, capsys):
    """Only stdout's failures are spared the 'internal error' line: a bug's OSError keeps exit 70."""
    from sparktui.cli import main as cli_main

    def broken(args):
        raise OSError(errno.EIO, "from somewhere else")

    monkeypatch.setattr(cli_main, "cmd_list", broken)
    assert main(["list"]) == 70
    assert "internal error" in capsys.readouterr().err
