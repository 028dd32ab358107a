"""G11: the kernel-log parser, the since-boot reader and the judge, on real line formats
(docs/reference/FIELD-FACTS.md "Kernel log": NVRM Xid lines, Xid 169 on GB10, OOM-killer lines, ConnectX-7 AER,
soft lock-ups; Linux Documentation/ABI/testing/dev-kmsg for the record format)."""

from __future__ import annotations

import errno
import json
import os
import stat
import time

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.verdict import Status
from sparktui.gotchas import g11_kernel_log as g11
from sparktui.probes import kernel_log as kl
from sparktui.core.xids import KEEP_PER_CLASS
from tests.conftest import readings_of
from tests.gotchas.builders import AER_CORR, LOCKUP, OOM_KILLED, OOM_SUMMARY, XID79, g11_verdict as verdict

# Lines as the kernel prints them (message part; kmsg/dmesg prefixes added per test).
XID169 = "NVRM: Xid (PCI:000f:01:00): 169, pid='<unknown>', name=<unknown>, RmInitAdapter failed! (0x62:0x65:1865)"
XID13 = ("NVRM: Xid (PCI:000f:01:00): 13, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): "
         "Out Of Range Address")
NOMEM = ("NVRM: nvAssertOkFailedNoLog: Assertion failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) "
         "returned from pRmApi->AllocWithHandle(pRmApi, hClient, hParent, hObject, hClass, pAllocParams, "
         "allocParamsSize) @ rs_server.c:259")
CG_OOM = ("Memory cgroup out of memory: Killed process 777 (vllm) total-vm:9000000kB, anon-rss:8000000kB, "
          "file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:16000kB oom_score_adj:0")
MLX_PROBE = "mlx5_core 0000:01:00.0: firmware version: 28.39.1002"
AER_FATAL = "pcieport 0000:00:00.0: AER: Uncorrected (Fatal) error received: 0000:01:00.0"
BUS_FATAL = "mlx5_core 0000:01:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Receiver ID)"
AER_NONFATAL = "pcieport 0000:00:00.0: AER: Uncorrected (Non-Fatal) error received: 0000:01:00.1"
BUS_NONFATAL = ("mlx5_core 0000:01:00.1: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, "
                "(Requester ID)")
BUS_CORR_GPU = "nvidia 0009:01:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)"
NOISE = ["Linux version 6.11.0-1016-nvidia (buildd@bos03-arm64-012) (aarch64-linux-gnu-gcc-13)",
         "nvidia: loading out-of-tree module taints kernel.",
         "NVRM: loading NVIDIA UNIX Open Kernel Module for aarch64  580.95.05",
         "usb 1-1: new high-speed USB device number 2 using xhci_hcd",
         "python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0"]


def kmsg(seq: int, usec: int, msg: str, pri: int = 3) -> str:
    return f"{pri},{seq},{usec},-;{msg}"


# --------------------------------------------------------------------------- parser
def test_xid_fields_from_a_kmsg_record():
    ev = kl.parse_line(kmsg(812, 5_123_456_789, XID79), boot_epoch=1_000_000.0)
    assert ev == {"kind": "xid", "t": pytest.approx(1_005_123.456789), "text": XID79, "xid": 79, "pci": "000f:01:00",
                  "pid": 4242, "name": "python3", "device": "GPU (nvidia)"}


def test_xid_169_with_unknown_pid_and_xid_13_without_pid():
    ev = kl.parse_line("[   7.250000] " + XID169, boot_epoch=100.0)
    assert (ev["xid"], ev["pid"], ev["t"]) == (169, None, pytest.approx(107.25))
    ev13 = kl.parse_line(XID13)
    assert (ev13["xid"], ev13["pid"], ev13["name"], ev13["t"]) == (13, None, None, None)


def test_nv_no_memory():
    ev = kl.parse_line(NOMEM)
    assert ev["kind"] == "nv_no_memory" and ev["text"] == NOMEM[:500]


