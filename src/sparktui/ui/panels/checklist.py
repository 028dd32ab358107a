"""The checklist panel: one row per check, in the registry's order."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding

from sparktui.core.verdict import Status, Verdict
from sparktui.gotchas import REGISTRY
from sparktui.ui.format import SPINNER, age, status_styles
from sparktui.ui.inert import plain
from sparktui.ui.widgets.tables import BoundedTable


class Checklist(BoundedTable):
    """Every check, one row each, keyed by id; cells are updated in place."""

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
        check = 26 if width >= 100 else 16
        if not self.set_column_width("check", check):
            check = 26
        fixed = sum(w for _, k, w in self.COLUMNS if k not in ("finding", "check")) + check
        fixed += 2 * len(self.COLUMNS) + 2
        self.set_column_width("finding", max(12, width - fixed))

    def show(self, gid: str, verdict: Verdict | None, running_s: float | None, now: float, tick: int) -> None:
        if running_s is not None:
            glyph = Text(SPINNER[tick % len(SPINNER)], style="bold cyan")
            finding = Text(f"checking… {running_s:.0f}s" + ("  (c cancels)" if running_s >= 5 else ""), style="cyan")
        elif verdict is None:
            glyph, finding = Text("·", style="dim"), Text("waiting", style="dim")
        else:
            style = status_styles(self.app.current_theme.dark, self.app.no_color)[verdict.status]
            glyph = Text(verdict.status.glyph, style=style)
            finding = plain(verdict.summary, style="" if verdict.status is not Status.SKIP else "dim", no_wrap=True,
                            overflow="ellipsis")  # it quotes outside text: never markup, controls visible
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
