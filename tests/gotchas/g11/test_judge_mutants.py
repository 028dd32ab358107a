"""G11's judge pinned where mutation testing found it loosely held: the span of the log read (ring
buffer wrapped, records lost while reading, a dmesg that starts late, a saved log), counts the
reading has but did not keep (per kind and per AER severity), the order incidents are named in,
the "and N more" of the summary, the wording of each kind (hard lockup, GPU lost, a cgroup's OOM
kill), which events fail or warn, and the fix for lost GPUs, containers' limits and PCIe errors.
Readings are built as in test_judge.py (as probes/kernel_log.py writes them)."""

from __future__ import annotations

import pytest

from sparktui.core.verdict import Status
from sparktui.gotchas import g11_kernel_log as g11
from tests.gotchas.builders import KMSG_T0 as T0, g11_verdict as verdict, sourced as evidence
from tests.gotchas.g11.test_judge import aer, blocks, data, lockup, nomem, oom, when, xid

NONE_OF = "none of Xid, NV_ERR_NO_MEMORY, OOM kill, GPU lost, fatal or non-fatal AER, soft lockup"
COUNTS = ["xid events", "nv_no_memory events", "oom_kill events", "aer events", "soft_lockup events",
          "gpu_lost events"]


def lost(pci="0009:01:00.0", reason="fallen off the bus", t=T0):
    return {"kind": "gpu_lost", "t": t, "text": f"NVRM: GPU at PCI:{pci}: GPU has fallen off the bus.", "pci": pci,
            "reason": reason}


# --------------------------------------------------------------------------- the span of the log read
def test_a_wrapped_ring_buffer_says_since_which_record_and_why():
    v = verdict(data([], first_seq=100))
    why = "the ring buffer wrapped: the 100 records before it were overwritten"
    assert v.status is Status.OK
    assert v.summary == f"kernel log read (1234 lines since kmsg record 100, kmsg): {NONE_OF} ({why})"
    assert [(e.what, e.source, e.value) for e in v.evidence][:3] == [
        ("lines read", "kmsg", 1234), ("not since boot", "kmsg", f"1234 lines since kmsg record 100: {why}"),
        ("boot id", "kmsg", "4e7c9d0a111122223333444455556666")]


def test_records_lost_while_reading_alone_say_since_boot_with_the_loss():
    v = verdict(data([], lost_records=7))
    assert v.summary == (f"kernel log read (1234 lines since boot, 7 record(s) lost while reading, kmsg): {NONE_OF} "
                         "(7 record(s) lost while reading)")
    assert evidence(v)["not since boot"] == (
        "kmsg", "1234 lines since boot, 7 record(s) lost while reading: 7 record(s) lost while reading")
    assert "lines read since boot" not in evidence(v) and evidence(v)["lines read"] == ("kmsg", 1234)


def test_a_wrap_and_a_loss_give_both_reasons_and_record_zero_only_the_loss():
    v = verdict(data([], first_seq=100, lost_records=7))
    assert evidence(v)["not since boot"] == ("kmsg", "1234 lines since kmsg record 100: the ring buffer wrapped: the "
                                                     "100 records before it were overwritten; 7 record(s) lost while reading")
    zero = verdict(data([], first_seq=0, lost_records=7))
    assert evidence(zero)["not since boot"] == ("kmsg", "1234 lines since kmsg record 0: 7 record(s) lost while reading")
    assert zero.summary.startswith("kernel log read (1234 lines since kmsg record 0, kmsg)")


@pytest.mark.parametrize("extra", [{"first_seq": 0}, {"lost_records": 0}, {"first_seq": -3}, {"lost_records": -3},
                                   {"first_seq": True}, {"lost_records": 2.5}])
def test_record_zero_or_no_usable_loss_is_since_boot(extra):
    v = verdict(data([], **extra))
    assert v.summary == f"kernel log read (1234 lines since boot, kmsg): {NONE_OF}"
    assert evidence(v)["lines read since boot"] == ("kmsg", 1234) and "not since boot" not in evidence(v)