def test_oom_summary_and_killed_line_are_one_event_with_rss():
    evs = list(kl.parse_lines([kmsg(1, 9_000_000, OOM_SUMMARY), kmsg(2, 9_000_010, OOM_KILLED)], boot_epoch=0.0))
    assert len(evs) == 1
    ev = evs[0]
    assert (ev["kind"], ev["pid"], ev["name"]) == ("oom_kill", 4242, "python3")
    assert ev["rss_kb"] == 104857600 + 2048 + 1024 and ev["anon_rss_kb"] == 104857600


def test_oom_summary_alone_is_still_a_kill_and_cgroup_oom_is_one():
    evs = list(kl.parse_lines([OOM_SUMMARY, NOISE[0]]))
    assert [(e["kind"], e["pid"], e["rss_kb"]) for e in evs] == [("oom_kill", 4242, None)]
    ev = kl.parse_line(CG_OOM)
    assert (ev["pid"], ev["name"], ev["rss_kb"]) == (777, "vllm", 8000000)


def test_oom_summary_then_another_pid_gives_two_events():
    other = OOM_KILLED.replace("4242 (python3)", "5000 (vllm)")
    evs = list(kl.parse_lines([OOM_SUMMARY, other]))
    assert [(e["pid"], e["name"]) for e in evs] == [(4242, "python3"), (5000, "vllm")]


def test_aer_fatal_on_connectx7_is_one_event_named_by_the_bus_error_line():
    evs = list(kl.parse_lines([AER_FATAL, BUS_FATAL]))
    assert len(evs) == 1
    assert (evs[0]["severity"], evs[0]["device"], evs[0]["pci"]) == ("fatal", "ConnectX-7 (mlx5)", "0000:01:00.0")


def test_aer_device_known_from_earlier_lines_and_severities():
    evs = list(kl.parse_lines([MLX_PROBE, AER_FATAL, AER_NONFATAL, BUS_NONFATAL, AER_CORR, BUS_CORR_GPU]))
    assert [(e["severity"], e["device"]) for e in evs] == [
        ("fatal", "ConnectX-7 (mlx5)"), ("non-fatal", "ConnectX-7 (mlx5)"), ("corrected", "GPU (nvidia)")]


def test_aer_unknown_device_when_nothing_names_it():
    evs = list(kl.parse_lines([AER_FATAL]))
    assert evs[0]["device"] == "unknown"
    assert kl.parse_line("pcieport 0000:00:00.0: AER: Multiple Corrected error received: 0000:00:00.0")["severity"] == "corrected"


def test_soft_lockup():
    ev = kl.parse_line("[ 5000.1] " + LOCKUP)
    assert (ev["kind"], ev["cpu"], ev["stuck_s"], ev["name"], ev["pid"]) == ("soft_lockup", 3, 22, "python3", 4242)


@pytest.mark.parametrize("line", NOISE + ["", "garbage \x00\xff ;;;", "6,1,2,-;", "NVRM: Xid (PCI:0000:01:00): x, bad",
                                          "watchdog: BUG: soft lockup - CPU#x stuck"])
def test_noise_and_garbage_give_no_event(line):
    assert kl.parse_line(line) is None


def test_text_bounded_and_long_lines_cost_bounded_work():
    long = XID79 + " " + "A" * 5000
    assert len(kl.parse_line(long)["text"]) == kl.MAX_TEXT
    huge = "B" * 2_000_000 + XID79  # the Xid lies past the parse bound: not seen, and fast
    t0 = time.perf_counter()
    assert kl.parse_line(huge) is None
    assert time.perf_counter() - t0 < 0.5


def test_parse_is_linear_time():
    lines = [NOISE[i % len(NOISE)] for i in range(20000)] + [XID79]
    t0 = time.perf_counter()
    evs = list(kl.parse_lines(lines))
    took = time.perf_counter() - t0
    assert len(evs) == 1 and took < 2.0


