"""The playbook issues panel (G8)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Label

from sparktui.core.verdict import Verdict
from sparktui.ui.format import age
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

    def show(self, verdict: Verdict | None, data: dict[str, Any] | None, now: float) -> None:
        t, note = self._table, self._note
        if not self.is_attached:
            return  # arrived while the app shuts down
        if data is None or not (data.get("slugs") or data.get("commands")):
            set_content(note, Text("Not configured. Follow a playbook with `sparktui --playbook vllm` or "
                             "[playbooks] slugs = [\"vllm\"] in ~/.config/sparktui/config.toml.", style="dim"))
            return
        head = verdict.summary if verdict else "fetching…"
        err = data.get("error")
        if err:
            head += f"  ({err})"
        set_content(note, head)
        t.clear()
        self.issues = {}
        for iss in data.get("matches") or data.get("issues") or []:
            key = str(iss.get("number"))
            self.issues[key] = iss
            reasons = iss.get("reasons") or []
            t.add_row(Text(f"#{key}"), Text(str(iss.get("title") or ""), overflow="ellipsis", no_wrap=True),
                      Text(_iso_age(iss.get("created_at"), now)), Text(str(iss.get("comments", ""))),
                      Text("; ".join(str(x) for x in reasons), overflow="ellipsis", no_wrap=True), key=key)

    def selected(self) -> dict[str, Any] | None:
        t = self._table
        if t.row_count == 0:
            return None
        try:
            return self.issues.get(t.coordinate_to_cell_key(t.cursor_coordinate).row_key.value)
        except Exception:
            return None


def _iso_age(iso: str | None, now: float) -> str:
    if not iso:
        return "?"
    from datetime import datetime

    try:
        t = datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return "?"
    return age(now - t)
