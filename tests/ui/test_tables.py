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


class SparkApp2(App):
    def compose(self):
        from textual.widgets import Sparkline

        from sparktui.ui.widgets import SparkLine

        yield Sparkline([], summary_function=max, id="theirs")
        yield SparkLine(id="ours")


def _cells(strip) -> list[tuple[str, str | None]]:
    """(character, colour) per cell of a rendered line."""
    out = []
    for seg in strip:
        colour = seg.style.color.triplet.hex if seg.style and seg.style.color and seg.style.color.triplet else None
        out.extend((ch, colour) for ch in seg.text)
    return out


async def test_our_sparkline_draws_what_textuals_draws():
    """The meters use a cached one-line sparkline; it must look exactly like Textual's, bar for
    bar and colour for colour, for short, long, flat and empty series."""
    import random

    from textual.geometry import Region

    rng = random.Random(7)
    series = [[], [5.0], [3.0, 3.0, 3.0], [rng.uniform(0, 100) for _ in range(12)],
              [rng.uniform(60, 80) for _ in range(45)], [float(i % 7) for i in range(45)]]
    series += [[rng.uniform(0, 9) for _ in range(n)] for n in (46, 60, 100, 3600)]  # more points than columns
    app = SparkApp2()
    async with app.run_test(size=(45, 4)) as pilot:
        theirs, ours = app.query_one("#theirs"), app.query_one("#ours")
        for data in series:
            theirs.data, ours.data = data, data
            await pilot.pause(0.05)
            region = Region(0, 0, 45, 1)
            assert _cells(ours.render_lines(region)[0]) == _cells(theirs.render_lines(region)[0]), data
