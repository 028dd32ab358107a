"""The dashboard's panels. They only show: data arrives through their ``show_*`` methods."""

from __future__ import annotations

from typing import Any

from rich.color import Color
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.strip import Strip
from textual.widgets import DataTable, Input, Label, Static
from textual.widgets.data_table import ColumnKey, RowKey

from sparktui.core.telemetry import History, free_gib
from sparktui.core.verdict import Status, Verdict
from sparktui.gotchas import REGISTRY
from sparktui.ui.format import SPINNER, STATUS_STYLE, age, bucket_max, duration, gib, short_reason


def set_content(widget: Static | TextLine, content: Any) -> None:
    """Update a fixed-size text widget only when its content changed, without a layout pass
    (a 1 Hz dashboard must not re-layout the screen every second)."""
    key = content.plain + str(content.spans) if isinstance(content, Text) else str(content)
    if getattr(widget, "_sparktui_last", None) == key:
        return
    widget._sparktui_last = key  # type: ignore[attr-defined]
    widget.update(content, layout=False)


class BoundedTable(DataTable):
    """A DataTable whose render caches fit a small table left open for a day.

    DataTable keys its cell cache on each cell's update count, and keeps 10,000 cells: a table whose
    ages and findings change every minute fills that for hours and the process grows by megabytes
    (measured: +9 MB over a 10-minute soak). Our tables show tens of rows; these bounds hold every
    visible cell in each of its cursor/hover states."""

    CELL_CACHE, LINE_CACHE = 2000, 300

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        for name, size in (("_cell_render_cache", self.CELL_CACHE), ("_row_render_cache", self.LINE_CACHE),
                           ("_line_cache", self.LINE_CACHE)):
            cache = getattr(self, name, None)
            if cache is not None and hasattr(cache, "maxsize"):
                cache.maxsize = size

    def update_cell(self, row_key: Any, column_key: Any, value: Any, *, update_width: bool = False) -> None:
        """Change one cell and repaint its row only.

        DataTable's own update_cell bumps a table-wide counter that is part of every render cache
        key, so one changed finding re-renders every row (measured: ~10 ms per checklist repaint,
        most of the dashboard's idle CPU). Here only the changed row's cache entries go and only
        its lines are marked dirty. Relies on DataTable internals of the pinned Textual; the
        checklist and process-table tests fail if they move."""
        rk = row_key if isinstance(row_key, RowKey) else RowKey(row_key)
        ck = column_key if isinstance(column_key, ColumnKey) else ColumnKey(column_key)
        if update_width or rk not in self._row_locations or ck not in self._column_locations:
            super().update_cell(row_key, column_key, value, update_width=update_width)  # raises for a bad key
            return
        self._data[rk][ck] = value
        index = self._row_locations.get(rk)
        for cache, stale in ((self._cell_render_cache, lambda k: k[0] == rk),
                             (self._row_render_cache, lambda k: k[0] == rk),
                             (self._row_renderable_cache, lambda k: k[1] == index)):
            for key in [k for k in cache.keys() if stale(k)]:
                cache.discard(key)
        self._line_cache.clear()  # keyed by screen line; rebuilt from the row caches above
        self.refresh_row(index)