def test_xid_table_covers_the_brief_list_in_probe_and_judge():
    wanted = {13, 31, 43, 45, 48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95, 109, 119, 120, 154, 169}
    assert wanted <= set(kl.XIDS) and wanted <= set(g11.XIDS)
    assert "open" in g11.XIDS[169][1] and "RmInitAdapter" in g11.XIDS[169][0]


# --------------------------------------------------------------------------- reader
def test_read_a_saved_kmsg_file_through_the_kmsg_path(tmp_path):
    f = tmp_path / "kmsg"
    f.write_text("\n".join([kmsg(1, 1000, NOISE[0]), kmsg(2, 2000, XID79), kmsg(3, 3000, OOM_SUMMARY),
                            kmsg(4, 3001, OOM_KILLED), kmsg(5, 4000, LOCKUP)]) + "\n")
    bid = tmp_path / "boot_id"
    bid.write_text("4e7c9d0a-1111-2222-3333-444455556666\n")
    r = kl.read(Config(), kmsg=str(f), boot_id_path=str(bid))
    assert r.error is None and r.data["source"] == "file"
    assert r.data["boot_id"] == "4e7c9d0a111122223333444455556666"
    assert r.data["lines_read"] == 5 and [e["kind"] for e in r.data["events"]] == ["xid", "oom_kill", "soft_lockup"]
    assert r.data["counts"]["oom_kill"] == 1 and r.data["truncated"] is False


def test_read_the_real_kmsg_or_says_why():
    r = kl.read(Config())
    if r.data is None:
        assert "cannot read the kernel log" in r.error and "dmesg_restrict" in r.error
    else:
        assert r.data["source"] in ("kmsg", "journalctl", "dmesg") and r.data["lines_read"] > 0
        assert set(r.data["counts"]) == set(kl.KINDS)


def test_events_beyond_the_bound_are_counted_and_truncated(tmp_path):
    f = tmp_path / "kmsg"
    f.write_text("".join(kmsg(i, i * 10, XID13) + "\n" for i in range(kl.MAX_EVENTS + 25)))
    r = kl.read(Config(), kmsg=str(f))
    # a class keeps KEEP_PER_CLASS events (a storm of one kind pushes out no other); every one is counted
    assert len(r.data["events"]) == KEEP_PER_CLASS and r.data["counts"]["xid"] == kl.MAX_EVENTS + 25
    assert r.data["truncated"] is True and r.data["not_kept"] == kl.MAX_EVENTS + 25 - KEEP_PER_CLASS


def _fake(tmp_path, name, body):
    p = tmp_path / name
    p.write_text("#!/bin/sh\n" + body + "\n")
    p.chmod(p.stat().st_mode | stat.S_IEXEC)
    return str(p)


def _deny_kmsg(monkeypatch, path):
    real = os.open

    def fake_open(p, flags, *a, **k):
        if str(p) == path:
            raise PermissionError(errno.EPERM, "Operation not permitted", path)
        return real(p, flags, *a, **k)

    monkeypatch.setattr(kl.os, "open", fake_open)


def test_unreadable_everywhere_is_a_failed_reading_with_the_grant_hint(tmp_path, monkeypatch):
    _deny_kmsg(monkeypatch, "/dev/kmsg")
    # journalctl without adm/systemd-journal: exit 0, no kernel lines, a hint on stderr
    jc = _fake(tmp_path, "journalctl", "echo 'Hint: You are currently not seeing messages from other users and the "
               "system.' >&2; exit 0")
    dm = _fake(tmp_path, "dmesg", "echo 'dmesg: read kernel buffer failed: Operation not permitted' >&2; exit 1")
    r = kl.read(Config(), journal_cmd=(jc,), dmesg_cmd=(dm,))
    assert r.data is None
    assert "/dev/kmsg: Operation not permitted" in r.error and "not seeing messages" in r.error
    assert "usermod -aG adm,systemd-journal" in r.error and "dmesg_restrict=0" in r.error
    v = g11.judge(readings_of(kernel_log=r), Config())
    assert v.status is Status.UNKNOWN and "dmesg_restrict" in v.summary and "usermod" in v.fix


