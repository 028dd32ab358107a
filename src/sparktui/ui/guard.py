"""The memory guard inside the dashboard (flows/guard.py; docs/guard.md): opt-in with ``[guard] enabled``,
live only (never in a replay: a recording's memory is not this machine's, and nothing is signalled from
one). It runs in a thread of its own, one reading a second; a trigger (acted on, or what a dry run would
have done) is a row in the events view, a notification, and news for ``[notify]``; an audit log that
cannot be written is said once."""

from __future__ import annotations

from typing import Any

from textual.message import Message

from sparktui.core.events import Change
from sparktui.core.verdict import Status
from sparktui.flows.guard import Guard, GuardThread, Step

EVENT_ID = "guard"


class GuardStepped(Message):
    """The guard decided something worth saying (posted from its thread)."""

    def __init__(self, step: Step) -> None:
        super().__init__()
        self.step = step


def start_guard(app: Any) -> GuardThread | None:
    """The guard's thread, started, when ``[guard] enabled`` on a live dashboard; else None."""
    cfg = app.cfg
    if not cfg.guard.enabled or app.replay_path or getattr(app.source, "kind", None) == "replay":
        return None
    guard = Guard(cfg)
    problem = guard.problem()
    if problem:
        app.notify(f"the memory guard is off: {problem}", title="memory guard", severity="error", timeout=30)
        return None
    thread = GuardThread(guard, lambda step: app.post_message(GuardStepped(step)))
    thread.start()
    return thread


def show_guard_step(app: Any, step: Step) -> None:
    """A trigger as an event, a notification and news for [notify]; an audit error said once."""
    if step.audit_error and not getattr(app, "_guard_audit_said", False):
        app._guard_audit_said = True
        app.notify(step.audit_error, title="memory guard", severity="warning", timeout=15)
    if step.outcome is None:
        return
    d, out = step.decision, step.outcome
    status = Status.WARN if out.dry_run else Status.FAIL
    summary = f"{d.reason} [{d.basis}] -> {out.action}: {out.text()}"
    now = app.now()
    app.events.add(Change(t=now, id=EVENT_ID, old=None, new=status, summary=summary, kind="guard"))
    keep = getattr(app.source, "keep_event", None)
    if keep is not None:
        keep(f"memory guard: {summary}", now)  # the kept session remembers what the guard did
    app.notify(f"{d.reason}\n{out.action}: {out.text()}", title="memory guard" + (" (dry run)" if out.dry_run else ""),
               severity="warning" if out.dry_run else "error", timeout=30)
    if getattr(app, "bell_on_worse", False):
        app.bell()
    notifier = getattr(app, "notifier", None)
    if notifier is not None:
        from sparktui.flows.notify import make_event

        notifier.send(make_event(EVENT_ID, status.value, None, "memory guard", summary, kind="guard"))