@pytest.mark.parametrize("source", ["dmesg", "kmsg"])
def test_a_log_starting_later_than_five_seconds_after_boot_lost_its_beginning(source):
    v = verdict(data([], first_boot_s=5.5, source=source))
    why = "the log's first line is that long after boot: earlier lines were overwritten"
    assert v.summary == f"kernel log read (1234 lines since 5.5 s after boot, {source}): {NONE_OF} ({why})"
    assert evidence(v)["not since boot"] == (source, f"1234 lines since 5.5 s after boot: {why}")


@pytest.mark.parametrize("first_s,source", [(5.0, "dmesg"), (5, "kmsg"), (0.2, "dmesg"), (9.0, "journalctl"),
                                            (9.0, "file"), (True, "dmesg"), ("9", "dmesg"), (None, "kmsg")])
def test_a_log_starting_within_five_seconds_or_from_elsewhere_is_since_boot(first_s, source):
    v = verdict(data([], first_boot_s=first_s, source=source))
    assert "not since boot" not in evidence(v)
    if source == "file":
        assert v.summary.startswith("kernel log read (1234 lines of a saved log, file)")
        assert evidence(v)["lines read"] == ("file", 1234)
    else:
        assert v.summary.startswith(f"kernel log read (1234 lines since boot, {source})")
        assert evidence(v)["lines read since boot"] == (source, 1234)


def test_the_late_start_bound_is_the_module_constant():
    assert g11.WRAPPED_AFTER_S == 5.0
    assert "not since boot" in evidence(verdict(data([], first_boot_s=5.01, source="dmesg")))


def test_a_failing_summary_ends_with_the_span_when_not_since_boot():
    v = verdict(data([xid(13, pid=None)], first_seq=100))
    assert v.summary == (f"this boot: Xid 13 on 000f:01:00: graphics engine exception at {when(T0)} "
                         "(1234 lines since kmsg record 100: the ring buffer wrapped: the 100 records before it were "
                         "overwritten)")
    assert verdict(data([xid(13, pid=None)])).summary.endswith(f"at {when(T0)}")


# --------------------------------------------------------------------------- a saved log
def test_a_saved_log_says_in_the_saved_log():
    f = verdict(data([xid()], source="file"))
    assert f.status is Status.FAIL and f.summary.startswith("in the saved log: Xid 79 on 000f:01:00")
    w = verdict(data([aer("non-fatal")], source="file"))
    assert w.status is Status.WARN
    assert w.summary.startswith("in the saved log, non-fatal PCIe errors only: PCIe AER non-fatal error")
    assert evidence(f)["lines read"] == ("file", 1234) and "lines read since boot" not in evidence(f)


# --------------------------------------------------------------------------- counted but not kept
def test_events_counted_but_none_kept_still_fail_and_say_so():
    v = verdict(data([], counts={"xid": 2}))
    assert v.status is Status.FAIL
    assert v.summary == ("this boot: the events were counted but not kept in the reading; and 2 more (2 Xid) "
                         "(2 of 2 events counted but not kept)")
    assert evidence(v)["xid events"] == ("kmsg", 2)
    assert evidence(v)["events not kept"] == ("kmsg", "2 counted but not kept in the reading (0 kept)")
    assert v.fix == g11.FIX


def test_a_count_lower_than_the_events_kept_is_raised_to_them():
    v = verdict(data([xid(), xid(13)], counts={"xid": 1, "oom_kill": 0}))
    assert evidence(v)["xid events"] == ("kmsg", 2) and "events not kept" not in evidence(v)
    assert "more" not in v.summary


def test_corrected_aer_counted_but_not_kept_is_ok_and_says_more_happened():
    v = verdict(data([], counts={"aer": 3}, severities={"corrected": 3}))
    assert v.status is Status.OK
    assert v.summary == (f"kernel log read (1234 lines since boot, kmsg): {NONE_OF}; 3 corrected PCIe AER error(s), "
                         "handled by the hardware; 3 more event(s) happened, counted but not kept")
    assert evidence(v)["aer events by severity"] == ("kmsg", "fatal 0, non-fatal 0, corrected 3, unknown 0")
    assert evidence(v)["events not kept"] == ("kmsg", "3 counted but not kept in the reading (0 kept)")


