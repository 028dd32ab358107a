"""The dashboard driven by Pilot: every key and flow, on the shipped GB10 recording (no GPU needed)."""

from __future__ import annotations

import re
import time
from pathlib import Path

from textual.command import CommandPalette
from textual.widgets import OptionList

from sparktui.core.config import Config
from sparktui.core.verdict import Status, Verdict
from sparktui.live import QuietSource
from sparktui.ui.app import SparkApp
from sparktui.ui.screens import CardScreen, ConfirmScreen, EventsScreen, HelpScreen, MessageScreen, fix_commands
from sparktui.ui.panels import Checklist, ProcessTable
from tests.ui.waiting import leaves, loaded, says, settled, shows, wait_for

DEMO = Path(__file__).resolve().parents[2] / "src" / "sparktui" / "data" / "gb10-demo.jsonl"


def replay_app(**kw) -> SparkApp:
    return SparkApp(Config(), replay=str(DEMO), speed=None, **kw)


def replay_app_catching_urls(monkeypatch):
    """A replay app whose opened and copied URLs land in lists instead of a browser or clipboard."""
    import webbrowser

    opened, copied = [], []
    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or True)
    app = replay_app()
    app.copy_to_clipboard = lambda text: copied.append(text)
    return app, opened, copied


def row_text(app, gid: str) -> str:
    t = app.query_one(Checklist)
    return " ".join(str(c) for c in t.get_row(gid))


async def test_main_screen_lists_every_check_and_judges_telemetry_from_the_replay():
    app = replay_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        t = app.query_one(Checklist)
        assert [rk.value for rk in t.rows] == [f"G{i}" for i in range(1, 15)]
        # G4 over the recording: the demo throttles (SW thermal slowdown grows)
        assert app.board["G4"].verdict.status in (Status.WARN, Status.FAIL)
        assert app.board["G3"].verdict is not None and app.board["G6"].verdict is not None
        header = str(app.query_one("#header").render())
        assert "NVIDIA GB10" in header and "580.95.05" in header and "CUDA 13.0" in header
        assert "spark-demo" in header


async def test_enter_opens_the_card_with_evidence_and_escape_returns():
    app = replay_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        app.query_one(Checklist).move_cursor(row=3)  # G4
        await pilot.press("enter")
        card = await shows(pilot, CardScreen)
        assert card.gotcha.id == "G4"
        md = app.screen.query_one("#card-md").source
        assert md.startswith("# G4: ") and "## Evidence" in md and "## Fix" in md
        await pilot.press("escape")
        await leaves(pilot, CardScreen)


async def test_card_copies_the_fix_commands():
    app = replay_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        app.query_one(Checklist).move_cursor(row=2)  # G3
        await pilot.press("enter", "c")
        # the demo's headline blames driver/GPU allocations and processes: the block that finds them
        # is what c copies, not the cache drop (issue 24: the copied fix answers the headline)
        await wait_for(pilot, lambda: "nvidia-smi --query-compute-apps" in app.clipboard, what="the fix commands copied",
                       state=lambda: app.clipboard)
        assert "```" not in app.clipboard and "drop_caches" not in app.clipboard  # commands only, no Markdown


def test_fix_commands_takes_one_code_block_at_a_time():
    fix = "text\n```bash\nsync\necho 3\n```\nmore\n```\nls\n```"
    assert fix_commands(fix) == "sync\necho 3" and fix_commands(fix, 2) == "ls" and fix_commands(fix, 3) == ""


async def test_a_card_with_alternative_fixes_copies_one_block_per_key():
    """G6's fix is alternatives filled from the recording (stop vLLM pid 5120; or restart it with its
    own cap): pasted as one script it would stop the server and start it again at once."""
    app = replay_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        app.query_one(Checklist).move_cursor(row=5)  # G6
        await pilot.press("enter")
        await shows(pilot, CardScreen)
        md = app.screen.query_one("#card-md").source
        assert "*c or 1 copies this block:*" in md and "*2 copies this block:*" in md
        await pilot.press("c")
        await wait_for(pilot, lambda: "kill 5120" in app.clipboard, what="block 1 copied", state=lambda: app.clipboard)
        assert "vllm serve" not in app.clipboard
        await pilot.press("2")
        await wait_for(pilot, lambda: app.clipboard.startswith("# start vLLM pid 5120 again capped at 0.5"),
                       what="block 2 copied", state=lambda: app.clipboard)
        assert "kill" not in app.clipboard
        assert app.clipboard.endswith("--port 8001 --gpu-memory-utilization 0.5")
        await says(pilot, "block 2 of 2")
        before = app.clipboard
        await pilot.press("7")  # a block this fix does not have: not a key here (help does not list it)
        await pilot.pause()
        assert app.clipboard == before and app.screen.check_action("copy_fix", (7,)) is False


