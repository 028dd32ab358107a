"""The process table (G6): everything competing for the unified memory pool."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Label

from sparktui.ui.format import age, gib
from sparktui.ui.widgets.tables import BoundedTable
from sparktui.ui.widgets.text import set_content


class ProcessTable(Vertical):
    """Everything on the unified pool (G6): keyed by pid, filtered by '/' and sorted by 's'."""

    COLUMNS = (("pid", 7), ("user", 9), ("kind", 9), ("name", 16), ("GPU mem", 9), ("RSS", 8), ("cap", 14), ("age", 7), ("command", 60))
    SORTS = (("GPU mem", True), ("RSS", True), ("age", True), ("pid", False), ("name", False))

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.rows: dict[str, dict[str, Any]] = {}
        self.filter_text = ""
        self.sort_index = 0
        self.view_note = ""

    def compose(self) -> ComposeResult:
        # Held, not queried: a scan can arrive while the app is shutting down and the children
        # are already gone (query_one would raise NoMatches and take the app down with it).
        self._filter = Input(placeholder="filter processes (name, command, user, kind); Esc closes", id="proc-filter")
        self._note = Label("", id="proc-note")
        self._table = BoundedTable(id="proc-table", cursor_type="row")
        yield self._filter
        yield self._note
        yield self._table

    def on_mount(self) -> None:
        for name, width in self.COLUMNS:
            self._table.add_column(name, key=name, width=width)
        self._filter.display = False
        self._ready = True
        self._fit(self.size.width)
        if self.rows:
            self._redraw()  # a scan that arrived before the table existed

    def on_resize(self, event) -> None:
        self._fit(event.size.width)

    def _fit(self, width: int) -> None:
        """The command column takes what the others leave (a wide terminal shows whole commands)."""
        col = self._table.columns.get("command") if getattr(self, "_ready", False) else None  # type: ignore[call-overload]
        if not width or col is None:
            return
        fixed = sum(w for name, w in self.COLUMNS if name != "command") + 2 * len(self.COLUMNS) + 2
        want = max(self.COLUMNS[-1][1] // 2, width - fixed)
        if col.width != want:
            col.width, col.auto_width = want, False
            self._table._require_update_dimensions = True
            self._table.refresh()

    @property
    def sort_label(self) -> str:
        key, desc = self.SORTS[self.sort_index]
        return f"{key} {'↓' if desc else '↑'}"

    def cycle_sort(self) -> str:
        self.sort_index = (self.sort_index + 1) % len(self.SORTS)
        self._redraw()
        return self.sort_label

    def set_filter(self, text: str) -> None:
        self.filter_text = text.strip().lower()
        self._redraw()

    def show(self, data: dict[str, Any] | None, now: float) -> None:
        self.rows = {}
        if data:
            for row in data.get("rows") or []:
                self.rows[str(row.get("pid"))] = row
        self.view_note = _visibility_note(data)
        self._now = now
        self._redraw()

    def _sort_value(self, row: dict[str, Any], key: str):
        if key == "GPU mem":
            return row.get("gpu_mem_bytes") or 0
        if key == "RSS":
            return row.get("rss_bytes") or 0
        if key == "age":
            return row.get("age_s") or 0
        if key == "pid":
            return int(row.get("pid") or 0)
        return str(row.get("name") or "").lower()

    def visible_rows(self) -> list[dict[str, Any]]:
        rows = list(self.rows.values())
        if self.filter_text:
            ft = self.filter_text
            rows = [r for r in rows if ft in " ".join(str(r.get(k) or "") for k in ("name", "command", "user", "kind", "pid")).lower()]
        key, desc = self.SORTS[self.sort_index]
        rows.sort(key=lambda r: self._sort_value(r, key), reverse=desc)
        return rows

    def _redraw(self) -> None:
        if not getattr(self, "_ready", False) or not self._table.is_attached:
            return
        t = self._table
        rows = self.visible_rows()
        wanted = [str(r.get("pid")) for r in rows]
        present = [rk.value for rk in t.rows]
        note = f"{len(rows)} of {len(self.rows)} processes · sort: {self.sort_label}"
        if self.filter_text:
            note += f" · filter: {self.filter_text!r} (/ edits, esc clears)"
        if self.view_note:
            note = f"{self.view_note} · {note}"
        set_content(self._note, Text(note, style="dim"))
        cells = [self._cells(r) for r in rows]
        signature = [tuple(c.plain for c in row) for row in cells]
        last = getattr(self, "_last_signature", None)
        if signature == last:
            return  # nothing changed since the last scan: no table work at all
        self._last_signature = signature
        with self.app.batch_update():
            if present != wanted or last is None:
                t.clear()
                for pid, row in zip(wanted, cells):
                    t.add_row(*row, key=pid)
            else:  # same rows in the same order: repaint only the cells that changed
                for pid, row, new, old in zip(wanted, cells, signature, last):
                    for (name, _), cell, a, b in zip(self.COLUMNS, row, new, old):
                        if a != b:
                            t.update_cell(pid, name, cell)

    def _cells(self, r: dict[str, Any]) -> list[Text]:
        cap_txt = cap_text(r.get("cap"))
        kind = str(r.get("kind") or "")
        style = {"server": "yellow", "training": "cyan"}.get(kind, "")
        return [Text(str(r.get("pid"))), Text(str(r.get("user") or "?")), Text(kind, style=style),
                Text(str(r.get("name") or "?")), Text(gib(r.get("gpu_mem_bytes")) + (" G" if r.get("gpu_mem_bytes") is not None else "")),
                Text(gib(r.get("rss_bytes")) + " G" if r.get("rss_bytes") is not None else "?"), Text(cap_txt),
                Text(age(r.get("age_s"))), Text(str(r.get("command") or ""), overflow="ellipsis", no_wrap=True)]


def process_details(r: dict[str, Any]) -> str:
    """One process as Markdown for its pop-up: what the table cuts short."""
    cap = r.get("cap") or {}
    lines = [f"- **kind:** {r.get('kind') or '?'}" + (f" ({r['server']})" if r.get("server") else ""),
             f"- **user:** {r.get('user') or '?'}",
             f"- **GPU memory:** {gib(r.get('gpu_mem_bytes')) + ' GiB' if r.get('gpu_mem_bytes') is not None else 'not listed by NVML'}",
             f"- **resident memory:** {gib(r.get('rss_bytes'))} GiB",
             f"- **running for:** {age(r.get('age_s'))}"]
    if cap:
        lines.append(f"- **memory cap:** {cap_text(cap) or 'none'}: {cap.get('source') or ''} {cap.get('detail') or ''}".rstrip())
    if r.get("group") not in (None, r.get("pid")):
        lines.append(f"- **part of:** pid {r['group']}")
    return "\n".join(lines) + f"\n\n```\n{r.get('command') or '(command line not readable)'}\n```\n"


def cap_text(cap: dict[str, Any] | None) -> str:
    if not cap or cap.get("state") == "n/a":
        return ""
    frac = cap.get("fraction")
    if cap.get("state") == "set" and frac is not None:
        return f"{frac:g}"
    if cap.get("state") == "default":
        return f"default {frac:g}" if frac is not None else "default"
    return str(cap.get("state") or "")


def _visibility_note(data: dict[str, Any] | None) -> str:
    if not data:
        return "no process scan yet"
    if data.get("scan_error"):
        return data["scan_error"]
    nv = data.get("nvml") or {}
    if not nv.get("ok"):
        return f"NVML process list unavailable ({nv.get('error') or 'no NVML'})"
    if (data.get("container") or {}).get("inside") and not nv.get("count"):
        return "inside a container: host processes not visible"
    return ""
