"""The checklist and process table repaint only what changed (the dashboard's idle CPU is mostly
table repaints), and what changed is what the screen then shows."""

from __future__ import annotations

from textual.app import App

from sparktui.core.verdict import Status, Verdict
from sparktui.ui.panels import Checklist, ProcessTable


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


async def test_a_changed_finding_repaints_its_row_only_and_the_screen_shows_it():
    app = TablesApp()
    async with app.run_test(size=(120, 30)) as pilot:
        t = app.query_one(Checklist)
        for i in range(1, 11):
            t.show(f"G{i}", Verdict(f"G{i}", Status.OK, f"fine-{i}", measured_at=100.0), None, 110.0, 0)
        await pilot.pause(0.2)
        assert "fine-4" in screen_text(app)
        rendered = watch_renders(t)
        t.show("G4", Verdict("G4", Status.WARN, "throttled-now", measured_at=110.0), None, 111.0, 1)
        await pilot.pause(0.2)
        text = screen_text(app)
        assert "throttled-now" in text and "fine-4" not in text
        assert "fine-3" in text and "fine-5" in text
        assert rendered == {3}  # G4's row; stock DataTable repaints all ten and the header


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


async def test_process_table_repaints_the_changed_cell_and_rebuilds_on_a_new_order():
    app = TablesApp()
    async with app.run_test(size=(160, 30)) as pilot:
        p = app.query_one(ProcessTable)
        p.show(scan((101, "trainer", 40 * 2**30), (202, "vllm", 20 * 2**30), (303, "jupyter", 2**30)), 0.0)
        await pilot.pause(0.2)
        table = p._table
        rendered = watch_renders(table)
        p.show(scan((101, "trainer", 45 * 2**30), (202, "vllm", 20 * 2**30), (303, "jupyter", 2**30)), 5.0)
        await pilot.pause(0.2)
        assert rendered == {0}
        assert "45.0 G" in screen_text(app)
        # vllm grows past the trainer: sorted by RSS, the order changes and the table follows it
        p.cycle_sort()  # GPU mem (all None here) -> RSS
        p.show(scan((101, "trainer", 45 * 2**30), (202, "vllm", 60 * 2**30), (303, "jupyter", 2**30)), 10.0)
        await pilot.pause(0.2)
        assert [rk.value for rk in table.rows] == ["202", "101", "303"]
