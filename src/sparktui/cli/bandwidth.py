"""``sparktui bandwidth``: G5's intrusive measurement, behind its gates and a confirmation."""

from __future__ import annotations

import math
import os
import sys
from typing import Callable

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.verdict import Verdict
from sparktui.gotchas.g05_bandwidth import GIB, MIN_BUFFER, GateDecision, gate, judge_result


def competitors(readings: Readings) -> tuple[list[dict], str | None]:
    """Other processes on the pool, from the G6 process reading: (rows, error if the view is blind)."""
    pr = readings.get_reading("processes")
    if pr.data is None:
        return [], pr.error or "process list unavailable"
    d = pr.data
    if d.get("scan_error") or not isinstance(d.get("rows"), list):
        # a scan that failed is a blind view, never "no other processes" (principle 1)
        return [], f"process scan failed: {d.get('scan_error') or 'no process rows in the reading'}"
    rows = d["rows"]
    nv = d.get("nvml") or {}
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


def size_bytes(size_gib: object) -> int:
    """--size in bytes: a finite number of GiB, at least the probe's smallest buffer.

    nan and inf used to reach int() as tracebacks, and 1e-9 planned a 0.00 GiB buffer."""
    from sparktui.cli.main import UsageError

    ok = isinstance(size_gib, (int, float)) and not isinstance(size_gib, bool) and math.isfinite(size_gib)
    if not ok or size_gib * GIB < MIN_BUFFER or size_gib > 1e6:  # 1e308 GiB overflowed int()
        raise UsageError(f"sparktui bandwidth: --size must be a finite number of GiB, at least {MIN_BUFFER / GIB:g} "
                         f"(the probe's smallest buffer), at most 1e6; got {size_gib!r}")
    return int(size_gib * GIB)


def run(cfg: Config, size_gib: float, yes: bool, force: bool, json_out: bool,
        confirm: Callable[[str], bool] = confirm_tty, timeout_s: float = 120.0,
        observe: Callable[[], Readings] | None = None) -> tuple[Verdict, dict]:
    """Gate, confirm, gate again, measure. ``observe`` reads meminfo and processes (tests pass one
    that keeps only their own child processes)."""
    from sparktui.probes import bandwidth
    from sparktui.runner import collect

    requested = size_bytes(size_gib)
    if observe is None:
        def observe() -> Readings:
            return collect(["meminfo", "processes"], cfg)
    python = bandwidth.interpreter(cfg)
    seen = observe()
    decision = decide(seen, requested, force)
    if not decision.allowed:
        res = {"status": "refused", "reason": "; ".join(decision.reasons), "source": "sparktui gates"}
        return judge_result(res, None, fresh=True), res
    plan = describe_plan(python, decision)
    if not json_out:
        print(plan, file=sys.stderr)
        for n in decision.reasons:
            print(f"  note: {n}", file=sys.stderr)
    if not yes:
        if not confirm(plan):
            res = {"status": "refused", "reason": "not confirmed (interactive confirmation, or --yes for scripts)", "source": "sparktui"}
            return judge_result(res, None, fresh=True), res
        # The answer can take minutes: a server started or memory taken meanwhile must still stop it.
        now = observe()
        again = decide(now, requested, force)
        unseen = sorted(set(blockers(now)) - set(blockers(seen)))
        if not again.allowed or unseen:  # --force covers what the confirmed plan showed, not what came after
            why = "; ".join(again.reasons) if not again.allowed else \
                f"new since the plan was shown (--force covered only what it listed): {', '.join(unseen)}; run it again to see it"
            res = {"status": "refused", "source": "sparktui gates", "reason": f"changed while waiting for confirmation: {why}"}
            return judge_result(res, None, fresh=True), res
        if again.buffer_bytes < decision.buffer_bytes or again.reasons != decision.reasons:
            decision = GateDecision(True, min(again.buffer_bytes, decision.buffer_bytes), again.reasons, again.forced)
            if not json_out:
                print(f"re-checked after confirmation: {decision.buffer_bytes / GIB:.2f} GiB", file=sys.stderr)
                for n in decision.reasons:
                    print(f"  note: {n}", file=sys.stderr)
    res = bandwidth.measure(python, decision.buffer_bytes, timeout_s)
    res["gate_notes"] = list(decision.reasons)
    if res.get("status") == "ok":
        bandwidth.save_last(res)
    return judge_result(res, res.get("measured_at"), fresh=True), res
