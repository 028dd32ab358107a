"""Issue 22, "Seen" 1, 2 and 6 (kernel log): each case as it was reproduced, judged through the public
paths (the probe's reader, G11's judge, the dashboard's live keeper, `sparktui check/preflight/report`).

Lines are the wordings real kernels print (tests/data/kernel_logs/ holds the real excerpts with their
sources; tests/gotchas/g11/test_real_logs.py runs them all); here they are put together into the situations
the issue describes: a corrected-AER storm before an Xid, a wrapped ring buffer, 6.x AER wording
with no `PCIe Bus Error` line, a GPU lost without an Xid, old and memcg OOM wordings, an Xid storm
beside one OOM kill, a small container kill, a GPU's AER, 4 KB lines of `AER`, a process `x,pid=1`."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from sparktui.cli.main import main
from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings, write_snapshot
from sparktui.core.verdict import Status
from sparktui.gotchas import g11_kernel_log as g11
from sparktui.probes import kernel_log as kl
from tests.gotchas.builders import AER_CORR, OOM_KILLED, OOM_SUMMARY, XID79

BOOT = 1_764_800_000.0
AER_CORR_6X = "pcieport 0009:00:00.0: AER: Correctable error message received from 0009:01:00.0"
BUS_CORR = "nvidia 0009:01:00.0: PCIe Bus Error: severity=Correctable, type=Physical Layer, (Receiver ID)"


def kmsg_lines(msgs: list[str], seq0: int = 0) -> str:
    return "".join(f"3,{seq0 + i},{(i + 1) * 1000},-;{m}\n" for i, m in enumerate(msgs))


def judge_data(data: dict) -> object:
    return g11.judge(Readings({"kernel_log": Reading("kernel_log", data)}), Config())


def read_kmsg_file(tmp_path, msgs: list[str], seq0: int = 0):
    f = tmp_path / "kmsg"
    f.write_text(kmsg_lines(msgs, seq0))
    col, note = kl.read_kmsg(str(f), boot=BOOT)
    return col.data("b00t", note)


BUS_CORR_5X = "nvidia 0009:01:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)"


def storm_then_xid_and_oom() -> list[str]:
    """600 corrected AER reports (header + device line each), then an Xid 79 and an OOM kill."""
    return [AER_CORR if i % 2 == 0 else BUS_CORR_5X for i in range(1200)] + [XID79, OOM_SUMMARY, OOM_KILLED]


# --------------------------------------------------------------------------- Seen 1: never the first N only
def test_600_corrected_aer_then_an_xid_79_and_an_oom_kill_fail(tmp_path):
    d = read_kmsg_file(tmp_path, storm_then_xid_and_oom())
    v = judge_data(d)
    assert v.status is Status.FAIL, v.summary
    assert "OOM killer killed python3 (pid 4242, 100.0 GiB)" in v.summary and "Xid 79 on 000f:01:00" in v.summary
    assert "none of Xid" not in v.summary
    assert d["severities"]["corrected"] == 600 and d["counts"]["xid"] == 1 and d["counts"]["oom_kill"] == 1
    assert d["not_kept"] == 600 - 10 and any(e.what == "events not kept" for e in v.evidence)
    assert "(590 of 602 events counted but not kept)" in v.summary


def test_preflight_does_not_pass_a_dead_gpu_hidden_behind_corrected_aer(tmp_path, capsys):
    d = read_kmsg_file(tmp_path, storm_then_xid_and_oom())
    snap = tmp_path / "s.json"
    write_snapshot(snap, Readings({"kernel_log": Reading("kernel_log", d, source="kmsg")}), {"hostname": "spark"}, "0.1.0")
    assert main(["preflight", "G11", "--snapshot", str(snap)]) != 0


def test_counts_alone_decide_when_the_failing_events_were_not_kept():
    """A reading (an older recording) whose kept events are corrected AER only, but whose counts say an
    Xid and an OOM kill happened: fail, never 'none of Xid'."""
    corr = {"kind": "aer", "t": BOOT, "text": AER_CORR_6X, "severity": "corrected", "pci": "0009:01:00.0",
            "device": "GPU (nvidia)"}
    d = {"source": "kmsg", "boot_id": "b", "lines_read": 602, "events": [dict(corr) for _ in range(500)],
         "truncated": True, "counts": {"xid": 1, "nv_no_memory": 0, "oom_kill": 1, "aer": 600, "soft_lockup": 0},
         "note": None}
    v = judge_data(d)
    assert v.status is Status.FAIL and "1 Xid" in v.summary and "1 OOM kill" in v.summary


def test_live_500_corrected_aer_after_an_xid_keep_g11_failing():
    from sparktui.live.kernel import KernelWatch

    watch = KernelWatch(enabled=False)
    watch.saw_boot_reading(Reading("kernel_log", {"source": "kmsg", "boot_id": "b", "lines_read": 900, "events": [],
                                                  "truncated": False, "counts": {k: 0 for k in g11.KINDS},
                                                  "note": None}, started_at=time.time() - 60))
    watch.add(kl.parse_line(XID79))
    for _ in range(500):  # the wording every kernel since 4.x understands as corrected
        watch.add(kl.parse_line(BUS_CORR_5X))
    v = g11.judge(Readings({"kernel_log": watch.reading()}), Config())
    assert v.status is Status.FAIL and "Xid 79" in v.summary


def test_an_xid_storm_does_not_push_out_the_line_naming_the_process(tmp_path):
    xid13 = "NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception: ESR 0x546fb0=0x11f000e"
    d = read_kmsg_file(tmp_path, [xid13] * 700 + [OOM_SUMMARY, OOM_KILLED])
    v = judge_data(d)
    assert v.status is Status.FAIL and v.summary.split(": ", 1)[1].startswith("OOM killer killed python3 (pid 4242")
    assert v.summary.endswith("; and 698 more (698 Xid) (640 of 701 events counted but not kept)")


def test_a_storm_of_xids_naming_a_process_still_leads_with_the_oom_kill(tmp_path):
    xid43 = "NVRM: Xid (PCI:0000:38:00): 43, pid=1797828, name=pt_main_thread, Ch 00000008"
    d = read_kmsg_file(tmp_path, [xid43] * 300 + [OOM_SUMMARY, OOM_KILLED])
    v = judge_data(d)
    assert v.summary.split(": ", 1)[1].startswith("OOM killer killed python3 (pid 4242")


# --------------------------------------------------------------------------- Seen 1: since SEQ, not since boot
def test_a_wrapped_ring_buffer_says_since_seq_not_since_boot(tmp_path):
    d = read_kmsg_file(tmp_path, ["usb 1-1: new high-speed USB device number 2 using xhci_hcd"] * 2000, seq0=250_000)
    v = judge_data(d)
    assert v.status is Status.OK
    assert "2000 lines since kmsg record 250000" in v.summary and "since boot" not in v.summary


def test_lost_records_say_so(tmp_path):
    f = tmp_path / "kmsg"
    f.write_text(kmsg_lines(["a"] * 10) + kmsg_lines(["b"] * 10, seq0=5000))
    col, note = kl.read_kmsg(str(f), boot=BOOT)
    v = judge_data(col.data("b", note))
    assert "4990 record(s) lost while reading" in v.summary and "since boot," not in v.summary.split("(")[1][:20]


# --------------------------------------------------------------------------- Seen 2: real wordings
def parsed(lines: list[str]) -> list[dict]:
    return list(kl.parse_lines(lines))


def test_6x_fatal_aer_without_a_pcie_bus_error_line_fails():
    evs = parsed(["pcieport 0000:00:01.0: AER: Uncorrectable (Fatal) error message received from 0000:01:00.0",
                  "mlx5_core 0000:01:00.0: mlx5_pci_err_detected Device state = 1 health sensors: 1 pci_status: 0"])
    assert [(e["kind"], e["severity"], e["pci"]) for e in evs] == [("aer", "fatal", "0000:01:00.0")]
    d = {"source": "kmsg", "boot_id": "b", "lines_read": 2, "events": evs, "truncated": False, "note": None}
    assert judge_data(d).status is Status.FAIL


def test_6x_correctable_wording_is_counted_as_corrected():
    evs = parsed([AER_CORR_6X, BUS_CORR, "nvidia 0009:01:00.0:   device [10de:2184] error status/mask=00001000/0000a000"])
    assert [(e["kind"], e["severity"], e["device"]) for e in evs] == [("aer", "corrected", "GPU (nvidia)")]


@pytest.mark.parametrize("lines,pci", [
    (["NVRM: The NVIDIA GPU 0000:b3:00.0", "NVRM: (PCI ID: 10de:26b5) installed in this system has",
      "NVRM: fallen off the bus and is not responding to commands."], "0000:b3:00.0"),
    (["NVRM: GPU at 0000:01:00.0 has fallen off the bus."], "0000:01:00.0"),
    (["NVRM: GPU 0000:09:00.0: RmInitAdapter failed! (0x22:0x56:894)",
      "NVRM: GPU 0000:09:00.0: rm_init_adapter failed, device minor number 0"], "0000:09:00.0"),
])
def test_a_gpu_lost_without_an_xid_fails(lines, pci):
    evs = parsed(lines)
    assert [(e["kind"], e["pci"]) for e in evs] == [("gpu_lost", pci)]
    v = judge_data({"source": "dmesg", "boot_id": "b", "lines_read": len(lines), "events": evs, "truncated": False,
                    "note": None})
    assert v.status is Status.FAIL and f"GPU {pci} lost" in v.summary


def test_the_multi_line_nvrm_message_of_a_journal_record_or_kmsg_record(tmp_path):
    msg = ("NVRM: The NVIDIA GPU 0000:b3:00.0\nNVRM: (PCI ID: 10de:26b5) installed in this system has\n"
           "NVRM: fallen off the bus and is not responding to commands.")
    j = json.dumps({"MESSAGE": msg, "__REALTIME_TIMESTAMP": "1764800000000000", "_TRANSPORT": "kernel"})
    k = "2,812,1843308145,-;" + msg.replace("\n", "\\x0a")
    for line in (j, k):
        evs = parsed([line])
        assert [(e["kind"], e["pci"]) for e in evs] == [("gpu_lost", "0000:b3:00.0")]


@pytest.mark.parametrize("lines,victim,cgroup", [
    (["Out of memory: Kill process 27438 (R) score 31 or sacrifice child",
      "Killed process 27438 (R) total-vm:38349780kB, anon-rss:1041924kB, file-rss:4kB, shmem-rss:0kB"], "R", False),
    (["Out of memory: Kill process 21578 (redis-server) score 555 or sacrifice child",
      "Killed process 21578, UID 503, (redis-server) total-vm:9100804kB, anon-rss:9066596kB, file-rss:64kB"],
     "redis-server", False),
    (["Memory cgroup out of memory: Kill process 42453 (memcg_test_1) score 0 or sacrifice child",
      "Killed process 42453 (memcg_test_1), UID 0, total-vm:7296kB, anon-rss:96kB, file-rss:164kB, shmem-rss:0kB"],
     "memcg_test_1", True),
    (["oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=docker-1.scope,mems_allowed=0,"
      "oom_memcg=/system.slice/docker-1.scope,task_memcg=/system.slice/docker-1.scope,task=vllm,pid=777,uid=0",
      "Memory cgroup out of memory: Killed process 777 (vllm) total-vm:9000000kB, anon-rss:8000000kB, file-rss:0kB, "
      "shmem-rss:0kB, UID:0 pgtables:16000kB oom_score_adj:0"], "vllm", True),
])
def test_older_and_memcg_oom_wordings_are_one_kill_each(lines, victim, cgroup):
    evs = parsed(lines)
    assert [(e["kind"], e["name"], e.get("cgroup")) for e in evs] == [("oom_kill", victim, cgroup)]


def oom_ev(name: str, pid: int, rss_kb: int, cgroup: bool, memcg: str | None = None) -> dict:
    return {"kind": "oom_kill", "t": BOOT, "text": f"Killed process {pid} ({name})", "pid": pid, "name": name,
            "rss_kb": rss_kb, "anon_rss_kb": rss_kb, "cgroup": cgroup, "memcg": memcg}


def test_small_cgroup_kills_read_in_mib_or_kib_not_0_0_gib():
    assert g11.describe(oom_ev("mount", 12, 164, True)).startswith("OOM killer killed mount (pid 12, 164 KiB)")
    assert "(pid 13, 15.0 MiB)" in g11.describe(oom_ev("python3", 13, 15 * 1024, True))
    assert "0.0 GiB" not in g11.describe(oom_ev("python3", 13, 15 * 1024, True))


def test_a_containers_limit_kill_gets_the_containers_advice_not_the_pools():
    d = {"source": "kmsg", "boot_id": "b", "lines_read": 9, "truncated": False, "note": None,
         "events": [oom_ev("vllm", 777, 8_000_000, True, "/system.slice/docker-1.scope")]}
    v = judge_data(d)
    assert v.status is Status.FAIL and "memory cgroup's limit" in v.summary
    assert "--memory" in v.fix and "cat /sys/fs/cgroup/system.slice/docker-1.scope/memory.max" in v.fix
    assert "sparktui explain G3" not in v.fix and "128 GB pool" not in v.fix


def test_the_aer_fix_names_the_device_at_that_bdf_not_always_connectx7():
    evs = parsed(["pcieport 0000:00:03.0: AER: Uncorrected (Fatal) error received: 0000:03:00.0",
                  "nvidia 0000:03:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, "
                  "(Requester ID)"])
    v = judge_data({"source": "kmsg", "boot_id": "b", "lines_read": 2, "events": evs, "truncated": False, "note": None})
    assert v.status is Status.FAIL and "PCIe errors on GPU (nvidia) at 0000:03:00.0" in v.fix
    assert "ConnectX-7" not in v.fix
    nvme = parsed(["pcieport 0000:00:1d.0: AER: Uncorrected (Non-Fatal) error received: 0000:03:00.0",
                   "nvme 0000:03:00.0: AER: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer"])
    w = judge_data({"source": "kmsg", "boot_id": "b", "lines_read": 2, "events": nvme, "truncated": False, "note": None})
    assert w.status is Status.WARN and "PCIe errors on nvme at 0000:03:00.0" in w.fix and "ConnectX-7" not in w.fix


# --------------------------------------------------------------------------- Seen 6: linear, not fooled
def test_4kb_lines_of_aer_without_blanks_cost_linear_time():
    lines = ["AER" * 1365 + "A"] * 40 + ["pcieport " + "AER:" * 1020] * 40 + ["x " + "error received" * 290] * 40
    t0 = time.perf_counter()
    assert parsed(lines) == []
    took = time.perf_counter() - t0
    assert took < 0.5, f"{len(lines)} hostile 4 KB lines took {took:.2f} s"


def test_a_process_named_x_pid_1_is_one_oom_kill_of_the_right_pid():
    summary = ("oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,"
               "task_memcg=/user.slice,task=x,pid=1,pid=4242,uid=1000")
    killed = ("Out of memory: Killed process 4242 (x,pid=1) total-vm:1000kB, anon-rss:900kB, file-rss:0kB, "
              "shmem-rss:0kB, UID:1000 pgtables:10kB oom_score_adj:0")
    evs = parsed([summary, killed])
    assert [(e["kind"], e["pid"], e["name"]) for e in evs] == [("oom_kill", 4242, "x,pid=1")]


# --------------------------------------------------------------------------- a saved log: check / report --kernel-log
FORMATS = {
    "dmesg": "[ 1843.308145] " + XID79 + "\n",
    "dmesg -T": "[Fri Aug 30 11:43:09 2024] " + XID79 + "\n",
    "journal JSON": json.dumps({"MESSAGE": XID79, "__REALTIME_TIMESTAMP": "1725018189000000", "_TRANSPORT": "kernel",
                                "SYSLOG_IDENTIFIER": "kernel", "PRIORITY": "3"}) + "\n",
    "kmsg": "3,812,1843308145,-;" + XID79 + "\n",
}


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_check_g11_judges_a_saved_log_in_each_format(tmp_path, capsys, fmt):
    f = tmp_path / "kernel.log"
    f.write_text(FORMATS[fmt])
    assert main(["check", "G11", "--kernel-log", str(f), "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)
    g = [c for c in doc["checks"] if c["id"] == "G11"][0] if "checks" in doc else doc["verdicts"][0]
    assert g["status"] == "fail" and "Xid 79" in g["summary"]


@pytest.mark.parametrize("text", ["just some notes\nno kernel here\n", '{"readings": {}}\n', ""])
def test_a_file_that_is_no_kernel_log_is_unknown_with_the_reason(tmp_path, capsys, text):
    f = tmp_path / "notes.txt"
    f.write_text(text)
    assert main(["check", "G11", "--kernel-log", str(f)]) == 3
    out = " ".join(capsys.readouterr().out.split())  # the table wraps the finding: read it as words
    assert "unknown" in out and ("not a kernel log" in out or "is empty" in out)


def test_report_takes_a_saved_kernel_log(tmp_path, capsys):
    f = tmp_path / "kernel.log"
    f.write_text(FORMATS["dmesg"])
    snap = tmp_path / "s.json"
    write_snapshot(snap, Readings({}), {"hostname": "spark"}, "0.1.0")
    assert main(["report", "G11", "--snapshot", str(snap), "--kernel-log", str(f)]) == 0
    out = capsys.readouterr().out
    assert "Xid 79" in out


def test_a_fifo_or_folder_given_as_the_saved_log_is_refused_not_waited_on(tmp_path, capsys):
    import os

    fifo = tmp_path / "kmsg.fifo"
    os.mkfifo(fifo)
    for path in (fifo, tmp_path):
        r = kl.read_file(str(path))
        assert r.data is None and ("not a regular file" in r.error or "is a folder" in r.error)


def test_a_giant_line_in_a_saved_log_is_read_in_bounded_pieces(tmp_path):
    f = tmp_path / "big.log"
    f.write_text("[ 1.000000] " + "A" * (3 << 20) + "\n[ 2.000000] " + XID79 + "\n")
    r = kl.read_file(str(f))
    assert r.data is not None and r.data["lines_read"] == 2 and r.data["counts"]["xid"] == 1


def test_records_lost_while_reading_the_device_epipe_say_since_seq(monkeypatch):
    """/dev/kmsg answers EPIPE when records were overwritten under the reader; it goes on from the
    next one, whose sequence number says how many were lost (a character device stands in)."""
    import errno
    import os

    real_read, real_open = os.read, os.open
    script = [f"6,{i},{i * 1000},-;usb 1-1: noise {i}\n".encode() for i in range(10)] + ["EPIPE"] \
        + [f"6,{i},{i * 1000},-;usb 1-1: noise {i}\n".encode() for i in range(500, 510)] + ["EAGAIN"]
    fds: list[int] = []

    def fake_open(path, flags, *a):
        fd = real_open("/dev/null", flags, *a)
        fds.append(fd)
        return fd

    def fake_read(fd, n):
        if fd not in fds:
            return real_read(fd, n)
        step = script.pop(0)
        if step == "EPIPE":
            raise OSError(errno.EPIPE, "Broken pipe")
        if step == "EAGAIN":
            raise BlockingIOError(errno.EAGAIN, "again")
        return step

    monkeypatch.setattr(kl.os, "open", fake_open)
    monkeypatch.setattr(kl.os, "read", fake_read)
    col, note = kl.read_kmsg("/dev/kmsg", boot=BOOT)
    monkeypatch.undo()
    d = col.data("b", note)
    assert d["lost_records"] == 490 and d["first_seq"] == 0 and "overwritten while reading" in note
    v = judge_data(d)
    assert v.status is Status.OK and "20 lines since kmsg record 0" in v.summary
    assert "490 record(s) lost while reading" in v.summary


def test_a_saved_log_without_a_boot_id_says_so_not_null(tmp_path):
    """`check G11 --kernel-log FILE` showed 'boot id: null': a saved dmesg does not carry one."""
    log = tmp_path / "dmesg.txt"
    log.write_text("[ 1843.308145] NVRM: Xid (PCI:0000:01:00): 79, pid=1234, name=python, GPU has fallen off the bus.\n")
    out = subprocess.run([sys.executable, "-m", "sparktui", "check", "G11", "--kernel-log", str(log), "-v"],
                         capture_output=True, text=True, timeout=60).stdout
    line = next(ln for ln in out.splitlines() if "boot id" in ln)
    assert "null" not in line and "None" not in line and "not known" in line, line
