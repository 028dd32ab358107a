"""The process table like nvitop/btop: sort by any column (s, S, a header click) with ▲/▼ in the
header, a tree with memory rolled up onto launchers, k signals a real process (asks; TERM, then
KILL after asking again), --readonly, what G6 names kept in sight at 80x24, the view kept in prefs."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time
from functools import partial

import psutil

from sparktui.core.verdict import Evidence, Status, Verdict
from sparktui.flows import signals
from sparktui.ui.app import SparkApp, SparkCommands
from sparktui.gotchas.g06_contention import marked_pids as blamed_pids
from sparktui.ui.panels.processes import children_of, rolled_up
from sparktui.ui.prefs import prefs_path
from sparktui.ui.screens import ConfirmScreen, MessageScreen
from tests.real_processes import IGNORES_TERM, ended, orphan, own_child_with_grandchild
from tests.ui.test_dashboard import StillSource
from tests.ui.waiting import leaves, says, screen_lines, shows, wait_for

G = 2**30


def still_app(**kw) -> SparkApp:
    return SparkApp(source=StillSource(), auto_checks=False, **kw)


def header_line(app) -> str:
    return next(line for line in screen_lines(app) if " pid" in line and "user" in line)


def notes(app) -> str:
    return "\n".join(n.message for n in app.said)


def row(pid: int, name: str, gpu: float | None = None, rss: float | None = 1.0, **more) -> dict:
    r = {"pid": pid, "ppid": 1, "user": "spark", "kind": "other", "name": name, "command": f"{name} --serve",
         "gpu_mem_bytes": None if gpu is None else int(gpu * G), "on_gpu": gpu is not None,
         "rss_bytes": None if rss is None else int(rss * G), "age_s": 60.0 * pid}
    r.update(more)
    return r


def scan(*rows: dict) -> dict:
    return {"rows": list(rows), "nvml": {"ok": True, "count": len(rows)}}


def real_row(pid: int) -> dict:
    """A real process as the scan describes it (the scan leaves sparktui's own children out, so
    tests show it the processes they start)."""
    p = psutil.Process(pid)
    return row(pid, p.name(), rss=p.memory_info().rss / G, user=p.username(), command=" ".join(p.cmdline()))


async def show_and_select(app, pilot, rows: list[dict], pid: int) -> None:
    app.process_table.show(scan(*rows), time.time())
    await pilot.pause()
    table = app.query_one("#proc-table")
    table.focus()
    table.move_cursor(row=table.get_row_index(str(pid)))
    await wait_for(pilot, lambda: (app.process_table.selected_row or {}).get("pid") == pid, what=f"pid {pid} selected",
                   state=lambda: app.process_table.selected_row)


# -- k: signals ------------------------------------------------------------------------------------

async def test_k_asks_with_pid_user_command_and_memory_then_term_ends_the_process():
    app = still_app()
    with orphan(["sleep", "71"]) as pid:
        async with app.run_test(size=(120, 36)) as pilot:
            await show_and_select(app, pilot, [row(4242, "other", gpu=1.0), dict(real_row(pid), gpu_mem_bytes=2 * G)], pid)
            await pilot.press("k")
            assert (await shows(pilot, ConfirmScreen)).title_text == f"Send SIGTERM to pid {pid}?"
            body = str(app.screen.body)
            assert f"pid {pid}, user root" in body and "sleep 71" in body and "GPU memory 2.0 GiB" in body
            assert "resident memory 0.0 GiB" in body
            await pilot.press("enter")  # the focused button is "no": Enter out of habit sends nothing
            await leaves(pilot, ConfirmScreen)
            assert not ended(pid)
            await pilot.press("k", "y")
            await says(pilot, f"pid {pid} ended after SIGTERM")
            assert ended(pid)


async def test_a_process_ignoring_term_gets_kill_only_after_a_second_yes(tmp_path):
    ready = tmp_path / "ready"
    app = still_app()
    app.signal_grace_s = 0.5
    with orphan([sys.executable, "-c", IGNORES_TERM, str(ready)], ready=ready) as pid:
        async with app.run_test(size=(120, 36)) as pilot:
            await show_and_select(app, pilot, [real_row(pid)], pid)
            await pilot.press("k", "y")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and "SIGKILL" in app.screen.title_text,
                           what="the SIGKILL question")
            assert app.screen.title_text == f"pid {pid} is still running 0.5 s after SIGTERM. Send SIGKILL?"
            assert not ended(pid)  # TERM was ignored; nothing else sent yet
            await pilot.press("y")
            await says(pilot, f"pid {pid} ended after SIGKILL")
            assert ended(pid)


async def test_k_refuses_sparktui_itself_and_its_children_and_says_why():
    child, grandchild = own_child_with_grandchild()
    app = still_app()
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            rows = [real_row(os.getpid()), real_row(child.pid), real_row(grandchild.pid)]
            for pid, why in ((os.getpid(), "is sparktui itself"), (child.pid, "is one of sparktui's own processes"),
                             (grandchild.pid, "is one of sparktui's own processes")):
                await show_and_select(app, pilot, rows, pid)
                await pilot.press("k")
                await says(pilot, f"not signalled: pid {pid} {why}")
                assert not isinstance(app.screen, ConfirmScreen)
            assert child.poll() is None
    finally:
        grandchild.kill()
        child.kill()
        child.wait(5)


async def test_k_refuses_another_users_process_unless_root(monkeypatch):
    app = still_app()
    with orphan(["sleep", "73"], user=65534) as pid:
        async with app.run_test(size=(120, 36)) as pilot:
            await show_and_select(app, pilot, [real_row(pid)], pid)
            monkeypatch.setattr(signals, "effective_uid", lambda: 4242)  # as a user who is not root
            await pilot.press("k")
            await says(pilot, "belongs to nobody, and sparktui runs as uid 4242, not root")
            assert not isinstance(app.screen, ConfirmScreen)
            monkeypatch.undo()  # as root (CI runs as root): asked, and allowed
            assert os.geteuid() == 0, "the root half of this test needs root"
            await pilot.press("k")
            assert "user nobody" in str((await shows(pilot, ConfirmScreen)).body)


def footer_line(app) -> str | None:
    return next((line for line in screen_lines(app) if "quit" in line and "help" in line), None)


async def test_readonly_k_is_out_of_the_footer_and_says_read_only():
    with orphan(["sleep", "74"]) as pid:
        for readonly in (False, True):
            app = still_app(readonly=readonly)
            async with app.run_test(size=(200, 60)) as pilot:
                await show_and_select(app, pilot, [real_row(pid)], pid)
                await wait_for(pilot, partial(footer_line, app), what="the footer drawn")
                assert ("k signal" in footer_line(app)) is not readonly, footer_line(app)
                offered = [str(h.display) async for h in SparkCommands(app.screen).discover()]
                assert ("Signal the selected process (asks first)" in offered) is not readonly
                await pilot.press("k")
                if readonly:
                    await says(pilot, "read-only mode")
                else:
                    await shows(pilot, ConfirmScreen)
                assert isinstance(app.screen, ConfirmScreen) is not readonly
                assert ("read-only mode" in notes(app)) is readonly
        assert not ended(pid)


def test_readonly_is_a_dashboard_option():
    from sparktui.cli.common import EXIT_USAGE
    from sparktui.cli.main import build_parser, main

    assert build_parser().parse_args(["--readonly"]).readonly is True
    assert main(["--readonly", "list"]) == EXIT_USAGE  # a subcommand has no actions to turn off: a usage error


# -- sort ------------------------------------------------------------------------------------------

SORTABLE = (row(11, "bravo", gpu=4.0, rss=1.0), row(22, "alpha", gpu=9.0, rss=3.0), row(33, "charlie", gpu=None, rss=2.0))


async def test_sort_indicator_next_column_reverse_and_header_click():
    for size in ((80, 24), (200, 60)):
        prefs_path().unlink(missing_ok=True)  # each size starts from the default sort
        app = still_app()
        async with app.run_test(size=size) as pilot:
            pt = app.process_table
            pt.show(scan(*SORTABLE), 0.0)
            await pilot.pause()
            assert "GPU mem ▼" in header_line(app) and "RSS ▼" not in header_line(app)
            assert [r["pid"] for r in pt.visible_rows()] == [22, 11, 33]  # unknown GPU memory last, never as 0
            await pilot.press("s")
            await pilot.pause()
            assert "RSS ▼" in header_line(app) and "GPU mem ▼" not in header_line(app)
            assert [r["pid"] for r in pt.visible_rows()] == [22, 33, 11]
            await pilot.press("S")
            await pilot.pause()
            assert "RSS ▲" in header_line(app)
            assert [k.value for k in pt._table.rows] == ["11", "33", "22"]  # the table, not only the model
            await pilot.click("#proc-table", offset=(3, 0))  # the pid header
            await pilot.pause()
            assert "pid ▲" in header_line(app) and pt.sort_label == "pid ▲"
            assert [r["pid"] for r in pt.visible_rows()] == [11, 22, 33]
            await pilot.click("#proc-table", offset=(3, 0))  # again: reversed
            await pilot.pause()
            assert "pid ▼" in header_line(app)
            assert [r["pid"] for r in pt.visible_rows()] == [33, 22, 11]


async def test_text_columns_start_a_to_z_and_the_cursor_stays_on_its_process():
    app = still_app()
    async with app.run_test(size=(120, 36)) as pilot:
        pt = app.process_table
        pt.show(scan(*SORTABLE), 0.0)
        await pilot.pause()
        pt._table.focus()
        await pilot.pause()
        pt._table.move_cursor(row=pt._table.get_row_index("33"))
        for _ in range(len(pt.COLUMNS)):  # GPU mem -> RSS -> CPU % -> ... -> age -> command, A to Z
            if pt.sort_column == "command":
                break
            pt.cycle_sort()
        await pilot.pause()
        assert pt.sort_label == "command ▲"
        assert [r["name"] for r in pt.visible_rows()] == ["alpha", "bravo", "charlie"]
        assert pt.selected_row["pid"] == 33


# -- tree ------------------------------------------------------------------------------------------

TREE = (row(5120, "vllm serve", gpu=None, rss=2.0, kind="server", group=5120),
        row(5188, "VLLM::EngineCore", gpu=86.0, rss=4.0, kind="server", ppid=5120, group=5120),
        row(3310, "torchrun", gpu=None, rss=0.5, kind="training", group=3310),
        row(3325, "train.py", gpu=10.0, rss=7.0, kind="training", ppid=3310, group=3310),
        row(3326, "train.py", gpu=5.0, rss=6.0, kind="training", ppid=3310, group=3310),
        row(3327, "train.py", gpu=None, rss=None, kind="training", ppid=3310, group=3310, on_gpu=True),
        row(900, "ollama serve", gpu=None, rss=0.25, kind="server"),
        row(901, "ollama runner", gpu=3.0, rss=1.0, kind="server", ppid=77, group=900))


def test_rolled_up_sums_a_subtree_and_says_when_part_is_unknown():
    rows = list(TREE)
    kids = children_of(rows)
    sums = rolled_up(rows, kids)
    assert sums[5120] == (86 * G, False, 6 * G, False)
    assert sums[3310] == (15 * G, True, int(13.5 * G), True)  # 3327: N/A on the GPU, RSS unreadable
    assert sums[900] == (3 * G, False, int(1.25 * G), False)  # the runner's parent is not shown: its group is
    assert sums[3327] == (None, False, None, False)
    assert sorted(r["pid"] for r in kids[None]) == [900, 3310, 5120]


def test_a_ppid_loop_does_not_hang_the_tree_and_old_rows_without_ppid_are_roots():
    rows = [row(1, "a", ppid=2), row(2, "b", ppid=1), row(3, "c", ppid=2)]
    kids = children_of(rows)
    assert sum(len(v) for v in kids.values()) == 3 and len(kids[None]) == 1
    assert rolled_up(rows, kids)[kids[None][0]["pid"]][2] == 3 * G  # every row counted once
    old = [{k: v for k, v in r.items() if k not in ("ppid", "group")} for r in TREE]  # a recording before ppid
    assert [r["pid"] for r in children_of(old)[None]] == [r["pid"] for r in TREE]


async def test_at_80_columns_the_tree_view_still_says_so():
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.process_table.show(scan(*TREE), 0.0)
        await pilot.press("t")
        await pilot.pause()
        line = next(l for l in screen_lines(app) if "processes ·" in l)
        assert "tree view" in line, line


async def test_t_shows_launchers_over_their_workers_with_memory_summed():
    app = still_app()
    async with app.run_test(size=(200, 60)) as pilot:
        pt = app.process_table
        pt.show(scan(*TREE), 0.0)
        await pilot.press("t")
        await pilot.pause()
        assert [r["pid"] for r in pt.visible_rows()] == [5120, 5188, 3310, 3325, 3326, 3327, 900, 901]
        text = "\n".join(screen_lines(app))
        assert "tree view · sort: GPU mem" in text and "a parent's memory sums its own and its children's" in text
        cells = {pid: [c.plain for c in pt._table.get_row(str(pid))] for pid in (5120, 5188, 3310, 3325, 3327)}
        assert cells[5120][3:6] == ["vllm serve", "86.0 G", "6.0 G"]
        assert cells[5188][3:6] == ["└─ VLLM::EngineCore", "86.0 G", "4.0 G"]
        assert cells[3310][3:6] == ["torchrun", "15.0+? G", "13.5+? G"]
        assert cells[3325][3] == "├─ train.py" and cells[3327][3:6] == ["└─ train.py", "?", "?"]
        await pilot.press("t")
        await pilot.pause()
        assert [c.plain for c in pt._table.get_row("5120")][3:6] == ["vllm serve", "?", "2.0 G"]


# -- what G6 names ---------------------------------------------------------------------------------

MANY = tuple(row(100 + i, f"job{i}", gpu=float(20 - i), rss=1.0) for i in range(10)) + (row(777, "vllm serve", rss=0.5),)


def test_blamed_pids_come_from_a_warning_or_failing_g6_only():
    fail = Verdict("G6", Status.FAIL, "vLLM pid 777: no cap given, while training pid 101 (job1) runs")
    assert blamed_pids(fail) == {777, 101}
    by_evidence = Verdict("G6", Status.WARN, "the pool is oversubscribed",
                          evidence=(Evidence("vLLM pid 888 holds", "NVML", "3 GiB"),))
    assert blamed_pids(by_evidence) == {888}
    assert blamed_pids(Verdict("G6", Status.OK, "pid 777 fits")) == frozenset()


async def test_the_process_g6_names_is_marked_and_visible_at_80x24():
    for size in ((80, 24), (200, 60)):
        app = still_app()
        async with app.run_test(size=size) as pilot:
            app.process_table.show(scan(*MANY), 0.0)
            await pilot.pause()
            if size == (80, 24):  # the smallest of eleven: below the three rows that fit
                assert not any("777" in line for line in screen_lines(app))
            app._set_verdict(Verdict("G6", Status.FAIL, "vLLM pid 777: no cap given (default 0.9)"), time.monotonic())
            await pilot.pause()
            lines = screen_lines(app)
            assert any("!777" in line and "vllm serve" in line for line in lines)
            assert "! named by G6" in "\n".join(lines)
            app._set_verdict(Verdict("G6", Status.OK, "fine"), time.monotonic())
            await pilot.pause()
            assert not any("!777" in line for line in screen_lines(app))


# -- kept between runs -----------------------------------------------------------------------------

async def test_sort_reverse_and_tree_are_restored_in_a_new_app_the_filter_is_not():
    app = still_app()
    async with app.run_test(size=(120, 36)) as pilot:
        app.process_table.show(scan(*SORTABLE), 0.0)
        await pilot.press("s", "S", "t", "slash", *"alp", "enter")
        await wait_for(pilot, lambda: prefs_path().exists() and '"tree": true' in prefs_path().read_text(encoding="utf-8"),
                       what="the view kept in prefs.json")
        assert [r["pid"] for r in app.process_table.visible_rows()] == [22]  # filtered in this run
    assert "alp" not in prefs_path().read_text(encoding="utf-8")
    again = still_app()
    async with again.run_test(size=(120, 36)) as pilot:
        pt = again.process_table
        pt.show(scan(*SORTABLE), 0.0)
        await pilot.pause()
        assert (pt.sort_column, pt.sort_reverse, pt.tree_view, pt.filter_text) == ("RSS", False, True, "")
        assert "RSS ▲" in header_line(again)
        assert sorted(r["pid"] for r in pt.visible_rows()) == [11, 22, 33]
        assert "filter" not in tab_line(again) and "filter:" not in "\n".join(screen_lines(again))


async def test_a_failed_save_is_a_notification_and_the_table_still_sorts(tmp_path, monkeypatch):
    blocker = tmp_path / "state-is-a-file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))  # prefs.json cannot be written under a file
    app = still_app()
    async with app.run_test(size=(120, 36)) as pilot:
        app.process_table.show(scan(*SORTABLE), 0.0)
        await pilot.press("s")
        await says(pilot, "preferences not kept")
        assert app.process_table.sort_label == "RSS ▼"


# -- filters: always in sight, never kept (issue 24, Seen 3) -------------------------------------------

TRAIN_FAKE = "import time\ntime.sleep(60)\n"


def tab_line(app) -> str:
    return next((line for line in screen_lines(app) if "Processes (G6)" in line), "")


async def test_a_filter_is_in_the_tab_title_at_every_width_and_a_restart_shows_the_training_job(tmp_path):
    """`/ vllm`, then a restart with the same prefs folder: the running training process (a real one,
    found by a real scan) is listed. On the base commit the filter came back from prefs.json and hid
    it, and at 80 columns nothing said a filter was on."""
    script = tmp_path / "train_fake.py"
    script.write_text(TRAIN_FAKE)
    from sparktui.probes import processes

    with orphan([sys.executable, str(script)]) as pid:
        await wait_for_scan(lambda: any(r["pid"] == pid for r in processes.scan(None)["rows"]), what="the training job scanned")
        for size in ((80, 24), (200, 60)):
            app = still_app()
            async with app.run_test(size=size) as pilot:
                app.process_table.show(processes.scan(None), time.time())
                await pilot.press("slash", *"vllm", "enter")
                await wait_for(pilot, partial(lambda a: 'Processes (G6) · filter "vllm" (esc clears)' in tab_line(a), app),
                               what="the filter in the tab's title", state=partial(tab_line, app))
                assert pid not in [r["pid"] for r in app.process_table.visible_rows()]
                await pilot.pause(0.6)  # longer than the base's wait before it kept the filter
            again = still_app()
            async with again.run_test(size=size) as pilot:
                again.process_table.show(processes.scan(None), time.time())
                await pilot.pause()
                assert again.process_table.filter_text == ""
                assert "filter" not in tab_line(again)
                shown = [r for r in again.process_table.visible_rows() if r["pid"] == pid]
                assert shown and shown[0]["kind"] == "training"
                assert any(str(pid) in line and "train_fake.py" in line for line in screen_lines(again))
            assert "vllm" not in (prefs_path().read_text(encoding="utf-8") if prefs_path().exists() else "")


async def wait_for_scan(predicate, what: str) -> None:
    deadline = time.monotonic() + 10
    while not predicate():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.05)


async def test_escape_clears_the_filter_from_the_title_and_an_old_kept_filter_is_ignored():
    prefs_path().parent.mkdir(parents=True, exist_ok=True)
    prefs_path().write_text('{"process_filter": "vllm", "sort_column": "RSS"}')  # as the base commit kept it
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        pt = app.process_table
        pt.show(scan(*SORTABLE), 0.0)
        await pilot.pause()
        assert pt.filter_text == "" and pt.sort_column == "RSS" and len(pt.visible_rows()) == 3
        long = "a-very-long-filter-that-would-push-the-other-tab-away"
        await pilot.press("slash", *long, "enter")
        await pilot.pause()
        assert re.search(r'Processes \(G6\) · filter "a-very-long[^"]*…" \(esc clears\)', tab_line(app)), tab_line(app)  # cut, marked
        assert "Playbook issues (G8)" in tab_line(app)
        await pilot.resize_terminal(60, 30)  # (at 20 rows the checklist leaves the tabs no room at all)
        await wait_for(pilot, lambda: 'filter "a-' in tab_line(app) and "Playbook issues (G8)" in tab_line(app),
                       what="the title fitted at 60 columns", state=lambda: tab_line(app))
        await pilot.press("escape")
        await wait_for(pilot, lambda: "filter" not in tab_line(app), what="the title without the filter",
                       state=lambda: tab_line(app))
        assert pt.filter_text == "" and len(pt.visible_rows()) == 3
        await pilot.press("s")  # the next save writes the file without the old filter
        await wait_for(pilot, lambda: "filter" not in prefs_path().read_text(encoding="utf-8"), what="the old filter dropped")


# -- nothing cut unmarked (Seen 9) -------------------------------------------------------------------

LONG_CMD = ("python -m vllm.entrypoints.openai.api_server --model meta-llama/Llama-3.1-70B-Instruct "
            "--gpu-memory-utilization 0.5 --max-model-len 32768 --tensor-parallel-size 1 --port 8000 "
            "--served-model-name llama --trailing-flag-at-the-very-end")


async def test_kind_user_command_and_the_info_line_end_with_an_ellipsis_when_cut():
    r = row(4242, "VLLM::EngineCore", gpu=2.0, kind="gpu-process", user="a-rather-long-user-name", command=LONG_CMD)
    for size in ((80, 24), (200, 60)):
        app = still_app()
        async with app.run_test(size=size) as pilot:
            pt = app.process_table
            pt.show(scan(r), 0.0)
            await pilot.pause()
            line = next(li for li in screen_lines(app) if li.lstrip().startswith("4242"))
            assert "gpu-process" in line and "gpu-proce " not in line, line  # base: `gpu-proce`
            assert re.search(r"a-rathe\S*… ", line) and "a-rather-long-user-name" not in line, line
            if size == (200, 60):
                assert line.rstrip().endswith("…") and "--trailing-flag" not in line, line
            # the info line: whole parts only, '…' where more did not fit
            pt.view_note = "NVML process list unavailable (NOT_SUPPORTED (Not Supported)) while a container hides the host"
            pt.blame(frozenset({4242}), "G6")
            pt.set_filter("engine")
            await pilot.pause()
            info = next(li for li in screen_lines(app) if "NVML process list" in li).rstrip()
            parts = pt._note_parts(pt._layout())
            if size == (80, 24):
                assert info.endswith(" …") and "sort:" not in info, info  # base: cut mid-word, unmarked
            shown = [p for p in parts if p in info]
            assert shown == parts[:len(shown)] and (len(shown) == len(parts) or info.endswith("…")), (info, parts)


async def test_enter_shows_the_whole_row_inert():
    cmd = LONG_CMD + " --name \x1b]0;pwned\x07"
    r = row(4243, "VLLM::EngineCore", gpu=2.0, kind="gpu-process", command=cmd, cpu_pct=151.0, gpu_util=None,
            container={"runtime": "docker", "id": "ab" * 32, "name": "vllm-server"})
    app = still_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await show_and_select(app, pilot, [r], 4243)
        await pilot.press("enter")
        await shows(pilot, MessageScreen)
        await pilot.pause()
        text = "\n".join(screen_lines(app))
        flat = text.replace("\n", "").replace(" ", "")
        assert "--trailing-flag-at-the-very-end" in flat and "\\e]0;pwned\\a" in flat.replace("\\x07", "\\a")
        assert "\x1b" not in text
        for said_ in ("gpu-process", "151 % of one core", "n/a (NVML gave no per-process sample)", "vllm-server", "docker"):
            assert said_ in text, said_


# -- every process, its share, zoom (What to build 7) ---------------------------------------------------

async def test_a_lists_every_process_with_its_share_only_while_on():
    from sparktui.probes import processes

    with orphan(["sleep", "77"]) as pid:
        app = still_app()
        async with app.run_test(size=(200, 60)) as pilot:
            pt = app.process_table
            pt.show(processes.scan(None), time.time())
            await pilot.pause()
            assert pid not in [r["pid"] for r in pt.visible_rows()]  # a sleep is not classified
            await pilot.press("a")
            await pilot.pause()
            assert pt.show_all and processes._WANT_ALL
            assert "every process from the next scan" in "\n".join(screen_lines(app))
            data = processes.scan(None)  # as the sampler's next scan
            assert data["all"] and any(r["pid"] == pid for r in data["others"])
            pt.show(data, time.time())
            await pilot.pause()
            mine = next(r for r in pt.visible_rows() if r["pid"] == pid)
            assert mine["kind"] == "other"
            cells = [c.plain for c in pt._table.get_row(str(pid))]
            names = [n for n, _ in pt.COLUMNS]
            assert cells[names.index("share")].endswith("%") and cells[names.index("CPU %")] == "n/a"  # first scan: n/a
            assert "share: (GPU memory + RSS) / MemTotal" in "\n".join(screen_lines(app))
            await pilot.press("a")
            await pilot.pause()
            assert not processes._WANT_ALL and pid not in [r["pid"] for r in pt.visible_rows()]
            assert "others" not in processes.scan(None)  # the scan is back to the classified processes
            await pilot.press("a")
        assert not processes._WANT_ALL  # an app that ends gives the scans back their cheap self


async def test_z_gives_the_process_table_the_screen_and_back():
    for size in ((80, 24), (200, 60)):
        app = still_app()
        async with app.run_test(size=size) as pilot:
            app.process_table.show(scan(*MANY), 0.0)
            await pilot.pause()
            before = app.query_one("#tabs").size.height
            await pilot.press("z")
            await pilot.pause()
            assert not app.query_one("#top").display
            assert app.query_one("#tabs").size.height > before + 5
            lines = screen_lines(app)
            assert any("job9" in line for line in lines) and not any(" G1 " in line for line in lines)  # all eleven, no checklist
            await pilot.press("z")
            await pilot.pause()
            assert app.query_one("#top").display and app.query_one("#tabs").size.height == before


async def test_a_recording_whose_scans_carry_no_memtotal_shows_shares_of_the_samples_memtotal():
    """The demo's scans predate `mem_total_bytes`: the share is of the samples' MemTotal (the
    vLLM engine holds 86.0 GiB of GPU memory + 3.9 GiB RSS of 121.7 GiB: 73.9 %), never '?'."""
    from tests.ui.test_dashboard import replay_app
    from tests.ui.waiting import loaded

    app = replay_app()
    async with app.run_test(size=(200, 60)) as pilot:
        await loaded(pilot)
        table = app.query_one("#proc-table")
        names = [str(c.label) for c in table.columns.values()]
        row = next(r for r in (table.get_row_at(i) for i in range(table.row_count)) if "EngineCore" in str(r))
        assert str(row[names.index("share")]).strip() == "73.9%"
