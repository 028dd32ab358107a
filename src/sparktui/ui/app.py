"""The dashboard: a Textual app a user leaves in a tmux pane beside a long run.

It shows; it does not judge. The runner schedules and judges (runner/): a thread worker only loops
over ``runner.stream`` and posts each batch of verdicts (probes may start subprocesses in the
training interpreter; a hung one shows its elapsed time and can be cancelled); telemetry arrives
from the source's thread (live/) as messages, and the telemetry-fed checks are re-judged from its
window. No check is named here: what a check needs is in its declaration (gotchas/base.py).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, NoReturn

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.command import CommandPalette, DiscoveryHit, Hit, Hits, Provider
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.message import Message
from textual.notifications import Notification, SeverityLevel
from textual.widgets import DataTable, Input, TabbedContent, Tabs, TabPane
from textual.worker import Worker, WorkerState

from sparktui.core import children
from sparktui.core.config import Config
from sparktui.core.events import Change, EventLog
from sparktui.core.inert import visible, visible_lines
from sparktui.core.readings import Reading, Readings
from sparktui.core.verdict import Status, Verdict
from sparktui.flows.notify import Notifier, make_event
from sparktui import runner
from sparktui.gotchas import REGISTRY
from sparktui.gotchas.base import Feed
from sparktui.live import Source
from sparktui.live.kernel import KernelWatch, victim_seen
from sparktui.live.run import RunWatch
from sparktui.ui.guard import GuardStepped, show_guard_step, start_guard

if TYPE_CHECKING:
    from sparktui.flows.guard import GuardThread
from sparktui.live.kernel import status_of as kernel_status_of
from sparktui.runner import TELEMETRY_REJUDGE_S, Judged
from sparktui.runner.board import Board
from sparktui.ui.format import age, bandwidth_line, duration, short_reason
from sparktui.ui.peers import PeersScreen, PeerWatch
from sparktui.ui import malloc
from sparktui.ui.prefs import Prefs, load_prefs, save_prefs
from sparktui.ui.widgets.footer import Footer
from sparktui.ui.screens import (CardScreen, ConfirmScreen, EventsScreen, HelpScreen, MessageScreen, copy_url, open_url,
                                 view_keys)
from sparktui.ui.panels import Checklist, HeaderBar, PlaybookPanel, ProcessTable, TelemetryPanel, process_details
from sparktui.ui.panels.run import RunPanel, RunStory, event_text
from sparktui.ui.panels.telemetry import outage_since

HARD_EXIT_AFTER_S = 3.0  # after SIGTERM/SIGHUP, the most a stuck exit may take


def hard_exit(code: int) -> None:
    """The end of a dashboard whose orderly exit is stuck: no process outlives it."""
    children.kill_all()
    os._exit(code)


NARROW_BELOW = 120  # columns: under this the checklist and telemetry stack (app.tcss)


# The check measured only when asked (G5's bandwidth: `b`), the ones whose findings the process and
# playbook tabs list, and those judged again as kernel-log events arrive: from their declarations.
ON_REQUEST = runner.fed(Feed.ON_REQUEST)[0].id
PROCESSES_CHECK = runner.showing("processes")
PLAYBOOKS_CHECK = runner.showing("playbook issues")
KERNEL_LOG_CHECKS = " ".join(g.id for g in runner.followers("kernel_log"))


def _tab_title(text: str, g: Any) -> str:
    return f"{text} ({g.id})" if g is not None else text


class KernelEventArrived(Message):
    def __init__(self, event: dict[str, Any]) -> None:
        self.event = event
        super().__init__()


class NotifyFailed(Message):
    def __init__(self, why: str) -> None:
        self.why = why
        super().__init__()


class KernelFollowFailed(Message):
    def __init__(self, why: str) -> None:
        self.why = why
        super().__init__()


class SampleArrived(Message):
    def __init__(self, sample: dict[str, Any]) -> None:
        super().__init__()
        self.sample = sample


class ProcessesArrived(Message):
    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__()
        self.data = data


class RunChanged(Message):
    """The run watch found a run, lost it, or read more of its log (posted from its thread)."""


class ReplayFinished(Message):
    """The recording has been fed to its end: judge and draw its final state once."""


class ReplayMoved(Message):
    """A seek moved the replay (←/→, home/end): show the recording up to its new position. Posted,
    not called: messages the stopped feed had already posted are handled first."""

    def __init__(self, processes: dict[str, Any] | None) -> None:
        super().__init__()
        self.processes = processes


class SessionOpened(Message):
    """The live source has restored the previous session (or not) and opened this one (or not)."""


class ChecksDone(Message):
    """A batch of verdicts from the runner (runner.Judged), posted by the checks worker."""

    def __init__(self, judged: Judged) -> None:
        super().__init__()
        self.judged = judged


class BandwidthDone(Message):
    def __init__(self, verdict: Verdict, result: Mapping[str, Any]) -> None:
        super().__init__()
        self.verdict, self.result = verdict, result


class SparkCommands(Provider):
    """The command palette offers the same actions as the keys."""

    ACTIONS = (
        ("Rerun the selected check", "rerun_selected", "r"),
        ("Rerun all non-intrusive checks", "rerun_all", "R"),
        ("Cancel running checks", "cancel_checks", "c"),
        (f"Measure bandwidth ({ON_REQUEST}, asks first)", "bandwidth", "b"),
        ("Pause / resume sampling", "toggle_pause", "p"),
        ("Plots: next span (5 min, 1 h, the whole session)", "cycle_span", "w"),
        ("Filter the process table", "filter_processes", "/"),
        ("Change the process table's sort", "cycle_sort", "s"),
        ("Reverse the process table's sort", "reverse_sort", "S"),
        ("Process table as a tree (launchers over their workers)", "toggle_tree", "t"),
        ("Process table: every process on the pool, or the classified ones", "all_processes", "a"),
        ("Process table on the whole screen, and back", "maximise_processes", "z"),
        ("Signal the selected process (asks first)", "signal_process", "k"),
        ("Show the events log", "events", "e"),
        ("Peers: this machine beside the others (what must match)", "peers", "m"),
        ("Replay: one minute back", "replay_back", "←"),
        ("Replay: one minute on", "replay_on", "→"),
        ("Replay: to the start of the recording", "replay_start", "home"),
        ("Replay: to the end of the recording", "replay_end", "end"),
        ("Open the selected gotcha's card", "open_card", "enter"),
        ("Keys and help", "help", "?"),
    )

    def _offered(self):
        """The actions that would do something from where the palette was opened (a card is not
        the main screen: the checklist's actions are not offered there)."""
        app = self.app
        under = [sc for sc in app.screen_stack if not isinstance(sc, CommandPalette)]
        for text, action, key in self.ACTIONS:
            if action in SparkApp.MAIN_ONLY and len(under) > 1:
                continue
            if action in SparkApp.REPLAY_ONLY and not (isinstance(app, SparkApp) and app.replaying):
                continue
            if action == "signal_process" and isinstance(app, SparkApp) and app.readonly:
                continue  # --readonly: not offered, as the footer does not show it
            if action in SparkApp.LIVE_ONLY and isinstance(app, SparkApp) and app.replaying:
                continue  # a replay is look-only: nothing is signalled, measured or rerun
            yield text, action, key

    async def discover(self) -> Hits:
        """With an empty query: every action, so the palette lists what sparktui can do."""
        for text, action, key in self._offered():
            yield DiscoveryHit(text, partial(self.app.run_action, action), help=f"key: {key}")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text, action, key in self._offered():
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), partial(self.app.run_action, action), help=f"key: {key}")


