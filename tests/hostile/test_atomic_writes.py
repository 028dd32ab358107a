"""A file sparktui writes whole is replaced atomically (core/atomic.py): after any failure the old
file is there byte for byte, no temporary file is left, and the message names the file. `snapshot
-o` / `report -o` over an existing file on a full disk used to leave a 4 KB fragment (exit 64)."""

from __future__ import annotations

import errno
import os
import resource
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparktui.core import atomic
from sparktui.core.atomic import write_text_atomic

SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "h200" / "snapshot.json"
OLD = "the earlier file, whole\n" * 400  # 9.6 KB: more than one page, so a fragment would show


def _existing(tmp_path: Path, name: str = "out.txt") -> Path:
    """An earlier file in a folder of its own (tmp_path also holds the test's XDG folders)."""
    p = tmp_path / "out" / name
    p.parent.mkdir(exist_ok=True)
    p.write_text(OLD)
    return p


def test_a_new_file_gets_the_text_and_the_usual_mode(tmp_path):
    (tmp_path / "out").mkdir()
    p = write_text_atomic(tmp_path / "out" / "new.txt", "héllo ✔\n")
    assert p.read_text(encoding="utf-8") == "héllo ✔\n"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(p.stat().st_mode) == 0o666 & ~umask, "not mkstemp's 0600: a report is shared"
    assert sorted(f.name for f in p.parent.iterdir()) == ["new.txt"]


def test_an_existing_file_is_replaced_whole_and_keeps_its_mode(tmp_path):
    p = _existing(tmp_path)
    p.chmod(0o640)
    write_text_atomic(p, "new\n")
    assert p.read_text() == "new\n" and stat.S_IMODE(p.stat().st_mode) == 0o640


def test_a_symlink_is_followed_and_stays_a_link(tmp_path):
    real = _existing(tmp_path, "real.txt")
    link = real.parent / "link.txt"
    link.symlink_to(real)
    write_text_atomic(link, "through the link\n")
    assert link.is_symlink() and real.read_text() == "through the link\n"


def test_a_device_is_written_in_place_never_renamed_over(tmp_path):
    """`report -o /dev/null`: renaming a temp file over it would replace the device (as root)."""
    write_text_atomic("/dev/null", "discarded\n")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_full_device_in_place_is_an_oserror_naming_it():
    with pytest.raises(OSError) as e:
        write_text_atomic("/dev/full", "x" * 100_000)
    assert e.value.errno == errno.ENOSPC and e.value.filename == "/dev/full"


def test_a_missing_folder_is_an_oserror_naming_the_file_not_a_temp_name(tmp_path):
    target = tmp_path / "no-such-folder" / "out.md"
    with pytest.raises(OSError) as e:
        write_text_atomic(target, "x")
    assert e.value.errno == errno.ENOENT and e.value.filename == str(target)


# Each step of the write failing in turn, with the errors a full or failing disk gives.
STEPS = ("fchmod", "fsync", "replace")
ERRORS = (errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG, errno.EACCES)


@settings(max_examples=40, deadline=None)
@given(step=st.sampled_from(STEPS), code=st.sampled_from(ERRORS), text=st.text(max_size=3000))
def test_a_failure_at_any_step_keeps_the_old_file_and_leaves_no_temp(tmp_path_factory, step, code, text):
    folder = tmp_path_factory.mktemp("atomic")
    p = _existing(folder)

    def fail(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    real = getattr(atomic.os, step)
    try:
        setattr(atomic.os, step, fail)  # hypothesis and function-scoped monkeypatch do not mix
        with pytest.raises(OSError) as e:
            write_text_atomic(p, text)
    finally:
        setattr(atomic.os, step, real)
    assert e.value.errno == code and e.value.filename == str(p)
    assert p.read_text() == OLD
    assert [f.name for f in p.parent.iterdir()] == ["out.txt"]


def _limited_to(nbytes: int):
    """A child whose files cannot grow past ``nbytes`` (RLIMIT_FSIZE): a real write failure (EFBIG)
    from the kernel, as a full disk gives, without root or a tmpfs. Python ignores SIGXFSZ, so the
    write fails instead of the process being killed."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return limit


def test_report_over_an_existing_file_that_cannot_be_written_keeps_it_and_exits_74(tmp_path):
    """Seen: the old report became a 4 KB fragment. A report of the H200 snapshot is ~16 KB."""
    name = "report.md"
    p = _existing(tmp_path, name)
    before = p.read_bytes()
    r = subprocess.run([sys.executable, "-m", "sparktui", "report", "--snapshot", str(SNAPSHOT), "-o", str(p)],
                       capture_output=True, timeout=60, preexec_fn=_limited_to(12_000))
    assert r.returncode == 74, r.stderr.decode()
    assert r.stderr.decode() == f"sparktui: cannot write {p}: File too large\n"
    assert p.read_bytes() == before
    assert [f.name for f in p.parent.iterdir()] == [name]


def test_snapshot_over_an_existing_file_that_cannot_be_written_keeps_it_and_exits_74(tmp_path):
    """A live snapshot (every probe; no GPU needed) is ~30 KB; the limit lets 12 KB through."""
    p = _existing(tmp_path, "spark-1.json")
    r = subprocess.run([sys.executable, "-m", "sparktui", "snapshot", "-o", str(p)], capture_output=True,
                       timeout=120, preexec_fn=_limited_to(12_000), cwd=tmp_path)
    assert r.returncode == 74, r.stderr.decode()
    assert r.stderr.decode().endswith(f"sparktui: cannot write {p}: File too large\n")
    assert p.read_text() == OLD
    assert [f.name for f in p.parent.iterdir()] == ["spark-1.json"]


def test_report_into_a_folder_that_does_not_exist_is_74_naming_the_file(tmp_path):
    target = tmp_path / "gone" / "report.md"
    r = subprocess.run([sys.executable, "-m", "sparktui", "report", "--snapshot", str(SNAPSHOT), "-o", str(target)],
                       capture_output=True, timeout=60)
    assert r.returncode == 74
    assert r.stderr.decode() == f"sparktui: cannot write {target}: No such file or directory\n"


def test_dev_stdout_as_the_output_writes_into_the_pipe_it_names():
    """`report -o /dev/stdout | less`: its link leads to a pipe, written in place (resolved first,
    the link named 'pipe:[N]', no folder to put a temporary file in)."""
    r = subprocess.run([sys.executable, "-m", "sparktui", "report", "--snapshot", str(SNAPSHOT), "-o", "/dev/stdout"],
                       capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout.decode().startswith("# sparktui report")


def test_leftover_temporary_files_of_a_killed_write_are_swept_by_the_next_write_once_stale(tmp_path):
    """kill -9 between the temporary file and the rename leaves `.NAME.xxxx.tmp`; the next write of
    the same file removes such leftovers older than ten minutes, and leaves a fresh one (another
    process's write in flight) and other files alone."""
    import os
    import time

    from sparktui.core.atomic import STALE_TMP_S, write_text_atomic

    target = tmp_path / "report.md"
    old = tmp_path / ".report.md.abc123.tmp"
    fresh = tmp_path / ".report.md.def456.tmp"
    other = tmp_path / ".other.md.abc123.tmp"
    for p in (old, fresh, other):
        p.write_text("partial")
    past = time.time() - STALE_TMP_S - 5
    os.utime(old, (past, past))
    os.utime(other, (past, past))
    write_text_atomic(target, "whole\n")
    assert target.read_text() == "whole\n"
    assert not old.exists() and fresh.exists() and other.exists()