class Checklist(BoundedTable):
    """G1-G10, one row each, keyed by id; cells are updated in place."""

    # DataTable's own enter binding is hidden, and it shadows the app's: name it, for the footer
    BINDINGS = [Binding("enter", "select_cursor", "card", key_display="⏎")]

    COLUMNS = (("", "glyph", 1), ("id", "id", 3), ("check", "check", 26), ("finding", "finding", 40), ("age", "age", 5))

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = False
        self.show_horizontal_scrollbar = False
        for label, key, width in self.COLUMNS:
            self.add_column(label, key=key, width=width)
        for g in REGISTRY.values():
            # Text cells throughout: a str cell is parsed as markup (emoji and all) on every repaint
            self.add_row(Text("·", style="dim"), Text(g.id), Text(g.title, overflow="ellipsis", no_wrap=True),
                         Text("waiting", style="dim"), Text("—"), key=g.id)
        self._fit(self.size.width)

    def on_resize(self, event) -> None:
        self._fit(event.size.width)

    def _fit(self, width: int) -> None:
        """The finding column takes whatever the fixed columns leave."""
        if not width:
            return
        check = self.columns.get("check")  # type: ignore[arg-type]
        if check is not None:
            check.width = 26 if width >= 100 else 16
        fixed = sum(w for _, k, w in self.COLUMNS if k not in ("finding", "check")) + (check.width if check else 26)
        fixed += 2 * len(self.COLUMNS) + 2
        col = self.columns.get("finding")  # type: ignore[arg-type]
        if col is not None:
            col.width = max(12, width - fixed)
            col.auto_width = False
            self._require_update_dimensions = True
            self.refresh()

    def show(self, gid: str, verdict: Verdict | None, running_s: float | None, now: float, tick: int) -> None:
        if running_s is not None:
            glyph = Text(SPINNER[tick % len(SPINNER)], style="bold cyan")
            finding = Text(f"checking… {running_s:.0f}s" + ("  (c cancels)" if running_s >= 5 else ""), style="cyan")
        elif verdict is None:
            glyph, finding = Text("·", style="dim"), Text("waiting", style="dim")
        else:
            style = STATUS_STYLE[verdict.status]
            glyph = Text(verdict.status.glyph, style=style)
            finding = Text(verdict.summary, style="" if verdict.status is not Status.SKIP else "dim", no_wrap=True,
                           overflow="ellipsis")
        when = Text(age(now - verdict.measured_at) if verdict is not None and verdict.measured_at else "—")
        cache = self.__dict__.setdefault("_shown", {})
        for col, cell in (("glyph", glyph), ("finding", finding), ("age", when)):
            key = (cell.plain, cell.style)
            if cache.get((gid, col)) != key:  # unchanged cells cost nothing: no row re-render
                cache[(gid, col)] = key
                self.update_cell(gid, col, cell)

    @property
    def selected_id(self) -> str | None:
        if self.row_count == 0:
            return None
        try:
            return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        except Exception:
            return None


class TextLine(Widget):
    """One line of text drawn as one cached Strip (the meters' values change every second).

    A Label re-wraps and re-formats its content on every repaint; this builds the line once
    per change. ``update`` takes a str (plain, no markup) or a rich Text. Meant for unstyled
    text: Textual draws a "dim" style through its own content path, which this skips."""

    DEFAULT_CSS = "TextLine { height: 1; }"

    def __init__(self, content: str | Text = "", **kw: Any) -> None:
        super().__init__(**kw)
        self._text = content if isinstance(content, Text) else Text(content)
        self._strip: tuple[tuple, Strip] | None = None

    def update(self, content: str | Text = "", *, layout: bool = False) -> None:
        self._text = content if isinstance(content, Text) else Text(str(content))
        self._strip = None
        self.refresh(layout=layout)

    def render(self) -> Text:
        return self._text

    def render_line(self, y: int) -> Strip:
        width, base = self.size.width, self.rich_style
        if y != 0 or width <= 0:
            return Strip.blank(width, base)
        key = (width, base)
        if self._strip is None or self._strip[0] != key:
            text = self._text.copy()
            text.truncate(width, overflow="ellipsis")
            segments = Segment.apply_style(text.render(self.app.console, end=""), base)
            self._strip = (key, Strip(segments).adjust_cell_length(width, base))
        return self._strip[1]


