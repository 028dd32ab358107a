"""NVIDIA Xid codes: what each means and what to do. One table for the kernel-log probe (which
names an event) and G11's judge (which says what to do): both import it from here. Below it, the
kernel-log event classes the probe, the judge and the dashboard's live feed share (what fails, what
warns) and ``EventKeeper``, the bounded event list that counts every event it does not keep."""

from __future__ import annotations

from typing import Any, Mapping

# Xid -> (meaning, action): NVIDIA "Xid Errors" documentation, abridged; 169 from GB10 field reports
# (Start9Labs #3465, #3693: the proprietary module fails on GB10, the -open flavour is required).
XIDS: dict[int, tuple[str, str]] = {
    13: ("graphics engine exception", "usually the application: rerun it under compute-sanitizer or with CUDA_LAUNCH_BLOCKING=1"),
    31: ("GPU memory page fault", "usually the application (a bad pointer); across many applications, suspect the driver"),
    43: ("GPU stopped processing (channel reset after a fault)", "the process faulted: read its own errors; the GPU stays usable"),
    45: ("preemptive cleanup (a process was killed or crashed)", "it follows another error or a kill: read the events before it"),
    48: ("double-bit ECC error", "drain the GPU and reboot; if it repeats, hardware service"),
    61: ("internal micro-controller breakpoint", "update the driver; reboot if it repeats"),
    62: ("internal micro-controller halt", "reboot and update the driver; if it repeats, report it to NVIDIA"),
    63: ("ECC page retirement / row remapping recorded", "informational unless frequent: nvidia-smi -q -d ROW_REMAPPER"),
    64: ("ECC page retirement / row remapping failed", "drain and reboot; if it repeats, hardware service"),
    68: ("video processor exception", "update the driver; reboot if the GPU stays unusable"),
    69: ("graphics engine class error", "update the driver (a driver or application bug)"),
    74: ("NVLink / chip-to-chip link error", "reboot; if it repeats, hardware service"),
    79: ("GPU has fallen off the bus", "reboot; check power and temperature and the AER lines around it"),
    92: ("high single-bit ECC error rate", "watch it; if it grows, schedule service"),
    94: ("contained ECC error (one application affected)", "restart the affected application"),
    95: ("uncontained ECC error (all applications affected)", "drain the GPU and reboot"),
    109: ("context switch timeout", "often an application hang; update the driver if it repeats"),
    119: ("GSP RPC timeout", "reboot and update the driver; if it repeats, report it with nvidia-bug-report.sh"),
    120: ("GSP error", "reboot and update the driver; if it repeats, report it with nvidia-bug-report.sh"),
    154: ("GPU recovery action required", "do what the message says: reset the GPU or reboot"),
    169: ("GB10: the proprietary kernel module failed to initialise the GPU (RmInitAdapter failed)",
          "install the -open flavour of the kernel module, same driver branch, and reboot"),
}


# --------------------------------------------------------------------------- kernel-log event classes
# Shared by the kernel-log probe (which keeps a bounded list of events), G11's judge and the
# dashboard's live feed: what fails, what warns, and which events are kept when there are many.
EVENT_KINDS = ("xid", "nv_no_memory", "oom_kill", "aer", "soft_lockup", "gpu_lost")
AER_SEVERITIES = ("fatal", "non-fatal", "corrected", "unknown")
FAILING_KINDS = frozenset({"xid", "nv_no_memory", "oom_kill", "soft_lockup", "gpu_lost"})

KEEP_PER_CLASS = 60  # events kept per class (a kind, or an AER severity): a storm of one kind pushes out no other
KEEP_CORRECTED = 10  # corrected AER errors kept (shown, never judged); the rest are only counted
MAX_KEPT = KEEP_PER_CLASS * (len(FAILING_KINDS) + len(AER_SEVERITIES) - 1) + KEEP_CORRECTED  # 490


def event_class(ev: Any) -> str:
    """The class an event is kept and counted under: its kind, or ``aer:<severity>``."""
    kind = ev.get("kind") if isinstance(ev, Mapping) else None
    if kind == "aer":
        sev = ev.get("severity")
        return f"aer:{sev if sev in AER_SEVERITIES else 'unknown'}"
    return str(kind)


def is_failing(ev: Any) -> bool:
    """An event G11 fails on: Xid, NV_ERR_NO_MEMORY, OOM kill, soft lockup, GPU lost, fatal AER."""
    if not isinstance(ev, Mapping):
        return False
    if ev.get("kind") == "aer":
        return ev.get("severity") == "fatal"
    return ev.get("kind") in FAILING_KINDS


def is_warning(ev: Any) -> bool:
    """An event G11 warns on: a non-fatal (or unclassified) AER error."""
    return isinstance(ev, Mapping) and ev.get("kind") == "aer" and ev.get("severity") in ("non-fatal", "unknown")


class EventKeeper:
    """A bounded list of kernel-log events that never judges on the first (or last) N only.

    Every event is counted (``counts`` per kind, ``severities`` per AER severity); the list keeps at
    most ``KEEP_PER_CLASS`` of each class and ``KEEP_CORRECTED`` corrected AER errors, in log order,
    so a corrected-AER storm never evicts an Xid and an Xid storm never evicts the OOM kill that names
    the process. ``not_kept`` says how many were counted but not kept (at most ``MAX_KEPT`` are)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.counts: dict[str, int] = {k: 0 for k in EVENT_KINDS}
        self.severities: dict[str, int] = {s: 0 for s in AER_SEVERITIES}
        self.kept: dict[str, int] = {}
        self.not_kept = 0
        self.last_not_kept_t: float | None = None  # time of the newest event not kept (None: none, or no time)

    def add(self, ev: dict[str, Any]) -> bool:
        """Count the event and keep it if its class has room; True when kept."""
        kind = ev.get("kind")
        if isinstance(kind, str):
            self.counts[kind] = self.counts.get(kind, 0) + 1
        if kind == "aer":
            sev = ev.get("severity")
            sev = sev if sev in AER_SEVERITIES else "unknown"
            self.severities[sev] += 1
        cls = event_class(ev)
        cap = KEEP_CORRECTED if cls == "aer:corrected" else KEEP_PER_CLASS
        if self.kept.get(cls, 0) < cap and len(self.events) < MAX_KEPT:
            self.kept[cls] = self.kept.get(cls, 0) + 1
            self.events.append(ev)
            return True
        self.not_kept += 1
        t = ev.get("t")
        if isinstance(t, (int, float)) and not isinstance(t, bool):
            self.last_not_kept_t = max(t, self.last_not_kept_t or t)
        return False

    def since(self, t0: float) -> "EventKeeper":
        """The events after ``t0`` (epoch): those kept, recounted; those not kept stay counted when
        any of them may be after ``t0`` (their times are not kept: counted, never dropped unseen)."""
        out = EventKeeper()
        for ev in self.events:
            t = ev.get("t")
            if isinstance(t, (int, float)) and not isinstance(t, bool) and t > t0:
                out.add(ev)
        if self.not_kept and (self.last_not_kept_t is None or self.last_not_kept_t > t0):
            for k, n in self.counts.items():
                out.counts[k] = out.counts.get(k, 0) + max(0, n - sum(1 for e in self.events if e.get("kind") == k))
            for s, n in self.severities.items():
                out.severities[s] += max(0, n - sum(1 for e in self.events
                                                   if e.get("kind") == "aer" and e.get("severity") == s))
            out.not_kept += self.not_kept
            out.last_not_kept_t = self.last_not_kept_t
        return out
