"""G11's judge pinned on what a user acts on: the status of each kind of incident, the evidence every
path carries (what, source, value), the incidents named in the summary (Xid meaning, pid, device,
RSS), the commands of the fix filled from the events (lspci -s with the device address, the OOM
victims' pids), and the limits of the details and summary ("... and N more"). Readings are built as
probes/kernel_log.py writes them (shapes.KernelLogData); lines as in docs/reference/FIELD-FACTS.md "Kernel log"."""

from __future__ import annotations

import re
import time

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings
from sparktui.core.verdict import Status
from sparktui.gotchas import g11_kernel_log as g11
from tests.conftest import readings_of
from tests.gotchas.builders import KMSG_T0 as T0, g11_verdict as verdict, sourced as evidence

KINDS = ("xid", "nv_no_memory", "oom_kill", "aer", "soft_lockup", "gpu_lost")


def when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


# events as the probe writes them (tests/gotchas/g11/test_kernel_log.py parses the real lines into these)
def xid(n=79, pid=4242, name="python3", pci="000f:01:00", t=T0, **kw):
    return {"kind": "xid", "t": t, "text": f"NVRM: Xid (PCI:{pci}): {n}, pid={pid}, name={name}, ...", "xid": n,
            "pci": pci, "pid": pid, "name": name, "device": "GPU (nvidia)", **kw}


def nomem(t=T0):
    return {"kind": "nv_no_memory", "t": t, "text": "NVRM: ... Out of memory [NV_ERR_NO_MEMORY] (0x00000051)"}


def oom(pid=4242, name="python3", rss_kb=104857600 + 2048 + 1024, t=T0, **kw):
    return {"kind": "oom_kill", "t": t, "text": f"Out of memory: Killed process {pid} ({name})", "pid": pid,
            "name": name, "rss_kb": rss_kb, "anon_rss_kb": rss_kb, **kw}


def aer(severity="fatal", device="ConnectX-7 (mlx5)", pci="0000:01:00.0", t=T0):
    return {"kind": "aer", "t": t, "text": f"pcieport 0000:00:00.0: AER: error received: {pci}", "severity": severity,
            "device": device, "pci": pci}


def lockup(cpu=3, stuck_s=22, pid=4242, name="python3", t=T0):
    return {"kind": "soft_lockup", "t": t, "text": f"watchdog: BUG: soft lockup - CPU#{cpu} stuck for {stuck_s}s!",
            "cpu": cpu, "stuck_s": stuck_s, "pid": pid, "name": name}


def data(events, lines=1234, source="kmsg", **kw):
    return {"source": source, "boot_id": "4e7c9d0a111122223333444455556666", "lines_read": lines, "events": events,
            "truncated": False, "counts": {k: sum(1 for e in events if e["kind"] == k) for k in KINDS}, "note": None,
            **kw}


def blocks(fix: str) -> list[list[str]]:
    """The fenced code blocks of a fix (what the card copies), each as its command lines."""
    return [b.split("\n") for b in re.findall(r"^```bash\n(.*?)\n```$", fix, flags=re.M | re.S)]


def commands(fix: str) -> list[str]:
    return [line for b in blocks(fix) for line in b]


READ_LOG = "journalctl -k -b --no-pager | grep -E 'NVRM: Xid|NV_ERR_NO_MEMORY|Out of memory|oom-kill|AER|soft lockup'"
GRANT = ['sudo usermod -aG adm,systemd-journal "$USER"   # then log out and in again',
         "sudo sysctl kernel.dmesg_restrict=0             # or this, until reboot"]


# --------------------------------------------------------------------------- unknown paths
def test_the_generic_fix_reads_the_log_and_grants_access():
    assert blocks(g11.FIX) == [[READ_LOG], GRANT]


def test_a_failed_reading_is_unknown_with_its_error_as_evidence_and_the_grant_fix():
    err = "cannot read the kernel log (/dev/kmsg: Permission denied)"
    v = g11.judge(readings_of(kernel_log=Reading("kernel_log", None, error=err)), Config())
    assert (v.id, v.status) == ("G11", Status.UNKNOWN) and err in v.summary
    assert [(e.what, e.source, e.value) for e in v.evidence] == [
        ("kernel log", "kmsg / journalctl / dmesg", "unavailable: " + err)]
    assert v.fix == g11.FIX and not v.details