class SparkLine(Widget):
    """A one-line sparkline drawn as one cached Strip, rebuilt only when its data or size changes.

    Textual's Sparkline re-buckets its data with Fractions and renders through Rich on every
    repaint: ~0.6 ms each, five meters a second, the largest share of the dashboard's idle CPU.
    This one looks the same (bars low to high, colour blended from the min to the max colour,
    the same component classes) and costs a list lookup when nothing changed."""

    BARS = "▁▂▃▄▅▆▇█"
    COMPONENT_CLASSES = {"sparkline--min-color", "sparkline--max-color"}
    DEFAULT_CSS = """
    SparkLine { height: 1; }
    SparkLine > .sparkline--max-color { color: $primary; }
    SparkLine > .sparkline--min-color { color: $primary 30%; }
    """

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._data: list[float] = []
        self._strip: tuple[tuple, Strip] | None = None
        self._styles: tuple[tuple, dict[tuple[int, int, int], Style]] = ((), {})

    @property
    def data(self) -> list[float]:
        return self._data

    @data.setter
    def data(self, values: list[float]) -> None:
        values = list(values)
        if values != self._data:
            self._data, self._strip = values, None
            self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        if y != 0 or width <= 0:
            return Strip.blank(width, base)
        _, bg = self.background_colors
        lo = (bg + self.get_component_styles("sparkline--min-color").color).rich_color
        hi = (bg + self.get_component_styles("sparkline--max-color").color).rich_color
        key = (width, base, lo, hi)  # new data drops the strip (the setter)
        if self._strip is None or self._strip[0] != key:
            self._strip = (key, Strip(self._segments(width, base, lo, hi), width))
        return self._strip[1]

    def _segments(self, width: int, base: Style, lo: Color, hi: Color) -> list[Segment]:
        data = self._data
        if not data:
            return [Segment("▁" * width, base + Style(color=lo))]
        if len(data) == 1:
            return [Segment("█" * width, base + Style(color=hi))]
        low, extent = min(data), (max(data) - min(data)) or 1  # of the series, as Textual scales it
        data = bucket_max(data, width)
        top = len(self.BARS) - 1
        # One point per column; fewer points than columns: each spans several. The index is
        # accumulated, not col * step: Textual's float steps pick the same points that way.
        step, at, ratios = len(data) / width, 0.0, []
        for _ in range(width):
            ratios.append((data[int(at)] - low) / extent)
            at += step
        if lo.triplet is None or hi.triplet is None:  # no RGB to blend (an ANSI theme): Textual uses max
            return [Segment(self.BARS[int(r * top)], base + Style(color=hi)) for r in ratios]
        # Colours blended in straight RGB and truncated, as Textual's sparkline does; one Style per
        # distinct colour, kept while the theme lasts (building Styles was most of a rebuild).
        if self._styles[0] != (base, lo, hi):
            self._styles = ((base, lo, hi), {})
        styles = self._styles[1]
        (r1, g1, b1), (r2, g2, b2) = lo.triplet, hi.triplet
        out = []
        for ratio in ratios:
            rgb = (int(r1 + (r2 - r1) * ratio), int(g1 + (g2 - g1) * ratio), int(b1 + (b2 - b1) * ratio))
            style = styles.get(rgb)
            if style is None:
                style = styles[rgb] = base + Style(color=Color.from_rgb(*rgb))
            out.append(Segment(self.BARS[int(ratio * top)], style))
        return out


class Meter(Horizontal):
    """A label, the current value with units, and a sparkline of the session's history."""

    def __init__(self, label: str, meter_id: str) -> None:
        super().__init__(id=meter_id, classes="meter")
        self._label = label

    def compose(self) -> ComposeResult:
        self._value = TextLine("—", classes="meter-value")
        self._spark = SparkLine(classes="meter-spark")
        yield TextLine(self._label, classes="meter-label")
        yield self._value
        yield self._spark

    def show(self, value: str, series: list | None = None, *, below: float | None = None) -> None:
        """``below``: plot ``below - x`` (memory used from MemAvailable), flipped after bucketing
        so an hour of samples is not copied each second."""
        set_content(self._value, value)
        if series is not None:
            self._series, self._below = series, below
            self._fit()

    def _fit(self) -> None:
        """One bucket per column of the sparkline as it is now laid out."""
        series = getattr(self, "_series", None)
        if series is None:
            return
        spark = self._spark
        width = max(8, spark.size.width or 30)
        if self._below is None:
            data = bucket_max(series, width)
        else:  # the max of (below - x) over a bucket is below - its min
            data = [self._below - v for v in bucket_max(series, width, pick=min)]
        spark.data = data  # a no-op when the picture did not change

    def on_resize(self) -> None:
        self._fit()  # the first samples may arrive before the layout knows the width