async def test_r_reruns_the_selected_check_and_R_reruns_all():
    app = SparkApp(Config(), source=StillSource(), auto_checks=False)  # live: a replay is look-only
    async with app.run_test(size=(120, 36)) as pilot:
        runs_before = app.board["G1"].runs
        app.query_one(Checklist).move_cursor(row=0)
        await pilot.press("r")
        await wait_for(pilot, lambda: app.board["G1"].runs > runs_before, what="G1 run again",
                       state=lambda: app.board["G1"].runs)
        await settled(pilot)
        assert app.board["G1"].runs == runs_before + 1
        before = {g: app.board[g].runs for g in ("G2", "G7", "G10")}
        await pilot.press("R")
        await wait_for(pilot, lambda: all(app.board[g].runs > before[g] for g in before), what="G2, G7, G10 run again",
                       state=lambda: {g: app.board[g].runs for g in before})
        await settled(pilot)
        assert all(app.board[g].runs == before[g] + 1 for g in before)


async def test_b_in_replay_mode_does_not_measure():
    app = replay_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        await pilot.press("b")
        await says(pilot, "live machine only")
        assert not isinstance(app.screen, ConfirmScreen)


async def test_slash_filters_the_process_table_and_escape_clears():
    app = replay_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        pt = app.query_one(ProcessTable)
        total = len(pt.visible_rows())
        assert total >= 2
        await pilot.press("slash")
        await pilot.press(*"vllm")
        rows = await wait_for(pilot, lambda: (rs := pt.visible_rows()) and len(rs) < total
                              and all("vllm" in (r["name"] + r["command"]).lower() for r in rs) and rs,
                              what="the table filtered to vllm", state=lambda: [r["name"] for r in pt.visible_rows()])
        assert 0 < len(rows) < total
        await pilot.press("escape")
        await wait_for(pilot, lambda: len(pt.visible_rows()) == total, what="the filter cleared",
                       state=lambda: len(pt.visible_rows()))


async def test_s_cycles_the_process_sort():
    app = replay_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        pt = app.query_one(ProcessTable)
        assert pt.sort_label.startswith("GPU mem")
        await pilot.press("s")
        assert pt.sort_label.startswith("RSS")
        rows = pt.visible_rows()
        named = len(pt.blamed)  # what G6 names stays on top; the rest follow the sort
        assert named and {r["pid"] for r in rows[:named]} == pt.blamed
        rss = [r.get("rss_bytes") or 0 for r in rows[named:]]
        assert rss == sorted(rss, reverse=True)


async def test_p_pauses_and_resumes_sampling():
    app = replay_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("p")
        assert app.source.paused
        assert "PAUSED" in str(app.query_one("#header").render())
        await pilot.press("p")
        assert not app.source.paused


async def test_help_and_events_screens():
    app = replay_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("e")
        assert isinstance(app.screen, EventsScreen)
        table = app.screen.query_one("#events-table")
        assert table.row_count >= 3  # first verdicts of the session are changes too
        await pilot.press("escape")