def test_one_corrected_aer_is_named_with_its_count():
    v = verdict(data([aer("corrected")]))
    assert v.summary.endswith("; 1 corrected PCIe AER error(s), handled by the hardware")


def test_aer_counted_beyond_its_severities_is_of_unknown_severity():
    v = verdict(data([aer("fatal")], counts={"aer": 5}, severities={"fatal": 2, "non-fatal": 1}))
    assert v.status is Status.FAIL
    assert evidence(v)["aer events by severity"] == ("kmsg", "fatal 2, non-fatal 1, corrected 0, unknown 2")
    assert v.summary == (f"this boot: PCIe AER fatal error on ConnectX-7 (mlx5) (0000:01:00.0) at {when(T0)}; "
                         "and 1 more (1 fatal AER) (4 of 5 events counted but not kept)")


def test_unclassified_aer_counted_but_not_kept_warns():
    v = verdict(data([], counts={"aer": 2}))
    assert v.status is Status.WARN
    assert evidence(v)["aer events by severity"] == ("kmsg", "fatal 0, non-fatal 0, corrected 0, unknown 2")
    assert v.summary == ("this boot, non-fatal PCIe errors only: the events were counted but not kept in the reading; "
                         "and 2 more (2 unknown AER) (2 of 2 events counted but not kept)")


def test_severities_that_account_for_every_aer_add_no_unknown():
    v = verdict(data([aer("non-fatal")], counts={"aer": 2}, severities={"non-fatal": 2}))
    assert evidence(v)["aer events by severity"] == ("kmsg", "fatal 0, non-fatal 2, corrected 0, unknown 0")
    assert v.summary.endswith("; and 1 more (1 non-fatal AER) (1 of 2 events counted but not kept)")


@pytest.mark.parametrize("extra", [{"severities": "x"}, {"severities": [1]}, {"severities": {"fatal": -1}},
                                   {"severities": {"fatal": True}}, {"severities": {"unknown": 1.0}},
                                   {"counts": {"xid": -1}}, {"counts": {"oom_kill": "2"}}, {"counts": {"aer": False}}])
def test_a_garbled_count_or_severity_is_unknown(extra):
    v = verdict(data([], **extra))
    assert (v.status, v.summary) == (Status.UNKNOWN, "cannot tell: the kernel log reading is malformed")
    assert [(e.what, e.source, e.value) for e in v.evidence] == [
        ("kernel log", "kmsg", "malformed reading (a count per kind or severity is not a whole number >= 0)")]
    assert v.fix == g11.FIX


def test_severities_of_none_or_zero_counts_are_not_garbled():
    assert verdict(data([], severities=None)).status is Status.OK
    assert verdict(data([], severities={"fatal": 0}, counts={"xid": 0})).status is Status.OK
    assert verdict(data([], severities={"bogus": "x"})).status is Status.OK  # only the known keys are read


# --------------------------------------------------------------------------- the summary: order and "and N more"
def test_an_oom_kill_then_a_named_task_lead_an_xid_storm():
    evs = [xid(13, pid=None, name=None, t=T0 + i) for i in range(4)] + [lockup(t=T0 + 10), oom(t=T0 + 20)]
    v = verdict(data(evs))
    assert v.summary == (f"this boot: OOM killer killed python3 (pid 4242, 100.0 GiB) at {when(T0 + 20)}; "
                         f"soft lockup: CPU#3 stuck for 22 s, task python3 pid 4242 at {when(T0 + 10)}; "
                         f"Xid 13 on 000f:01:00: graphics engine exception at {when(T0)}; and 3 more (3 Xid)")


def test_an_xid_naming_its_process_comes_before_one_that_does_not():
    v = verdict(data([xid(13, pid=None, name=None), xid(43, pid=None, name="vllm", t=T0 + 1)]))
    assert v.summary.startswith("this boot: Xid 43 on 000f:01:00")
    assert g11.MAX_SUMMARY_PARTS == 3


