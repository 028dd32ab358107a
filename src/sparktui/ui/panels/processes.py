"""The process table (G6): everything competing for the unified memory pool."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import DataTable, Input, Label
from textual.widgets.data_table import ColumnKey

from sparktui.core.inert import md_fence, md_text, visible
from sparktui.ui.format import age, gib
from sparktui.ui.inert import plain
from sparktui.ui.prefs import Prefs
from sparktui.ui.widgets.tables import BoundedTable
from sparktui.ui.widgets.text import set_content


class ProcessTable(Vertical):
    """Everything on the unified pool (G6), keyed by pid: filtered by '/', sorted by any column
    ('s' next column, 'S' reverse, or a click on its header, which shows ▲/▼), optionally as a
    tree (launcher -> workers, memory rolled up onto the launcher). The processes G6's verdict
    names are marked '!' and kept at the top, so a short pane still shows them."""

    COLUMNS = (("pid", 7), ("user", 9), ("kind", 9), ("name", 16), ("GPU mem", 9), ("RSS", 8), ("cap", 14), ("age", 7), ("command", 60))
    LARGEST_FIRST = frozenset({"GPU mem", "RSS", "cap", "age"})  # a new sort column starts this way round

    class ViewChanged(Message):
        """The sort, filter or tree view changed: the app keeps it (ui/prefs.py)."""

        def __init__(self, **changes: Any) -> None:
            super().__init__()
            self.changes = changes

    def __init__(self, prefs: Prefs | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        p = prefs or Prefs()
        names = [name for name, _ in self.COLUMNS]
        self.rows: dict[str, dict[str, Any]] = {}
        self.sort_column = p.sort_column if p.sort_column in names else Prefs.sort_column
        self.sort_reverse = p.sort_reverse
        self.filter_text = p.process_filter.strip().lower()
        self.tree_view = p.tree
        self.blamed: frozenset[int] = frozenset()
        self.blamed_by = ""  # the checks whose verdicts name them
        self.view_note = ""
        self._totals: dict[int, tuple[Any, ...]] = {}  # tree view: each row's subtree sums (rolled_up)
        self._filter_timer: Timer | None = None
        self._last_signature: list[tuple[str, ...]] | None = None  # the cells last drawn (_redraw)

    def compose(self) -> ComposeResult:
        # Held, not queried: a scan can arrive while the app is shutting down and the children
        # are already gone (query_one would raise NoMatches and take the app down with it).
        self._filter = Input(self.filter_text, placeholder="filter processes (name, command, user, kind); Esc closes",
                             id="proc-filter")
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
        self._label_columns()
        self._fit(self.size.width)
        self._redraw()  # a scan that arrived before the table existed, or the kept filter's note

    def on_resize(self, event) -> None:
        self._fit(event.size.width)

    def _fit(self, width: int) -> None:
        """The command column takes what the others leave (a wide terminal shows whole commands)."""
        if not width or not getattr(self, "_ready", False):
            return
        fixed = sum(w for name, w in self.COLUMNS if name != "command") + 2 * len(self.COLUMNS) + 2
        self._table.set_column_width("command", max(self.COLUMNS[-1][1] // 2, width - fixed))

    # -- what the user changes -------------------------------------------------------------------
    @property
    def sort_label(self) -> str:
        return f"{self.sort_column} {'▼' if self.sort_reverse else '▲'}"

    def cycle_sort(self) -> str:
        """'s': the next column, largest first for amounts, A to Z for names."""
        names = [name for name, _ in self.COLUMNS]
        return self.sort_by(names[(names.index(self.sort_column) + 1) % len(names)])

    def reverse_sort(self) -> str:
        self.sort_reverse = not self.sort_reverse
        return self._resorted()

    def sort_by(self, column: str) -> str:
        """A header click: that column; its own header clicked again reverses it."""
        if column == self.sort_column:
            return self.reverse_sort()
        self.sort_column, self.sort_reverse = column, column in self.LARGEST_FIRST
        return self._resorted()

    def _resorted(self) -> str:
        self._label_columns()
        self._redraw()
        self.post_message(self.ViewChanged(sort_column=self.sort_column, sort_reverse=self.sort_reverse))
        return self.sort_label

    def toggle_tree(self) -> bool:
        self.tree_view = not self.tree_view
        self._redraw()
        self.post_message(self.ViewChanged(tree=self.tree_view))
        return self.tree_view

    def set_filter(self, text: str) -> None:
        """Filter as typed; kept once typing pauses (not one file write per key)."""
        self.filter_text = text.strip().lower()
        self._redraw()
        if self._filter_timer is not None:
            self._filter_timer.stop()
        self._filter_timer = self.set_timer(0.5, lambda: self.post_message(self.ViewChanged(process_filter=self.filter_text)))

    @on(DataTable.HeaderSelected, "#proc-table")
    def _header_clicked(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        label = self.sort_by(str(event.column_key.value))
        self.notify(f"processes sorted by {label}")

    def _label_columns(self) -> None:
        if not getattr(self, "_ready", False):
            return
        for name, _ in self.COLUMNS:
            col = self._table.columns[ColumnKey(name)]
            col.label = Text(self.sort_label if name == self.sort_column else name,
                             style="bold" if name == self.sort_column else "")
        # DataTable draws a changed label once its rows are laid again: the _redraw that follows
        # rebuilds them (DataTable has no public call that repaints the header alone)
        self._last_signature = None

    # -- what arrives ----------------------------------------------------------------------------
    def show(self, data: dict[str, Any] | None, now: float) -> None:
        self.rows = {}
        if data:
            for row in data.get("rows") or []:
                self.rows[str(row.get("pid"))] = row
        self.view_note = _visibility_note(data)
        self._now = now
        self._redraw()

    def blame(self, blamed: frozenset[int], by: str = "") -> None:
        """The pids the checks' verdicts mark (``Verdict.marks``; ``by``: those checks' ids):
        marked and kept at the top."""
        self.blamed_by = by
        if blamed != self.blamed:
            self.blamed = blamed
            self._redraw()

    @property
    def selected_row(self) -> dict[str, Any] | None:
        t = self._table
        if not getattr(self, "_ready", False) or not t.row_count:
            return None
        key = t.coordinate_to_cell_key(t.cursor_coordinate).row_key.value
        return self.rows.get(str(key))

    # -- ordering --------------------------------------------------------------------------------
    def _sort_value(self, row: dict[str, Any], totals: dict[int, tuple[Any, ...]]) -> Any:
        key = self.sort_column
        if key in ("GPU mem", "RSS"):
            gpu, _, rss, _ = totals.get(row["pid"], (row.get("gpu_mem_bytes"), False, row.get("rss_bytes"), False))
            v = gpu if key == "GPU mem" else rss
            return -1 if v is None else v  # unknown below zero, never equal to it
        if key == "pid":
            return int(row.get("pid") or 0)
        if key == "age":
            return row.get("age_s") or 0
        if key == "cap":
            frac = (row.get("cap") or {}).get("fraction")
            return frac if isinstance(frac, (int, float)) else -1
        return str(row.get(key) or "").lower()

    def _ordered(self, rows: list[dict[str, Any]], totals: dict[int, tuple[Any, ...]],
                 pinned: set[int]) -> list[dict[str, Any]]:
        rows = sorted(rows, key=lambda r: self._sort_value(r, totals), reverse=self.sort_reverse)
        return sorted(rows, key=lambda r: r["pid"] not in pinned)  # stable: blamed first, each group in order

    def visible_rows(self) -> list[dict[str, Any]]:
        return [row for row, _ in self._layout()]

    def _layout(self) -> list[tuple[dict[str, Any], str]]:
        """The rows to show in order, each with its tree prefix ("" when flat)."""
        rows = [r for r in self.rows.values() if isinstance(r.get("pid"), int)]
        if self.filter_text:
            ft = self.filter_text
            rows = [r for r in rows if ft in " ".join(str(r.get(k) or "") for k in ("name", "command", "user", "kind", "pid")).lower()]
        if not self.tree_view:
            self._totals = {}
            return [(r, "") for r in self._ordered(rows, {}, set(self.blamed))]
        kids = children_of(rows)
        self._totals = totals = rolled_up(rows, kids)
        pinned = _ancestors(self.blamed, kids)  # a launcher whose worker G6 names goes up with it
        out: list[tuple[dict[str, Any], str]] = []

        def walk(row: dict[str, Any], lead: str, glyph: str) -> None:
            out.append((row, lead + glyph))
            under = self._ordered(kids.get(row["pid"], []), totals, pinned)
            nxt = lead + ("" if not glyph else "   " if glyph == "└─ " else "│  ")
            for i, child in enumerate(under):
                walk(child, nxt, "└─ " if i == len(under) - 1 else "├─ ")

        for root in self._ordered(kids.get(None, []), totals, pinned):
            walk(root, "", "")
        return out

    # -- drawing ---------------------------------------------------------------------------------
    def _redraw(self) -> None:
        if not getattr(self, "_ready", False) or not self._table.is_attached:
            return
        t = self._table
        laid = self._layout()
        wanted = [str(r.get("pid")) for r, _ in laid]
        present = [rk.value for rk in t.rows]
        note = f"{len(laid)} of {len(self.rows)} processes · sort: {self.sort_label}"
        if self.blamed & {r["pid"] for r, _ in laid}:
            note += f" · ! named by {self.blamed_by}"
        if self.filter_text:
            note += f" · filter: {self.filter_text!r} (/ edits, esc clears)"
        if self.tree_view:
            note += " · tree: a parent's memory sums its own and its children's"
        if self.view_note:
            note = f"{self.view_note} · {note}"
        set_content(self._note, Text(note, style="dim"))
        cells = [self._cells(r, prefix) for r, prefix in laid]
        signature = [tuple(c.plain for c in row) for row in cells]
        last = self._last_signature
        if signature == last:
            return  # nothing changed since the last scan: no table work at all
        self._last_signature = signature
        with self.app.batch_update():
            if present != wanted or last is None:
                # Someone working in the table keeps the cursor on its process (k must not move to
                # another); otherwise the table starts at its top, where what G6 names is.
                selected = self.selected_row if t.has_focus else None
                t.clear()
                for pid, row in zip(wanted, cells):
                    t.add_row(*row, key=pid)
                if selected is not None and str(selected["pid"]) in wanted:
                    t.move_cursor(row=wanted.index(str(selected["pid"])), animate=False)
            else:  # same rows in the same order: repaint only the cells that changed
                for pid, row, new, old in zip(wanted, cells, signature, last):
                    for (name, _), cell, a, b in zip(self.COLUMNS, row, new, old):
                        if a != b:
                            t.update_cell(pid, name, cell)

    def _cells(self, r: dict[str, Any], prefix: str) -> list[Text]:
        pid = r["pid"]
        gpu, gpu_more, rss, rss_more = self._totals.get(pid, (r.get("gpu_mem_bytes"), False, r.get("rss_bytes"), False))
        kind = str(r.get("kind") or "")
        style = {"server": "yellow", "training": "cyan"}.get(kind, "")
        named = pid in self.blamed
        mark = "bold red" if named else ""
        # user, name and command are other users' text: plain (never markup), controls visible
        return [Text(f"!{pid}" if named else str(pid), style=mark), plain(r.get("user") or "?"), plain(kind, style=style),
                plain(prefix + str(r.get("name") or "?"), style=mark, overflow="ellipsis", no_wrap=True),
                Text(_amount(gpu, gpu_more)), Text(_amount(rss, rss_more)), plain(cap_text(r.get("cap"))),
                Text(age(r.get("age_s"))), plain(r.get("command") or "", overflow="ellipsis", no_wrap=True)]


def _amount(v: int | None, more: bool) -> str:
    """GiB with a unit; '+?' when part of a rolled-up sum is unknown (N/A is never 0)."""
    if v is None:
        return "?"
    return f"{gib(v)}{'+?' if more else ''} G"


def children_of(rows: list[dict[str, Any]]) -> dict[int | None, list[dict[str, Any]]]:
    """Each shown row under its parent: its ppid when that is shown, else the top of its instance
    (``group``: vllm serve over VLLM::EngineCore, torchrun over its ranks), else a root (None)."""
    by_pid = {r["pid"]: r for r in rows}
    parent: dict[int, int | None] = {}
    for r in rows:
        pid = r["pid"]
        up = next((p for p in (r.get("ppid"), r.get("group")) if p in by_pid and p != pid), None)
        parent[pid] = up
    for pid, up in list(parent.items()):  # a loop (bad data: a ppid pointing down) is cut where it closes
        seen = {pid}
        while up is not None and up not in seen:
            seen.add(up)
            up = parent[up]
        if up == pid:
            parent[pid] = None
    kids: dict[int | None, list[dict[str, Any]]] = {}
    for r in rows:
        kids.setdefault(parent[r["pid"]], []).append(r)
    return kids


def _ancestors(pids: frozenset[int], kids: dict[int | None, list[dict[str, Any]]]) -> set[int]:
    """``pids`` and every row above them in the tree."""
    parent = {c["pid"]: p for p, cs in kids.items() for c in cs}
    out: set[int] = set()
    for start in pids:
        pid: int | None = start
        while pid is not None and pid in parent and pid not in out:
            out.add(pid)
            pid = parent[pid]
    return out


def rolled_up(rows: list[dict[str, Any]], kids: dict[int | None, list[dict[str, Any]]]) -> dict[int, tuple[Any, ...]]:
    """Per pid: (GPU bytes, some GPU figure unknown, RSS bytes, some RSS unknown) over its subtree,
    children before parents in one pass. A figure NVML lists as N/A or an unreadable RSS is
    unknown, never counted as 0; a process not in NVML's list holds nothing on the GPU."""
    order, todo = [], list(kids.get(None, []))
    while todo:
        row = todo.pop()
        order.append(row)
        todo.extend(kids.get(row["pid"], []))
    acc: dict[int, tuple[int, bool, bool, int, bool, bool]] = {}
    for row in reversed(order):
        gpu, rss = row.get("gpu_mem_bytes"), row.get("rss_bytes")
        g, g_seen, g_na = gpu or 0, gpu is not None, bool(row.get("on_gpu")) and gpu is None
        r, r_seen, r_na = rss or 0, rss is not None, rss is None
        for child in kids.get(row["pid"], []):
            cg, cg_seen, cg_na, cr, cr_seen, cr_na = acc[child["pid"]]
            g, g_seen, g_na, r, r_seen, r_na = g + cg, g_seen or cg_seen, g_na or cg_na, r + cr, r_seen or cr_seen, r_na or cr_na
        acc[row["pid"]] = (g, g_seen, g_na, r, r_seen, r_na)
    return {pid: (g if g_seen else None, g_na and g_seen, r if r_seen else None, r_na and r_seen)
            for pid, (g, g_seen, g_na, r, r_seen, r_na) in acc.items()}


