"""The process table (G6): everything competing for the unified memory pool."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import DataTable, Input, Label, TabbedContent, TabPane
from textual.widgets.data_table import ColumnKey

from sparktui.core.inert import md_fence, md_text, visible
from sparktui.live import list_every_process
from sparktui.ui.format import age, gib
from sparktui.ui.inert import plain
from sparktui.ui.prefs import Prefs
from sparktui.ui.widgets.tables import BoundedTable
from sparktui.ui.widgets.text import set_content


class ProcessTable(Vertical):
    """Everything on the unified pool (G6), keyed by pid: filtered by '/', sorted by any column
    ('s' next column, 'S' reverse, or a click on its header, which shows ▲/▼), optionally as a
    tree (launcher -> workers, memory rolled up onto the launcher). The processes G6's verdict
    names are marked '!' and kept at the top, so a short pane still shows them.

    A filter is never kept across runs and always named in the tab's title (a filter nobody sees
    hides a training job). 'a' lists every process on the pool, not only the classified ones (the
    scans describe them only while this is on); 'z' gives the table the whole screen. A cell too
    narrow for its text ends with '…'; Enter shows the row whole."""

    COLUMNS = (("pid", 7), ("user", 9), ("kind", 11), ("name", 16), ("GPU mem", 9), ("RSS", 8), ("CPU %", 6),
               ("GPU %", 6), ("share", 7), ("cap", 14), ("container", 12), ("age", 7), ("command", 60))
    LARGEST_FIRST = frozenset({"GPU mem", "RSS", "CPU %", "GPU %", "share", "cap", "age"})  # a new sort column starts this way round

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
        self.filter_text = ""  # never kept across runs: a filter left from yesterday hid a training job
        self.tree_view = p.tree
        self.show_all = False  # 'a': every process, not only the classified ones (never kept either)
        self.maximised = False  # 'z': the table has the screen
        self.mem_total: int | None = None  # MemTotal: what a row's share is of
        self._title: str | None = None  # the tab's own title, before a filter is added to it
        self.blamed: frozenset[int] = frozenset()
        self.blamed_by = ""  # the checks whose verdicts name them
        self.view_note = ""
        self._totals: dict[int, tuple[Any, ...]] = {}  # tree view: each row's subtree sums (rolled_up)
        self._filter_timer: Timer | None = None
        self._last_signature: list[tuple[str, ...]] | None = None  # the cells last drawn (_redraw)

    def compose(self) -> ComposeResult:
        # Held, not queried: a scan can arrive while the app is shutting down and the children
        # are already gone (query_one would raise NoMatches and take the app down with it).
        self._filter = Input(self.filter_text, placeholder="filter processes (name, command, user, kind, container); Esc clears",
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
        self._redraw()  # a scan that arrived before the table existed
        self._show_title()

    def on_unmount(self) -> None:
        if self.show_all:
            list_every_process(False)  # the scans go back to describing the classified processes only

    def on_resize(self, event) -> None:
        self._fit(event.size.width)
        self._redraw()  # the info line is fitted to the width
        if self.filter_text:
            self._show_title()

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
        """Filter as typed. Shown in the tab's title while on, and never kept: the next run starts
        with every process in sight (a kept filter once made a user conclude no training job ran)."""
        self.filter_text = text.strip().lower()
        self._redraw()
        self._show_title()

    def title_text(self, room: int | None = None) -> str:
        """The tab's title: its own, and the filter while one is on, within ``room`` characters (what
        the other tabs leave): the filter cut with '…', then "(esc clears)" dropped, never the word
        "filter"."""
        base = self._title or "Processes"
        if not self.filter_text:
            return base
        ft = visible(self.filter_text)
        room = 10_000 if room is None else room
        for tail in (" (esc clears)", ""):
            head = f'{base} · filter "'
            fits = room - len(head) - 1 - len(tail)
            if len(ft) <= fits:
                return f'{head}{ft}"{tail}'
            if fits >= 6 or not tail:
                return f'{head}{ft[:max(fits, 4) - 1]}…"{tail}'
        return f'{base} · filter "{ft}"'

    def _tab(self) -> Any:
        """The tab that titles this table (None outside a TabbedContent)."""
        pane = next((a for a in self.ancestors if isinstance(a, TabPane)), None)
        tabs = next((a for a in self.ancestors if isinstance(a, TabbedContent)), None)
        if pane is None or tabs is None or pane.id is None:
            return None
        try:
            return tabs.get_tab(pane.id)
        except Exception:  # not laid out yet, or gone while shutting down
            return None

    def _show_title(self) -> None:
        tab = self._tab()
        if tab is None:
            return
        if self._title is None:
            self._title = str(tab.label.plain if isinstance(tab.label, Text) else tab.label)
        others = sum(len(str(getattr(t.label, "plain", t.label))) + 2 for t in tab.parent.children if t is not tab) \
            if tab.parent is not None else 0
        title = self.title_text(max(20, self.app.size.width - others - 3))
        tab.label = Text(title, style="bold" if self.filter_text else "")

    def toggle_all(self) -> bool:
        """'a': every process on the pool, with its share of it; the scans describe them only while on."""
        self.show_all = not self.show_all
        list_every_process(self.show_all)
        self.show(getattr(self, "_last_scan", None), getattr(self, "_now", 0.0))  # the last scan's others, or none
        return self.show_all

    def toggle_maximised(self) -> bool:
        """'z': the table takes the screen (the checklist and plots hidden), and back."""
        self.maximised = not self.maximised
        for w in self.screen.query("#top"):
            w.display = not self.maximised
        return self.maximised

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
    def show(self, data: dict[str, Any] | None, now: float, mem_total: int | None = None) -> None:
        """One process scan; ``mem_total``: the telemetry's MemTotal, what a row's share is of when
        the scan does not carry it (a recording made before scans did)."""
        self.rows = {}
        self._last_scan = data  # the last scan, shown again when "a" toggles
        if data:
            for row in data.get("rows") or []:
                self.rows[str(row.get("pid"))] = row
            if self.show_all:
                for row in data.get("others") or []:
                    self.rows.setdefault(str(row.get("pid")), row)
            total = data.get("mem_total_bytes") or mem_total
            self.mem_total = total if isinstance(total, int) and not isinstance(total, bool) and total > 0 else None
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
        if key in ("GPU mem", "RSS", "share"):
            gpu, _, rss, _ = totals.get(row["pid"], (row.get("gpu_mem_bytes"), False, row.get("rss_bytes"), False))
            v = gpu if key == "GPU mem" else rss if key == "RSS" else (None if gpu is None and rss is None else (gpu or 0) + (rss or 0))
            return -1 if v is None else v  # unknown below zero, never equal to it
        if key in ("CPU %", "GPU %"):
            v = row.get("cpu_pct" if key == "CPU %" else "gpu_util")
            return v if isinstance(v, (int, float)) else -1
        if key == "container":
            return container_text(row.get("container")).lower()
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
            rows = [r for r in rows if ft in " ".join([*(str(r.get(k) or "") for k in ("name", "command", "user", "kind", "pid")),
                                                       container_text(r.get("container"))]).lower()]
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
        set_content(self._note, self._note_text(laid))
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

    def _note_parts(self, laid: list[tuple[dict[str, Any], str]]) -> list[str]:
        """The info line's parts, most needed first."""
        parts = [self.view_note] if self.view_note else []
        shown = "every process" if self.show_all else "processes"
        parts.append(f"{len(laid)} of {len(self.rows)} {shown}")
        if self.blamed & {r["pid"] for r, _ in laid}:
            parts.append(f"! named by {self.blamed_by}")
        if self.filter_text:
            parts.append(f"filter: {self.filter_text!r} (/ edits, esc clears)")
        if self.show_all and not (getattr(self, "_last_scan", None) or {}).get("all"):
            parts.append("every process from the next scan" if not getattr(self.app, "replaying", False)
                         else "this recording holds the classified processes only")
        if self.tree_view:  # short and early: at 80 columns the view says it is a tree
            parts.append("tree view")
        parts.append(f"sort: {self.sort_label}")
        if self.tree_view:
            parts.append("a parent's memory sums its own and its children's")
        if self.show_all:
            parts.append("share: (GPU memory + RSS) / MemTotal; RSS counts shared pages in each process")
        if self.maximised:
            parts.append("z restores")
        return parts

    def _note_text(self, laid: list[tuple[dict[str, Any], str]]) -> Text:
        """As many whole parts as fit the width; '…' where more did not fit (never cut mid-word)."""
        return Text(fit_parts(self._note_parts(laid), self.size.width or 200), style="dim", no_wrap=True, overflow="ellipsis")

    def _cells(self, r: dict[str, Any], prefix: str) -> list[Text]:
        pid = r["pid"]
        gpu, gpu_more, rss, rss_more = self._totals.get(pid, (r.get("gpu_mem_bytes"), False, r.get("rss_bytes"), False))
        kind = str(r.get("kind") or "")
        style = {"server": "yellow", "training": "cyan"}.get(kind, "")
        named = pid in self.blamed
        mark = "bold red" if named else ""
        # user, name, container and command are other users' text: plain (never markup), controls visible;
        # a cell too narrow for its text ends with '…', never cut mid-word unmarked
        on_gpu = bool(r.get("on_gpu"))
        return [_cut(Text(f"!{pid}" if named else str(pid), style=mark)), _cut(plain(r.get("user") or "?")),
                _cut(plain(kind, style=style)), _cut(plain(prefix + str(r.get("name") or "?"), style=mark)),
                _cut(Text(_amount(gpu, gpu_more))), _cut(Text(_amount(rss, rss_more))),
                _cut(Text(pct_text(r.get("cpu_pct")))), _cut(Text(pct_text(r.get("gpu_util")) if on_gpu else "")),
                _cut(Text(share_text(gpu, gpu_more or (on_gpu and gpu is None), rss, rss_more, self.mem_total))),
                _cut(plain(cap_text(r.get("cap")))), _cut(plain(container_text(r.get("container")))),
                _cut(Text(age(r.get("age_s")))), _cut(plain(r.get("command") or ""))]


