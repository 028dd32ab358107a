"""G13 on a user's known-bad table (issue 22, Seen 9): a table of 0 entries is no evidence (unknown
with the reason, never ok), and a user's `kernel_release` pattern is matched in bounded time: one that
Python's backtracking `re` could take seconds or hours on (`(.*.*)*Z` took 19 s per check) is a clear
error naming the table and the entry, so G13 is unknown at once.

The fake trees are tests/gotchas/g13/test_driver_flavour.py's: a GB10 with the open module 580.95.05 on
kernel 6.11.0-1016-nvidia (a healthy Spark: ok against the shipped table).
"""

from __future__ import annotations

import signal
import time
from dataclasses import replace
from pathlib import Path

import pytest

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.gotchas import g13_driver_flavour as g13
from sparktui.probes import driver_flavour as probe
from tests.conftest import readings_of
from tests.gotchas.builders import GB10_NVML
from tests.gotchas.builders import driver_tree as tree

HEAD = "schema = 1\nupdated = 2026-12-04\n"
ENTRY = """
[[entry]]
id = "mine"
status = "warn"
what = "a kernel of ours that misbehaves"
source = "our own runbook"
added = 2026-12-04
[entry.match]
kernel_release = '{pattern}'
"""
KERNEL_RELEASE_MAX = 64  # uname -r: __NEW_UTS_LEN (core/validate.py holds the same bound)
GUARD_S = 2.0  # a judgement taking this long is stopped (Python's re checks signals) and fails the test


def _cfg(table: Path) -> Config:
    return replace(Config(), driver=replace(Config().driver, known_bad=str(table)))


def _judged(tmp_path: Path, table_text: str, release: str = "6.11.0-1016-nvidia"):
    """G13 on a GB10 tree with the user's table named by [driver] known_bad, stopped at GUARD_S."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    table = tmp_path / "known_bad.toml"
    table.write_text(table_text)
    cfg = _cfg(table)

    def stop(*_):
        raise TimeoutError(f"G13 took over {GUARD_S} s")

    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, GUARD_S)
    t0 = time.perf_counter()
    try:
        reading = probe.read(cfg, root=str(tree(tmp_path / "root", release=release)))
        v = g13.judge(readings_of(driver_flavour=reading.data, nvml=GB10_NVML), cfg)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return v, time.perf_counter() - t0


# ------------------------------------------------------------------ empty tables


@pytest.mark.parametrize("text", [HEAD, HEAD + "entry = []\n", HEAD + "\n# every entry deleted\n"])
def test_a_user_table_of_zero_entries_is_unknown_never_ok(tmp_path, text):
    v, _ = _judged(tmp_path, text)
    assert v.status is Status.UNKNOWN, v.summary
    assert "no [[entry]] in it: a table of 0 entries is not evidence that nothing is known bad" in v.summary
    assert str(tmp_path / "known_bad.toml") in v.summary and "[driver] known_bad" in v.summary


def test_one_entry_is_enough_to_judge(tmp_path):
    v, _ = _judged(tmp_path, HEAD + ENTRY.format(pattern=r"6\.17\.0-1008-nvidia"))
    assert v.status is Status.OK and "1 entries checked" in v.summary


def test_a_reading_whose_table_holds_no_entries_is_unknown():
    """A recording or snapshot made from such a table (or edited to one) judges the same."""
    data = probe.read_tree("/nonexistent-root")
    data.update(flavour="open", driver_version="580.95.05", driver_branch=580, module_loaded=True,
                kernel_release="6.11.0-1016-nvidia", architecture="aarch64")
    data["known_bad"] = {"path": "/home/u/kb.toml", "updated": "2026-12-04", "entries": [], "error": None}
    v = g13.judge(readings_of(driver_flavour=data, nvml=GB10_NVML), Config())
    assert v.status is Status.UNKNOWN
    assert v.summary == ("cannot check: the known-bad table /home/u/kb.toml has no entries (an empty table is not "
                         "evidence that nothing is known bad)")


# ------------------------------------------------------------------ user patterns, bounded


@pytest.mark.parametrize("pattern", [r"(.*.*)*Z", r"(a+)+$", r"(6|6\.)*Z", r"([0-9.]+-)+x", r"(.*){2,}Z"])
def test_a_pattern_that_can_backtrack_exponentially_is_refused_at_once(tmp_path, pattern):
    v, took = _judged(tmp_path, HEAD + ENTRY.format(pattern=pattern), release="6.8.0-87-generic")
    assert took < 0.5, f"{took:.2f} s"
    assert v.status is Status.UNKNOWN
    assert "entry 1 (mine): match.kernel_release" in v.summary
    assert "a quantifier on a group that repeats" in v.summary and "exponential time" in v.summary


@pytest.mark.parametrize("pattern, refused", [
    (".*.*.*Z", False),  # 65**3 ways on a 64-character release: under PATTERN_MAX_PATHS
    (".*.*.*.*Z", True),  # 65**4: over it
    (r"6\.17\.0-10[0-9]+-nvidia(-64k)?", False),
    (r"(?=6)6\..*", True),
    (r"(6)\1", True),
    ("x" * 200, False),
    ("x" * 201, True),
])
def test_the_bounds_of_a_pattern_just_inside_and_outside(tmp_path, pattern, refused):
    v, took = _judged(tmp_path, HEAD + ENTRY.format(pattern=pattern), release="a" * KERNEL_RELEASE_MAX)
    assert took < 0.5
    assert (v.status is Status.UNKNOWN) is refused, v.summary


def test_the_paths_bound_is_a_million():
    from sparktui.core import validate

    assert validate.PATTERN_MAX_PATHS == 1_000_000 and validate.KERNEL_RELEASE_MAX == KERNEL_RELEASE_MAX
    PATTERN_MAX_PATHS = validate.PATTERN_MAX_PATHS
    assert validate.pattern_problem(".*.*.*Z") is None and validate.pattern_problem(".*.*.*.*Z") is not None
    assert 65 ** 3 <= PATTERN_MAX_PATHS < 65 ** 4


def test_a_release_longer_than_the_kernel_allows_is_not_matched(tmp_path):
    pattern = r".*-nvidia"
    ok, _ = _judged(tmp_path / "a", HEAD + ENTRY.format(pattern=pattern), release="6" * 57 + "-nvidia")  # 64
    assert ok.status is Status.WARN and "mine (warn)" in ok.summary
    long, _ = _judged(tmp_path / "b", HEAD + ENTRY.format(pattern=pattern), release="6" * 58 + "-nvidia")  # 65
    assert long.status is Status.UNKNOWN
    assert "mine needs kernel_release" in long.summary


def test_a_recording_holding_a_bad_pattern_is_not_matched():
    """The judge checks the patterns of the reading too: a hand-edited recording cannot stall it."""
    data = probe.read_tree("/nonexistent-root")
    data.update(flavour="open", driver_version="580.95.05", driver_branch=580, module_loaded=True,
                kernel_release="6.8.0-87-generic", architecture="aarch64")
    entry = {"id": "x", "status": "warn", "what": "w", "source": "s", "added": "2026-12-04", "confirmed": True,
             "fix": "", "match": {"kernel_release": "(.*.*)*Z"}}
    data["known_bad"] = {"path": "/r.toml", "updated": "2026-12-04", "entries": [entry], "error": None}
    t0 = time.perf_counter()
    v = g13.judge(readings_of(driver_flavour=data, nvml=GB10_NVML), Config())
    assert time.perf_counter() - t0 < 0.5
    assert v.status is Status.UNKNOWN and "malformed" in v.summary