async def test_a_verdict_that_gets_worse_notifies_and_rings_the_bell():
    app = replay_app(bell=True)
    rings = []
    app.bell = lambda: rings.append(1)
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        app.auto_checks = False  # nothing else may change a verdict during the assertion
        rings.clear()
        app.events_seen = app.events.worse_count  # what the replay itself worsened was looked at
        app._set_verdict(Verdict("G10", Status.OK, "no TP settings"), time.monotonic())
        app._set_verdict(Verdict("G10", Status.FAIL, "TP=2 in train.yaml across two Sparks"), time.monotonic())
        await says(pilot, lambda n: n.title == "got worse" and "G10" in n.message)
        assert rings == [1]
        last = list(app.events)[-1]
        assert (last.id, last.old, last.new) == ("G10", Status.OK, Status.FAIL)
        # someone returning later sees it in the header until they look at the events
        app.refresh_header()
        assert "1 got worse (e)" in app.header_bar.render().plain
        await pilot.press("e")
        await pilot.press("escape")
        app.refresh_header()
        assert "got worse" not in app.header_bar.render().plain


async def test_narrow_terminal_stacks_the_panels():
    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        assert app.has_class("narrow")
        cl = app.query_one(Checklist)
        assert cl.region.width == 80 and cl.region.height >= 11
        header = str(app.query_one("#header").render())
        assert header.startswith(" spark-demo · GB10 · REPLAY ")  # fits 80 columns: the replay's position first
        mem = str(app.query_one("#m-mem .meter-value").render())
        assert mem == "used 113.4 avail 8.3 GiB"  # used (as free says) and available, one unit, whole in the narrow meter
    app = replay_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for(pilot, lambda: app.query_one(Checklist).region.width, what="the checklist laid out")
        assert not app.has_class("narrow")


async def test_command_palette_offers_the_actions():
    from sparktui.ui.app import SparkCommands

    app = SparkApp(Config(), source=StillSource(), auto_checks=False)  # live: a replay measures nothing
    async with app.run_test(size=(120, 36)):
        provider = SparkCommands(app.screen)
        hits = [h async for h in provider.search("bandwidth")]
        assert hits and "bandwidth" in str(hits[0].match_display).lower()


async def test_command_palette_runs_the_action_it_offers():
    app = replay_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        await pilot.press("ctrl+p")
        await shows(pilot, CommandPalette)
        for ch in "events log":
            await pilot.press("space" if ch == " " else ch)
        hits = app.screen.query_one(OptionList)
        await wait_for(pilot, lambda: hits.option_count and "events log" in str(hits.get_option_at_index(0).prompt),
                       what="the palette's search done", state=lambda: hits.option_count and hits.get_option_at_index(0))
        await pilot.press("enter")
        await shows(pilot, EventsScreen)


async def test_mouse_click_selects_and_a_second_click_opens_the_card():
    app = replay_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        cl = app.query_one(Checklist)
        row_y = 2 + 3  # inside the border, under the header: G4 is the fourth row
        await pilot.click(Checklist, offset=(12, row_y))
        await wait_for(pilot, lambda: cl.selected_id == "G4", what="G4 selected", state=lambda: cl.selected_id)
        assert not isinstance(app.screen, CardScreen)
        await pilot.click(Checklist, offset=(12, row_y))
        assert (await shows(pilot, CardScreen)).gotcha.id == "G4"


async def test_playbook_issue_keys_enter_o_and_y(monkeypatch):
    app, opened, copied = replay_app_catching_urls(monkeypatch)
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        app.query_one("#tabs").active = "tab-playbooks"
        table = app.query_one("#pb-table")
        await wait_for(pilot, lambda: table.display and table.region.height, what="the playbook table shown")
        table.focus()
        await pilot.pause()
        assert table.row_count == 2
        await pilot.press("enter")
        assert (await shows(pilot, MessageScreen)).title_text.startswith("#88 vLLM container")
        await pilot.press("escape")
        await leaves(pilot, MessageScreen)
        await pilot.press("y")
        await pilot.press("o")
        await wait_for(pilot, lambda: copied and opened, what="the issue copied and opened")
        assert copied == ["https://github.com/NVIDIA/dgx-spark-playbooks/issues/88"]
        assert opened == ["https://github.com/NVIDIA/dgx-spark-playbooks/issues/88"]