def test_a_reading_without_data_or_error_is_unknown_and_says_so():
    v = g11.judge(readings_of(kernel_log=Reading("kernel_log", None)), Config())
    assert v.status is Status.UNKNOWN and "(no kernel_log reading)" in v.summary
    assert evidence(v)["kernel log"] == ("kmsg / journalctl / dmesg", "unavailable: no kernel_log reading")
    v = g11.judge(Readings(), Config())  # the probe was not run
    assert v.status is Status.UNKNOWN and "not run" in v.summary


@pytest.mark.parametrize("bad", [
    data([{"kind": "bogus"}]), data([], lines=-1), data([], lines=True), data([], lines=None),
    {**data([]), "events": None}, {**data([]), "events": ["xid"]},
    # an AER event of no known severity (a hand-written recording, a field lost): it was judged ok
    data([{k: v for k, v in aer().items() if k != "severity"}]), data([aer(severity="Fatal")]),
    data([aer(severity=None)])])
def test_a_malformed_reading_is_unknown_naming_its_source(bad):
    v = verdict(bad)
    assert (v.id, v.status) == ("G11", Status.UNKNOWN) and "malformed" in v.summary
    assert [(e.what, e.source) for e in v.evidence] == [("kernel log", "kmsg")]
    assert "malformed" in v.evidence[0].value and v.fix == g11.FIX


def test_a_malformed_reading_without_a_source_says_question_mark():
    v = verdict({"events": "x"})
    assert [(e.what, e.source) for e in v.evidence] == [("kernel log", "?")]


def test_aer_events_of_every_severity_the_probe_writes_are_not_malformed():
    assert [verdict(data([aer(severity=s)])).status for s in g11.SEVERITIES] == [
        Status.FAIL, Status.WARN, Status.OK, Status.WARN]


def test_zero_lines_is_unknown_with_the_evidence_it_read():
    v = verdict(data([], lines=0, source="journalctl"))
    assert (v.id, v.status) == ("G11", Status.UNKNOWN) and "(journalctl) returned 0 lines" in v.summary
    assert evidence(v)["lines read since boot"] == ("journalctl", 0) and v.fix == g11.FIX


# --------------------------------------------------------------------------- evidence
def test_evidence_of_a_read_log_lines_boot_id_and_count_per_kind():
    v = verdict(data([xid(), xid(13, pid=None), oom(), aer("corrected")], source="journalctl"))
    assert [(e.what, e.source, e.value) for e in v.evidence] == [
        ("lines read since boot", "journalctl", 1234), ("boot id", "journalctl", "4e7c9d0a111122223333444455556666"),
        ("xid events", "journalctl", 2), ("nv_no_memory events", "journalctl", 0),
        ("oom_kill events", "journalctl", 1), ("aer events", "journalctl", 1), ("soft_lockup events", "journalctl", 0),
        ("gpu_lost events", "journalctl", 0),
        ("aer events by severity", "journalctl", "fatal 0, non-fatal 0, corrected 1, unknown 0")]


def test_the_note_on_sources_tried_first_is_evidence_when_there_is_one():
    note = "/dev/kmsg: Operation not permitted"
    v = verdict(data([], source="journalctl", note=note))
    assert evidence(v)["note"] == ("journalctl", note)
    assert [e.what for e in v.evidence].index("note") == 2  # after lines and boot id, before the counts
    assert "note" not in evidence(verdict(data([])))


def test_a_missing_source_is_question_mark_everywhere():
    d = data([])
    del d["source"]
    v = verdict(d)
    assert v.status is Status.OK and "since boot, ?)" in v.summary
    assert {e.source for e in v.evidence} == {"?"}


def test_counts_beyond_the_kept_events_are_the_evidence():
    # the probe keeps some events and counts all of them: the count is what happened
    evs = [xid(13, pid=None, t=T0 + i) for i in range(500)]
    v = verdict(data(evs, truncated=True, counts={"xid": 525, "nv_no_memory": 0, "oom_kill": 0, "aer": 0,
                                                   "soft_lockup": 0}))
    assert evidence(v)["xid events"] == ("kmsg", 525)
    assert evidence(v)["events not kept"] == ("kmsg", "25 counted but not kept in the reading (500 kept)")
    assert v.summary.endswith("; and 522 more (522 Xid) (25 of 525 events counted but not kept)")
    assert v.details[-1] == "... and 460 more"


