"""G5's measurement: run bandwidth_script.py in the target interpreter and keep the result.

Intrusive, so nothing here runs unless a person asked (CLI `bandwidth`, dashboard `b`). The probe
is a subprocess: a cancel or timeout kills its process group, and the buffer is freed by exit.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import cast

from sparktui.core.atomic import write_text_atomic
from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.shapes import BandwidthResult
from sparktui.core.validate import bandwidth_result_problem as result_problem
from sparktui.probes import state
from sparktui.probes.target import _crash_of, _describe_crash, choose_interpreter, run_staged

SCRIPT = Path(__file__).with_name("bandwidth_script.py")
POINT_PYTHON = "point --python at the training environment (the interpreter whose torch has CUDA)"


def measure(python: str, buffer_bytes: int, timeout_s: float = 120.0, repeats: int = 5,
            cancel: threading.Event | None = None) -> BandwidthResult:
    """Returns a result dict: status ok (figures), or unknown with the reason (never raises)."""
    started = time.time()
    run = run_staged(python, SCRIPT, ["--bytes", str(int(buffer_bytes)), "--repeats", str(repeats)], timeout_s, cancel)
    base: BandwidthResult = {"python": python, "measured_at": started, "seconds": round(run.seconds, 2), "source": f"{python} (subprocess)"}
    if run.launch_error:
        return {**base, "status": "unknown", "reason": run.launch_error, "hint": POINT_PYTHON}
    events = {(e["event"], e["stage"]): e for e in run.events if isinstance(e["event"], str) and isinstance(e["stage"], str)}
    imp = events.get(("error", "import torch"))
    if imp:
        return {**base, "status": "unknown", "reason": f"torch not importable there: {imp.get('error_type')}: {str(imp.get('error'))[:200]}",
                "hint": POINT_PYTHON}
    err = events.get(("error", "measure"))
    if err:
        return {**base, "status": "unknown", "reason": f"measurement failed: {err.get('error_type')}: {str(err.get('error'))[:300]}",
                "hint": POINT_PYTHON if "is_available() is False" in str(err.get("error")) else ""}
    done = events.get(("done", "measure"))
    if done and isinstance(done.get("data"), dict):
        res = {**done["data"], **base, "status": "ok"}  # the probe cannot overwrite when or where it ran
        problem = result_problem(res)
        if problem:  # never judged as a figure, never kept (save_last refuses it too)
            return {**base, "status": "unknown", "reason": f"the probe's result is invalid: {problem}",
                    "stderr_tail": run.stderr_tail[-800:]}
        return cast(BandwidthResult, res)  # a child's JSON; result_problem has checked every figure G5 reads
    crash = _crash_of(run, "bandwidth", timeout_s) or {"kind": "exit", "returncode": run.returncode, "stage": None}
    return {**base, "status": "unknown", "reason": _describe_crash(crash), "stderr_tail": run.stderr_tail[-800:]}


def save_last(result: BandwidthResult) -> Path:
    """Keep an ok result for `check G5` and the dashboard (written atomically).

    Refuses a result that is not ok or that G5 could not judge: a kept bad file would turn every
    later `check G5` into an error."""
    problem = "status is not ok" if result.get("status") != "ok" else result_problem(result)
    if problem:
        raise ValueError(f"not keeping an unusable bandwidth result: {problem}")
    p = state.bandwidth_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(p, json.dumps(result, indent=2, default=str))


def as_reading(result: BandwidthResult) -> Reading[BandwidthResult]:
    return Reading("bandwidth", result, source=result.get("source", "bandwidth probe"),
                   started_at=result.get("measured_at") or time.time(), took_s=float(result.get("seconds") or 0.0))


def interpreter(cfg: Config) -> str:
    return choose_interpreter(cfg)[0]