def test_the_rest_counts_each_kind_in_order_and_adds_them_up():
    evs = [oom(pid=i, t=T0 + i) for i in range(3)] + [xid(13, pid=None), nomem(), lockup(), lost(), aer("fatal"),
                                                      aer("non-fatal")]
    v = verdict(data(evs))
    assert v.summary.endswith("; and 5 more (1 Xid, 1 NV_ERR_NO_MEMORY, 1 fatal AER, 1 soft lockup, 1 GPU lost)")


def test_warn_rest_counts_non_fatal_and_unknown_not_corrected():
    evs = [aer("non-fatal"), aer("unknown"), aer("non-fatal"), aer("unknown"), aer("non-fatal"), aer("corrected")]
    v = verdict(data(evs))
    assert v.status is Status.WARN
    assert v.summary.endswith("; and 2 more (1 non-fatal AER, 1 unknown AER)")
    assert v.summary.count("PCIe AER") == 3 and "corrected" not in v.summary


def test_fail_rest_counts_fatal_aer_only():
    v = verdict(data([aer("fatal")] * 4 + [aer("non-fatal"), aer("unknown")]))
    assert v.summary.endswith("; and 1 more (1 fatal AER)")


def test_a_failing_kind_named_in_full_has_no_rest():
    v = verdict(data([lost(), nomem()]))
    assert v.summary == (f"this boot: GPU 0009:01:00.0 lost: fallen off the bus at {when(T0)}; "
                         f"NVIDIA driver out of memory (NV_ERR_NO_MEMORY) at {when(T0)}")


# --------------------------------------------------------------------------- which events fail or warn
@pytest.mark.parametrize("kind", ["xid", "nv_no_memory", "oom_kill", "soft_lockup", "gpu_lost"])
def test_every_kind_but_aer_fails_and_never_warns(kind):
    assert g11.is_fail({"kind": kind}) is True and g11.is_warn({"kind": kind}) is False


@pytest.mark.parametrize("sev,fail,warn", [("fatal", True, False), ("non-fatal", False, True),
                                           ("corrected", False, False), ("unknown", False, True)])
def test_aer_fails_or_warns_by_severity(sev, fail, warn):
    e = {"kind": "aer", "severity": sev}
    assert (g11.is_fail(e), g11.is_warn(e)) == (fail, warn)


@pytest.mark.parametrize("kind", ["xid", "nv_no_memory", "oom_kill", "soft_lockup", "gpu_lost"])
def test_one_event_of_each_failing_kind_fails_with_its_count(kind):
    ev = {"xid": xid(), "nv_no_memory": nomem(), "oom_kill": oom(), "soft_lockup": lockup(), "gpu_lost": lost()}[kind]
    v = verdict(data([ev]))
    assert v.status is Status.FAIL and evidence(v)[f"{kind} events"] == ("kmsg", 1)
    assert [evidence(v)[c][1] for c in COUNTS].count(0) == 5


def test_which_incidents_name_a_process():
    assert g11.names_a_process({"kind": "oom_kill"}) is True
    assert g11.names_a_process({"kind": "xid", "name": "x"}) is True
    assert g11.names_a_process({"kind": "xid", "pid": 0}) is True
    assert g11.names_a_process({"kind": "soft_lockup", "pid": 1}) is True
    assert g11.names_a_process({"kind": "xid", "name": ""}) is False
    assert g11.names_a_process({"kind": "xid"}) is False
    assert g11.names_a_process({"kind": "aer", "pid": 1, "name": "x"}) is False
    assert g11.names_a_process({"kind": "gpu_lost", "name": "x"}) is False


# --------------------------------------------------------------------------- one incident in words
def test_hard_lockup_and_gpu_lost_in_words():
    assert g11.describe({"kind": "soft_lockup", "hard": True, "cpu": 5, "pid": 9, "name": "kworker"}) == \
        "hard lockup: CPU#5, task kworker pid 9"
    assert g11.describe({"kind": "soft_lockup", "hard": True}) == "hard lockup: CPU#?"
    assert g11.describe({"kind": "soft_lockup", "hard": 1, "cpu": 0}) == "soft lockup: CPU#0 stuck for ? s"
    assert g11.describe(lost()) == "GPU 0009:01:00.0 lost: fallen off the bus"
    assert g11.describe({"kind": "gpu_lost"}) == "GPU ? lost: the NVIDIA driver cannot reach it"


