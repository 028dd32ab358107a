"""``sparktui bandwidth``: G5's intrusive measurement, behind its gates and a confirmation."""

from __future__ import annotations

import sys
from typing import Any, Callable, Mapping

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.units import GIB, is_number
from sparktui.core.verdict import Verdict
from sparktui.flows import bandwidth as flow
from sparktui.gotchas.g05_bandwidth import MIN_BUFFER


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
    from sparktui.cli.common import UsageError

    if not is_number(size_gib) or size_gib * GIB < MIN_BUFFER or size_gib > 1e6:  # 1e308 GiB overflowed int()
        raise UsageError(f"sparktui bandwidth: --size must be a finite number of GiB, at least {MIN_BUFFER / GIB:g} "
                         f"(the probe's smallest buffer), at most 1e6; got {size_gib!r}")
    return int(size_gib * GIB)


def run(cfg: Config, size_gib: float, yes: bool, force: bool, json_out: bool,
        confirm: Callable[[str], bool] = confirm_tty, timeout_s: float = 120.0,
        observe: Callable[[], Readings] | None = None) -> tuple[Verdict, Mapping[str, Any]]:
    """Gate, confirm, gate again, measure. ``observe`` reads meminfo and processes (tests pass one
    that keeps only their own child processes)."""
    requested = size_bytes(size_gib)
    observe = observe or flow.observer(cfg)
    p = flow.plan(cfg, requested, force, observe)
    if not p.decision.allowed:
        return flow.refused("; ".join(p.decision.reasons))
    if not json_out:
        print(p.text, file=sys.stderr)
        for n in p.decision.reasons:
            print(f"  note: {n}", file=sys.stderr)
    if not yes:
        if not confirm(p.text):
            return flow.refused("not confirmed (interactive confirmation, or --yes for scripts)", source="sparktui")
        checked, why = flow.recheck(p, requested, observe)
        if checked is None:
            return flow.refused(why or "changed while waiting for confirmation")
        if checked.decision != p.decision and not json_out:
            print(f"re-checked after confirmation: {checked.decision.buffer_bytes / GIB:.2f} GiB", file=sys.stderr)
            for n in checked.decision.reasons:
                print(f"  note: {n}", file=sys.stderr)
        p = checked
    verdict, res, not_kept = flow.measure(p, timeout_s)
    if not_kept:
        print(f"sparktui: G5: {not_kept}", file=sys.stderr)
    return verdict, res
