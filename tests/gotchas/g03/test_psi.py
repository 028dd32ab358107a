"""G3 memory pressure (issue 14): Linux PSI (/proc/pressure/memory) and swap in use, read by the
meminfo probe from real-format files and judged just below and above each threshold. PSI absent,
unreadable or garbled is no evidence either way: the verdict is what meminfo alone gives."""

from __future__ import annotations

import os

import pytest

from sparktui.core.config import Config
from sparktui.gotchas import g03_unified_memory as g3
from sparktui.gotchas.g03_unified_memory import judge
from sparktui.probes.host import parse_psi, read_meminfo, read_psi
from tests.conftest import readings_of
from tests.gotchas.builders import GIB, SWAP_KB


# /proc/meminfo of a GB10 (kB), healthy: ~121.7 GiB usable, 100 GiB available, no swap used.
MEMINFO = """\
MemTotal:       127607296 kB
MemFree:        62914560 kB
MemAvailable:   104857600 kB
Buffers:          314572 kB
Cached:         31457280 kB
SwapCached:            0 kB
AnonPages:      18874368 kB
Mapped:          2097152 kB
Shmem:            524288 kB
KReclaimable:    1048576 kB
SReclaimable:    1048576 kB
SwapTotal:      16777212 kB
SwapFree:       16777212 kB
HugePages_Total:       0
HugePages_Free:        0
Hugepagesize:       2048 kB
"""
IDLE_PSI = """\
some avg10=0.00 avg60=0.00 avg300=0.00 total=0
full avg10=0.00 avg60=0.00 avg300=0.00 total=0
"""


def psi_text(some=(0.0, 0.0, 0.0), full=(0.0, 0.0, 0.0)) -> str:
    return (f"some avg10={some[0]:.2f} avg60={some[1]:.2f} avg300={some[2]:.2f} total=123456789\n"
            f"full avg10={full[0]:.2f} avg60={full[1]:.2f} avg300={full[2]:.2f} total=98765432\n")


def probe(tmp_path, psi: str | None, meminfo: str = MEMINFO):
    mi = tmp_path / "meminfo"
    mi.write_text(meminfo)
    pp = tmp_path / "pressure-memory"
    if psi is not None:
        pp.write_text(psi)
    return read_meminfo(Config(), path=str(mi), psi_path=str(pp))


def check(tmp_path, psi: str | None, meminfo: str = MEMINFO):
    return judge(readings_of(meminfo=probe(tmp_path, psi, meminfo)), Config())


def ev(v, what):
    return next(e for e in v.evidence if e.what.startswith(what))


# ------------------------------------------------------------------------- the probe


def test_psi_is_parsed_from_the_kernels_format():
    got = parse_psi("some avg10=1.53 avg60=0.87 avg300=0.29 total=5204711\n"
                    "full avg10=0.00 avg60=0.13 avg300=0.05 total=1040822\n")
    assert got == {"some": {"avg10": 1.53, "avg60": 0.87, "avg300": 0.29, "total": 5204711.0},
                   "full": {"avg10": 0.0, "avg60": 0.13, "avg300": 0.05, "total": 1040822.0}}


def test_probe_carries_psi_with_meminfo(tmp_path):
    r = probe(tmp_path, IDLE_PSI)
    assert r.error is None and r.data["MemTotal"] == 127607296 * 1024
    assert r.data["psi"]["full"]["avg10"] == 0.0 and "psi_error" not in r.data


def test_no_psi_file_is_a_reason_not_an_error(tmp_path):
    r = probe(tmp_path, None)
    assert r.error is None and "psi" not in r.data
    assert "absent" in r.data["psi_error"] and "psi=0" in r.data["psi_error"]


@pytest.mark.parametrize("garbage", ["", "\x00\x01\x02", "some avg10=x avg60=y\nfull\n", "hello world\n",
                                     "some 1 2 3\n"])
def test_garbage_psi_is_a_reason(tmp_path, garbage):
    r = probe(tmp_path, garbage)
    assert r.error is None and "psi" not in r.data and "unreadable" in r.data["psi_error"]