def test_journal_fallback_parses_json_with_byte_array_messages(tmp_path, monkeypatch):
    _deny_kmsg(monkeypatch, "/dev/kmsg")
    recs = [{"MESSAGE": NOISE[0], "__REALTIME_TIMESTAMP": "1764870000000000", "_BOOT_ID": "abc123"},
            {"MESSAGE": list(XID79.encode()), "__REALTIME_TIMESTAMP": "1764870001500000", "_BOOT_ID": "abc123"},
            {"MESSAGE": LOCKUP, "__REALTIME_TIMESTAMP": "bad"}]
    out = tmp_path / "j.json"
    out.write_text("\n".join(json.dumps(x) for x in recs) + "\nnot json\n")
    jc = _fake(tmp_path, "journalctl", f"cat {out}")
    r = kl.read(Config(), journal_cmd=(jc,), dmesg_cmd=("false",))
    assert r.error is None and r.data["source"] == "journalctl" and r.data["boot_id"] == "abc123"
    assert r.data["lines_read"] == 3
    xid, lock = r.data["events"]
    assert xid["t"] == pytest.approx(1764870001.5) and lock["t"] is None
    assert "Operation not permitted" in r.data["note"]


def test_dmesg_fallback(tmp_path, monkeypatch):
    _deny_kmsg(monkeypatch, "/dev/kmsg")
    jc = _fake(tmp_path, "journalctl", "echo 'No journal files were found.' >&2; exit 1")
    dm = _fake(tmp_path, "dmesg", f"echo '[  100.000000] {AER_FATAL}'; echo '[  100.000100] {BUS_FATAL}'")
    r = kl.read(Config(), journal_cmd=(jc,), dmesg_cmd=(dm,))
    assert r.data["source"] == "dmesg" and r.data["lines_read"] == 2
    assert [(e["severity"], e["device"]) for e in r.data["events"]] == [("fatal", "ConnectX-7 (mlx5)")]


def test_probe_is_registered_and_its_shape_declared():
    from sparktui.core import shapes
    from sparktui.probes import _registry

    assert _registry()["kernel_log"] is kl.read
    assert shapes.SHAPES["kernel_log"] is shapes.KernelLogData
    declared = set(shapes.KernelLogEvent.__annotations__)
    for line in (XID79, NOMEM, OOM_KILLED, AER_FATAL, LOCKUP):
        assert set(kl.parse_line(line)) <= declared


# --------------------------------------------------------------------------- judge
def data(events, lines=1234, **kw):
    return {"source": "kmsg", "boot_id": "b00t", "lines_read": lines, "events": events, "truncated": False,
            "counts": {k: sum(1 for e in events if e["kind"] == k) for k in kl.KINDS}, "note": None, **kw}


def ev(line, t=1764870000.0):
    evs = list(kl.parse_lines([line]))
    evs[0]["t"] = t
    return evs[0]


def test_clean_log_is_ok_with_the_line_count():
    v = verdict(data([]))
    assert v.status is Status.OK and v.summary.startswith("kernel log read (1234 lines since boot")
    assert "none of Xid" in v.summary


def test_corrected_aer_alone_stays_ok_and_is_said():
    v = verdict(data([ev(AER_CORR)]))
    assert v.status is Status.OK and "1 corrected PCIe AER" in v.summary


def test_nonfatal_aer_only_warns():
    v = verdict(data([ev(AER_NONFATAL), ev(AER_CORR)]))
    assert v.status is Status.WARN and "non-fatal" in v.summary and "lspci" in v.fix


def test_fatal_aer_fails_naming_the_device():
    d = list(kl.parse_lines([MLX_PROBE, AER_FATAL, BUS_FATAL]))
    v = verdict(data(d))
    assert v.status is Status.FAIL and "fatal" in v.summary and "ConnectX-7 (mlx5)" in v.summary
    assert "ConnectX-7" in v.fix