@pytest.mark.parametrize("counts", [None, "garbled", [1, 2]])
def test_without_usable_counts_the_events_are_counted(counts):
    v = verdict(data([xid(), xid(13), lockup()], counts=counts))
    ev = evidence(v)
    assert (ev["xid events"], ev["soft_lockup events"], ev["oom_kill events"]) == (
        ("kmsg", 2), ("kmsg", 1), ("kmsg", 0))


@pytest.mark.parametrize("events", [[xid()], [aer("non-fatal")], [aer("corrected")]])
def test_every_judged_path_carries_the_evidence(events):
    v = verdict(data(events))
    assert v.id == "G11" and evidence(v)["lines read since boot"] == ("kmsg", 1234)
    assert evidence(v)["boot id"] == ("kmsg", "4e7c9d0a111122223333444455556666")


# --------------------------------------------------------------------------- status and summary
def test_a_clean_log_is_ok_and_mentions_no_corrected_errors():
    v = verdict(data([]))
    assert v.status is Status.OK and "corrected" not in v.summary and not v.details and not v.fix


def test_corrected_aer_is_ok_counted_and_listed_in_the_details():
    v = verdict(data([aer("corrected", device="GPU (nvidia)", pci="0009:01:00.0")] * 2))
    assert v.status is Status.OK and "; 2 corrected PCIe AER error(s)" in v.summary
    assert len(v.details) == 2 and "PCIe AER corrected error on GPU (nvidia) (0009:01:00.0)" in v.details[0]


def test_the_lead_says_fail_or_non_fatal_only():
    assert verdict(data([xid()])).summary.startswith("this boot: Xid 79")
    w = verdict(data([aer("non-fatal")]))
    assert w.status is Status.WARN and w.summary.startswith("this boot, non-fatal PCIe errors only: PCIe AER non-fatal")


def test_unclassified_aer_warns_with_the_lspci_of_its_device():
    v = verdict(data([aer("unknown", pci="0000:01:00.1")]))
    assert v.status is Status.WARN and "PCIe AER unknown error on ConnectX-7 (mlx5) (0000:01:00.1)" in v.summary
    assert "sudo lspci -vvv -s 0000:01:00.1 | grep -A4 -i 'UESta\\|CESta'" in commands(v.fix)


def test_the_summary_names_three_incidents_then_counts_the_rest():
    three = verdict(data([xid(13, pid=None, t=T0 + i) for i in range(3)]))
    assert three.summary.count("Xid 13") == 3 and "more" not in three.summary
    assert f"at {when(T0)}; Xid 13" in three.summary and three.summary.endswith(f"at {when(T0 + 2)}")
    four = verdict(data([xid(13, pid=None, t=T0 + i) for i in range(4)]))
    assert four.summary.count("Xid 13") == 3 and four.summary.endswith("; and 1 more (1 Xid)")
    assert f"at {when(T0)}" in four.summary and f"at {when(T0 + 2)}" in four.summary


def test_warns_are_not_named_when_something_failed():
    v = verdict(data([aer("non-fatal"), lockup()]))
    assert v.status is Status.FAIL and "non-fatal" not in v.summary and "soft lockup" in v.summary


# --------------------------------------------------------------------------- one incident in words
def test_xid_named_with_its_meaning_device_and_process():
    assert g11.describe(xid()) == "Xid 79 on 000f:01:00: GPU has fallen off the bus, pid 4242 (python3)"
    assert g11.describe(xid(13, pid=None)) == "Xid 13 on 000f:01:00: graphics engine exception"
    assert g11.describe(xid(43, pid=77, name=None)).endswith(", pid 77 (?)")
    assert g11.describe({"kind": "xid", "xid": 999}) == \
        "Xid 999 on ?: not in sparktui's table: look it up in NVIDIA's Xid list"
    assert g11.describe({"kind": "xid", "xid": None, "pci": "000f:01:00"}) == "Xid None on 000f:01:00: ?"


