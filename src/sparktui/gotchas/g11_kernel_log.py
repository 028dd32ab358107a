"""G11: killed without a traceback. The kernel log says why: Xid, NV_ERR_NO_MEMORY, OOM kill, AER, lock-up.

A pure function of the ``kernel_log`` reading (probes/kernel_log.py). Sources: public field reports
(Xid format and Xid 169 on GB10, OOM killer lines, ConnectX-7 fatal AER before soft
lock-ups, access via adm/systemd-journal or kernel.dmesg_restrict=0) and "Unified memory"
(NV_ERR_NO_MEMORY can end in a hard reset); NVIDIA's Xid table (the meanings, ``XIDS``).
"""

from __future__ import annotations

import time
from typing import Any, Mapping

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.verdict import EvidenceList, Status, Verdict
from sparktui.gotchas._fix import block, comment
from sparktui.gotchas.base import Gotcha
from sparktui.core.xids import XIDS

ID = "G11"
KINDS = ("xid", "nv_no_memory", "oom_kill", "aer", "soft_lockup")
SEVERITIES = ("fatal", "non-fatal", "corrected", "unknown")  # an AER event's, as the probe writes them
MAX_DETAILS = 40  # events listed in the details ("... and N more"); display limit
MAX_SUMMARY_PARTS = 3  # incidents named in the one-line summary


OPEN_MODULE_LINES = (
    comment("the flavour loaded now: 'Dual MIT/GPL' is the open module, 'NVIDIA' the proprietary one"),
    "modinfo -F license nvidia; modinfo -F version nvidia",
    comment("install the -open flavour of the same branch (580 shown; use the branch printed above), then reboot"),
    "sudo apt install nvidia-driver-580-open",
    "sudo reboot",
)
GRANT_LINES = (
    "sudo usermod -aG adm,systemd-journal \"$USER\"   # then log out and in again",
    "sudo sysctl kernel.dmesg_restrict=0             # or this, until reboot",
)
FIX = ("The kernel log records what killed a process that left no traceback. Read it:\n\n"
       + block(["journalctl -k -b --no-pager | grep -E 'NVRM: Xid|NV_ERR_NO_MEMORY|Out of memory|oom-kill|AER|soft lockup'"])
       + "\nIf it cannot be read, grant access (sparktui itself does not need root):\n\n" + block(GRANT_LINES))


def _when(t: Any) -> str:
    if isinstance(t, (int, float)) and not isinstance(t, bool) and t > 0:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))
    return "time unknown"


def _gib(kb: Any) -> str:
    return f"{kb / 1048576:.1f} GiB" if isinstance(kb, int) and not isinstance(kb, bool) else "RSS unknown"


def describe(ev: Mapping[str, Any]) -> str:
    """One incident in words: what, who, which device."""
    kind = ev.get("kind")
    if kind == "xid":
        x = ev.get("xid")
        meaning = XIDS.get(x, ("not in sparktui's table: look it up in NVIDIA's Xid list", ""))[0] if isinstance(x, int) else "?"
        who = f", pid {ev['pid']} ({ev.get('name') or '?'})" if ev.get("pid") is not None else ""
        return f"Xid {x} on {ev.get('pci') or '?'}: {meaning}{who}"
    if kind == "nv_no_memory":
        return "NVIDIA driver out of memory (NV_ERR_NO_MEMORY)"
    if kind == "oom_kill":
        return f"OOM killer killed {ev.get('name') or '?'} (pid {ev.get('pid', '?')}, {_gib(ev.get('rss_kb'))}){_seen_as(ev)}"
    if kind == "aer":
        return f"PCIe AER {ev.get('severity', 'unknown')} error on {ev.get('device') or 'unknown'} ({ev.get('pci') or '?'})"
    if kind == "soft_lockup":
        who = f", task {ev.get('name')} pid {ev.get('pid')}" if ev.get("pid") is not None else ""
        return f"soft lockup: CPU#{ev.get('cpu', '?')} stuck for {ev.get('stuck_s', '?')} s{who}"
    return f"unrecognised event kind {kind!r}"


def _seen_as(ev: Mapping[str, Any]) -> str:
    """What the victim was in the last process scan before the kill (the dashboard adds it: the
    live scan after the kill no longer has the process): the training job, or a server G6 saw."""
    seen = ev.get("seen_as")
    if not isinstance(seen, Mapping) or seen.get("kind") not in ("training", "server"):
        return ""
    what = "the training job" if seen["kind"] == "training" else f"the {seen.get('server') or 'inference'} server"
    return f": {what} G6 saw" + (f" ({str(seen['command'])[:80]})" if seen.get("command") else "")


