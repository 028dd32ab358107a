"""The bounded event list G11 judges from (core/xids.py ``EventKeeper``: kept per class, every event
counted), the reading's new fields spoilt (never a crash, never an ok), and journal records that are
not the kernel's (a `journalctl -o json` without -k)."""

from __future__ import annotations

import json
import math

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings
from sparktui.core.verdict import Status
from sparktui.core.xids import KEEP_CORRECTED, KEEP_PER_CLASS, MAX_KEPT, EventKeeper
from sparktui.gotchas import g11_kernel_log as g11
from sparktui.probes import kernel_log as kl
from tests.gotchas.builders import KMSG_T0 as T0


def aer(sev: str, t: float = T0) -> dict:
    return {"kind": "aer", "t": t, "text": "x", "severity": sev, "pci": "0000:01:00.0", "device": "GPU (nvidia)"}


def xid(n: int = 79, t: float = T0) -> dict:
    return {"kind": "xid", "t": t, "text": "x", "xid": n, "pci": "000f:01:00", "pid": None, "name": None}


def test_a_corrected_storm_keeps_ten_and_counts_all_and_a_later_xid_is_kept():
    k = EventKeeper()
    for i in range(5000):
        k.add(aer("corrected", T0 + i))
    assert k.add(xid()) is True
    assert k.severities["corrected"] == 5000 and k.counts["aer"] == 5000 and k.counts["xid"] == 1
    assert len(k.events) == KEEP_CORRECTED + 1 and k.not_kept == 5000 - KEEP_CORRECTED


def test_no_class_outgrows_its_share_and_the_whole_stays_bounded():
    k = EventKeeper()
    for kind in ("xid", "nv_no_memory", "oom_kill", "soft_lockup", "gpu_lost"):
        for _ in range(1000):
            k.add({"kind": kind, "t": T0})
    for sev in ("fatal", "non-fatal", "unknown", "corrected"):
        for _ in range(1000):
            k.add(aer(sev))
    assert len(k.events) <= MAX_KEPT <= 500
    assert all(n <= KEEP_PER_CLASS for n in k.kept.values())
    assert sum(k.counts.values()) == 9000 and k.not_kept == 9000 - len(k.events)


def test_since_keeps_what_came_after_and_counts_what_it_cannot_place():
    k = EventKeeper()
    k.add(xid(t=T0 - 10))
    for i in range(100):
        k.add(aer("corrected", T0 + i))
    after = k.since(T0 - 1)
    assert after.counts["xid"] == 0 and after.severities["corrected"] == 100  # the 90 not kept may be after
    assert after.not_kept == 90
    old = EventKeeper()
    for i in range(100):
        old.add(aer("corrected", T0 + i))
    assert old.since(T0 + 1000).severities["corrected"] == 0  # all of them before: dropped


BASE = {"source": "kmsg", "boot_id": "b", "lines_read": 100, "events": [xid()], "truncated": False,
        "counts": {"xid": 1}, "severities": {"fatal": 0}, "note": None}


@pytest.mark.parametrize("field", ["counts", "severities", "not_kept", "first_seq", "lost_records", "first_boot_s",
                                   "formats"])
@pytest.mark.parametrize("value", [None, -1, math.nan, math.inf, 1e308, "12", [], {}, {"xid": -5}, {"fatal": "x"},
                                   True, {"gpu_lost": 1e9}])
def test_a_spoilt_new_field_never_crashes_and_never_makes_an_ok(field, value):
    v = g11.judge(Readings({"kernel_log": Reading("kernel_log", {**BASE, field: value})}), Config())
    assert v.status in (Status.FAIL, Status.UNKNOWN) and "judge error" not in v.summary


def test_journal_records_of_another_transport_are_not_the_kernels(tmp_path):
    f = tmp_path / "all.json"
    f.write_text(json.dumps({"MESSAGE": "NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=x, GPU has fallen off the bus.",
                             "_TRANSPORT": "stdout", "__REALTIME_TIMESTAMP": "1764870000000000"}) + "\n"
                 + json.dumps({"MESSAGE": "usb 1-1: new device", "_TRANSPORT": "kernel",
                               "__REALTIME_TIMESTAMP": "1764870000000001"}) + "\n")
    r = kl.read_file(str(f))
    assert r.data is not None and r.data["counts"]["xid"] == 0 and r.data["formats"] == {"journal JSON": 2}
    assert g11.judge(Readings({"kernel_log": r}), Config()).status is Status.OK
