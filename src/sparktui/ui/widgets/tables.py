"""A DataTable updated in place, cell by cell, for tables left open for days: an unchanged cell costs nothing, a changed one repaints its row."""

from __future__ import annotations

from typing import Any, Callable

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable
from textual.widgets.data_table import CellDoesNotExist, ColumnKey, RowKey


def same_cell(a: Any, b: Any) -> bool:
    """Whether two cell values draw the same. rich's ``Text.__eq__`` compares the characters and
    spans only: a status glyph that turns from green to red is a change here."""
    if isinstance(a, Text) or isinstance(b, Text):
        return (isinstance(a, Text) and isinstance(b, Text) and a.plain == b.plain and str(a.style) == str(b.style)
                and a.spans == b.spans and (a.justify, a.overflow, a.no_wrap, a.end) == (b.justify, b.overflow, b.no_wrap, b.end))
    return type(a) is type(b) and a == b


class BoundedTable(DataTable):
    """A DataTable whose unchanged cells cost nothing.

    DataTable's ``update_cell`` re-renders the whole table (a table-wide counter is part of every
    render cache key), so a panel that sets every cell each second would repaint every row each
    second. Here a value that draws the same as the cell's current one is dropped before it reaches
    DataTable: a table repaints only when something it shows changed, and then only the changed
    cell's row. That last part names DataTable's four render caches (``ROW_CACHES``); a Textual
    without them gets the public ``notify_style_update`` (a whole-table repaint, still correct)."""

    # DataTable's home / end scroll sideways in a row table: here they go to the first / last row
    BINDINGS = [Binding("home", "scroll_top", "first row", show=False, tooltip="the first row"),
                Binding("end", "scroll_bottom", "last row", show=False, tooltip="the last row"),
                Binding("g", "scroll_top", "first row", show=False, tooltip="the first row (as in less and vim)"),
                Binding("G", "scroll_bottom", "last row", show=False, tooltip="the last row (as in less and vim)")]

    def update_cell(self, row_key: RowKey | str, column_key: ColumnKey | str, value: Any, *,
                    update_width: bool = False) -> None:
        if not update_width:
            try:
                if same_cell(self.get_cell(row_key, column_key), value):
                    return
            except CellDoesNotExist:
                pass  # DataTable's own update_cell raises it, with its message
        if update_width:
            super().update_cell(row_key, column_key, value, update_width=True)
            self.drop_stale_renders()
            return
        self._row_only = True  # DataTable repaints the whole table for one cell: here, only its row
        try:
            super().update_cell(row_key, column_key, value)
            if not self._drop_row_caches():
                self.drop_stale_renders()
        finally:
            self._row_only = False
        self.refresh_row(self.get_row_index(row_key))

    ROW_CACHES = ("_row_render_cache", "_cell_render_cache", "_row_renderable_cache", "_line_cache")

    def _drop_row_caches(self) -> bool:
        """Empty DataTable's own render caches (what ``drop_stale_renders`` is for) but keep the
        lines already drawn (the styles cache): a repaint of one row then draws that row only,
        even when the screen's update region spans the whole table (a plot beside it changed).
        False where this Textual has not got them (the public hook then does it all)."""
        clears: list[Callable[[], Any]] = []
        for name in self.ROW_CACHES:
            clear = getattr(getattr(self, name, None), "clear", None)
            if not callable(clear):
                return False
            clears.append(clear)
        for clear in clears:
            clear()
        return True

    def refresh(self, *regions: Any, **kw: Any) -> Any:
        """As Widget.refresh, except the whole-table repaint that ``update_cell`` and
        ``drop_stale_renders`` ask for while one cell changes: ``refresh_row`` repaints its row
        (a checklist finding that changes every few seconds repainted 14 rows, ~20 ms, each time)."""
        if getattr(self, "_row_only", False) and not regions and not kw:
            return self
        return super().refresh(*regions, **kw)

    def drop_stale_renders(self) -> None:
        """Empty the render caches: every entry is keyed on the update count an update just bumped,
        so none can be drawn again, and DataTable keeps up to 10,000 cells of them: a table whose
        ages change every minute grows the process by megabytes over hours (measured before: +9 MB
        in a 10-minute soak). ``notify_style_update`` is Textual's public hook for "drop cached
        renders"; nothing that could still be drawn is lost."""
        self.notify_style_update()

    def set_column_width(self, column_key: str, width: int) -> bool:
        """Fix column ``column_key`` at ``width`` cells (a panel fitting a resized terminal); the
        table's scrollable width follows. False when there is no such column."""
        column = self.columns.get(ColumnKey(column_key))
        if column is None:
            return False
        if column.width == width and not column.auto_width:
            return True
        column.width, column.auto_width = width, False
        if self.row_count:
            # DataTable recomputes its size after a cell is updated with update_width; the cell
            # keeps its value (a fixed-width column's content width does not decide its width)
            row_key = next(iter(self.rows))
            super().update_cell(row_key, column.key, self.get_cell(row_key, column.key), update_width=True)
            self.drop_stale_renders()
        else:
            self.refresh(layout=True)
        return True