def is_fail(ev: Mapping[str, Any]) -> bool:
    if ev.get("kind") == "aer":
        return ev.get("severity") == "fatal"
    return ev.get("kind") in ("xid", "nv_no_memory", "oom_kill", "soft_lockup")


def is_warn(ev: Mapping[str, Any]) -> bool:
    return ev.get("kind") == "aer" and ev.get("severity") in ("non-fatal", "unknown")


def fix_for(events: list[Mapping[str, Any]]) -> str:
    """Actions for what happened, most specific first."""
    parts: list[str] = []
    xids = sorted({e["xid"] for e in events if e.get("kind") == "xid" and isinstance(e.get("xid"), int)})
    if 169 in xids:
        parts.append("Xid 169 on a GB10: the proprietary NVIDIA kernel module cannot drive this GPU "
                     "(RmInitAdapter failed). Use the -open module flavour:\n\n" + block(OPEN_MODULE_LINES))
    other = [x for x in xids if x != 169]
    if other:
        lines = [f"- Xid {x}: {XIDS[x][1]}" if x in XIDS else f"- Xid {x}: not in sparktui's table; see NVIDIA's Xid documentation"
                 for x in other]
        parts.append("Xid actions:\n\n" + "\n".join(lines) + "\n\nCollect a report for NVIDIA if it repeats:\n\n"
                     + block(["sudo nvidia-bug-report.sh"]))
    kinds = {e.get("kind") for e in events}
    if "oom_kill" in kinds or "nv_no_memory" in kinds:
        victims = [e for e in events if e.get("kind") == "oom_kill"]
        who = "; ".join(f"{v.get('name') or '?'} pid {v.get('pid')}" for v in victims[:5])
        parts.append(("The kernel's OOM killer ended " + who + ". " if victims else "")
                     + ("The NVIDIA driver itself ran out of memory (NV_ERR_NO_MEMORY), which can end in a hard "
                        "reset. " if "nv_no_memory" in kinds else "")
                     + "On a Spark GPU and CPU share one 128 GB pool: see G3 (what is really available) and G6 "
                       "(who else holds the pool):\n\n" + block(["sparktui explain G3", "sparktui explain G6"]))
    aer = [e for e in events if e.get("kind") == "aer" and e.get("severity") in ("fatal", "non-fatal", "unknown")]
    if aer:
        devs = sorted({str(e.get("device") or "unknown") for e in aer})
        parts.append(f"PCIe errors on {', '.join(devs)}: ConnectX-7 fatal AER errors have preceded soft lock-ups and "
                     "shutdowns on hot machines. Check cooling and airflow, the NIC firmware, and the lines around it:\n\n"
                     + block(["journalctl -k -b --no-pager | grep -E -A3 'AER|PCIe Bus Error'",
                              "sudo lspci -vvv -s " + str(aer[0].get("pci") or "<pci address>") + " | grep -A4 -i 'UESta\\|CESta'"]))
    if "soft_lockup" in kinds:
        parts.append("A CPU was stuck in the kernel for tens of seconds (soft lockup): look at what the kernel "
                     "logged just before it (AER, Xid) and at the temperatures (G4).\n\n"
                     + block(["journalctl -k -b --no-pager | grep -B20 'soft lockup'"]))
    return "\n".join(parts) if parts else FIX


