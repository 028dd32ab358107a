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
from tests.ui.waiting import screen_text, wait_for


class TablesApp(App):
    def compose(self):
        yield Checklist(id="checklist")
        yield ProcessTable(id="procs")


def watch_renders(table) -> list[str]:
    """The lines the table draws from now on, as text (through its public line API, render_line)."""
    seen: list[str] = []
    original = table.render_line

    def counting(y):
        strip = original(y)
        seen.append(strip.text)
        return strip

    table.render_line = counting
    return seen


def scan(*rows: tuple[int, str, int]) -> dict:
    return {"rows": [{"pid": pid, "name": name, "user": "me", "kind": "training", "rss_bytes": rss, "age_s": 90,
                      "command": f"python {name}.py"} for pid, name, rss in rows],
            "nvml": {"ok": True, "count": len(rows)}}


async def ten_fine_rows(app, pilot) -> Checklist:
    """The checklist with G1-G10 ok ("fine-N"), drawn."""
    t = app.query_one(Checklist)
    for i in range(1, 11):
        t.show(f"G{i}", Verdict(f"G{i}", Status.OK, f"fine-{i}", measured_at=100.0), None, 110.0, 0)
    await wait_for(pilot, lambda: "fine-9" in screen_text(app), what="the ten rows drawn")
    return t


async def test_a_changed_finding_is_shown_and_the_other_rows_stay():
    app = TablesApp()
    async with app.run_test(size=(120, 30)) as pilot:
        t = await ten_fine_rows(app, pilot)
        t.show("G4", Verdict("G4", Status.WARN, "throttled-now", measured_at=110.0), None, 111.0, 1)
        text = await wait_for(pilot, lambda: "throttled-now" in (s := screen_text(app)) and s, what="G4's new finding")
        assert "fine-4" not in text
        assert "fine-3" in text and "fine-5" in text


async def test_a_changed_finding_repaints_its_row_only():
    """DataTable's update_cell repaints the whole table: with a finding that changes every few
    seconds (a live temperature in G4's words) that was the dashboard's largest steady cost, ~20 ms
    a repaint of 14 rows. Only the changed row is drawn again; the others stay on the screen."""
    app = TablesApp()
    async with app.run_test(size=(120, 30)) as pilot:
        t = await ten_fine_rows(app, pilot)
        await pilot.pause()
        rendered = watch_renders(t)
        t.show("G4", Verdict("G4", Status.WARN, "at 81 °C", measured_at=110.0), None, 111.0, 1)
        text = await wait_for(pilot, lambda: "at 81 °C" in (s := screen_text(app)) and s, what="G4's new finding")
        await pilot.pause()
        assert rendered and all("G4" in line for line in rendered), rendered
        assert "fine-3" in text and "fine-5" in text and "fine-4" not in text


async def test_an_unchanged_verdict_costs_no_repaint():
    app = TablesApp()
    async with app.run_test(size=(120, 30)) as pilot:
        t = app.query_one(Checklist)
        v = Verdict("G3", Status.OK, "MemAvailable 100 GiB", measured_at=100.0)
        t.show("G3", v, None, 110.0, 0)
        await wait_for(pilot, lambda: "MemAvailable 100 GiB" in screen_text(app), what="G3 drawn")
        await pilot.pause()
        rendered = watch_renders(t)
        for tick in range(1, 5):
            t.show("G3", v, None, 110.0 + tick, tick)
        await pilot.pause()
        await pilot.pause()
        assert rendered == []


async def test_process_table_shows_the_changed_cell_and_rebuilds_on_a_new_order():
    app = TablesApp()
    async with app.run_test(size=(160, 30)) as pilot:
        p = app.query_one(ProcessTable)
        p.show(scan((101, "trainer", 40 * 2**30), (202, "vllm", 20 * 2**30), (303, "jupyter", 2**30)), 0.0)
        await wait_for(pilot, lambda: "40.0 G" in screen_text(app), what="the scan drawn")
        table = p._table
        rendered = watch_renders(table)
        p.show(scan((101, "trainer", 45 * 2**30), (202, "vllm", 20 * 2**30), (303, "jupyter", 2**30)), 5.0)
        await wait_for(pilot, lambda: "45.0 G" in screen_text(app), what="the trainer's new RSS")
        assert any("trainer" in line and "45.0 G" in line for line in rendered)  # the trainer's row is drawn again
        # vllm grows past the trainer: sorted by RSS, the order changes and the table follows it
        p.cycle_sort()  # GPU mem (all None here) -> RSS
        p.show(scan((101, "trainer", 45 * 2**30), (202, "vllm", 60 * 2**30), (303, "jupyter", 2**30)), 10.0)
        await wait_for(pilot, lambda: "60.0 G" in screen_text(app), what="vllm's new RSS")
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
        await wait_for(pilot, lambda: "x" * 20 in screen_text(app), what="G1 drawn")
        narrow = t.columns[ColumnKey("finding")].width
        await pilot.resize_terminal(180, 30)
        await wait_for(pilot, lambda: t.columns[ColumnKey("finding")].width > narrow, what="the finding column widened",
                       state=lambda: (narrow, t.columns[ColumnKey("finding")].width))
        await pilot.pause()
        # the table's scrollable width follows its columns (it stayed at the first width before)
        assert t.size.width - 4 <= t.virtual_size.width <= t.size.width
        assert "x" * 120 in screen_text(app)


HELD_AFTER_UPDATES = """
import asyncio, tracemalloc
from textual.app import App
from sparktui.ui.widgets.tables import BoundedTable

class One(App):
    def compose(self):
        self.table = BoundedTable()
        yield self.table

async def main():
    app = One()
    async with app.run_test(size=(120, 40)) as pilot:
        t = app.table
        for c in range(6):
            t.add_column(f"c{c}", key=f"c{c}")
        for r in range(30):
            t.add_row(*[f"r{r}c{c}" for c in range(6)], key=f"r{r}")
        await pilot.pause()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        for i in range(120):
            t.update_cell(f"r{i % 30}", "c2", f"v{i}")
            await pilot.pause(0)  # each update drawn, as the dashboard's tick draws it
        print(tracemalloc.get_traced_memory()[0] - base)

asyncio.run(main())
"""


def test_a_table_updated_for_hours_holds_only_what_it_shows():
    """Every update makes each cached render unusable (DataTable keys them on a table-wide update
    count) and DataTable keeps up to 10,000 of them: a 30x6 table held 12.8 MB of them after 120
    drawn updates (the cap is reached within minutes of ages changing, and stays). BoundedTable
    drops them on each update: 3.5 MB, most of it what the last frames allocated. Measured in a
    process of its own: a test worker's other threads would count too."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", HELD_AFTER_UPDATES], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    held = int(out.stdout.split()[-1])
    assert held < 7_000_000, f"{held / 1e6:.1f} MB held after 120 updates"