class SparkApp(App):
    CSS_PATH = ["app.tcss", "panels/run.tcss"]
    TITLE = "sparktui"
    COMMANDS = App.COMMANDS | {SparkCommands}
    # Footer order is priority order: at 80 columns the last ones are cut, `?` lists them all.
    # A tooltip is the key's line in help (`?` lists the keys that work in the view it is pressed in).
    HELP_NOTE = ("↑ ↓ move in the checklist and tables, home / end to the first / last row; tab moves between panels "
                 "(the focused one is outlined); o / y act on the selected issue while the Playbook issues tab shows.")
    REPLAY_NOTE = ("A replay is look-only: nothing is signalled, measured or rerun. ← → move a minute through the "
                   "recording, home / end to its start / end (ctrl+home / ctrl+end: a table's first / last row); "
                   "p plays on from there.")
    BINDINGS = [
        Binding("q", "quit", "quit", tooltip="quit sparktui (everywhere else q goes back)"),
        Binding("question_mark", "help", "help", tooltip="the keys of this view"),
        Binding("enter", "open_card", "card", key_display="⏎",
                tooltip="open the selected row: a gotcha's card, a process in full, a playbook issue"),
        # a replay only: where in the recording (priority: the focused table's ← → home end yield to them)
        Binding("left", "replay_back", "-1 min", key_display="←", priority=True, tooltip="replay: one minute back"),
        Binding("right", "replay_on", "+1 min", key_display="→", priority=True, tooltip="replay: one minute on"),
        Binding("home", "replay_start", "start", show=False, priority=True, tooltip="replay: to the start of the recording"),
        Binding("end", "replay_end", "end", show=False, priority=True, tooltip="replay: to the end of the recording"),
        Binding("r", "rerun_selected", "rerun", tooltip="rerun the selected check"),
        Binding("R", "rerun_all", "all", tooltip="rerun all non-intrusive checks"),
        Binding("c", "cancel_checks", "cancel", show=False, tooltip="cancel the running checks"),
        Binding("b", "bandwidth", ON_REQUEST, tooltip=f"{ON_REQUEST}: measure bandwidth (asks first: it loads the machine)"),
        Binding("slash", "filter_processes", "filter", tooltip="filter the process table (escape clears)"),
        Binding("s", "cycle_sort", "sort", tooltip="change the process table's sort column"),
        Binding("p", "pause", "pause", tooltip="pause sampling"),
        Binding("p", "resume", "resume", tooltip="resume sampling (paused now)"),
        Binding("e", "events", "events", tooltip="the events log: every verdict change and when"),
        Binding("m", "peers", "peers", tooltip="peers: this machine beside the others (ssh), what must match for DDP/FSDP"),
        Binding("k", "signal_process", "signal", tooltip="signal the selected process: SIGTERM, then SIGKILL (asks each time)"),
        Binding("k", "readonly_note", "signal", show=False, tooltip="read-only mode (--readonly): no process is signalled"),  # k says why nothing happens
        Binding("S", "reverse_sort", "reverse", show=False, tooltip="reverse the process table's sort"),
        Binding("t", "toggle_tree", "tree", show=False, tooltip="the process table as a tree (launchers over their workers)"),
        Binding("a", "all_processes", "all", show=False, tooltip="the process table: every process on the pool with its share of it, or the classified ones"),
        Binding("z", "maximise_processes", "zoom", show=False, tooltip="the process table on the whole screen, and back"),
        Binding("L", "cycle_layout", "layout", show=False,
                tooltip="layout: auto (side by side from 120 columns, stacked below), side by side, stacked (kept)"),
        Binding("w", "cycle_span", "span", show=False, tooltip="the plots' window: 5 min, 1 h, the whole session (kept)"),
        Binding("o", "open_issue_url", "open URL", tooltip="open the selected playbook issue's URL"),
        Binding("y", "copy_issue_url", "copy URL", tooltip="copy the selected playbook issue's URL"),
        Binding("ctrl+c", "ask_quit", "quit?", show=False, tooltip="quit, after asking (ctrl+q quits at once)"),
        # Textual's own keys, in sparktui's words (help lists them in one style)
        Binding("ctrl+q", "quit", "quit", show=False, priority=True, tooltip="quit at once, without asking"),
        Binding("ctrl+p", "command_palette", "palette", show=False, priority=True, key_display="^p",
                tooltip="the command palette: every action by name"),
    ]

    def __init__(self, cfg: Config | None = None, *, replay: str | None = None, speed: float | None = 1.0,
                 bell: bool = False, auto_checks: bool = True, source: Source | None = None, record: str | None = None,
                 recording: Any = None, keep_session: bool = True, readonly: bool = False,
                 kernel_log_path: str | None = None, follow_run: bool = False) -> None:
        super().__init__()
        self.cfg = cfg or Config()
        self.bell_on_worse = bell
        self.readonly = readonly  # --readonly: no key reaches another process (k is off)
        self.signal_grace_s = 3.0  # SIGTERM's grace before SIGKILL is offered (flows/signals.py)
        self.auto_checks = auto_checks
        self.board = Board()
        self.events = EventLog()
        self.said: deque[Notification] = deque(maxlen=200)  # what notify showed, newest last (bounded)
        self.events_seen = 0  # worse changes already looked at in the events view
        self.tick_n = 0
        self._judged_after_replay = False
        self.replay_settled = False  # set once a replay's last sample has been judged and drawn
        self._quiet_alerts = False  # a seek's verdicts: in the events view, not announced
        self.started_mono = time.monotonic()
        self.last_telemetry_judge = 0.0
        self.latest_processes: dict[str, Any] | None = None
        self.playbook_data: Mapping[str, Any] | None = None
        self.bandwidth_worker: Worker | None = None
        self._bandwidth_cancel: threading.Event | None = None  # set while the bandwidth measurement runs
        self.replay_path = replay
        self.replay_instant = bool(replay) and not speed  # --speed 0: the whole recording at once
        self.source: Source
        if source is not None:
            self.source = source
        elif replay:
            from sparktui.live.sources import ReplaySource

            self.source = ReplaySource(replay, self.cfg, self._on_sample_thread, self._on_processes_thread, speed,
                                       on_finished=partial(self._post, ReplayFinished), recording=recording)
        else:
            from sparktui.live.sources import LiveSource

            self.source = LiveSource(self.cfg, self._on_sample_thread, self._on_processes_thread, record_path=record,
                                     keep_session=keep_session, on_session=partial(self._post, SessionOpened))
        self.replay_readings = self._recorded_readings() if replay else None
        self.host_name = "?"
        self.peer_watch = PeerWatch(self, self.cfg, replay=bool(replay))
        # G11 live: the kernel log followed on a live run (a test's own source follows only the file it names)
        self.kernel_watch = KernelWatch(partial(self._post, KernelEventArrived), partial(self._post, KernelFollowFailed),
                                        kernel_log_path,
                                        enabled=not replay and (source is None or kernel_log_path is not None))
        # G14 live: the training run beside the dashboard, found from each process scan (with a test's
        # own source only when it asks: ``follow_run``)
        self.run_watch = RunWatch(self.cfg, partial(self._post, RunChanged),
                                  enabled=not replay and (source is None or follow_run))
        self._run_shown_mono = time.monotonic()
        self._run_dirty = False
        self.prefs_problems: list[str] = []  # why prefs.json was not used (defaults then): said once mounted
        self.prefs: Prefs = load_prefs(problems=self.prefs_problems)  # the one copy: every panel changes it through update_prefs
        self._writer_errors_said: set[str] = set()
        self.run_reading: Reading | None = None  # the latest `run` reading (show_run), None until one is made
        self.run_story = RunStory()  # the run's events from its readings and its check's verdicts
        self.notifier: Notifier | None = None  # [notify] webhook/command: made on mount, never in a replay
        self.guard_thread: GuardThread | None = None  # [guard] enabled: the memory guard's thread (ui/guard.py), never in a replay

    def _post(self, message: type[Message], *args: Any) -> None:
        """Post ``message(*args)`` (from a source's or the follower's thread)."""
        self.post_message(message(*args))

    # -- preferences -----------------------------------------------------------------------------
    def update_prefs(self, **changes: Any) -> None:
        """Change and keep preferences (theme, sort, span, layout...). One copy on the app, so two
        panels saving never overwrite each other's choice; a failed save is said, never fatal."""
        new = self.prefs.with_(**changes)
        if new == self.prefs:
            return
        self.prefs = new
        try:
            save_prefs(new)
        except OSError as e:
            self.notify(f"preferences not kept: {e.strerror or e}", title="preferences", severity="warning", timeout=8)

    def _apply_theme_pref(self) -> None:
        theme = self.prefs.theme
        if theme and theme in self.available_themes and theme != self.theme:
            self.theme = theme
        self.theme_changed_signal.subscribe(self, lambda t: self.update_prefs(theme=t.name))

    # -- layout --------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        # Held as attributes, not queried: a timer tick that lands while a screen is pushed or the
        # app is shutting down must not fail on a query of the wrong (or an emptied) screen.
        self.header_bar = HeaderBar(id="header")
        self.checklist = Checklist(id="checklist")
        self.telemetry = TelemetryPanel(id="telemetry", span=self.prefs.plot_span)
        self.process_table = ProcessTable(self.prefs, id="processes")
        self.playbook_panel = PlaybookPanel(id="playbooks")
        self.run_panel = RunPanel(id="run")
        yield self.header_bar
        with Horizontal(id="top"):
            with Vertical(id="left"):  # side by side: the run panel under the checklist (panels/run.tcss)
                yield self.checklist
                yield self.run_panel
            yield self.telemetry
        with TabbedContent(id="tabs"):
            with TabPane(_tab_title("Processes", PROCESSES_CHECK), id="tab-processes"):
                yield self.process_table
            with TabPane(_tab_title("Playbook issues", PLAYBOOKS_CHECK), id="tab-playbooks"):
                yield self.playbook_panel
        self.footer = Footer(compact=True)
        yield self.footer

    def on_mount(self) -> None:
        self._apply_theme_pref()
        self._layout_for(self.size.width)
        self.host_name = self._host_label()
        self.source.start()
        self._say_writer_errors()
        for problem in self.prefs_problems:
            self.notify(problem, title="preferences", severity="warning", timeout=15)
        self.set_interval(1.0, self.tick)
        self.checklist.focus()
        self.peer_watch.start()  # ssh to the peers in threads; nothing when none or a replay
        self.kernel_watch.start()  # the kernel log followed live (G11); nothing in a replay
        self.run_watch.start()  # the run beside us (G14), found from the process scans; nothing in a replay
        self.guard_thread = start_guard(self)  # the memory guard, opt-in; nothing in a replay
        if not self.replay_path and self.source.kind != "replay" and (self.cfg.notify.webhook or self.cfg.notify.command):
            self.notifier = Notifier(self.cfg.notify, partial(self._post, NotifyFailed))  # opt-in (docs/notify.md)
        self._stop_on_signals()
        self.tick()

    def _stop_on_signals(self) -> None:
        """SIGTERM and SIGHUP (`kill`, a closed terminal) end the dashboard as q does, without asking:
        on_unmount stops the probes and closes the kept session whole; the exit is 128 + signal."""
        import asyncio
        import signal

        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP):
            try:
                loop.add_signal_handler(sig, partial(self._stop_on_signal, 128 + sig))
            except (RuntimeError, ValueError):  # not the main thread (a test's app): the default stays
                pass

    def _stop_on_signal(self, code: int) -> None:
        """Exit as q does; and if that has not ended the process within HARD_EXIT_AFTER_S (a closed
        tmux pane: restoring a terminal that is gone can block for ever; seen: dashboards left under
        PID 1 for hours, one spinning at 77% of a core), kill the probes and leave at once. The kept
        session loses nothing: each of its lines is written whole as it comes."""
        import threading

        self.exit(None, code)
        timer = threading.Timer(HARD_EXIT_AFTER_S, hard_exit, (code,))
        timer.daemon = True
        timer.start()

    def on_resize(self, event) -> None:
        self._layout_for(event.size.width)

    def _layout_for(self, width: int) -> None:
        layout = self.prefs.layout
        narrow = width < NARROW_BELOW if layout == "auto" else layout == "narrow"
        if self.has_class("narrow") != narrow:
            self.set_class(narrow, "narrow")
        checklist = getattr(self, "checklist", None)
        if checklist is not None and checklist.show_header == narrow:
            checklist.show_header = not narrow  # stacked: the row a column header took holds a check
        footer = getattr(self, "footer", None)
        if footer is not None and footer.show_command_palette == narrow:
            footer.show_command_palette = not narrow  # ctrl+p still works; ? says so
            footer.refresh(recompose=True)

    def on_unmount(self) -> None:
        for st in self.board.states.values():
            if st.cancel is not None:
                st.cancel.set()
        if self._bandwidth_cancel is not None:
            self._bandwidth_cancel.set()  # quitting during G5 kills its probe, not waits out its timeout
        line = self.run_watch.record_at_end() if self.run_watch.enabled else None  # how the run stood at the end
        if line is not None:
            self.source.record_readings(Readings({line.probe: line}))
        self.source.stop()
        self.peer_watch.stop()
        self.kernel_watch.stop()
        self.run_watch.stop()
        if self.guard_thread is not None:
            self.guard_thread.stop()
        if self.notifier is not None:
            self.notifier.close()  # at most about a second: what is still queued then is dropped

    # -- sources (called from their threads) --------------------------------------------------
    def _on_sample_thread(self, sample: dict[str, Any]) -> None:
        self.post_message(SampleArrived(sample))

    def _on_processes_thread(self, data: dict[str, Any]) -> None:
        self.post_message(ProcessesArrived(data))

    def on_sample_arrived(self, msg: SampleArrived) -> None:
        if not self.screen_stack or self.screen.id != "_default":  # shutting down, or a screen pushed
            return  # nothing on the main screen is visible; the history keeps filling
        h = self.source.history
        latest = h.latest
        if latest is not None and latest is not msg.sample and latest.get("t") != msg.sample.get("t"):
            return  # a newer sample is already queued behind this one: draw once, for that one
        self._draw_telemetry()

    def _draw_telemetry(self) -> None:
        devices = (self.source.static or {}).get("devices") or [{}]
        max_sm = (devices[0].get("max_sm_mhz") or {}).get("value")  # the plot's top, where NVML said it
        try:
            self.telemetry.show(self.source.history, self.cfg, self.source.interval_s, max_sm)
        except NoMatches:
            pass  # a sample that beat the panel's own children to the screen: the next one draws

    def on_kernel_event_arrived(self, msg: KernelEventArrived) -> None:
        """A kernel log event seen live: a row in the events view, a notification at once (and the
        bell with --bell) for what G11 warns or fails on, and G11 re-judged with it."""
        kw, ev = self.kernel_watch, msg.event
        if ev.get("kind") == "oom_kill":  # who it was, from the last scan before the kill
            seen = victim_seen(self.latest_processes, ev.get("pid"))
            if seen is not None:
                ev["seen_as"] = seen
        kw.add(ev)
        st = kernel_status_of(ev)
        summary = f"{kw.text(ev)} | {str(ev.get('text', ''))[:200]}"
        self.events.kernel_event(self.now(), st, summary)
        # into the kept session (and --record): a crash of sparktui loses no kernel event
        self.source.keep_event(f"kernel log: {summary}", self.now())
        if st in (Status.FAIL, Status.WARN):
            self.notify(f"{visible(kw.text(ev))}\n{visible(str(ev.get('text', ''))[:200])}",
                        title=f"{KERNEL_LOG_CHECKS} kernel log".strip(),
                        severity="error" if st is Status.FAIL else "warning", timeout=15)
            if self.bell_on_worse:
                self.bell()
            if self.notifier is not None:
                self.notifier.send(make_event((KERNEL_LOG_CHECKS.split() or ["kernel"])[0], st.value, None,
                                              f"kernel log: {kw.text(ev)}",
                                              str(ev.get('text', ''))[:200], kind="kernel"))
        self._judge_kernel_log()

    def on_guard_stepped(self, msg: GuardStepped) -> None:
        show_guard_step(self, msg.step)

    def on_notify_failed(self, msg: NotifyFailed) -> None:
        self.notify(visible_lines(msg.why), title="notify", severity="warning", timeout=15)

    def on_kernel_follow_failed(self, msg: KernelFollowFailed) -> None:
        if self.kernel_watch.error is None:  # said once; G11 stays as judged from the boot-time reading
            self.kernel_watch.error = msg.why
            self.notify(f"the kernel log is not followed live: {msg.why}", title=f"{KERNEL_LOG_CHECKS} kernel log".strip(),
                        severity="warning", timeout=15)

    def _judge_kernel_log(self) -> None:
        mono = time.monotonic()
        for v in runner.judge_followed(self.kernel_watch.reading(), self.cfg):
            self._set_verdict(v, mono)
        self.refresh_checklist()

    def on_session_opened(self, msg: SessionOpened) -> None:
        """The previous session's events (then a row for the gap), and why a session is not kept."""
        self._say_writer_errors()
        if self.source.restored is not None:
            from sparktui.core.session import restore_events

            restore_events(self.events, self.source.restored, self.now())
            self.events_seen = self.events.worse_count  # old news: the header counts only this run's

    def on_replay_finished(self, msg: ReplayFinished) -> None:
        """Every sample message before this one has been handled: the final judgement and picture."""
        self._judged_after_replay = True
        self.last_telemetry_judge = time.monotonic()
        if self.replay_readings is not None:  # the recorded run on its panel, before its check is judged
            run = self.replay_readings.get_reading("run")
            self.show_run(run if run.ok else Reading("run", None, error="the recording carries no run reading"))
        self.judge_telemetry()
        if self.replay_instant:  # fed in a blink: what changed on the way is in the events view, not news
            self.events_seen = self.events.worse_count
        self._draw_telemetry()
        self.refresh_header()
        self.refresh_checklist()
        self.replay_settled = True

    def on_processes_arrived(self, msg: ProcessesArrived) -> None:
        self.latest_processes = msg.data
        self.run_watch.saw_processes(msg.data)  # the run looked for again, in the watch's thread
        self.process_table.show(msg.data, self.now(), self._mem_total())

    def _mem_total(self) -> int | None:
        """MemTotal of the latest sample: the pool a process's share is of."""
        latest = self.source.history.latest
        total = ((latest or {}).get("mem") or {}).get("MemTotal")
        return total if isinstance(total, int) else None

    # -- time ------------------------------------------------------------------------------------
    def now(self) -> float:
        return self.source.now()

    def _say_writer_errors(self) -> None:
        """Why the --record file or the kept session is not written, each reason once: at start, and
        when a write fails mid-run (a full disk): what was written stays whole, and the dashboard
        keeps watching, in memory only."""
        for err, title in ((self.source.record_error, "recording"), (self.source.session_error, "session")):
            if err and err not in self._writer_errors_said:
                self._writer_errors_said.add(err)
                stopped = " stopped:" in f" {err}"
                self.notify(err + ("; what was written is whole, and the dashboard keeps watching (in memory only)"
                                   if stopped else ""), title=title, severity="error", timeout=30 if stopped else 15)

    def tick(self) -> None:
        self.tick_n += 1
        self._say_writer_errors()
        if self.tick_n % malloc.TRIM_EVERY_TICKS == malloc.FIRST_TRIM_TICK:  # after the first checks, then each minute
            malloc.give_back_freed()
        mono = time.monotonic()
        if self._run_dirty or self.run_watch.take_changed():  # lines came since it was last shown
            self._show_run(mono)
        if self.auto_checks:
            due = self.board.due(mono)
            if due:
                self.run_checks(due)
            replay_done = self.source.finished and not self._judged_after_replay
            if len(self.source.history) and (mono - self.last_telemetry_judge >= TELEMETRY_REJUDGE_S or replay_done):
                self.last_telemetry_judge = mono
                self._judged_after_replay = self._judged_after_replay or replay_done
                self.judge_telemetry()
        self.refresh_header()
        self.refresh_checklist()
        self.run_panel.tick(self.now())  # the age of the run's last progress

    def refresh_header(self) -> None:
        static = self.source.static or {}
        devs = static.get("devices") or []
        name = (devs[0].get("name") or {}).get("value") if devs else None
        gpu = name or (f"no GPU ({short_reason(static.get('error', 'NVML unavailable'), 30)})" if not devs else "GPU ?")
        driver = (static.get("driver_version") or {}).get("value") or "?"
        cuda = (static.get("cuda_driver_version") or {}).get("value") or "?"
        first_t = self.source.first_t  # a replay: how much of the recording has been seen
        watched = self.now() - first_t if first_t is not None else time.monotonic() - self.started_mono
        badges = []
        if self.source.synthetic:  # the demo: never mistaken for a measurement, at 80 columns too
            badges.append(("SYNTHETIC", "bold reverse magenta"))
        nvml_down = outage_since(self.source.history.latest)  # the driver and GPU shown are from before it
        if nvml_down is not None:
            badges.append((f"NVML DOWN since {nvml_down}", "bold reverse red"))
        unseen = self.events.worse_count - self.events_seen
        if unseen > 0:
            badges.append((f"{unseen} got worse (e)", "bold yellow"))
        peers = self.peer_watch.badge(self.board, self.host_name)
        if peers is not None:
            badges.append(peers)
        self.header_bar.show(self.host_name, gpu, driver, cuda, duration(watched), self.source.label,
                             self.source.paused, tuple(badges), replay=self._replay_position(),
                             short_source=self.source.short_label)

    def _replay_position(self) -> str | None:
        """"REPLAY 16:25 / 16:28" (the position / the recording's end, its own clock), "· ended" once
        it has played to the end; None live."""
        src = self.source
        end = src.last_t
        if not self.replaying or end is None:
            return None
        hm = lambda t: time.strftime("%H:%M", time.localtime(t))  # noqa: E731
        return f"REPLAY {hm(self.now())} / {hm(end)}" + (" · ended" if src.finished else "")

    def refresh_checklist(self) -> None:
        table = self.checklist
        mono, now = time.monotonic(), self.now()
        for gid, st in self.board.states.items():
            running = mono - st.running_since if st.running_since is not None else None
            table.show(gid, st.verdict, running, now, self.tick_n)

    def _host_label(self) -> str:
        if self.replay_path:
            rec = self.source.recording
            h = (rec.header.get("host") if rec else None) or {}
            return h.get("hostname") or "recorded host"
        import socket

        return socket.gethostname()

    # -- checks ----------------------------------------------------------------------------------
    def _recorded_readings(self) -> Readings:
        """A replay's readings as `check --replay` builds them (one function, so both judge the same):
        the header snapshot and readings lines for the other checks, and the whole recording in
        review mode for the telemetry checks once the replay has finished."""
        from sparktui.core.recording import readings_from_recording

        rec = self.source.recording
        return readings_from_recording(rec) if rec is not None else Readings()

    def run_checks(self, ids: list[str], say_busy: bool = False) -> None:
        """Run the probe-read checks of ``ids`` in a worker (the telemetry-fed ones are judged from
        the sampler's window; a check fed on request reads only its kept result here)."""
        busy = [i for i in ids if self.board[i].running_since is not None]
        ids = [i for i in runner.scheduled(ids) if i not in busy]
        if busy and say_busy:
            since = ", ".join(f"{gid} for {int(self._running_s(gid) or 0)} s" for gid in busy)
            self.notify(f"already running: {since} (c cancels)")
        if not ids:
            return
        cancel = self.board.start(ids, time.monotonic())
        self.refresh_checklist()
        self.run_worker(partial(self._checks_worker, ids, cancel), thread=True, group="checks",
                        exit_on_error=False, name=f"checks {' '.join(ids)}")

    def _checks_worker(self, ids: list[str], cancel) -> None:
        """Only loops: the runner judges each check as soon as its own readings are in."""
        followed = {self.kernel_watch.reading_name: self.kernel_watch} if self.replay_readings is None else None
        for judged in runner.stream(ids, self.cfg, cancel, recorded=self.replay_readings, followed=followed):
            self.post_message(ChecksDone(judged))

    def on_checks_done(self, msg: ChecksDone) -> None:
        mono, j = time.monotonic(), msg.judged
        if not j.cancelled:  # `--record`: a replay can judge these checks too (each reading once)
            self.source.record_readings(Readings({n: j.readings.get_reading(n) for n in j.new}))
        line = bandwidth_line(j.readings.data("bandwidth_last") if "bandwidth_last" in j.readings else None, self.now())
        if line:
            self.telemetry.show_bandwidth(line)
        for v in j.verdicts:
            if j.cancelled:
                v = Verdict(v.id, Status.UNKNOWN, "cancelled by the user; press r to run it again", evidence=v.evidence)
            self._set_verdict(v, mono)
        pb = j.readings.data("playbook_issues") if "playbook_issues" in j.readings else None
        if PLAYBOOKS_CHECK is not None and (pb is not None or PLAYBOOKS_CHECK.id in j.ids):
            self.playbook_data = pb
            st = self.board[PLAYBOOKS_CHECK.id]
            next_run = self.now() + (st.next_due - mono) if self.auto_checks and st.next_due != float("inf") else None
            self.playbook_panel.show(st.verdict, pb, self.now(), next_run)
        self.refresh_checklist()
        self.peer_watch.saw(j.readings)  # this machine's column in the peers view

    def _set_verdict(self, v: Verdict, mono: float) -> None:
        v = runner.with_marks(v)
        self.board.finish(v, mono)
        self.process_table.blame(*self.board.marked())  # the processes the verdicts name: marked and kept in sight
        change = self.events.observe(v, self.now())
        if v.id == self.run_panel.check_id:
            self._run_verdict(v, change)
        self.source.keep_verdict(v, self.now(), change)  # the kept session: a restart shows it again
        if change is not None and self.events.should_alert(change) and not self._quiet_alerts:
            sev: SeverityLevel = "error" if v.status is Status.FAIL else "warning"
            self.notify(f"{v.id} {REGISTRY[v.id].title}: {v.status.value} — {visible(v.summary)}", title="got worse",
                        severity=sev, timeout=10)
            if self.bell_on_worse:
                self.bell()
            if self.notifier is not None:  # the person who is not looking: the same news, sent (opt-in)
                old = change.baseline or change.old
                self.notifier.send(make_event(v.id, v.status.value, old.value if old else None, REGISTRY[v.id].title,
                                              v.summary, t=self.now()))
        if self.screen_stack and isinstance(self.screen, CardScreen) and self.screen.gotcha.id == v.id:  # none: closing
            self.screen.update_verdict(v, age(self.now() - (v.measured_at or self.now())))

    # -- the run beside sparktui -----------------------------------------------------------------
    def show_run(self, reading: Reading | None) -> None:
        """A fresh `run` reading (None: not looked for yet): the run panel, the run's rate on the
        telemetry's time axis, and the run's start as an event. Called whenever one is made."""
        self.run_reading = reading
        data = reading.data if reading is not None and isinstance(reading.data, Mapping) else None
        now = self.now()
        self.run_panel.show(reading, now)
        self.telemetry.show_run_rate(data, now)
        text = self.run_story.reading(data)
        if text:
            self._run_event(Status.OK, text)

    def _run_event(self, status: Status, text: str) -> None:
        self.events.add(Change(t=self.now(), id=self.run_panel.check_id or "run", old=None, new=status,
                               summary=text, kind="run"))

    def _run_verdict(self, v: Verdict, change: Change | None) -> None:
        """The run check's verdict: on the panel, and its changes read as the run's events (a
        status change's row says it; a change within one status, a stall ending in death, gets one)."""
        self.run_panel.show_verdict(v, self.now())
        text = self.run_story.verdict(v, self.run_panel.data)
        last = self.events.changes[-1] if change is not None and self.events.changes else None
        if last is not None and last.id == v.id and last.kind == "verdict":
            self.events.replace_last(replace(last, summary=text or event_text(v)))
        elif text:
            self._run_event(v.status, text)

    def judge_telemetry(self) -> None:
        """The telemetry-fed checks: live (and while a replay plays) over the trailing window;
        once a replay has finished, over the whole recording in review mode, from the same readings
        as `check --replay` of the file, so the dashboard ends on the verdicts the CLI gives."""
        from sparktui.live import window_readings

        review = self.replay_readings is not None and self.source.finished
        src = self.source
        readings = self.replay_readings if review else window_readings(
            src.history, self.cfg, static=src.static or None, processes=self.latest_processes,
            interval_s=src.interval_s, source=src.kind, since=src.live_since)
        if readings is None:
            return
        if not review:
            readings = self._with_followed(readings)
            side = self.source.side_readings()  # live: G3's host and pool facts
            if side:
                readings = Readings({**side, **dict(readings)})
        mono = time.monotonic()
        for v in runner.judge_window(readings, self.cfg, have_processes=review or self.latest_processes is not None):
            self._set_verdict(v, mono)

    def _with_followed(self, readings: Readings) -> Readings:
        """The window's readings plus what is followed beside the samples: the run (G14 judges its
        pace against the same window) and the kernel log (G14 names its events as causes)."""
        extra: dict[str, Any] = {}
        if self.run_watch.enabled and self.run_watch.scans:  # looked for (a replay's: judged once it has ended)
            extra[self.run_watch.reading_name] = self.run_watch.reading()
        if self.kernel_watch.enabled and (self.kernel_watch.boot is not None or self.kernel_watch.live):
            extra[self.kernel_watch.reading_name] = self.kernel_watch.reading()
        return Readings({**dict(readings), **extra}) if extra else readings

    def on_run_changed(self, msg: RunChanged) -> None:
        """The run's reading is shown as it changes, at most once a second (a tqdm bar prints ten
        lines a second: the tick shows the rest); it is judged with the telemetry (every
        TELEMETRY_REJUDGE_S) and written to the recording every RECORD_EVERY_S (as deltas)."""
        mono = time.monotonic()
        self._run_dirty = True
        if mono - self._run_shown_mono >= 1.0:
            self._show_run(mono)

    def _show_run(self, mono: float) -> None:
        self._run_dirty, self._run_shown_mono = False, mono
        self.show_run(self.run_watch.reading())
        line = self.run_watch.recorded_if_due()  # every RECORD_EVERY_S, the progress since the last line
        if line is not None:
            self.source.record_readings(Readings({line.probe: line}))

    # -- actions ---------------------------------------------------------------------------------
    MAIN_ONLY = frozenset({"cycle_layout", "cycle_span", "open_card", "rerun_selected", "rerun_all", "bandwidth", "filter_processes", "cycle_sort",
                           "reverse_sort", "toggle_tree", "signal_process", "readonly_note",
                           "all_processes", "maximise_processes",
                           "events", "peers", "open_issue_url", "copy_issue_url",
                           "replay_back", "replay_on", "replay_start", "replay_end"})
    # what reaches the machine: never in a replay (a recorded pid may belong to any process by now)
    LIVE_ONLY = frozenset({"rerun_selected", "rerun_all", "bandwidth", "signal_process", "readonly_note"})
    REPLAY_ONLY = frozenset({"replay_back", "replay_on", "replay_start", "replay_end"})
    LOOK_ONLY_KEYS = {"k": "no process is signalled", "b": "bandwidth is measured on a live machine only",
                      "r": "checks are judged from the recording, not rerun", "R": "checks are judged from the recording, not rerun"}

    @property
    def replaying(self) -> bool:
        """A replay is look-only: what it shows was recorded, maybe on another machine, maybe hours ago."""
        return self.source.kind == "replay"

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """Only what works now, so the footer and help never offer a key that does nothing:
        main-screen actions are off while a card or a dialog is up; p says pause or resume."""
        if action in self.MAIN_ONLY and len(self.screen_stack) > 1:
            return False
        if action in self.LIVE_ONLY and self.replaying:
            return False  # look-only: not in the footer, help or palette; the key only says why (on_key)
        if action in self.REPLAY_ONLY:  # the tab bar's ← → switch tabs, the filter box's move its cursor
            return self.replaying and not isinstance(self.focused, (Tabs, Input))
        if action in ("signal_process", "readonly_note"):
            return self.readonly == (action == "readonly_note")
        if action in ("pause", "resume"):
            return self.source.paused == (action == "resume")
        if action == "cancel_checks":
            return bool(self.board.running()) or bool(self.bandwidth_worker and self.bandwidth_worker.is_running)
        if action in ("open_issue_url", "copy_issue_url"):
            return self._issue_in_view() is not None
        if action in self.PROCESS_ACTIONS:  # the issues tab shows: its keys, not the process table's
            return self._active_tab() != "tab-playbooks"
        return True

    def pop_screen(self):
        """Back on the main screen: lay it out for the terminal's size now (a resize made while a
        card was up reached only the card)."""
        result = super().pop_screen()
        if len(self.screen_stack) == 1:
            self.call_after_refresh(self._relayout_main)
        return result

    def _relayout_main(self) -> None:
        """Also redrawn at once: telemetry behind a card is not drawn, and must not stay stale
        until the next sample (a paused source sends none)."""
        self._layout_for(self.size.width)
        self.update_styles(self.screen)  # the class may have changed while this screen was hidden
        if len(self.source.history):
            self._draw_telemetry()
        self.refresh_header()
        self.refresh_checklist()

    def _on_main(self) -> bool:
        """No screen pushed over the main one (MAIN_ONLY actions are held back by check_action;
        this is for what is not an action: a key handler, the relayout on return)."""
        return len(self.screen_stack) == 1

    def _selected(self) -> str | None:
        return self.checklist.selected_id

    def action_rerun_selected(self) -> None:
        gid = self._selected()
        if gid is None:
            return
        feed = REGISTRY[gid].feed
        if feed is Feed.ON_REQUEST:
            self.action_bandwidth()
        elif feed is Feed.TELEMETRY:
            self._refresh_static()
            self.judge_telemetry()
            self.notify(f"{gid} re-judged from the live telemetry")
        else:
            self.run_checks([gid], say_busy=True)

    def _refresh_static(self) -> None:
        """Live, a rerun reads NVML's static facts again (G4's application clocks); a replay has none to read."""
        self.source.refresh_static()

    def action_rerun_all(self) -> None:
        self._refresh_static()
        self.judge_telemetry()
        self.notify("rerunning all non-intrusive checks")
        self.run_checks([g.id for g in REGISTRY.values()], say_busy=True)  # and which already run, for how long

    def action_cancel_checks(self) -> None:
        running = self.board.running()
        for gid in running:
            ev = self.board[gid].cancel
            if ev is not None:
                ev.set()
        if self.bandwidth_worker is not None and self.bandwidth_worker.is_running and self._bandwidth_cancel is not None:
            self._bandwidth_cancel.set()
            running.append(ON_REQUEST)
        self.notify(f"cancelling {', '.join(running)}" if running else "nothing is running")

    def action_open_card(self) -> None:
        focused = self.focused
        if isinstance(focused, DataTable) and focused.id == "pb-table":
            self._open_issue()
            return
        gid = self._selected()
        if gid is None:
            return
        v = self.board[gid].verdict
        self.push_screen(CardScreen(REGISTRY[gid], v, age(self.now() - v.measured_at) if v and v.measured_at else "—",
                                    on_rerun=None if self.replaying else  # look-only
                                    lambda i: self.judge_telemetry() if REGISTRY[i].feed is Feed.TELEMETRY else self.run_checks([i]),
                                    running_s=partial(self._running_s, gid)))

    def _running_s(self, gid: str) -> float | None:
        """Seconds check ``gid`` has been running, None when it is not."""
        since = self.board[gid].running_since
        return None if since is None else time.monotonic() - since

    @on(DataTable.RowSelected, "#checklist")
    def _checklist_enter(self, event: DataTable.RowSelected) -> None:
        self.action_open_card()

    @on(DataTable.RowSelected, "#pb-table")
    def _issue_enter(self, event: DataTable.RowSelected) -> None:
        self._open_issue()

    @on(DataTable.RowSelected, "#proc-table")
    def _process_enter(self, event: DataTable.RowSelected) -> None:
        """A process row in full: the whole (scrubbed) command line and how its cap was read."""
        row = self.process_table.rows.get(str(event.row_key.value))
        if row:
            self.push_screen(MessageScreen(f"pid {row.get('pid')}: {row.get('name') or '?'}", process_details(row)))

    def _open_issue(self) -> None:
        iss = self.playbook_panel.selected()
        if iss:
            body = iss.get("body") or iss.get("body_excerpt") or "(no body)"
            self.push_screen(MessageScreen(f"#{iss.get('number')} {iss.get('title')}", body,
                                           url=iss.get("html_url") or iss.get("url")))

    PROCESS_ACTIONS = frozenset({"cycle_sort", "reverse_sort", "toggle_tree", "signal_process", "readonly_note"})

    def _active_tab(self) -> str | None:
        try:
            return self.query_one(TabbedContent).active
        except NoMatches:  # asked by the footer before the main screen is composed
            return None

    @on(TabbedContent.TabActivated)
    def _tab_changed(self, event: TabbedContent.TabActivated) -> None:
        self.refresh_bindings()  # the footer and help follow the tab that shows

    def _issue_in_view(self) -> dict[str, Any] | None:
        """The selected playbook issue, only while its tab is showing: o and y must not act on
        something the user cannot see."""
        try:
            if self.query_one(TabbedContent).active != "tab-playbooks":
                return None
        except NoMatches:  # asked by the footer before the main screen is composed
            return None
        return self.playbook_panel.selected()

    def _issue_url(self) -> str | None:
        iss = self._issue_in_view()
        url = (iss.get("html_url") or iss.get("url")) if iss else None
        return url if isinstance(url, str) else None

    def action_open_issue_url(self) -> None:
        open_url(self, self._issue_url())

    def action_copy_issue_url(self) -> None:
        copy_url(self, self._issue_url())

    def action_filter_processes(self) -> None:
        self.query_one(TabbedContent).active = "tab-processes"
        box = self.query_one("#proc-filter", Input)
        box.display = True
        box.focus()

    @on(Input.Changed, "#proc-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.process_table.set_filter(event.value)

    @on(Input.Submitted, "#proc-filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        """Keep the filter, give its rows back to the table (the note line says it is on)."""
        event.input.display = False
        self.query_one("#proc-table", DataTable).focus()

    def on_key(self, event) -> None:
        if self.replaying and event.character in self.LOOK_ONLY_KEYS and self._on_main() \
                and not isinstance(self.focused, Input):
            self.notify(f"replay, look-only: {self.LOOK_ONLY_KEYS[event.character]}", timeout=4)
            event.stop()
            return
        if event.key == "down" and isinstance(self.focused, Tabs) and self._on_main():
            table = "#proc-table" if self._active_tab() == "tab-processes" else "#pb-table"
            self.query_one(table).focus()  # ↓ from the tab bar goes into its table
            event.stop()
            return
        if event.key != "escape" or not self._on_main():
            return
        box = self.query_one("#proc-filter", Input)
        if self.focused is box or self.process_table.filter_text:  # Esc clears it from the table too
            box.value = ""
            box.display = False
            self.process_table.set_filter("")
            self.checklist.focus()
            event.stop()

    def action_cycle_sort(self) -> None:
        self.query_one(TabbedContent).active = "tab-processes"
        label = self.process_table.cycle_sort()
        self.notify(f"processes sorted by {label}")

    def action_reverse_sort(self) -> None:
        self.query_one(TabbedContent).active = "tab-processes"
        self.notify(f"processes sorted by {self.process_table.reverse_sort()}")

    def action_toggle_tree(self) -> None:
        self.query_one(TabbedContent).active = "tab-processes"
        tree = self.process_table.toggle_tree()
        self.notify("processes as a tree: launchers over their workers, memory summed" if tree else "processes as a list")

    def action_all_processes(self) -> None:
        self.query_one(TabbedContent).active = "tab-processes"
        on = self.process_table.toggle_all()
        self.notify("every process on the pool, with its share of it" if on else "the classified processes only")

    def action_maximise_processes(self) -> None:
        self.query_one(TabbedContent).active = "tab-processes"
        self.process_table.toggle_maximised()

    def on_process_table_view_changed(self, msg: ProcessTable.ViewChanged) -> None:
        self.update_prefs(**msg.changes)

    # -- notifications -----------------------------------------------------------------------------
    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information", timeout: float | None = None,
               markup: bool = True) -> None:
        """Every notification is plain text, never markup, whoever asks (a screen's notify passes
        markup=True): they quote outside text (a process killed by the OOM killer named "[/]", a
        script "[x=\"]train.py" in a G6 finding) that Textual's markup parser raised on, which ended
        the dashboard. Control characters are shown visibly (core/inert.py); line breaks stay."""
        kw = {} if timeout is None else {"timeout": timeout}
        text, title = visible_lines(message), visible(title)
        self.said.append(Notification(text, title, severity))  # public record of what was said (tests read it)
        super().notify(text, title=title, severity=severity, markup=False, **kw)

    # -- k: signal a process (flows/signals.py decides who and sends; here it is only asked) ----
    def action_readonly_note(self) -> None:
        self.notify("read-only mode (--readonly): processes are not signalled", severity="warning")

    def action_signal_process(self) -> None:
        from sparktui.flows import signals

        self.query_one(TabbedContent).active = "tab-processes"
        row = self.process_table.selected_row
        if row is None:
            self.notify("no process selected")
            return
        try:
            target = signals.target(row["pid"], started=row.get("started"))
        except signals.Refused as e:
            self.notify(f"not signalled: {e}", severity="warning", timeout=10)
            return
        # plain text (ConfirmScreen): the whole command line is another user's, `[X="]` and ESC included
        body = _dialog_text(target, row.get("gpu_mem_bytes")) + \
            f"\n\nSIGTERM asks it to exit; if it is still running after {self.signal_grace_s:g} s, SIGKILL is offered."
        self.push_screen(ConfirmScreen(f"Send SIGTERM to pid {target.pid}?", body, yes="Send SIGTERM"),
                         partial(self._signal_if, target, "TERM"))

    def _signal_if(self, target: Any, which: str, yes: bool | None) -> None:
        if yes:
            self._send_signal(target, which)

    @work(thread=True, exit_on_error=False, group="signal")
    def _send_signal(self, target: Any, which: str) -> None:
        from sparktui.flows import signals

        try:
            ended = signals.terminate(target, self.signal_grace_s) if which == "TERM" else signals.kill(target)
        except signals.Refused as e:
            self.notify(f"not signalled: {e}", severity="warning", timeout=10)
            return
        self.call_from_thread(self._signal_sent, target, which, ended)

    def _signal_sent(self, target: Any, which: str, ended: bool) -> None:
        if ended:
            self.notify(f"pid {target.pid} ended after SIG{which}")
        elif which == "TERM":
            body = _dialog_text(target) + "\n\nSIGKILL ends it at once: no cleanup, unsaved work (checkpoints) is lost."
            self.push_screen(ConfirmScreen(f"pid {target.pid} is still running {self.signal_grace_s:g} s after SIGTERM. "
                                           "Send SIGKILL?", body, yes="Send SIGKILL"),
                             partial(self._signal_if, target, "KILL"))
        else:
            self.notify(f"pid {target.pid} is still there after SIGKILL (stuck in the kernel?)", severity="error")

    # -- a replay: where in the recording (live/sources.ReplaySource.seek) --------------------------
    REPLAY_STEP_S = 60.0

    def action_replay_back(self) -> None:
        self._replay_seek_t(self.now() - self.REPLAY_STEP_S, -1)

    def action_replay_on(self) -> None:
        self._replay_seek_t(self.now() + self.REPLAY_STEP_S, +1)

    def action_replay_start(self) -> None:
        self._replay_seek(1)

    def action_replay_end(self) -> None:
        self._replay_seek(len(self.source.recording.samples))

    def _replay_seek_t(self, t: float, direction: int) -> None:
        """To the last sample at or before ``t``; at least one sample in ``direction``."""
        from sparktui.live.sources import ReplaySource

        src = self.source
        if not isinstance(src, ReplaySource):  # the keys exist only in a replay (check_action)
            return
        i = src.index_at(t)
        if direction < 0 and i >= src.position:
            i = src.position - 1
        elif direction > 0 and i <= src.position:
            i = src.position + 1
        self._replay_seek(i)

    def _replay_seek(self, index: int) -> None:
        from sparktui.live.sources import ReplaySource

        if not isinstance(self.source, ReplaySource):
            return
        processes = self.source.seek(index)
        self.post_message(ReplayMoved(processes))

    def on_replay_moved(self, msg: ReplayMoved) -> None:
        """The dashboard as the recording stood at the replay's position: plots, the process scan of
        that moment, the telemetry-fed verdicts over the window up to it (at the end: over the whole
        recording, as `check --replay` judges it), the header. The probe-read checks show the
        recording's own readings wherever it stands."""
        self.latest_processes = msg.processes
        self.process_table.show(msg.processes or {"rows": []}, self.now(), self._mem_total())
        self._quiet_alerts = True
        try:
            if self.source.finished:
                self.on_replay_finished(ReplayFinished())
            else:
                self.judge_telemetry()
        finally:
            self._quiet_alerts = False
        self._draw_telemetry()
        self._paused_changed()
        self.refresh_checklist()

    def action_toggle_pause(self) -> None:
        """The palette's entry; the key is bound to pause or resume, whichever applies."""
        self.action_resume() if self.source.paused else self.action_pause()

    def action_pause(self) -> None:
        self.source.pause()
        self.notify("sampling paused (p resumes)")
        self._paused_changed()

    def action_resume(self) -> None:
        self.source.resume()
        self.notify("sampling resumed")
        self._paused_changed()

    def _paused_changed(self) -> None:
        self.refresh_header()
        self.refresh_bindings()  # the footer's p: pause <-> resume

    def action_events(self) -> None:
        self.events_seen = self.events.worse_count  # looked at: the header's count starts again
        self.push_screen(EventsScreen(self.events))
        self.refresh_header()

    def action_peers(self) -> None:
        self.push_screen(PeersScreen(self.peer_watch, self.board, self.host_name))

    LAYOUTS = ("auto", "wide", "narrow")
    LAYOUT_WORDS = {"auto": "auto (side by side from 120 columns, stacked below)", "wide": "side by side", "narrow": "stacked"}

    def action_cycle_layout(self) -> None:
        """auto (stacked under 120 columns) -> side by side -> stacked; kept across runs."""
        i = self.LAYOUTS.index(self.prefs.layout) if self.prefs.layout in self.LAYOUTS else 0
        self.update_prefs(layout=self.LAYOUTS[(i + 1) % len(self.LAYOUTS)])
        self._layout_for(self.size.width)
        self.notify(f"layout: {self.LAYOUT_WORDS.get(self.prefs.layout, self.prefs.layout)}")  # help's words

    def action_cycle_span(self) -> None:
        """The plots' span: 5 min -> 1 h -> the whole session; kept across runs."""
        self.update_prefs(plot_span=self.telemetry.cycle_span())
        self._draw_telemetry()

    def action_help(self) -> None:
        """The keys of the view ? was pressed in, not the main screen's."""
        view = self.screen
        title = "sparktui keys" if self._on_main() else f"sparktui keys: {type(view).__name__.removesuffix('Screen').lower()}"
        note = (self.HELP_NOTE + (" " + self.REPLAY_NOTE if self.replaying else "")) if self._on_main() \
            else getattr(view, "HELP_NOTE", "")
        self.push_screen(HelpScreen(title, view_keys(view), note))

    def action_ask_quit(self) -> None:
        """ctrl+c asks first: quitting loses the session's telemetry history and events."""
        def answered(yes: bool | None) -> None:
            if yes:
                self.exit()

        self.push_screen(ConfirmScreen("Quit sparktui?", self._quit_note(), yes="Quit", no="Keep running"), answered)

    def _quit_note(self) -> str:
        """What quitting keeps, as it is: a kept session (`sparktui history` lists it), a --record
        file, or nothing (--no-session, [session] keep = false, a replay)."""
        src = self.source
        if src.kind == "replay":
            return "A replay: the recording stays as it is; nothing of this replay is written."
        kept = src.kept()
        if not kept:
            why = src.session_error or "--no-session or [session] keep = false"
            return f"This session's telemetry history and events are not kept ({why})."
        return "Nothing is lost: " + "; ".join(kept) + "."

    # -- G5 --------------------------------------------------------------------------------------
    def action_bandwidth(self) -> None:
        if self.replay_path:
            self.notify("replay: bandwidth is measured on a live machine only", severity="warning")
            return
        if self.bandwidth_worker is not None and self.bandwidth_worker.is_running:
            self.notify(f"the bandwidth probe is already running ({int(self._running_s(ON_REQUEST) or 0)} s; c cancels)")
            return
        self._bandwidth_gate()

    @work(thread=True, exclusive=True, exit_on_error=False, group="bandwidth-gate")
    def _bandwidth_gate(self) -> None:
        from sparktui.flows import bandwidth as flow
        from sparktui.gotchas.g05_bandwidth import GIB

        plan = flow.plan(self.cfg, 4 * GIB, force=False)
        self.call_from_thread(self._bandwidth_ask, plan)

    def _bandwidth_ask(self, plan) -> None:
        decision = plan.decision
        if not decision.allowed:
            reasons = "\n".join(f"- {r}" for r in decision.reasons)
            self.push_screen(MessageScreen(f"{ON_REQUEST} bandwidth: refused", f"{reasons}\n\nFrom a shell, on an idle machine: "
                                                                    "`sparktui bandwidth` (add `--force` only if you know the GPU is idle)."))
            return
        body = plan.text + ("\n" + "\n".join(decision.reasons) if decision.reasons else "") + \
            "\n\nAnother job on this machine would lose that memory for the duration. Run it now?"

        def answered(yes: bool | None) -> None:
            if yes:
                self._bandwidth_cancel = threading.Event()
                self.board.start([ON_REQUEST], time.monotonic())
                self.bandwidth_worker = self.run_worker(partial(self._bandwidth_run, plan),
                                                        thread=True, exit_on_error=False, group="bandwidth", name=ON_REQUEST)

        self.push_screen(ConfirmScreen(f"Measure memory bandwidth ({ON_REQUEST})?", body), answered)

    def _bandwidth_run(self, plan) -> None:
        from sparktui.flows import bandwidth as flow

        # the dialog can sit open for minutes: a server started or memory taken meanwhile still stops it
        checked, why = flow.recheck(plan, plan.decision.buffer_bytes, flow.observer(self.cfg))
        if checked is None:
            v, refused = flow.refused(why or "changed while the confirmation was open")
            self.post_message(BandwidthDone(v, refused))
            return
        v, res, not_kept = flow.measure(checked, timeout_s=120.0, cancel=self._bandwidth_cancel)
        if not_kept:  # the measurement still counts; it just will not be remembered
            self.call_from_thread(self.notify, f"{ON_REQUEST}: {not_kept}", title="bandwidth", severity="warning", timeout=15)
        self.post_message(BandwidthDone(v, res))

    def on_bandwidth_done(self, msg: BandwidthDone) -> None:
        self._set_verdict(msg.verdict.with_timing(msg.result.get("measured_at"), msg.result.get("seconds")), time.monotonic())
        line = bandwidth_line(msg.result, self.now())
        if line:
            self.telemetry.show_bandwidth(line)
        self.refresh_checklist()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """One place for worker errors: a probe bug shows as a notification, never quits the app."""
        if event.state is WorkerState.ERROR:
            err = event.worker.error
            self.notify(f"{event.worker.name}: {type(err).__name__}: {err}", title="internal error", severity="error", timeout=15)
            if event.worker.group == "checks":
                for gid in event.worker.name.split()[1:]:
                    if gid in REGISTRY and self.board[gid].running_since is not None:
                        self.board.abort(gid, time.monotonic())
            elif event.worker.group == "bandwidth":  # no spinner left turning for a probe that died
                self._set_verdict(Verdict(ON_REQUEST, Status.UNKNOWN, f"bandwidth probe failed: {type(err).__name__}: {err}"),
                                  time.monotonic())
        if event.state in (WorkerState.SUCCESS, WorkerState.CANCELLED) and event.worker.group == "checks":
            for gid in event.worker.name.split()[1:]:  # a check whose probes never all came in
                if gid in REGISTRY and self.board[gid].running_since is not None:
                    self.board.abort(gid, time.monotonic())


def _dialog_text(target: Any, gpu_mem_bytes: int | None = None) -> str:
    """The k dialog's text about ``target``: its command line on one line, controls visible, so a
    newline in another user's argv cannot write lines of the dialog's own."""
    text, command = target.summary(gpu_mem_bytes), str(getattr(target, "command", ""))
    return text[: -len(command)] + visible(command) if command and text.endswith(command) else text


def run_dashboard(cfg: Config, replay: str | None = None, speed: float | None = 1.0, bell: bool = False,
                  record: str | None = None, recording: Any = None, keep_session: bool = True,
                  readonly: bool = False) -> NoReturn:
    """Run the dashboard, then end the process at once: by the time run() returns the app has
    stopped its threads, closed its files and restored the terminal, and the interpreter's own
    teardown of Textual's objects would add 0.1-0.3 s between the last frame and the shell prompt."""
    malloc.fewer_arenas()
    runner.long_lived()  # G8's fetch and G10's scan in child processes: their heap is not kept here
    app = SparkApp(cfg, replay=replay, speed=speed, bell=bell, record=record, recording=recording,
                   keep_session=keep_session, readonly=readonly)
    app.run()
    children.kill_all()  # a probe, scan or ssh still running as the dashboard closed (core/children.py)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(app.return_code or 0)