def _cut(t: Text) -> Text:
    """A cell: one line, ending with '…' where the column is too narrow."""
    t.no_wrap, t.overflow = True, "ellipsis"
    return t


def fit_parts(parts: list[str], width: int, sep: str = " · ") -> str:
    """The parts joined, as many whole ones as fit ``width``; a trailing ' …' says more did not fit.
    A first part longer than the width is cut at a space (mid-word only when it has none), marked."""
    out, dropped = "", False
    for i, part in enumerate(parts):
        nxt = part if not out else out + sep + part
        more = i < len(parts) - 1
        if len(nxt) + (2 if more else 0) > width and out:
            dropped = True
            break
        out = nxt
    if len(out) + (2 if dropped else 0) <= width:
        return out + (" …" if dropped else "")
    if len(out) > width or dropped:
        head = out[:max(1, width - 2)]
        cut = head.rfind(" ")
        return (head[:cut] if cut > width // 2 else head).rstrip() + " …"
    return out


def pct_text(v: Any) -> str:
    """A percentage, or n/a where none was measured (never 0 for 'not known')."""
    if not isinstance(v, (int, float)):
        return "n/a"
    return f"{v:.0f}" if v >= 10 else f"{v:.1f}"


def share_text(gpu: int | None, gpu_more: bool, rss: int | None, rss_more: bool, total: int | None) -> str:
    """(GPU memory + RSS) / MemTotal in %: '+?' when part of it is unknown, '?' when all is."""
    if not total or (gpu is None and rss is None):
        return "?"
    v = 100.0 * ((gpu or 0) + (rss or 0)) / total
    return f"{v:.1f}%" + ("+?" if gpu_more or rss_more or rss is None else "")


def container_text(c: dict[str, Any] | None) -> str:
    """A container's name, else its short id; '' for a process on the host."""
    if not isinstance(c, dict):
        return ""
    return str(c.get("name") or (str(c.get("id") or "")[:12]) or "")


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
    c = r.get("container")
    gpu_mem = r.get("gpu_mem_bytes")
    lines = [f"- **name:** {md_text(r.get('name') or '?', False)}" + (f" (process {md_text(r['process_name'], False)})"
                                                                     if r.get("process_name") not in (None, "", r.get("name")) else ""),
             f"- **kind:** {md_text(r.get('kind') or '?', False)}" + (f" ({md_text(r['server'], False)})" if r.get("server") else ""),
             f"- **user:** {md_text(r.get('user') or '?', False)}",
             f"- **GPU memory:** {gib(gpu_mem) + ' GiB' if gpu_mem is not None else 'N/A (NVML lists it without a figure)' if r.get('on_gpu') else 'not listed by NVML'}",
             f"- **resident memory:** {gib(r.get('rss_bytes')) + ' GiB' if r.get('rss_bytes') is not None else 'unreadable'}",
             f"- **CPU:** {pct_text(r.get('cpu_pct'))}" + (" % of one core since the last scan" if isinstance(r.get("cpu_pct"), (int, float))
                                                          else " (measured from the second scan on)"),
             f"- **GPU utilisation:** {pct_text(r.get('gpu_util')) + ' % (SM, NVML per-process samples)' if isinstance(r.get('gpu_util'), (int, float)) else 'n/a (NVML gave no per-process sample)' if r.get('on_gpu') else 'not on the GPU'}",
             "- **container:** " + (md_text(f"{c.get('name') or '(no name readable)'}, {c.get('runtime')} id {c.get('id')}", False)
                                    if isinstance(c, dict) else "none (a host process)"),
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
