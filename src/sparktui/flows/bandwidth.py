"""G5's gate, plan and measurement, as one flow that both the CLI (`sparktui bandwidth`) and the
dashboard (`b`) follow: gate on what is seen, show the plan, ask (the caller's job), gate again on
what is seen after the answer, measure, keep the result. Asking is the only part that differs."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.shapes import MEMINFO, PROCESSES, BandwidthResult
from sparktui.core.verdict import Verdict
from sparktui.gotchas.g05_bandwidth import GIB, GateDecision, gate, judge_result


def competitors(readings: Readings) -> tuple[list[dict], str | None]:
    """Other processes on the pool, from the G6 process reading: (rows, error if the view is blind)."""
    pr = readings.get_reading(PROCESSES)
    if pr.data is None:
        return [], pr.error or "process list unavailable"
    d = pr.data
    if d.get("scan_error") or not isinstance(d.get("rows"), list):
        # a scan that failed is a blind view, never "no other processes" (principle 1)
        return [], f"process scan failed: {d.get('scan_error') or 'no process rows in the reading'}"
    rows: list[dict[str, Any]] = [dict(r) for r in d["rows"]]
    nv: dict[str, Any] = dict(d.get("nvml") or {})
    if not nv.get("ok"):
        return rows, f"NVML process list unavailable ({nv.get('error') or 'no NVML'})"
    if (d.get("container") or {}).get("inside") and not nv.get("count"):
        return rows, "inside a container: host processes are not visible"
    me = os.getpid()
    out = [{"pid": r.get("pid"), "name": r.get("name"), "kind": r.get("kind"), "gpu_memory_bytes": r.get("gpu_mem_bytes"),
            "on_gpu": bool(r.get("on_gpu"))} for r in rows if r.get("pid") != me]
    return out, None


def blockers(readings: Readings) -> list[str]:
    """What the process gate objects to, one stable label each (pid and kind, or the blind view)."""
    rows, blind = competitors(readings)
    out = [f"pid {r.get('pid')} {r.get('name') or '?'} ({r.get('kind') or 'gpu-process'})" for r in rows
           if r.get("kind") in ("server", "training") or r.get("gpu_memory_bytes") or r.get("on_gpu")]
    return out + ([f"blind process view: {blind}"] if blind else [])


def decide(readings: Readings, size_bytes: int, force: bool) -> GateDecision:
    mem = readings.data(MEMINFO) or {}
    rows, blind = competitors(readings)
    return gate(size_bytes, mem.get("MemAvailable"), rows, blind, force)


def describe_plan(python: str, decision: GateDecision) -> str:
    return (f"G5 will allocate {decision.buffer_bytes / GIB:.2f} GiB on the GPU (the unified pool on a GB10) "
            f"through {python}, and stream through it for a few seconds (timeout 120 s).")


def observer(cfg: Config) -> Callable[[], Readings]:
    """What the gates look at: meminfo and the process scan, read now."""
    def observe() -> Readings:
        from sparktui.runner import collect

        return collect(["meminfo", "processes"], cfg)
    return observe


def refused(reason: str, source: str = "sparktui gates") -> tuple[Verdict, dict[str, Any]]:
    res = {"status": "refused", "reason": reason, "source": source}
    return judge_result(res, None, fresh=True), res


@dataclass
class Plan:
    """What G5 would do, as gated on ``seen``: shown to the user before anything is loaded."""

    python: str
    decision: GateDecision
    seen: Readings
    force: bool

    @property
    def text(self) -> str:
        return describe_plan(self.python, self.decision)


def plan(cfg: Config, size_bytes: int, force: bool, observe: Callable[[], Readings] | None = None) -> Plan:
    from sparktui.probes import bandwidth

    seen = (observe or observer(cfg))()
    return Plan(bandwidth.interpreter(cfg), decide(seen, size_bytes, force), seen, force)


def recheck(p: Plan, size_bytes: int, observe: Callable[[], Readings]) -> tuple[Plan | None, str | None]:
    """After the answer (which can take minutes): a server started or memory taken meanwhile still
    stops it, and --force covers only what the confirmed plan listed. Returns (plan to run, None)
    or (None, why refused)."""
    now = observe()
    again = decide(now, size_bytes, p.force)
    unseen = sorted(set(blockers(now)) - set(blockers(p.seen)))
    if not again.allowed or unseen:
        why = "; ".join(again.reasons) if not again.allowed else \
            f"new since the plan was shown (--force covered only what it listed): {', '.join(unseen)}; run it again to see it"
        return None, f"changed while waiting for confirmation: {why}"
    d = p.decision
    if again.buffer_bytes < d.buffer_bytes or again.reasons != d.reasons:
        d = GateDecision(True, min(again.buffer_bytes, d.buffer_bytes), again.reasons, again.forced)
    return Plan(p.python, d, now, p.force), None


def measure(p: Plan, timeout_s: float = 120.0, cancel: Any = None) -> tuple[Verdict, BandwidthResult, str | None]:
    """Run the probe in the target interpreter and keep an ok result. Returns (verdict, result,
    why the result was not kept or None): a result that cannot be saved still counts."""
    from sparktui.probes import bandwidth

    res = bandwidth.measure(p.python, p.decision.buffer_bytes, timeout_s, cancel=cancel)
    res["gate_notes"] = list(p.decision.reasons)
    not_kept = None
    if res.get("status") == "ok":
        try:
            bandwidth.save_last(res)
        except OSError as e:
            not_kept = f"result not kept ({e.strerror or e})"
    return judge_result(res, res.get("measured_at"), fresh=True), res, not_kept