def test_dashboard_takes_python_path_and_config_like_the_headless_cli(tmp_path, monkeypatch):
    import sys

    import sparktui.ui.app as ui_app
    from sparktui.cli.main import main

    conf = tmp_path / "c.toml"
    conf.write_text("[thermal]\nwindow_min = 3\n")
    seen = {}
    monkeypatch.setattr(ui_app, "run_dashboard", lambda cfg, **kw: seen.update(cfg=cfg, **kw) or 0)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    py = tmp_path / "python"  # an executable: a --python that does not exist is a usage error (64)
    py.write_text("#!/bin/sh\n")
    py.chmod(0o755)
    assert main(["--python", str(py), "--path", str(tmp_path), "--config", str(conf), "--bell"]) == 0
    cfg = seen["cfg"]
    assert cfg.target.python == str(py) and str(tmp_path) in [str(p) for p in cfg.scan.paths]
    assert cfg.thermal.window_min == 3 and seen["bell"] is True and seen["replay"] is None


async def test_a_resize_made_while_a_card_is_up_applies_when_it_closes():
    app = replay_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await loaded(pilot)
        assert not app.has_class("narrow")
        await pilot.press("enter")
        await shows(pilot, CardScreen)
        await pilot.resize_terminal(100, 30)
        await pilot.pause()
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.has_class("narrow") and app.query_one(Checklist).region.width == 100,
                       what="the main screen narrow at 100 columns", state=lambda: app.query_one(Checklist).region)
        await pilot.press("e")
        await shows(pilot, EventsScreen)
        await pilot.resize_terminal(160, 50)
        await pilot.pause()
        await pilot.press("escape")
        await leaves(pilot, EventsScreen)
        await wait_for(pilot, lambda: not app.has_class("narrow"), what="the main screen wide again")


async def test_palette_lists_every_action_on_an_empty_query_and_only_useful_ones_in_a_card():
    from sparktui.ui.app import SparkCommands

    app = replay_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        hits = [h async for h in SparkCommands(app.screen).discover()]
        live_only = [a for a in SparkCommands.ACTIONS if a[1] in SparkApp.LIVE_ONLY]  # a replay is look-only
        assert len(hits) == len(SparkCommands.ACTIONS) - len(live_only) and all(h.help.startswith("key: ") for h in hits)
        await pilot.press("enter")  # a card
        await shows(pilot, CardScreen)
        offered = [str(h.display) async for h in SparkCommands(app.screen).discover()]
        assert "Keys and help" in offered and "Pause / resume sampling" in offered
        assert "Show the events log" not in offered and "Filter the process table" not in offered


async def test_issue_keys_do_nothing_while_the_issues_are_not_showing(monkeypatch):
    import webbrowser

    opened = []
    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or True)
    app = replay_app()
    app.copy_to_clipboard = lambda text: opened.append(text)
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        assert app.query_one("#tabs").active == "tab-processes"
        await pilot.press("o", "y")
        await pilot.pause()
        assert opened == []


async def test_enter_on_a_process_shows_its_whole_command_and_cap():
    app = replay_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        table = app.query_one("#proc-table")
        table.focus()
        table.move_cursor(row=table.get_row_index("5188"))
        await pilot.pause()
        await pilot.press("enter")
        await shows(pilot, MessageScreen)
        text = app.screen.markdown
        assert app.screen.title_text.startswith("pid 5188") and "**memory cap:** default 0.9:" in text
        assert "VLLM::EngineCore" in text and "**GPU memory:** 86.0 GiB" in text


async def test_enter_on_an_event_shows_the_whole_finding():
    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        app.auto_checks = False
        long = "MemAvailable 6.1 GiB of 121.7 GiB, under the 8 GiB floor; page cache holds 31 GiB " * 2
        app._set_verdict(Verdict("G3", Status.OK, "fine"), time.monotonic())
        app._set_verdict(Verdict("G3", Status.WARN, long), time.monotonic())
        await pilot.press("e")
        await shows(pilot, EventsScreen)
        await pilot.press("enter")  # the newest change is first
        assert (await shows(pilot, MessageScreen)).markdown == long
        assert app.screen.title_text.startswith("G3: ok → warn")


# --- live mode: cancel a hung check, and G5's confirmation ---------------------------------------

class StillSource(QuietSource):
    """A live-like source that never samples (the checks are what these tests drive)."""

    label = "test"


