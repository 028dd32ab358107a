"""A DataTable updated in place, cell by cell, for tables left open for days (public Textual API only)."""

from __future__ import annotations

from typing import Any

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
    DataTable: a table repaints only when something it shows changed. Only Textual's public
    DataTable API is used (no render-cache internals), so any Textual of the range pyproject.toml
    names keeps it working."""

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
        super().update_cell(row_key, column_key, value, update_width=update_width)
        self.drop_stale_renders()

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
