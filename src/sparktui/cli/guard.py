"""``sparktui guard``: the memory guard in the foreground (flows/guard.py; docs/guard.md).

One reading a second of MemAvailable and PSI; a line printed (and written to the audit log) for each
decision that differs from the last, each trigger, and once a minute while nothing changes. A dry
run unless ``[guard] act = true`` or ``--act``. SIGTERM (systemd's stop) and Ctrl-C end it cleanly
(exit 0), with a last audit line saying so. ``--once``: one decision, then exit: at once when
MemAvailable is over the floor (or unreadable), else after the hold (2 when it triggered, 3 when
MemAvailable could not be read); a cron job's guard."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time

from sparktui.cli.common import EXIT_FAIL, EXIT_OK, EXIT_UNKNOWN, bounded, config_from_args
from sparktui.core.config import ConfigError
from sparktui.core.inert import visible
from sparktui.flows import guard as g


def add_parser(sub, add_sub_common_options) -> None:
    p = sub.add_parser("guard", help="the memory guard: act when MemAvailable stays under a floor (opt-in; a dry run unless --act)")
    p.add_argument("--once", action="store_true", help="decide once and exit: at once over the floor, else after [guard] hold_s "
                   "(exit 2: triggered, 3: unreadable)")
    p.add_argument("--act", action="store_true", help="really act (overrides [guard] act = false); without it, a dry run "
                   "unless the config says act = true")
    p.add_argument("--interval", type=bounded(0.1, 5, "seconds"), default=g.INTERVAL_S, metavar="S",
                   help=f"seconds between readings (default {g.INTERVAL_S:g})")
    p.add_argument("--meminfo", default="/proc/meminfo", metavar="FILE", help="read MemAvailable from FILE (a stand-in; default /proc/meminfo)")
    p.add_argument("--pressure", default="/proc/pressure/memory", metavar="FILE",
                   help="read PSI memory from FILE (a stand-in; default /proc/pressure/memory)")
    add_sub_common_options(p)


def _say(text: str) -> None:
    print(text, flush=True)


def cmd_guard(args: argparse.Namespace) -> int:
    cfg = config_from_args(args)
    guard = g.Guard(cfg, act_for_real=True if args.act else None, meminfo=args.meminfo, pressure=args.pressure)
    problem = guard.problem()
    if problem:
        raise ConfigError(problem)
    dry = guard.dry_run
    if not args.once:
        _say(g.summary(cfg.guard, dry))
        _say(f"guard: audit log {visible(str(guard.audit.path))}")
        if not cfg.guard.enabled:
            _say("guard: [guard] enabled is false: the dashboard does not guard; this command does while it runs")
    stop = threading.Event()
    old = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            old[sig] = signal.signal(sig, lambda signum, _f: stop.set())
    said_error = None
    step = None
    try:
        while not stop.is_set():
            step = guard.step()
            if step.said or args.once:
                _say(step.line())
            if step.audit_error and step.audit_error != said_error:
                said_error = step.audit_error
                print(f"sparktui: {visible(step.audit_error)}", file=sys.stderr, flush=True)
            if args.once and step.decision.phase != "holding":
                break  # decided: over the floor, triggered, not confirmed, or blind
            stop.wait(args.interval)
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        if not args.once:
            guard.audit.write({"t": round(time.time(), 3), "event": "stopped", "state": None,
                               "reason": "sparktui guard stopped", "dry_run": dry})
    if args.once:
        if step is None or stop.is_set() and step.decision.phase == "holding":
            _say("guard: stopped before the hold was over: nothing decided")
            return EXIT_UNKNOWN
        return {"triggered": EXIT_FAIL, "blind": EXIT_UNKNOWN}.get(step.decision.state, EXIT_OK)
    _say("guard: stopped")
    return EXIT_OK