def test_xid_summary_has_the_meaning_and_pid():
    v = verdict(data([xid()]))
    assert "Xid 79 on 000f:01:00: GPU has fallen off the bus, pid 4242 (python3)" in v.summary


def test_oom_victim_named_with_pid_and_rss():
    assert g11.describe(oom()) == "OOM killer killed python3 (pid 4242, 100.0 GiB)"
    assert g11.describe(oom(pid=777, name=None, rss_kb=None)) == "OOM killer killed ? (pid 777, RSS unknown)"
    assert g11.describe({"kind": "oom_kill"}) == "OOM killer killed ? (pid ?, RSS unknown)"
    assert g11.describe(oom(rss_kb=True)).endswith("RSS unknown)")  # a bool is no size


def test_an_oom_victim_seen_as_the_training_job_or_a_server():
    assert g11.describe(oom(seen_as={"kind": "training", "command": "python3 train.py"})) == \
        "OOM killer killed python3 (pid 4242, 100.0 GiB): the training job G6 saw (python3 train.py)"
    assert g11.describe(oom(seen_as={"kind": "server"})).endswith(": the inference server G6 saw")
    long = "vllm serve " + "m" * 200
    assert g11.describe(oom(seen_as={"kind": "server", "server": "vllm", "command": long})).endswith(
        f": the vllm server G6 saw ({long[:80]})")


def test_aer_and_lockup_and_no_memory_in_words():
    assert g11.describe(aer()) == "PCIe AER fatal error on ConnectX-7 (mlx5) (0000:01:00.0)"
    assert g11.describe({"kind": "aer"}) == "PCIe AER unknown error on unknown (?)"
    assert g11.describe(lockup()) == "soft lockup: CPU#3 stuck for 22 s, task python3 pid 4242"
    assert g11.describe(lockup(pid=None)) == "soft lockup: CPU#3 stuck for 22 s"
    assert g11.describe({"kind": "soft_lockup"}) == "soft lockup: CPU#? stuck for ? s"
    assert g11.describe(nomem()) == "NVIDIA driver out of memory (NV_ERR_NO_MEMORY)"
    assert g11.describe({"kind": "other"}) == "unrecognised event kind 'other'"


# --------------------------------------------------------------------------- details
def test_a_detail_line_is_time_incident_and_the_line_itself():
    e = xid(text="NVRM: Xid (PCI:000f:01:00): 79, " + "x" * 400)
    v = verdict(data([e]))
    assert v.details == (f"{when(T0)}  {g11.describe(e)}  | {e['text'][:200]}",)


@pytest.mark.parametrize("t", [None, 0, -5, True, "1764870000"])
def test_no_usable_time_is_time_unknown(t):
    v = verdict(data([xid(t=t)]))
    assert v.details[0].startswith("time unknown  Xid 79") and "at time unknown" in v.summary


def test_an_event_without_text_leaves_the_line_part_empty():
    e = xid()
    del e["text"]
    assert verdict(data([e])).details[0].endswith("(python3)  | ")


@pytest.mark.parametrize("n,shown,more", [(40, 40, None), (41, 40, "... and 1 more"), (45, 40, "... and 5 more")])
def test_details_list_forty_events_then_how_many_more(n, shown, more):
    evs = [xid(13, pid=None, t=T0 + i) for i in range(n)]
    v = verdict(data(evs))
    listed = [d for d in v.details if not d.startswith("...")]
    assert len(listed) == shown and listed[-1].startswith(when(T0 + shown - 1))
    assert (v.details[-1] if more else None) == more and len(v.details) == shown + (1 if more else 0)


# --------------------------------------------------------------------------- fix
def test_xid_fix_lists_each_xid_action_and_the_bug_report():
    v = verdict(data([xid(13, pid=None), xid(79), xid(999), xid(79)]))
    lines = v.fix.splitlines()
    assert "- Xid 13: " + g11.XIDS[13][1] in lines and "- Xid 79: " + g11.XIDS[79][1] in lines
    assert "- Xid 999: not in sparktui's table; see NVIDIA's Xid documentation" in lines
    assert sum(1 for x in lines if x.startswith("- Xid 79")) == 1  # once per Xid
    assert blocks(v.fix) == [["sudo nvidia-bug-report.sh"]]  # nothing about memory, PCIe or lock-ups
    assert "modinfo" not in v.fix


