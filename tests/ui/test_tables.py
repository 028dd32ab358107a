"""The checklist and process table repaint only when something they show changed (the dashboard's
idle CPU is mostly table repaints), and what changed is what the screen then shows.

Only Textual's public DataTable API is used (ui/widgets/tables.py): a changed cell repaints the
table (DataTable's own update_cell), an unchanged one costs nothing."""

from __future__ import annotations

from rich.text import Text
from textual.app import App
from textual.widgets.data_table import ColumnKey

from sparktui.core.verdict import Status, Verdict
from sparktui.ui.panels import Checklist, ProcessTable
from sparktui.ui.widgets.tables import same_cell


class TablesApp(App):
    def compose(self):
        yield Checklist(id="checklist")
        yield ProcessTable(id="procs")


def watch_renders(table) -> set[int]:
    """Row indexes whose cells get rendered from now on (the header is -1)."""
    seen: set[int] = set()
    original = table._render_cell

    def counting(row_index, column_index, *a, **kw):
        seen.add(row_index)
        return original(row_index, column_index, *a, **kw)

    table._render_cell = counting
    return seen


def screen_text(app) -> str:
    return app.export_screenshot().replace("&#160;", " ")


def scan(*rows: tuple[int, str, int]) -> dict:
    return {"rows": [{"pid": pid, "name": name, "user": "me", "kind": "training", "rss_bytes": rss, "age_s": 90,
                      "command": f"python {name}.py"} for pid, name, rss in rows],
            "nvml": {"ok": True, "count": len(rows)}}


async def test_a_changed_finding_is_shown_and_the_other_rows_stay():
    app = TablesApp()
    async with app.run_test(size=(120, 30)) as pilot:
        t = app.query_one(Checklist)
        for i in range(1, 11):
            t.show(f"G{i}", Verdict(f"G{i}", Status.OK, f"fine-{i}", measured_at=100.0), None, 110.0, 0)
        await pilot.pause(0.2)
        assert "fine-4" in screen_text(app)
        t.show("G4", Verdict("G4", Status.WARN, "throttled-now", measured_at=110.0), None, 111.0, 1)
        await pilot.pause(0.2)
        text = screen_text(app)
        assert "throttled-now" in text and "fine-4" not in text
        assert "fine-3" in text and "fine-5" in text


async def test_an_unchanged_verdict_costs_no_repaint():
    app = TablesApp()
    async with app.run_test(size=(120, 30)) as pilot:
        t = app.query_one(Checklist)
        v = Verdict("G3", Status.OK, "MemAvailable 100 GiB", measured_at=100.0)
        t.show("G3", v, None, 110.0, 0)
        await pilot.pause(0.2)
        rendered = watch_renders(t)
        for tick in range(1, 5):
            t.show("G3", v, None, 110.0 + tick, tick)
        await pilot.pause(0.2)
        assert rendered == set()


async def test_process_table_shows_the_changed_cell_and_rebuilds_on_a_new_order():
    app = TablesApp()
    async with app.run_test(size=(160, 30)) as pilot:
        p = app.query_one(ProcessTable)
        p.show(scan((101, "trainer", 40 * 2**30), (202, "vllm", 20 * 2**30), (303, "jupyter", 2**30)), 0.0)
        await pilot.pause(0.2)
        table = p._table
        rendered = watch_renders(table)
        p.show(scan((101, "trainer", 45 * 2**30), (202, "vllm", 20 * 2**30), (303, "jupyter", 2**30)), 5.0)
        await pilot.pause(0.2)
        assert 0 in rendered  # the trainer's row is drawn again
        assert "45.0 G" in screen_text(app)
        # vllm grows past the trainer: sorted by RSS, the order changes and the table follows it
        p.cycle_sort()  # GPU mem (all None here) -> RSS
        p.show(scan((101, "trainer", 45 * 2**30), (202, "vllm", 60 * 2**30), (303, "jupyter", 2**30)), 10.0)
        await pilot.pause(0.2)
        assert [rk.value for rk in table.rows] == ["202", "101", "303"]


def test_a_cell_is_the_same_only_when_it_draws_the_same():
    """rich's Text equality ignores the Text's own style: a glyph turning from green to red is a
    change, and must reach the table."""
    assert same_cell(Text("✔", style="green"), Text("✔", style="green"))
    assert not same_cell(Text("✔", style="green"), Text("✔", style="red"))
    assert not same_cell(Text("ok"), Text("ok", overflow="ellipsis"))
    assert not same_cell(Text("a").append("b", style="bold"), Text("ab"))
    assert not same_cell(Text("1"), "1") and not same_cell(1, "1") and not same_cell(1, True)
    assert same_cell("x", "x") and same_cell(None, None)


async def test_a_column_fitted_to_a_resized_terminal_is_drawn_at_its_new_width():
    app = TablesApp()
    async with app.run_test(size=(100, 30)) as pilot:
        t = app.query_one(Checklist)
        t.show("G1", Verdict("G1", Status.OK, "x" * 160, measured_at=100.0), None, 110.0, 0)
        await pilot.pause(0.2)
        narrow = t.columns[ColumnKey("finding")].width
        await pilot.resize_terminal(180, 30)
        await pilot.pause(0.3)
        assert t.columns[ColumnKey("finding")].width > narrow
        # the table's scrollable width follows its columns (it stayed at the first width before)
        assert t.size.width - 4 <= t.virtual_size.width <= t.size.width
        assert "x" * 120 in screen_text(app)