def test_unreadable_psi_is_a_reason(tmp_path):
    if os.geteuid() == 0:
        d = tmp_path / "dir"  # root reads any file: a folder in its place fails the read as well
        d.mkdir()
        psi, why = read_psi(str(d))
    else:
        p = tmp_path / "psi"
        p.write_text(IDLE_PSI)
        p.chmod(0)
        psi, why = read_psi(str(p))
    assert psi is None and why.startswith("cannot read")


def test_psi_with_only_a_some_line_is_read(tmp_path):
    # kernels before 5.x printed no "full" line for CPU; a partial file keeps what it has
    r = probe(tmp_path, "some avg10=12.00 avg60=11.00 avg300=3.00 total=1\n")
    assert r.data["psi"] == {"some": {"avg10": 12.0, "avg60": 11.0, "avg300": 3.0, "total": 1.0}}


# ------------------------------------------------------------------------- PSI thresholds


def test_idle_psi_keeps_ok_and_shows_the_figures(tmp_path):
    v = check(tmp_path, IDLE_PSI)
    assert v.status.value == "ok" and v.summary.startswith("MemAvailable 100.0 GiB")
    assert ev(v, "PSI memory full").value == "0.00% / 0.00% / 0.00%"
    assert ev(v, "PSI memory some").source == "/proc/pressure/memory"
    assert g3.FIX_PRESSURE not in v.fix


def test_full_avg10_just_below_the_threshold_is_ok(tmp_path):
    v = check(tmp_path, psi_text(full=(g3.PSI_FULL_AVG10_WARN - 0.01, 0.0, 0.0)))
    assert v.status.value == "ok"


def test_full_avg10_at_and_above_the_threshold_warns(tmp_path):
    for f10 in (g3.PSI_FULL_AVG10_WARN, 23.47):
        v = check(tmp_path, psi_text(some=(30.0, 4.0, 1.0), full=(f10, 2.0, 0.5)))
        assert v.status.value == "warn", f10
        assert v.summary.startswith(f"memory stalls: PSI full avg10 {f10:.2f}%")
        assert "MemAvailable 100.0 GiB" in v.summary  # the meminfo part is still said
        assert g3.FIX_PRESSURE in v.fix and "/proc/pressure/memory" in v.fix


def test_some_avg60_just_below_and_above(tmp_path):
    below = check(tmp_path, psi_text(some=(40.0, g3.PSI_SOME_AVG60_WARN - 0.01, 2.0)))
    assert below.status.value == "ok"  # a 10 s burst of partial stalls alone is not sustained pressure
    above = check(tmp_path, psi_text(some=(40.0, g3.PSI_SOME_AVG60_WARN + 0.01, 2.0)))
    assert above.status.value == "warn" and "PSI some avg60 10.01%" in above.summary


def test_pressure_is_added_to_a_floor_warning(tmp_path):
    low = MEMINFO.replace("MemAvailable:   104857600", "MemAvailable:     5242880").replace(
        "MemFree:        62914560", "MemFree:         2097152")
    v = check(tmp_path, psi_text(some=(60.0, 45.0, 12.0), full=(31.0, 20.0, 5.0)), low)
    assert v.status.value == "warn"
    assert v.summary.startswith("MemAvailable 5.0 GiB of 121.7 GiB, under the 8 GiB floor")
    assert "PSI full avg10 31.00%" in v.summary and "PSI some avg60 45.00%" in v.summary


def test_out_of_range_psi_is_not_evidence(tmp_path):
    v = check(tmp_path, psi_text(some=(0.0, 250.0, 0.0), full=(180.0, 0.0, 0.0)))
    assert v.status.value == "ok"
    assert "outside 0..100%" in ev(v, "PSI memory").value or any(
        "outside 0..100%" in e.value for e in v.evidence)


# ------------------------------------------------------------------------- PSI absent