@pytest.mark.parametrize("line,needle", [(XID79, "Xid 79"), (NOMEM, "NV_ERR_NO_MEMORY"),
                                         (LOCKUP, "CPU#3 stuck for 22 s"), (XID13, "Xid 13")])
def test_each_failing_kind_fails(line, needle):
    v = verdict(data([ev(line)]))
    assert v.status is Status.FAIL and needle in v.summary
    assert time.strftime("%Y-%m-%d", time.localtime(1764870000.0)) in v.summary


def test_oom_kill_names_victim_and_points_at_g3_g6():
    e = list(kl.parse_lines([OOM_SUMMARY, OOM_KILLED]))
    v = verdict(data(e))
    assert v.status is Status.FAIL and "python3 (pid 4242, 100.0 GiB)" in v.summary
    assert "sparktui explain G3" in v.fix and "sparktui explain G6" in v.fix


def test_xid_169_fix_installs_the_open_module():
    v = verdict(data([ev(XID169)]))
    assert v.status is Status.FAIL and "Xid 169" in v.summary
    assert "nvidia-driver-580-open" in v.fix and "modinfo -F license nvidia" in v.fix


def test_xid_79_fix_has_its_action_and_unknown_xid_is_still_a_fail():
    v = verdict(data([ev(XID79)]))
    assert "Xid 79: reboot" in v.fix and "open" not in v.fix.split("Xid actions")[0]
    v2 = verdict(data([ev(XID79.replace(": 79,", ": 999,"))]))
    assert v2.status is Status.FAIL and "not in sparktui's table" in v2.summary


def test_fail_outranks_warn_and_the_summary_is_bounded():
    evs = [ev(AER_NONFATAL)] + [ev(XID13, t=1764870000.0 + i) for i in range(10)]
    v = verdict(data(evs, truncated=True))
    assert v.status is Status.FAIL and v.summary.endswith("; and 7 more (7 Xid)")
    assert len(v.details) == 11


@pytest.mark.parametrize("bad", [{"source": "kmsg"}, data([{"kind": "bogus"}]), data([], lines=-1),
                                 data([], lines="12"), {**data([]), "events": "x"}])
def test_malformed_readings_are_unknown(bad):
    assert verdict(bad).status is Status.UNKNOWN


def test_zero_lines_is_unknown_not_ok():
    v = verdict(data([], lines=0))
    assert v.status is Status.UNKNOWN and "0 lines" in v.summary


def test_failed_reading_is_unknown_with_its_reason():
    r = Reading("kernel_log", None, error="cannot read the kernel log (/dev/kmsg: Permission denied); " + kl.GRANT_HINT)
    v = g11.judge(readings_of(kernel_log=r), Config())
    assert v.status is Status.UNKNOWN and "Permission denied" in v.summary


def test_gotcha_object():
    G = g11.GOTCHA
    assert (G.id, G.title, G.probes, G.intrusive) == ("G11", "Killed without a traceback (kernel log)", ("kernel_log",), False)
    assert G.judge.__wrapped__ is g11.judge  # behind the shape check (gotchas/base.py)


def test_judge_never_imports_probes():
    src = open(g11.__file__).read()
    assert "sparktui.probes" not in src  # import-linter enforces it too


def test_an_oom_victim_the_dashboard_recognised_is_named_in_the_finding():
    from sparktui.gotchas import g11_kernel_log as g11m

    base = {"kind": "oom_kill", "pid": 5120, "name": "python3", "rss_kb": 80 * 1024 * 1024}
    assert g11m.describe({**base, "seen_as": {"kind": "server", "server": "vllm", "command": "vllm serve m"}}) \
        .endswith(": the vllm server G6 saw (vllm serve m)")
    assert g11m.describe({**base, "seen_as": {"kind": "other"}}) == g11m.describe(base)  # only what G6 judges
    assert g11m.describe({**base, "seen_as": "garbage"}) == g11m.describe(base)
