"""read_regular allocates what the file holds, not its limit: a 1 KiB session file read under the
1 GiB recording limit must not ask for a 1 GiB buffer first (at every dashboard start; a host that
does not overcommit refuses it)."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest

from sparktui.core import readings
from sparktui.core.readings import read_regular


def test_a_small_file_under_a_huge_limit_allocates_about_its_size(tmp_path: Path):
    f = tmp_path / "session.jsonl"
    f.write_bytes(b"x" * 1024)
    tracemalloc.start()
    try:
        raw = read_regular(f, 1 << 30, ValueError, "recording")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert raw == b"x" * 1024
    assert peak < 1 << 20, f"{peak} bytes allocated to read 1 KiB"


def test_a_file_that_grew_after_its_stat_is_read_whole_and_still_bounded(tmp_path: Path, monkeypatch):
    f = tmp_path / "growing.jsonl"
    f.write_bytes(b"y" * 5000)
    real_stat = os.stat

    def stale_stat(path, *a, **kw):  # the size seen before the writer appended 4000 bytes
        st = real_stat(path, *a, **kw)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid, st.st_gid, 1000,
                               st.st_atime, st.st_mtime, st.st_ctime))

    monkeypatch.setattr(readings.os, "stat", stale_stat)
    assert read_regular(f, 10_000, ValueError, "recording") == b"y" * 5000
    with pytest.raises(ValueError, match="more than a recording can be"):
        read_regular(f, 4000, ValueError, "recording")