class TelemetryPanel(Vertical):
    """Temperature, power, SM clock, memory as `free -g` sees it, and the last measured bandwidth."""

    def compose(self) -> ComposeResult:
        # Held, not queried each tick (cheaper, and safe while the app shuts down).
        self.temp, self.power = Meter("temp", "m-temp"), Meter("power", "m-power")
        self.clock, self.mem, self.avail = Meter("SM clk", "m-clock"), Meter("memory", "m-mem"), Meter("avail", "m-avail")
        self.bandwidth = Label("bandwidth: not measured (b)", id="bandwidth")
        self.note = Label("", id="telemetry-note")  # styled (dim): a Label draws that as the theme wants
        yield from (self.temp, self.power, self.clock, self.mem, self.avail, self.bandwidth, self.note)

    def show(self, history: History, rated_w: float, span_s: float | None) -> None:
        s = history.latest
        if not s or not self.is_attached:
            return  # nothing yet, or a sample that arrived while the app shuts down
        g0 = (s.get("gpus") or [{}])[0] if s.get("gpus") else {}
        errs = (g0.get("errors") or {}) if g0 else {}

        def val(key: str, fmt: str, unit: str) -> str:
            v = g0.get(key) if g0 else None
            if v is None:
                why = errs.get(key) or (s.get("errors") or {}).get("nvml") or "unavailable"
                return f"n/a ({short_reason(why)})"
            return f"{v:{fmt}} {unit}"

        self.temp.show(val("temp_c", ".0f", "°C"), history.plotted("g0.temp_c"))
        power = val("power_w", ".1f", "W")
        if g0 and g0.get("power_w") is not None:
            power += f" / {rated_w:.0f}"
        self.power.show(power, history.plotted("g0.power_w"))
        self.clock.show(val("sm_mhz", ".0f", "MHz"), history.plotted("g0.sm_mhz"))
        f = free_gib(s.get("mem") or {})
        if f.get("total") is not None:
            mem = f"{f['used']:.0f}/{f['total']:.0f}G used {f['buff_cache'] or 0:.0f}G cache"
        else:
            mem = "n/a (/proc/meminfo)"
        total = (s.get("mem") or {}).get("MemTotal")
        available = history.plotted("mem.MemAvailable")  # one series feeds both memory meters
        self.mem.show(mem, available if total is not None else [], below=total)
        avail = f"{f['available']:.1f} GiB" if f.get("available") is not None else "n/a"
        self.avail.show(avail, available)
        reasons = [r for r in (g0.get("reasons") or []) if r != "gpu_idle"] if g0 else []
        if history.wrapped and history.trend.first_t is not None and s.get("t") is not None:
            note = f"history: {duration(s['t'] - history.trend.first_t)} (a point a minute)"
        else:
            note = f"history: {span_s / 60:.0f} min" if span_s else ""
        if reasons:
            note = f"clock events: {', '.join(reasons)}  " + note
        set_content(self.note, Text(note, style="yellow" if reasons else "dim"))

    def show_bandwidth(self, text: str) -> None:
        if self.is_attached:
            set_content(self.bandwidth, text)


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


class HeaderBar(Widget):
    """Host, GPU, driver, CUDA, source, and how long sparktui has been watching. Built at paint
    time, so the short form (a tmux pane at 80 columns) or the long one always fits the width the
    bar has then, including the first frames before the terminal reported its size."""

    _args: tuple = ()

    def show(self, host: str, gpu: str, driver: str, cuda: str, watching: str, source: str, paused: bool,
             badges: tuple[tuple[str, str], ...] = ()) -> None:
        """``badges``: (text, style) pairs that must be seen from across the desk (new worsening
        events, peers that differ), placed before the source label so 80 columns keep them."""
        args = (host, gpu, driver, cuda, watching, source, paused, badges)
        if args != self._args:
            self._args = args
            self.refresh()

    def render(self) -> Text:
        t = Text(no_wrap=True, overflow="ellipsis")
        if not self._args:
            return t
        host, gpu, driver, cuda, watching, source, paused, badges = self._args
        narrow = 0 < self.size.width < 110
        if paused:  # first: the one thing that must not be cut off at 80 columns
            t.append(" ⏸ PAUSED ", style="bold reverse yellow")
        if not narrow:
            t.append(" sparktui ", style="bold reverse")
        t.append(f" {host} ", style="bold")
        if narrow:
            t.append(f"· {gpu.replace('NVIDIA ', '')} · {driver} · CUDA {cuda} · ")
        else:
            t.append(f"· {gpu} · driver {driver} · CUDA {cuda} · ")
        t.append(f"{'' if narrow else 'watching '}{watching}", style="bold")
        for text, style in badges:
            t.append(" · ")
            t.append(text, style=style)
        t.append(f" · {source}", style="dim")
        return t
