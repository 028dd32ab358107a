"""G11: killed without a traceback. The kernel log says why: Xid, NV_ERR_NO_MEMORY, OOM kill, AER, lock-up.

A pure function of the ``kernel_log`` reading (probes/kernel_log.py). Sources: public field reports
(Xid format and Xid 169 on GB10, OOM killer lines, ConnectX-7 fatal AER before soft
lock-ups, access via adm/systemd-journal or kernel.dmesg_restrict=0) and "Unified memory"
(NV_ERR_NO_MEMORY can end in a hard reset); NVIDIA's Xid table (the meanings, ``XIDS``).
"""

from __future__ import annotations

from typing import Any, Mapping

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.shapes import KERNEL_LOG
from sparktui.core.units import KIB, is_number, local_text, size_text
from sparktui.core.verdict import EvidenceList, Status, Verdict
from sparktui.gotchas._fix import block, comment
from sparktui.gotchas.base import Feed, Gotcha
from sparktui.core.xids import AER_SEVERITIES, EVENT_KINDS, XIDS, is_failing, is_warning

ID = "G11"
KINDS = EVENT_KINDS  # xid, nv_no_memory, oom_kill, aer, soft_lockup, gpu_lost
SEVERITIES = AER_SEVERITIES  # an AER event's, as the probe writes them: fatal, non-fatal, corrected, unknown
MAX_DETAILS = 40  # events listed in the details ("... and N more"); display limit
MAX_SUMMARY_PARTS = 3  # incidents named in the one-line summary
WRAPPED_AFTER_S = 5.0  # a dmesg whose first line is later than this after boot lost its beginning
KIND_WORDS = {"xid": "Xid", "nv_no_memory": "NV_ERR_NO_MEMORY", "oom_kill": "OOM kill", "soft_lockup": "soft lockup",
              "gpu_lost": "GPU lost", "aer": "PCIe AER"}


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


def _when(t: Any, boot_s: Any = None, stamp: Any = None) -> str:
    clock = local_text(t) if is_number(t) and t > 0 else None  # None too for a time no clock has (1e308)
    if clock is not None:
        return clock
    if isinstance(stamp, str) and stamp:  # a syslog stamp as printed (it has no year)
        return stamp[:32]
    if is_number(boot_s) and boot_s >= 0:
        return f"{boot_s:.1f} s after boot"
    return "time unknown"


def _at(e: Mapping[str, Any]) -> str:
    return _when(e.get("t"), e.get("t_boot"), e.get("t_text"))


def _size(kb: Any) -> str:
    """A size in kB as a person reads it: GiB from 1 GiB, MiB from 1 MiB, else KiB (never 0.0 GiB)."""
    if not isinstance(kb, int) or isinstance(kb, bool):
        return "RSS unknown"
    return size_text(kb * KIB, missing="RSS unknown")  # a negative or 400-digit count too


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
        where = " at its memory cgroup's limit" + (f" ({str(ev['memcg'])[:80]})" if ev.get("memcg") else "") \
            if ev.get("cgroup") is True else ""
        return (f"OOM killer killed {ev.get('name') or '?'} (pid {ev.get('pid', '?')}, {_size(ev.get('rss_kb'))})"
                f"{where}{_seen_as(ev)}")
    if kind == "aer":
        return f"PCIe AER {ev.get('severity', 'unknown')} error on {ev.get('device') or 'unknown'} ({ev.get('pci') or '?'})"
    if kind == "soft_lockup":
        who = f", task {ev.get('name')} pid {ev.get('pid')}" if ev.get("pid") is not None else ""
        cpu = ev.get("cpu") if ev.get("cpu") is not None else "?"
        if ev.get("hard") is True:
            return f"hard lockup: CPU#{cpu}{who}"
        return f"soft lockup: CPU#{cpu} stuck for {ev.get('stuck_s', '?')} s{who}"
    if kind == "gpu_lost":
        return f"GPU {ev.get('pci') or '?'} lost: {ev.get('reason') or 'the NVIDIA driver cannot reach it'}"
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
    return is_failing(ev)