def test_a_cgroup_oom_kill_names_its_memcg_cut_to_80():
    memcg = "/docker/" + "a" * 100
    assert g11.describe(oom(cgroup=True, memcg=memcg)) == \
        f"OOM killer killed python3 (pid 4242, 100.0 GiB) at its memory cgroup's limit ({memcg[:80]})"
    assert g11.describe(oom(cgroup=True)) == "OOM killer killed python3 (pid 4242, 100.0 GiB) at its memory cgroup's limit"
    assert g11.describe(oom(cgroup="yes", memcg="/x")) == "OOM killer killed python3 (pid 4242, 100.0 GiB)"


def test_seen_as_needs_a_training_or_server_kind():
    assert g11.describe(oom(seen_as={"kind": "other", "command": "x"})) == "OOM killer killed python3 (pid 4242, 100.0 GiB)"
    assert g11.describe(oom(seen_as="training")) == "OOM killer killed python3 (pid 4242, 100.0 GiB)"
    assert g11.describe(oom(seen_as={"kind": "training"})).endswith(": the training job G6 saw")


def test_a_time_falls_back_to_the_syslog_stamp_then_seconds_after_boot():
    assert g11._when(None, 12.345, None) == "12.3 s after boot"
    assert g11._when(None, 0, None) == "0.0 s after boot"
    assert g11._when(1e308, None, "Dec  5 10:00:00") == "Dec  5 10:00:00"
    assert g11._when(None, 1.0, "x" * 40) == "x" * 32
    assert g11._when(None, -1, "") == "time unknown"
    v = verdict(data([{**xid(t=None), "t_boot": 7.26}]))
    assert v.details[0].startswith("7.3 s after boot  Xid 79")
    assert verdict(data([{**xid(t=None), "t_text": "Dec  5 10:00:00"}])).summary.endswith("at Dec  5 10:00:00")


# --------------------------------------------------------------------------- fix
def test_a_lost_gpu_gets_the_reboot_advice_and_its_commands():
    v = verdict(data([lost(), lost("000f:01:00.0", None)]))
    assert v.fix.startswith("The NVIDIA driver lost the GPU 0009:01:00.0, 000f:01:00.0 (fallen off the bus; lost): "
                            "nothing can use it until it is back.")
    assert blocks(v.fix) == [["journalctl -k -b --no-pager | grep -E -B5 'fallen off the bus|RmInitAdapter|AER'",
                              "modinfo -F license nvidia", "sudo nvidia-bug-report.sh"]]
    assert "GPU ? (" in verdict(data([{"kind": "gpu_lost", "t": T0}])).fix


def test_container_kills_list_five_victims_and_three_sorted_cgroups():
    evs = [oom(pid=i, name=f"c{i}", cgroup=True, memcg=m) for i, m in enumerate(["/d/c", "b/x", "/a", None, "/z/q", ""])]
    v = verdict(data(evs + [oom(pid=99, name="p")]))
    assert "The kernel's OOM killer ended c0 pid 0; c1 pid 1; c2 pid 2; c3 pid 3; c4 pid 4 at a memory cgroup's limit" \
        in v.fix
    assert blocks(v.fix) == [
        ["# what each container holds against its limit now", "docker stats --no-stream",
         "# the limit of /a (cgroup v2; v1: memory.limit_in_bytes)", "cat /sys/fs/cgroup/a/memory.max",
         "# the limit of /d/c (cgroup v2; v1: memory.limit_in_bytes)", "cat /sys/fs/cgroup/d/c/memory.max",
         "# the limit of /z/q (cgroup v2; v1: memory.limit_in_bytes)", "cat /sys/fs/cgroup/z/q/memory.max"],
        ["sparktui explain G3", "sparktui explain G6"]]
    assert "The kernel's OOM killer ended p pid 99. On a Spark" in v.fix


