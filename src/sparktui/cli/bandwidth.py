"""``sparktui bandwidth``: G5's intrusive measurement, behind its gates and a confirmation."""

from __future__ import annotations

import os
import sys
from typing import Callable

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.verdict import Verdict
from sparktui.gotchas.g05_bandwidth import GIB, GateDecision, gate, judge_result


def competitors(readings: Readings) -> tuple[list[dict], str | None]:
    """Other processes on the pool, from the G6 process reading: (rows, error if the view is blind)."""
    pr = readings.get_reading("processes")
    if pr.data is None:
        return [], pr.error or "process list unavailable"
    d = pr.data
    rows = d.get("rows") or []
    nv = d.get("nvml") or {}
    if not nv.get("ok"):
        return rows, f"NVML process list unavailable ({nv.get('error') or 'no NVML'})"
    if (d.get("container") or {}).get("inside") and not nv.get("count"):
        return rows, "inside a container: host processes are not visible"
    me = os.getpid()
    out = [{"pid": r.get("pid"), "name": r.get("name"), "kind": r.get("kind"), "gpu_memory_bytes": r.get("gpu_mem_bytes")}
           for r in rows if r.get("pid") != me]
    return out, None


def decide(readings: Readings, size_bytes: int, force: bool) -> GateDecision:
    mem = readings.data("meminfo") or {}
    rows, blind = competitors(readings)
    return gate(size_bytes, mem.get("MemAvailable"), rows, blind, force)


def describe_plan(python: str, decision: GateDecision) -> str:
    return (f"G5 will allocate {decision.buffer_bytes / GIB:.2f} GiB on the GPU (the unified pool on a GB10) "
            f"through {python}, and stream through it for a few seconds (timeout 120 s).")


def confirm_tty(prompt: str) -> bool:
    if not sys.stdin or not sys.stdin.isatty():
        return False
    try:
        return input(f"{prompt} Continue? [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False


def run(cfg: Config, size_gib: float, yes: bool, force: bool, json_out: bool,
        confirm: Callable[[str], bool] = confirm_tty, timeout_s: float = 120.0) -> tuple[Verdict, dict]:
    from sparktui.probes import bandwidth
    from sparktui.runner import collect

    python = bandwidth.interpreter(cfg)
    readings = collect(["meminfo", "processes"], cfg)
    decision = decide(readings, int(size_gib * GIB), force)
    if not decision.allowed:
        res = {"status": "refused", "reason": "; ".join(decision.reasons), "source": "sparktui gates"}
        return judge_result(res, None, fresh=True), res
    plan = describe_plan(python, decision)
    if not json_out:
        print(plan, file=sys.stderr)
        for n in decision.reasons:
            print(f"  note: {n}", file=sys.stderr)
    if not yes and not confirm(plan):
        res = {"status": "refused", "reason": "not confirmed (interactive confirmation, or --yes for scripts)", "source": "sparktui"}
        return judge_result(res, None, fresh=True), res
    res = bandwidth.measure(python, decision.buffer_bytes, timeout_s)
    res["gate_notes"] = list(decision.reasons)
    if res.get("status") == "ok":
        bandwidth.save_last(res)
    return judge_result(res, res.get("measured_at"), fresh=True), res