@pytest.mark.parametrize("psi", [None, "", "garbage\n"])
def test_absent_or_garbage_psi_changes_nothing_and_says_so(tmp_path, psi):
    v = check(tmp_path, psi)
    assert v.status.value == "ok" and v.summary.startswith("MemAvailable 100.0 GiB")
    row = ev(v, "PSI memory pressure")
    assert row.value.endswith("not evidence either way")


def test_absent_psi_leaves_a_floor_warning_as_it_was(tmp_path):
    low = MEMINFO.replace("MemAvailable:   104857600", "MemAvailable:     5242880")
    with_psi_absent = check(tmp_path, None, low)
    bare = judge(readings_of(meminfo={k: v for k, v in probe(tmp_path, None, low).data.items() if k != "psi_error"}),
                 Config())
    assert with_psi_absent.status == bare.status and with_psi_absent.summary == bare.summary
    assert with_psi_absent.fix == bare.fix


def test_a_reading_from_samples_says_psi_was_not_carried():
    g = lambda x: int(x * GIB)  # noqa: E731
    v = judge(readings_of(meminfo={"MemTotal": g(121.7), "MemFree": g(60), "MemAvailable": g(100)}), Config())
    assert v.status.value == "ok"
    assert "not in this reading" in ev(v, "PSI memory pressure").value


# ------------------------------------------------------------------------- swap


def swapped(avail_kb: int, swap_free_kb: int) -> str:
    return (MEMINFO.replace("MemAvailable:   104857600", f"MemAvailable:   {avail_kb}")
            .replace("MemFree:        62914560", "MemFree:        10485760")
            .replace("SwapFree:       16777212", f"SwapFree:       {swap_free_kb}"))


TOTAL_KB = 127607296
LOW_AVAIL_KB = int(TOTAL_KB * g3.SWAP_LOW_AVAIL_SHARE) - 1024  # just under the share, well above the 8 GiB floor
GIB_KB = 1024 * 1024


def test_swap_in_use_with_low_available_warns(tmp_path):
    v = check(tmp_path, IDLE_PSI, swapped(LOW_AVAIL_KB, SWAP_KB - 3 * GIB_KB))
    assert v.status.value == "warn"
    assert v.summary.startswith("swapping: 3.0 GiB of swap in use with MemAvailable 30.4 GiB under 25% of memory")
    assert g3.FIX_PRESSURE in v.fix


def test_swap_just_under_the_minimum_is_ok(tmp_path):
    v = check(tmp_path, IDLE_PSI, swapped(LOW_AVAIL_KB, SWAP_KB - int(g3.SWAP_USED_MIN_GIB * GIB_KB) + 1))
    assert v.status.value == "ok"


def test_swap_at_the_minimum_warns(tmp_path):
    v = check(tmp_path, IDLE_PSI, swapped(LOW_AVAIL_KB, SWAP_KB - int(g3.SWAP_USED_MIN_GIB * GIB_KB)))
    assert v.status.value == "warn" and "1.0 GiB of swap in use" in v.summary


def test_old_swap_with_plenty_available_is_ok(tmp_path):
    # just above the share: swapped out long ago, memory is plentiful now
    v = check(tmp_path, IDLE_PSI, swapped(int(TOTAL_KB * g3.SWAP_LOW_AVAIL_SHARE) + 1024, SWAP_KB - 3 * GIB_KB))
    assert v.status.value == "ok"
    assert ev(v, "swap used").value == "3.0 GiB"


def test_no_swap_configured_is_ok(tmp_path):
    text = swapped(LOW_AVAIL_KB, 0).replace("SwapTotal:      16777212", "SwapTotal:             0")
    assert check(tmp_path, IDLE_PSI, text).status.value == "ok"


def test_the_doc_states_the_new_thresholds():
    doc = open(os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "gotchas.md"), encoding="utf-8").read()
    for name in ("PSI_FULL_AVG10_WARN", "PSI_SOME_AVG60_WARN", "SWAP_USED_MIN_GIB", "SWAP_LOW_AVAIL_SHARE"):
        assert f"| `{name}` | `{getattr(g3, name)!r}` |" in doc