async def test_a_hung_check_shows_its_elapsed_time_and_c_cancels_it(tmp_path):
    from tests.standins.make import make_standin

    py = make_standin(tmp_path, "hang_import")
    cfg = Config().with_overrides(target={"python": py, "timeout_s": 60.0})
    app = SparkApp(cfg, source=StillSource(), auto_checks=False)
    async with app.run_test(size=(120, 36)) as pilot:
        app.query_one(Checklist).move_cursor(row=0)
        await pilot.press("r")
        await wait_for(pilot, lambda: app.board["G1"].running_since is not None
                       and time.monotonic() - app.board["G1"].running_since >= 1.2, what="G1 running for over a second",
                       state=lambda: (app.board["G1"].running_since, app.board["G1"].verdict))
        app.refresh_checklist()
        shown = re.search(r"checking… (\d+)s", row_text(app, "G1"))
        elapsed = time.monotonic() - app.board["G1"].running_since
        assert shown and int(shown.group(1)) >= 1 and abs(int(shown.group(1)) - elapsed) <= 1.5, (shown, elapsed)
        t0 = time.monotonic()
        await pilot.press("c")
        v = await wait_for(pilot, lambda: app.board["G1"].verdict, what="G1's verdict after c")
        assert time.monotonic() - t0 < 5
        assert v.status is Status.UNKNOWN and "cancelled" in v.summary