def test_a_cgroup_path_without_a_slash_gets_one():
    v = verdict(data([oom(cgroup=True, memcg="b/x")]))
    assert "cat /sys/fs/cgroup/b/x/memory.max" in blocks(v.fix)[0]
    assert "# the limit of b/x (cgroup v2; v1: memory.limit_in_bytes)" in blocks(v.fix)[0]


def test_aer_fix_names_six_devices_then_and_more():
    v = verdict(data([aer(device=f"dev{i}", pci=f"0000:0{i}:00.0") for i in range(7)]))
    assert v.fix.startswith("PCIe errors on dev0 at 0000:00:00.0, dev1 at 0000:01:00.0, dev2 at 0000:02:00.0, dev3 at "
                            "0000:03:00.0, dev4 at 0000:04:00.0, dev5 at 0000:05:00.0 and more: check that device's "
                            "seating, firmware and cooling. Read")
    six = verdict(data([aer(device=f"dev{i}", pci=f"0000:0{i}:00.0") for i in range(6)]))
    assert "dev5 at 0000:05:00.0: check" in six.fix and "and more" not in six.fix


def test_aer_fix_names_a_device_once():
    v = verdict(data([aer(), aer(), aer(device="nvme", pci="0000:03:00.0")]))
    assert v.fix.startswith("PCIe errors on ConnectX-7 (mlx5) at 0000:01:00.0, nvme at 0000:03:00.0: ")


CX7_WHY = ("ConnectX-7 fatal AER errors have preceded soft lock-ups and shutdowns on hot machines: check cooling and "
           "airflow and the NIC firmware")
GPU_WHY = "a GPU's PCIe errors come before it falls off the bus (Xid 79): check its seating, power and temperature"
ANY_WHY = "check that device's seating, firmware and cooling"


@pytest.mark.parametrize("ev,named,why", [
    ({"device": "ConnectX-7 (mlx5)"}, "ConnectX-7 (mlx5)", CX7_WHY),
    ({"device": "NIC", "driver": "mlx5_core"}, "NIC", CX7_WHY),
    ({"device": "ConnectX-7"}, "ConnectX-7", CX7_WHY),
    ({"device": "x", "driver": "nvidia"}, "x", GPU_WHY),
    ({"device": "GPU (nvidia)"}, "GPU (nvidia)", GPU_WHY),
    ({"device": "nvme", "driver": "nvidia-ish"}, "nvme", ANY_WHY),
    ({"device": "nvme"}, "nvme", ANY_WHY),
])
def test_aer_fix_says_why_by_device_or_driver(ev, named, why):
    v = verdict(data([{**aer(), **ev}]))
    assert v.fix.startswith(f"PCIe errors on {named} at 0000:01:00.0: {why}. Read the lines around them")


def test_aer_fix_for_a_connectx_and_a_gpu_gives_both_reasons():
    v = verdict(data([aer(), aer(device="GPU (nvidia)", pci="0009:01:00.0")]))
    assert ("ConnectX-7 fatal AER errors have preceded soft lock-ups and shutdowns on hot machines: check cooling and "
            "airflow and the NIC firmware; a GPU's PCIe errors come before it falls off the bus (Xid 79): check its "
            "seating, power and temperature. Read") in v.fix
    assert "check that device's seating, firmware and cooling" not in v.fix


def test_the_fix_for_a_warn_is_the_aer_fix_of_the_warning_events():
    v = verdict(data([aer("non-fatal", device="nvme", pci="0000:03:00.0"), aer("corrected")]))
    assert v.status is Status.WARN and v.fix.startswith("PCIe errors on nvme at 0000:03:00.0: check that device's")
    assert "sudo lspci -vvv -s 0000:03:00.0 | grep -A4 -i 'UESta\\|CESta'" in blocks(v.fix)[0]


