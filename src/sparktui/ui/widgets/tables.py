"""A DataTable with bounded caches and a one-row repaint, for tables left open for days."""

from __future__ import annotations

from typing import Any

from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey


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