def test_xid_169_and_another_get_the_open_module_and_the_bug_report():
    v = verdict(data([xid(169, pid=None), xid(79)]))
    assert blocks(v.fix) == [list(g11.OPEN_MODULE_LINES), ["sudo nvidia-bug-report.sh"]]
    assert "sudo apt install nvidia-driver-580-open" in commands(v.fix)
    assert "- Xid 169" not in v.fix


def test_an_xid_without_a_number_still_gets_the_read_the_log_fix():
    v = verdict(data([xid(None)]))
    assert v.status is Status.FAIL and v.fix == g11.FIX


def test_oom_fix_names_the_victims_pids_and_points_at_g3_g6():
    v = verdict(data([oom(), oom(pid=777, name="vllm")]))
    assert "The kernel's OOM killer ended python3 pid 4242; vllm pid 777." in v.fix
    assert blocks(v.fix) == [["sparktui explain G3", "sparktui explain G6"]]
    assert "NV_ERR_NO_MEMORY" not in v.fix


def test_oom_fix_names_five_victims_at_most_and_a_nameless_one_by_question_mark():
    v = verdict(data([oom(pid=100 + i, name=f"w{i}") for i in range(6)] + [oom(pid=9, name=None)]))
    assert "w4 pid 104." in v.fix and "w5" not in v.fix and "? pid 9" not in v.fix
    v2 = verdict(data([oom(pid=9, name=None)]))
    assert "ended ? pid 9." in v2.fix


def test_no_memory_fix_says_the_driver_ran_out_not_the_oom_killer():
    v = verdict(data([nomem()]))
    assert v.status is Status.FAIL and "NV_ERR_NO_MEMORY" in v.fix and "hard reset" in v.fix
    assert "OOM killer ended" not in v.fix
    assert blocks(v.fix) == [["sparktui explain G3", "sparktui explain G6"]]
    both = verdict(data([nomem(), oom()]))
    assert "ended python3 pid 4242." in both.fix and "NV_ERR_NO_MEMORY" in both.fix


def test_aer_fix_names_the_devices_and_the_lspci_of_the_first():
    v = verdict(data([aer(device="GPU (nvidia)", pci="0009:01:00.0"), aer(), aer(device=None, pci=None)]))
    assert "PCIe errors on GPU (nvidia) at 0009:01:00.0, ConnectX-7 (mlx5) at 0000:01:00.0, unknown:" in v.fix
    assert blocks(v.fix) == [["journalctl -k -b --no-pager | grep -E -A3 'AER|PCIe Bus Error'",
                              "sudo lspci -vvv -s 0009:01:00.0 | grep -A4 -i 'UESta\\|CESta'"]]


def test_aer_fix_without_an_address_shows_a_placeholder_to_fill():
    v = verdict(data([aer(pci=None)]))
    assert "sudo lspci -vvv -s <pci address> | grep -A4 -i 'UESta\\|CESta'" in commands(v.fix)


def test_corrected_aer_beside_a_fatal_one_is_not_named_in_the_fix():
    v = verdict(data([aer("corrected", device="GPU (nvidia)", pci="0009:01:00.0"), aer()]))
    assert "PCIe errors on ConnectX-7 (mlx5) at 0000:01:00.0:" in v.fix and "0009:01:00.0" not in v.fix


def test_lockup_fix_greps_before_it_and_only_for_a_lockup():
    v = verdict(data([lockup()]))
    assert blocks(v.fix) == [["journalctl -k -b --no-pager | grep -B20 'soft lockup'"]]
    assert "G4" in v.fix
    assert "soft lockup" not in verdict(data([xid()])).fix


def test_every_kind_at_once_gets_every_block_in_order():
    v = verdict(data([lockup(), aer(), nomem(), oom(), xid(169), xid(13)]))
    assert [b[0] for b in blocks(v.fix)] == [g11.OPEN_MODULE_LINES[0], "sudo nvidia-bug-report.sh",
                                              "sparktui explain G3",
                                              "journalctl -k -b --no-pager | grep -E -A3 'AER|PCIe Bus Error'",
                                              "journalctl -k -b --no-pager | grep -B20 'soft lockup'"]