def is_warn(ev: Mapping[str, Any]) -> bool:
    return is_warning(ev)


def names_a_process(ev: Mapping[str, Any]) -> bool:
    """An incident that says which process it hit (an OOM victim, an Xid's or a lock-up's task)."""
    return ev.get("kind") == "oom_kill" or (ev.get("kind") in ("xid", "soft_lockup")
                                            and (ev.get("pid") is not None or bool(ev.get("name"))))


def _container_advice(victims: list[Mapping[str, Any]]) -> str:
    who = "; ".join(f"{v.get('name') or '?'} pid {v.get('pid')}" for v in victims[:5])
    memcgs = sorted({str(v.get("memcg")) for v in victims if isinstance(v.get("memcg"), str) and v.get("memcg")})[:3]
    lines = [comment("what each container holds against its limit now")]
    lines.append("docker stats --no-stream")
    for cg in memcgs:
        lines += [comment(f"the limit of {cg[:120]} (cgroup v2; v1: memory.limit_in_bytes)"),
                  f"cat /sys/fs/cgroup{cg if cg.startswith('/') else '/' + cg}/memory.max"]
    return ("The kernel's OOM killer ended " + who + " at a memory cgroup's limit (a container's or a service's "
            "memory limit), not because the unified pool ran out. Raise the container's memory limit (`docker run "
            "--memory=...`, `docker update --memory=... --memory-swap=...`, Kubernetes `resources.limits.memory`, "
            "systemd `MemoryMax=`), or make the job fit under it:\n\n" + block(lines))


def _aer_advice(aer: list[Mapping[str, Any]]) -> str:
    named: dict[str, None] = {}
    for e in aer:
        dev = str(e.get("device") or "unknown")
        named.setdefault(f"{dev} at {e['pci']}" if e.get("pci") else dev, None)
    devs = list(named)
    drivers = {str(e.get("driver") or "") for e in aer} | {str(e.get("device") or "") for e in aer}
    why: list[str] = []
    if any("mlx5" in d or "ConnectX" in d for d in drivers):
        why.append("ConnectX-7 fatal AER errors have preceded soft lock-ups and shutdowns on hot machines: check "
                   "cooling and airflow and the NIC firmware")
    if any(d == "nvidia" or "GPU" in d for d in drivers):
        why.append("a GPU's PCIe errors come before it falls off the bus (Xid 79): check its seating, power and "
                   "temperature")
    if not why:
        why.append("check that device's seating, firmware and cooling")
    return (f"PCIe errors on {', '.join(devs[:6])}{' and more' if len(devs) > 6 else ''}: {'; '.join(why)}. "
            "Read the lines around them and the device's error status:\n\n"
            + block(["journalctl -k -b --no-pager | grep -E -A3 'AER|PCIe Bus Error'",
                     "sudo lspci -vvv -s " + str(aer[0].get("pci") or "<pci address>") + " | grep -A4 -i 'UESta\\|CESta'"]))


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
    lost = [e for e in events if e.get("kind") == "gpu_lost"]
    if lost:
        gpus = sorted({str(e.get("pci") or "?") for e in lost})
        reasons = sorted({str(e.get("reason") or "lost") for e in lost})
        parts.append(f"The NVIDIA driver lost the GPU {', '.join(gpus[:4])} ({'; '.join(reasons[:4])}): nothing can use it "
                     "until it is back. Reboot; if it repeats, check its power, seating and temperature and the AER lines "
                     "before it. RmInitAdapter failing on a GB10 is the proprietary module (use -open, see Xid 169):\n\n"
                     + block(["journalctl -k -b --no-pager | grep -E -B5 'fallen off the bus|RmInitAdapter|AER'",
                              "modinfo -F license nvidia", "sudo nvidia-bug-report.sh"]))
    kinds = {e.get("kind") for e in events}
    victims = [e for e in events if e.get("kind") == "oom_kill"]
    in_cgroup = [v for v in victims if v.get("cgroup") is True]
    in_pool = [v for v in victims if v.get("cgroup") is not True]
    if in_cgroup:
        parts.append(_container_advice(in_cgroup))
    if in_pool or "nv_no_memory" in kinds:
        who = "; ".join(f"{v.get('name') or '?'} pid {v.get('pid')}" for v in in_pool[:5])
        parts.append(("The kernel's OOM killer ended " + who + ". " if in_pool else "")
                     + ("The NVIDIA driver itself ran out of memory (NV_ERR_NO_MEMORY), which can end in a hard "
                        "reset. " if "nv_no_memory" in kinds else "")
                     + "On a Spark GPU and CPU share one 128 GB pool: see G3 (what is really available) and G6 "
                       "(who else holds the pool):\n\n" + block(["sparktui explain G3", "sparktui explain G6"]))
    aer = [e for e in events if e.get("kind") == "aer" and e.get("severity") in ("fatal", "non-fatal", "unknown")]
    if aer:
        parts.append(_aer_advice(aer))
    if "soft_lockup" in kinds:
        parts.append("A CPU was stuck in the kernel for tens of seconds (soft lockup): look at what the kernel "
                     "logged just before it (AER, Xid) and at the temperatures (G4).\n\n"
                     + block(["journalctl -k -b --no-pager | grep -B20 'soft lockup'"]))
    return "\n".join(parts) if parts else FIX