def process_details(r: dict[str, Any]) -> str:
    """One process as Markdown for its pop-up: what the table cuts short. What the process says of
    itself (user, server, cap source, command line) is inert: escaped prose, a fenced command line
    whose fence no backtick run inside can close, controls visible (core/inert.py)."""
    cap = r.get("cap") or {}
    lines = [f"- **kind:** {md_text(r.get('kind') or '?', False)}" + (f" ({md_text(r['server'], False)})" if r.get("server") else ""),
             f"- **user:** {md_text(r.get('user') or '?', False)}",
             f"- **GPU memory:** {gib(r.get('gpu_mem_bytes')) + ' GiB' if r.get('gpu_mem_bytes') is not None else 'not listed by NVML'}",
             f"- **resident memory:** {gib(r.get('rss_bytes'))} GiB",
             f"- **running for:** {age(r.get('age_s'))}"]
    if cap:
        lines.append("- **memory cap:** " + md_text(f"{cap_text(cap) or 'none'}: {cap.get('source') or ''} "
                                                     f"{cap.get('detail') or ''}".rstrip(), False))
    if r.get("group") not in (None, r.get("pid")):
        lines.append(f"- **part of:** pid {r['group']}")
    return "\n".join(lines) + "\n\n" + "\n".join(md_fence([visible(r.get("command") or "(command line not readable)")])) + "\n"


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