async def test_quick_checks_are_not_held_back_or_cancelled_by_a_hung_one(tmp_path):
    """R with a training interpreter whose torch import hangs: G8 and G10 (no torch needed) show
    their verdicts at once; c cancels only the checks still waiting on the hung probe; r on a
    running check says it is running."""
    from tests.standins.make import make_standin

    py = make_standin(tmp_path, "hang_import")
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "train.sh").write_text("torchrun --nproc-per-node 1 sft.py --tensor-parallel-size 1\n")
    cfg = Config().with_overrides(target={"python": py, "timeout_s": 60.0}, scan={"paths": [str(tmp_path / "proj")]})
    app = SparkApp(cfg, source=StillSource(), auto_checks=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("R")
        await wait_for(pilot, lambda: app.board["G10"].verdict is not None and app.board["G8"].verdict is not None,
                       what="G8's and G10's verdicts", state=lambda: (app.board["G8"].verdict, app.board["G10"].verdict))
        assert app.board["G10"].verdict.status is Status.OK and app.board["G8"].verdict.status is Status.SKIP
        assert app.board["G1"].running_since is not None and app.board["G1"].verdict is None
        app.query_one(Checklist).move_cursor(row=0)
        await pilot.press("r")
        await says(pilot, lambda n: re.fullmatch(r"already running: G1 for \d+ s \(c cancels\)", n.message))
        await pilot.press("c")
        await wait_for(pilot, lambda: all(app.board[g].verdict for g in ("G1", "G2", "G7", "G9")),
                       what="the waiting checks cancelled", state=lambda: {g: app.board[g].verdict for g in ("G1", "G2")})
        await settled(pilot)
        for gid in ("G1", "G2", "G7", "G9"):  # all waited on the hung torch import
            assert "cancelled" in app.board[gid].verdict.summary, gid
        assert "cancelled" not in app.board["G10"].verdict.summary
        assert not [e for e in app.events if e.worse]  # a cancel is not news


async def test_bandwidth_asks_first_and_no_means_nothing_runs(tmp_path, monkeypatch):
    from sparktui.gotchas.g05_bandwidth import GateDecision
    import sparktui.flows.bandwidth as cb

    monkeypatch.setattr(cb, "decide", lambda readings, size, force: GateDecision(True, 1 << 30, ()))
    app = SparkApp(Config().with_overrides(target={"python": "/nonexistent/python"}), source=StillSource(), auto_checks=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("b")
        assert "1.00 GiB" in (await shows(pilot, ConfirmScreen)).body
        await pilot.press("n")
        await leaves(pilot, ConfirmScreen)
        await settled(pilot)
        assert app.bandwidth_worker is None and app.board["G5"].verdict is None


async def test_bandwidth_refused_by_the_gate_says_why(monkeypatch):
    """No NVML (given, not assumed: on the lent H200 this machine's real NVML let the gate through
    when no other test held the GPU): the process view is blind, so the gate refuses."""
    from sparktui.probes import nvml
    from sparktui.testing import fake_nvml

    nvml.set_backend(fake_nvml.gb10(library_missing=True))
    try:
        app = SparkApp(Config(), source=StillSource(), auto_checks=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.press("b")
            assert "refused" in (await shows(pilot, MessageScreen)).title_text
    finally:
        nvml.set_backend(None)


async def test_bandwidth_yes_runs_the_probe_and_shows_the_figure(tmp_path, monkeypatch):
    import sys

    from sparktui.gotchas.g05_bandwidth import GateDecision
    import sparktui.flows.bandwidth as cb
    from tests.standins.make import make_script
    from tests.gotchas.g05.test_gate_and_probe import FAKE_CUDA_TORCH

    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text(FAKE_CUDA_TORCH)
    py = make_script(tmp_path, "python-fake", f"PYTHONPATH='{site}' exec '{sys.executable}' \"$@\"\n")
    monkeypatch.setattr(cb, "decide", lambda readings, size, force: GateDecision(True, 1 << 30, ()))
    # the gates read this machine between the plan and the answer: a 12-worker soak on the lent H100
    # changed its processes meanwhile (test_bandwidth_rechecks_the_gates_after_the_dialog covers that)
    monkeypatch.setattr(cb, "blockers", lambda readings: [])
    app = SparkApp(Config().with_overrides(target={"python": py}), source=StillSource(), auto_checks=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("b")
        await shows(pilot, ConfirmScreen)
        await pilot.press("y")
        v = await wait_for(pilot, lambda: app.board["G5"].verdict, timeout=30, what="G5's measured verdict")
        assert v.status in (Status.OK, Status.WARN) and "GB/s copy" in v.summary
        await wait_for(pilot, lambda: "GB/s copy" in str(app.query_one("#bandwidth").render()), what="the figure shown",
                       state=lambda: str(app.query_one("#bandwidth").render()))


async def test_bandwidth_rechecks_the_gates_after_the_dialog(tmp_path, monkeypatch):
    """A server started while the confirmation sat open stops the probe before it allocates."""
    from sparktui.gotchas.g05_bandwidth import GateDecision
    import sparktui.flows.bandwidth as cb
    from sparktui.probes import bandwidth

    answers = iter([GateDecision(True, 1 << 30, ()), GateDecision(False, 1 << 30, ("server running: pid 4242 (vllm)",))])
    monkeypatch.setattr(cb, "decide", lambda readings, size, force: next(answers))
    measured = []
    monkeypatch.setattr(bandwidth, "measure", lambda *a, **k: measured.append(a) or {"status": "ok"})
    app = SparkApp(Config(), source=StillSource(), auto_checks=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("b")
        await shows(pilot, ConfirmScreen)
        await pilot.press("y")
        v = await wait_for(pilot, lambda: app.board["G5"].verdict, what="G5's verdict after the recheck")
        await settled(pilot)
        assert measured == [] and "changed while waiting for confirmation" in v.summary
        assert "pid 4242" in v.summary and app.board["G5"].running_since is None


async def test_a_day_of_age_updates_draws_the_latest_age():
    """A day of minute-by-minute age updates: each one reaches the table and the last is what it
    holds. (Their render caches are DataTable's own, bounded by Textual: ui/widgets/tables.py uses
    public API only.)"""
    app = replay_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        t = app.query_one(Checklist)
        for i in range(3000):
            t.update_cell("G1", "age", f"{i}m")
            if i % 200 == 0:
                await pilot.pause()  # let it render this version of the cell
        await pilot.pause()
        assert t.get_cell("G1", "age") == "2999m"


async def test_data_arriving_while_the_app_shuts_down_is_dropped_not_a_crash():
    """A scan or a sample posted just before quit lands after the children are gone."""
    app = replay_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        history, scan = app.source.history, app.latest_processes
    assert scan and not app.process_table.is_attached
    app.process_table.show(scan, app.now())
    app.telemetry.show(history, app.cfg, 60.0)
    app.telemetry.show_bandwidth("bandwidth: 221 GB/s")
    app.playbook_panel.show(None, {"slugs": ["vllm"], "matches": []}, app.now())