def _count(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _at_least_kept(raw: Any, kept: dict[str, int]) -> tuple[dict[str, int], bool]:
    """The reading's count for each key of ``kept`` (never fewer than the events kept), and whether
    one of them is not a whole number >= 0."""
    out, garbled = dict(kept), False
    if isinstance(raw, Mapping):
        for k in kept:
            if k in raw:
                n = _count(raw[k])
                if n is None:
                    garbled = True
                else:
                    out[k] = max(n, kept[k])
    return out, garbled


def _counts_of(d: Mapping[str, Any], events: list[Mapping[str, Any]]) -> tuple[dict[str, int], dict[str, int], bool]:
    """(events per kind, AER events per severity, whether the counts are garbled) over everything the
    probe read, kept or not. Counts the reading lacks (an older recording) come from the kept
    events; AER events counted but neither kept nor classified are of unknown severity."""
    kept_kind = {k: sum(1 for e in events if e.get("kind") == k) for k in KINDS}
    kept_sev = {s: sum(1 for e in events if e.get("kind") == "aer" and e.get("severity") == s) for s in SEVERITIES}
    counts, garbled_kinds = _at_least_kept(d.get("counts"), kept_kind)
    raw_sev = d.get("severities")
    sev, garbled_sev = _at_least_kept(raw_sev, kept_sev)
    garbled = garbled_kinds or garbled_sev or (raw_sev is not None and not isinstance(raw_sev, Mapping))
    unclassified = counts["aer"] - sum(sev.values())
    if unclassified > 0:
        sev["unknown"] += unclassified
    return counts, sev, garbled


def _span(d: Mapping[str, Any], source: str, lines: int) -> tuple[str, str | None]:
    """("N lines since boot" or "since SEQ ..." / "since T s after boot" / "of a saved log", why not since boot)."""
    first_seq, lost = _count(d.get("first_seq")), _count(d.get("lost_records")) or 0
    first_s = d.get("first_boot_s")
    why = []
    if first_seq:
        why.append(f"the ring buffer wrapped: the {first_seq} records before it were overwritten")
    if lost:
        why.append(f"{lost} record(s) lost while reading")
    if first_seq is not None and why:
        return f"{lines} lines since kmsg record {first_seq}", "; ".join(why)
    if lost:
        return f"{lines} lines since boot, {lost} record(s) lost while reading", "; ".join(why)
    if isinstance(first_s, (int, float)) and not isinstance(first_s, bool) and first_s > WRAPPED_AFTER_S \
            and source in ("dmesg", "kmsg"):
        return (f"{lines} lines since {first_s:.1f} s after boot",
                "the log's first line is that long after boot: earlier lines were overwritten")
    if source == "file":
        return f"{lines} lines of a saved log", None
    return f"{lines} lines since boot", None


def _lead_order(e: Mapping[str, Any]) -> int:
    """The order incidents are named in: OOM kills (they say which process died), then those naming a
    process (an Xid's or a lock-up's task), then the rest; log order within each."""
    return 0 if e.get("kind") == "oom_kill" else 1 if names_a_process(e) else 2


def _summary_parts(worst: list[Mapping[str, Any]]) -> list[str]:
    """The incidents the summary names: an Xid storm must not push out the one line saying which
    process the OOM killer ended."""
    ordered = sorted(worst, key=_lead_order)
    return [f"{describe(e)} at {_at(e)}" for e in ordered[:MAX_SUMMARY_PARTS]]


def _not_named(counts: Mapping[str, int], sev: Mapping[str, int], named: list[Mapping[str, Any]], fail: bool) -> str:
    """', and N more: 3 Xid, 1 OOM kill' for the failing (or warning) events the summary did not name."""
    rest: list[str] = []
    for k in KINDS:
        if k == "aer":
            for s in (("fatal",) if fail else ("non-fatal", "unknown")):
                n = sev.get(s, 0) - sum(1 for e in named if e.get("kind") == "aer" and e.get("severity") == s)
                if n > 0:
                    rest.append(f"{n} {s} AER")
        elif fail:
            n = counts.get(k, 0) - sum(1 for e in named if e.get("kind") == k)
            if n > 0:
                rest.append(f"{n} {KIND_WORDS[k]}")
    return f"; and {sum(int(x.split()[0]) for x in rest)} more ({', '.join(rest)})" if rest else ""


def judge(r: Readings, cfg: Config) -> Verdict:
    """fail: any Xid, NV_ERR_NO_MEMORY, OOM kill, GPU lost, fatal AER or soft lockup this boot, by the
    counts over everything read (not only the events kept); warn: only non-fatal (or unclassified)
    AER; ok: the log was read and holds none (corrected AER errors are shown, not judged); unknown:
    the log could not be read (with how to grant access) or the reading is malformed."""
    rd = r.get_reading(KERNEL_LOG)
    ev = EvidenceList()
    d: Mapping[str, Any] | None = r.data(KERNEL_LOG)
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
    counts, sev, garbled = _counts_of(d, events)
    if garbled:
        ev.add("kernel log", source, "malformed reading (a count per kind or severity is not a whole number >= 0)")
        return Verdict(ID, Status.UNKNOWN, "cannot tell: the kernel log reading is malformed", evidence=ev.tuple(), fix=FIX)
    span, not_since_boot = _span(d, source, lines)
    ev.add("lines read since boot" if not_since_boot is None and source != "file" else "lines read", source, lines)
    if not_since_boot:
        ev.add("not since boot", source, f"{span}: {not_since_boot}")
    ev.add("boot id", source, d.get("boot_id") or "not known (a saved log does not say; /proc gave none)")
    if d.get("note"):
        ev.add("note", source, d.get("note"))
    for k in KINDS:
        ev.add(f"{k} events", source, counts[k])
    if counts["aer"]:
        ev.add("aer events by severity", source, ", ".join(f"{s} {sev[s]}" for s in SEVERITIES))
    kept_n = len(events)
    not_kept = sum(counts.values()) - kept_n
    if not_kept > 0:
        ev.add("events not kept", source, f"{not_kept} counted but not kept in the reading ({kept_n} kept)")
    if lines == 0:
        return Verdict(ID, Status.UNKNOWN, f"cannot tell: the kernel log ({source}) returned 0 lines for this boot",
                       evidence=ev.tuple(), fix=FIX)
    fail_n = sum(counts[k] for k in KINDS if k != "aer") + sev["fatal"]
    warn_n = sev["non-fatal"] + sev["unknown"]
    fails = [e for e in events if is_fail(e)]
    warns = [e for e in events if is_warn(e)]
    corrected = sev["corrected"]
    more = f"; {not_kept} more event(s) happened, counted but not kept" if not_kept > 0 else ""
    lead_span = f" ({span}: {not_since_boot})" if not_since_boot else ""
    details = tuple(f"{_at(e)}  {describe(e)}  | {str(e.get('text', ''))[:200]}" for e in events[:MAX_DETAILS])
    if len(events) > MAX_DETAILS:
        details += (f"... and {len(events) - MAX_DETAILS} more",)
    if fail_n or warn_n:
        worst = fails if fail_n else warns
        named_events = sorted(worst, key=_lead_order)[:MAX_SUMMARY_PARTS]
        named = "; ".join(_summary_parts(worst))
        rest = _not_named(counts, sev, named_events, bool(fail_n))
        status = Status.FAIL if fail_n else Status.WARN
        lead = "this boot" if fail_n else "this boot, non-fatal PCIe errors only"
        if source == "file":
            lead = "in the saved log" if fail_n else "in the saved log, non-fatal PCIe errors only"
        if not named:
            named = "the events were counted but not kept in the reading"
        kept_note = f" ({not_kept} of {kept_n + not_kept} events counted but not kept)" if not_kept > 0 else ""
        return Verdict(ID, status, f"{lead}: {named}{rest}{kept_note}{lead_span}", evidence=ev.tuple(), details=details,
                       fix=fix_for(worst))
    extra = f"; {corrected} corrected PCIe AER error(s), handled by the hardware" if corrected else ""
    return Verdict(ID, Status.OK, f"kernel log read ({span}, {source}): none of Xid, NV_ERR_NO_MEMORY, "
                   f"OOM kill, GPU lost, fatal or non-fatal AER, soft lockup{extra}{more}"
                   + (f" ({not_since_boot})" if not_since_boot else ""), evidence=ev.tuple(), details=details)


GOTCHA = Gotcha(
    id=ID,
    slug="kernel-log",
    title="Killed without a traceback (kernel log)",
    symptom="A training job or inference server dies with no Python traceback, the GPU disappears, "
            "or the machine freezes or resets.",
    cause="The kernel ended it or the hardware failed under it: the OOM killer (the unified pool ran "
          "out, or a container's memory limit), the NVIDIA driver's own NV_ERR_NO_MEMORY, an Xid error (on "
          "GB10, Xid 169 means the proprietary module cannot drive the GPU: the -open flavour is required), "
          "a GPU fallen off the bus or failing RmInitAdapter, PCIe AER errors (ConnectX-7 fatal AER has "
          "preceded soft lock-ups and shutdowns on hot machines), or a soft lockup. Only the kernel log says which.",
    check="Reads the kernel log since boot (/dev/kmsg, else `journalctl -k -b`, else `dmesg`; or a saved "
          "log with `--kernel-log FILE`) and counts, over every line read, NVRM Xid lines, NV_ERR_NO_MEMORY, "
          "OOM-killer kills (victim pid, name, RSS; memory-cgroup kills apart), GPUs lost without an Xid, "
          "PCIe AER errors by severity and device, and soft or hard lock-ups, in the wordings of kernels "
          "4.x to 6.x. Fail on any of them (fatal AER only), warn on non-fatal AER only; corrected AER "
          "errors are counted, not judged. Reading the log needs the adm or systemd-journal group, or "
          "kernel.dmesg_restrict=0: without it the verdict is unknown.",
    fix=FIX,
    intrusive=False,
    cadence_s=60.0,
    probes=("kernel_log",),
    feed=Feed.FOLLOWED,
    follows="kernel_log",
    judge=judge,
    references=("Kernel log field reports: Xid format, Xid 169 on GB10 (Start9Labs #3465, #3693), OOM killer, "
                "ConnectX-7 fatal AER (DeepSeek recipe #146; NVIDIA forum 368536), access needs adm/systemd-journal",
                "NVIDIA Xid Errors documentation (the meanings table)",
                "Linux Documentation/ABI/testing/dev-kmsg (record format)"),
)