def test_an_ok_or_unknown_verdict_has_no_incident_fix():
    assert verdict(data([aer("corrected")])).fix in ("", None)
    assert verdict(data([], lines=0)).fix == g11.FIX


def test_the_xid_fix_line_of_each_number_and_the_169_block_alone():
    v = verdict(data([xid(169, pid=None)]))
    assert blocks(v.fix) == [list(g11.OPEN_MODULE_LINES)]
    assert v.fix.startswith("Xid 169 on a GB10: the proprietary NVIDIA kernel module cannot drive this GPU "
                            "(RmInitAdapter failed). Use the -open module flavour:")
    x = verdict(data([xid(79), xid(13, pid=None)]))
    assert x.fix.startswith(f"Xid actions:\n\n- Xid 13: {g11.XIDS[13][1]}\n- Xid 79: {g11.XIDS[79][1]}\n\n"
                            "Collect a report for NVIDIA if it repeats:")


# --------------------------------------------------------------------------- details
def test_details_name_every_event_kept_in_log_order():
    evs = [oom(t=T0 + 1), xid(13, pid=None, t=T0)]
    v = verdict(data(evs))
    assert [d.split("  ")[1] for d in v.details] == [g11.describe(e) for e in evs]
    assert g11.MAX_DETAILS == 40


# --------------------------------------------------------------------------- more of what a user reads
def test_one_unclassified_aer_counted_but_not_kept_warns():
    v = verdict(data([], counts={"aer": 1}))
    assert v.status is Status.WARN
    assert evidence(v)["aer events by severity"] == ("kmsg", "fatal 0, non-fatal 0, corrected 0, unknown 1")


def test_a_reading_without_a_boot_id_says_not_known():
    v = verdict(data([], boot_id=None))
    assert evidence(v)["boot id"] == ("kmsg", "not known (a saved log does not say; /proc gave none)")


@pytest.mark.parametrize("rss", [-5, 10 ** 400])
def test_an_impossible_rss_is_rss_unknown(rss):
    assert g11.describe(oom(rss_kb=rss)) == "OOM killer killed python3 (pid 4242, RSS unknown)"


def test_a_long_cgroup_path_is_cut_to_120_in_the_comment_not_in_the_command():
    memcg = "/" + "k" * 200
    lines = blocks(verdict(data([oom(cgroup=True, memcg=memcg)])).fix)[0]
    assert f"# the limit of {memcg[:120]} (cgroup v2; v1: memory.limit_in_bytes)" in lines
    assert f"cat /sys/fs/cgroup{memcg}/memory.max" in lines


def test_the_container_advice_in_full():
    v = verdict(data([oom(pid=777, name="vllm", cgroup=True)]))
    assert v.fix.startswith(
        "The kernel's OOM killer ended vllm pid 777 at a memory cgroup's limit (a container's or a service's memory "
        "limit), not because the unified pool ran out. Raise the container's memory limit (`docker run --memory=...`, "
        "`docker update --memory=... --memory-swap=...`, Kubernetes `resources.limits.memory`, systemd `MemoryMax=`), "
        "or make the job fit under it:\n\n")


def test_the_pool_advice_in_full_for_the_driver_alone_and_with_a_victim():
    tail = ("On a Spark GPU and CPU share one 128 GB pool: see G3 (what is really available) and G6 (who else holds "
            "the pool):\n\n")
    v = verdict(data([nomem()]))
    assert v.fix.startswith("The NVIDIA driver itself ran out of memory (NV_ERR_NO_MEMORY), which can end in a hard "
                            "reset. " + tail)
    o = verdict(data([oom()]))
    assert o.fix.startswith("The kernel's OOM killer ended python3 pid 4242. " + tail)


def test_the_lockup_advice_in_full():
    v = verdict(data([lockup()]))
    assert v.fix.startswith("A CPU was stuck in the kernel for tens of seconds (soft lockup): look at what the kernel "
                            "logged just before it (AER, Xid) and at the temperatures (G4).\n\n")
    hard = verdict(data([{**lockup(), "hard": True}]))
    assert hard.summary.startswith("this boot: hard lockup: CPU#3, task python3 pid 4242 at")