def judge(r: Readings, cfg: Config) -> Verdict:
    """fail: any Xid, NV_ERR_NO_MEMORY, OOM kill, fatal AER or soft lockup this boot; warn: only
    non-fatal (or unclassified) AER; ok: the log was read and holds none (corrected AER errors are
    shown, not judged); unknown: the log could not be read (with how to grant access) or the
    reading is malformed."""
    rd = r.get_reading("kernel_log")
    ev = EvidenceList()
    d: Mapping[str, Any] | None = r.data("kernel_log")
    if d is None:
        why = rd.error or "no kernel_log reading"
        ev.add("kernel log", "kmsg / journalctl / dmesg", f"unavailable: {why}")
        return Verdict(ID, Status.UNKNOWN, f"cannot tell: the kernel log could not be read ({why})",
                       evidence=ev.tuple(), fix=FIX)
    events = d.get("events")
    lines = d.get("lines_read")
    if not isinstance(events, list) or not isinstance(lines, int) or isinstance(lines, bool) or lines < 0 \
            or not all(isinstance(e, Mapping) and e.get("kind") in KINDS
                       and (e.get("kind") != "aer" or e.get("severity") in SEVERITIES) for e in events):
        # an AER event of no known severity is neither judged nor passed over as none (it was an ok)
        ev.add("kernel log", str(d.get("source") or "?"), "malformed reading (events or lines_read missing or garbled)")
        return Verdict(ID, Status.UNKNOWN, "cannot tell: the kernel log reading is malformed", evidence=ev.tuple(), fix=FIX)
    source = str(d.get("source") or "?")
    ev.add("lines read since boot", source, lines)
    ev.add("boot id", source, d.get("boot_id"))
    if d.get("note"):
        ev.add("note", source, d.get("note"))
    counts = d.get("counts") if isinstance(d.get("counts"), Mapping) else None
    for k in KINDS:
        n = counts.get(k) if counts else sum(1 for e in events if e.get("kind") == k)
        ev.add(f"{k} events", source, n)
    if lines == 0:
        return Verdict(ID, Status.UNKNOWN, f"cannot tell: the kernel log ({source}) returned 0 lines for this boot",
                       evidence=ev.tuple(), fix=FIX)
    fails = [e for e in events if is_fail(e)]
    warns = [e for e in events if is_warn(e)]
    corrected = [e for e in events if e.get("kind") == "aer" and e.get("severity") == "corrected"]
    more = f" (first {len(events)} kept, more happened)" if d.get("truncated") else ""
    details = tuple(f"{_when(e.get('t'))}  {describe(e)}  | {str(e.get('text', ''))[:200]}" for e in events[:MAX_DETAILS])
    if len(events) > MAX_DETAILS:
        details += (f"... and {len(events) - MAX_DETAILS} more",)
    if fails or warns:
        worst = fails or warns
        named = "; ".join(f"{describe(e)} at {_when(e.get('t'))}" for e in worst[:MAX_SUMMARY_PARTS])
        rest = f"; and {len(worst) - MAX_SUMMARY_PARTS} more" if len(worst) > MAX_SUMMARY_PARTS else ""
        status = Status.FAIL if fails else Status.WARN
        lead = "this boot" if fails else "this boot, non-fatal PCIe errors only"
        return Verdict(ID, status, f"{lead}: {named}{rest}{more}", evidence=ev.tuple(), details=details,
                       fix=fix_for(worst))
    extra = f"; {len(corrected)} corrected PCIe AER error(s), handled by the hardware" if corrected else ""
    return Verdict(ID, Status.OK, f"kernel log read ({lines} lines since boot, {source}): none of Xid, NV_ERR_NO_MEMORY, "
                   f"OOM kill, fatal or non-fatal AER, soft lockup{extra}", evidence=ev.tuple(), details=details)


GOTCHA = Gotcha(
    id=ID,
    slug="kernel-log",
    title="Killed without a traceback (kernel log)",
    symptom="A training job or inference server dies with no Python traceback, the GPU disappears, "
            "or the machine freezes or resets.",
    cause="The kernel ended it or the hardware failed under it: the OOM killer (the unified pool ran "
          "out), the NVIDIA driver's own NV_ERR_NO_MEMORY, an Xid error (on GB10, Xid 169 means the "
          "proprietary module cannot drive the GPU: the -open flavour is required), PCIe AER errors "
          "(ConnectX-7 fatal AER has preceded soft lock-ups and shutdowns on hot machines), or a soft lockup. "
          "Only the kernel log says which.",
    check="Reads the kernel log since boot (/dev/kmsg, else `journalctl -k -b`, else `dmesg`) and looks "
          "for NVRM Xid lines, NV_ERR_NO_MEMORY, OOM-killer kills (victim pid, name, RSS), PCIe AER "
          "errors by severity and device, and soft lock-ups. Fail on any of them (fatal AER only), warn "
          "on non-fatal AER only; corrected AER errors are shown, not judged. Reading the log needs the "
          "adm or systemd-journal group, or kernel.dmesg_restrict=0: without it the verdict is unknown.",
    fix=FIX,
    intrusive=False,
    cadence_s=60.0,
    probes=("kernel_log",),
    judge=judge,
    references=("Kernel log field reports: Xid format, Xid 169 on GB10 (Start9Labs #3465, #3693), OOM killer, "
                "ConnectX-7 fatal AER (DeepSeek recipe #146; NVIDIA forum 368536), access needs adm/systemd-journal",
                "NVIDIA Xid Errors documentation (the meanings table)",
                "Linux Documentation/ABI/testing/dev-kmsg (record format)"),
)
