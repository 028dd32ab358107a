"""The playbook issues panel (G8)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Label

from sparktui.core.units import is_number
from sparktui.core.verdict import Status, Verdict
from sparktui.ui.format import age
from sparktui.ui.inert import plain
from sparktui.ui.widgets.tables import BoundedTable
from sparktui.ui.widgets.text import set_content


class PlaybookPanel(Vertical):
    """G8: open issues against the followed playbook, or how to configure it."""

    def compose(self) -> ComposeResult:
        self._note = Label("", id="pb-note")
        self._table = BoundedTable(id="pb-table", cursor_type="row")
        yield self._note
        yield self._table

    def on_mount(self) -> None:
        t = self._table
        for name, width in (("#", 6), ("title", 50), ("age", 6), ("cmts", 4), ("why it matched", 40)):
            t.add_column(name, key=name, width=width)
        self.issues: dict[str, dict[str, Any]] = {}

    def show(self, verdict: Verdict | None, data: Mapping[str, Any] | None, now: float,
             next_run_at: float | None = None) -> None:
        """``next_run_at``: when G8 next runs by itself (unix time; None: only when asked, r)."""
        t, note = self._table, self._note
        if not self.is_attached:
            return  # arrived while the app shuts down
        if data is None and verdict is not None and verdict.status is not Status.SKIP:
            # no listing this time (cancelled while the API hung, or the probe failed): not "not configured"
            kept = "; the rows below are from the last listing" if t.row_count else ""
            set_content(note, plain(verdict.summary + kept, style="yellow"))
            return
        if data is None or not (data.get("slugs") or data.get("commands")):
            set_content(note, Text("Not configured. Follow a playbook with `sparktui --playbook vllm` or "
                             "[playbooks] slugs = [\"vllm\"] in ~/.config/sparktui/config.toml.", style="dim"))
            return
        head = verdict.summary if verdict else "fetching…"
        stale = stale_line(data, now, next_run_at)
        err = data.get("error")
        if stale:
            set_content(note, Text.assemble(plain(head), "\n", plain(stale, style="yellow")))
        else:
            set_content(note, plain(f"{head}  ({err})" if err else head))
        t.clear()
        self.issues = {}
        for iss in data.get("matches") or data.get("issues") or []:
            key = str(iss.get("number"))
            self.issues[key] = iss
            reasons = iss.get("reasons") or []
            # an issue's title (anyone on GitHub wrote it) and what matched in it: plain, controls visible
            t.add_row(plain(f"#{key}"), plain(iss.get("title") or "", overflow="ellipsis", no_wrap=True),
                      Text(_iso_age(iss.get("created_at"), now)), plain(iss.get("comments", "")),
                      plain("; ".join(str(x) for x in reasons), overflow="ellipsis", no_wrap=True), key=key)

    def selected(self) -> dict[str, Any] | None:
        t = self._table
        if t.row_count == 0:
            return None
        try:
            key = t.coordinate_to_cell_key(t.cursor_coordinate).row_key.value
        except Exception:
            return None
        return self.issues.get(key) if key is not None else None


def stale_line(data: Mapping[str, Any], now: float, next_run_at: float | None) -> str | None:
    """"listing from 2h05m ago (the refresh failed); next try in 14m" while the rows come from the
    last good listing (the API hung, answered 5xx, or rate limited); None while they are fresh. A
    rate limit's reset (or Retry-After) is the earliest next try: nothing is asked before it."""
    from sparktui.playbooks.github import SOURCE_STALE  # loaded already: this reading came through it

    if data.get("source") != SOURCE_STALE:
        return None
    fetched = data.get("fetched_at")
    when = f"{age(now - fetched)} ago" if _number(fetched) else "an unknown time ago"
    limit = data.get("rate_limit")
    if not isinstance(limit, dict):
        limit = {}
    retry_at = next_run_at
    if limit.get("limited") and _number(limit.get("reset_at")):
        retry_at = max(limit["reset_at"], retry_at or 0.0)
    retry = f"next try in {age(math.ceil((retry_at - now) / 60) * 60)}" if retry_at is not None else "r tries again"
    return f"listing from {when} (the refresh failed); {retry}"


_number = is_number  # one meaning of a number (core/units)


def _iso_age(iso: str | None, now: float) -> str:
    if not iso:
        return "?"
    from datetime import datetime

    try:
        t = datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return "?"
    return age(now - t)
