"""The dashboard's peers view: this machine beside its peers, and what must match for DDP/FSDP.

The fetching and the comparison are the fleet library's (``PeerFetcher``, ``compare``,
``checklists``: the same as ``sparktui peers``); this module only holds the results on the app's
thread and shows them. A fetcher thread never touches a widget: each result is posted to the app
(``call_later`` is a ``post_message`` of a callback) and handled there.
"""

from __future__ import annotations

import time
import weakref
from typing import TYPE_CHECKING, Any, Callable, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Label, Static

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.verdict import Status, Verdict
from sparktui.fleet.compare import Comparison, Machine, checklists, compare
from sparktui.fleet.peers import PeerFetcher, PeerResult, PeerState, local_machine, specs_from_config
from sparktui.ui.inert import plain, plain_lines, visible
from sparktui.ui.format import SPINNER, STATUS_STYLE
from sparktui.ui.screens import BACK
from sparktui.ui.widgets import BoundedTable
from sparktui.ui.widgets.footer import Footer  # keys dropped whole, never cut at the edge

if TYPE_CHECKING:
    from textual.app import App

    from sparktui.runner.board import Board

HOW_TO = ("No peers are configured. Name the other machines of the job (ssh destinations: host, user@host "
          "or a ~/.ssh/config alias):\n"
          "  on the command line:  sparktui --peer spark-2 --peer spark-3\n"
          "  or in the config file:  [fleet] peers = [\"spark-2\", \"spark-3\"]\n"
          "Each peer runs `sparktui snapshot` over ssh (BatchMode: keys or agent, never a password); "
          "--peer-command names sparktui there when it is not on PATH.")

# A peer's state in a few words (the column); the full reason goes in the machines list.
STATE_WORDS = {
    PeerState.OK: "reachable",
    PeerState.UNREACHABLE: "unreachable",
    PeerState.REFUSED: "refused",
    PeerState.NO_SPARKTUI: "sparktui missing",
    PeerState.FAILED: "failed",
    PeerState.BAD_OUTPUT: "bad output",
    PeerState.TIMEOUT: "timeout",
    PeerState.CANCELLED: "cancelled",
}
DIFF_STYLE = {True: "bold red reverse", False: "bold yellow reverse"}  # required row / advisory row
UNKNOWN_STYLE = STATUS_STYLE[Status.UNKNOWN]


class PeerWatch:
    """The peers of one dashboard session: a ``PeerFetcher`` whose results are handed to the app's
    thread, when each fetch started, and this machine's readings as the app's checks saw them."""

    def __init__(self, app: "App", cfg: Config, replay: bool = False) -> None:
        self.app, self.cfg, self.replay = app, cfg, replay
        self.specs = specs_from_config(cfg)
        self.fetcher: PeerFetcher | None = None
        self.results: dict[str, PeerResult] = {}
        self.started: dict[str, float] = {}  # host -> monotonic start of its latest fetch
        self.local = Readings()
        self.generation = 0  # bumped on every change the view must show
        self.listeners: list[Callable[[], None]] = []

    @property
    def active(self) -> bool:
        """Peers are fetched: some are configured and this is not a replay."""
        return bool(self.specs) and not self.replay

    def start(self) -> "PeerWatch":
        if self.active and self.fetcher is None:
            self.fetcher = PeerFetcher(self.specs, self.cfg, on_result=self._from_thread)
            self.refresh()
        return self

    def refresh(self) -> None:
        """Fetch every peer again (one already being fetched carries on)."""
        if self.fetcher is None:
            return
        now = time.monotonic()
        for s in self.specs:
            if s.host not in self.fetcher.pending:
                self.started[s.host] = now
        self.fetcher.refresh()
        self._changed()

    def stop(self) -> None:
        if self.fetcher is not None:
            self.fetcher.cancel()

    def _from_thread(self, result: PeerResult) -> None:
        """PeerFetcher's callback, in its thread: post the result to the app's thread."""
        self.app.call_later(self.arrived, result)

    def arrived(self, result: PeerResult) -> None:
        """A fetched result, on the app's thread."""
        self.results[result.host] = result
        self._changed()

    def machines(self, board: "Board", local_name: str) -> list[Machine]:
        """The local machine (the board's verdicts), then each peer: its latest result, or a
        column without readings while its first fetch runs."""
        out = [local_machine(self.local_readings(), local_verdicts(board), name=local_name)]
        if not self.active:
            return out
        for s in self.specs:
            res = self.results.get(s.host)
            out.append(res.machine() if res is not None else Machine(s.host, None, "fetching…"))
        return out

    def badge(self, board: "Board", local_name: str) -> tuple[str, str] | None:
        """The peers in a few words for the main screen's header: a mismatch or a peer that cannot
        be reached must be seen without opening the peers view. None when there are no peers."""
        if not self.active:
            return None
        if not self.results:
            return "peers: fetching…", "dim"
        down = [r for r in self.results.values() if r.state is not PeerState.OK]
        if down:
            if len(down) == 1:
                return f"peer {down[0].host}: {STATE_WORDS[down[0].state]}", "bold red"
            return f"{len(down)} of {len(self.specs)} peers not read", "bold red"
        key = (self.generation, len(board.states), tuple(st.runs for st in board.states.values()))
        if getattr(self, "_badge_key", None) != key:
            cmp = compare(self.machines(board, local_name))
            differing = [r.what for r in cmp.differing() if r.required]
            if differing:
                text = f"peers differ: {', '.join(differing[:2])}" + (" …" if len(differing) > 2 else "")
                self._badge = (text, "bold red")
            else:
                self._badge = {Status.OK: ("peers match", "green"), Status.WARN: ("peers: advisory differences", "yellow")}.get(
                    cmp.status, ("peers: not all compared", "magenta"))
            self._badge_key = key
        return self._badge

    def fetching_s(self, host: str) -> float | None:
        """Seconds the running fetch of ``host`` has taken, or None when none runs."""
        if self.fetcher is None or host not in self.fetcher.pending:
            return None
        return time.monotonic() - self.started.get(host, time.monotonic())

    def saw(self, readings: Readings) -> None:
        """Local readings from a check run; an errored reading never replaces a good one."""
        merged = dict(self.local)
        for name, r in readings.items():
            if r.ok or name not in merged:
                merged[name] = r
        self.local = Readings(merged)
        self._changed()

    def local_readings(self) -> Readings:
        if "host" not in self.local:  # no check reads the host facts; cheap, no subprocess
            from sparktui import runner

            self.local.add(runner.read("host", self.cfg))
        return self.local

    def _changed(self) -> None:
        self.generation += 1
        for fn in list(self.listeners):
            fn()


def local_verdicts(board: "Board") -> list[Verdict]:
    return [st.verdict for st in board.states.values() if st.verdict is not None]


# What each Static of the view last showed (update_text); gone with the widget.
_shown: weakref.WeakKeyDictionary[Static, tuple[str, str, list[tuple[int, int, str]]]] = weakref.WeakKeyDictionary()


def update_text(widget: Static, text: Text) -> None:
    """Update a Static only when its text changed (the view redraws every second)."""
    key = (text.plain, str(text.style), [(sp.start, sp.end, str(sp.style)) for sp in text.spans])
    if _shown.get(widget) != key:
        _shown[widget] = key
        widget.update(text)


def _cell_text(t: Any) -> tuple[str, str]:
    return (t.plain, str(t.style)) if isinstance(t, Text) else (str(t), "")


def sync_table(table: DataTable, columns: Sequence[tuple[str, str, int]], rows: Sequence[tuple[str, list]],
               room: int) -> None:
    """Show ``rows`` ((key, cells)) under ``columns`` ((key, label, width)), touching only what
    changed: same columns and row keys -> changed cells are updated in place. ``room``: the
    columns the table has; wider, it gets a line for its horizontal scrollbar."""
    cols = [(k, lab, w) for k, lab, w in columns]
    shown = table.__dict__.setdefault("_sparktui_shown", {"cols": None, "rows": []})
    if shown["cols"] != cols:
        table.clear(columns=True)
        for key, label, width in cols:  # a str label would be markup: a peer named "[/]" ended the dashboard
            table.add_column(plain(label) if isinstance(label, str) else label, key=key, width=width)
        shown["cols"], shown["rows"] = cols, []
    keys = [k for k, _ in rows]
    if [k for k, _ in shown["rows"]] != keys:
        table.clear()
        for key, cells in rows:
            table.add_row(*cells, key=key)
        # Rows are one line each. Set, because height: auto inside a scrolling container is
        # measured before the table has counted its new rows (it would stay at 0 lines).
        wide = sum(w + 2 * table.cell_padding for _, _, w in cols) > room
        table.styles.height = len(rows) + (table.header_height if table.show_header else 0) + wide
    else:
        for (key, cells), (_, old) in zip(rows, shown["rows"]):
            for (ck, _, _), new, was in zip(cols, cells, old):
                if _cell_text(new) != _cell_text(was):
                    table.update_cell(key, ck, new)
    shown["rows"] = [(k, list(c)) for k, c in rows]


class PeersScreen(Screen):
    """Every machine of the job side by side: state, a glyph per check, and the comparison rows."""

    CSS_PATH = "peers.tcss"
    BINDINGS = [
        *BACK,
        Binding("m", "app.pop_screen", "back", show=False, tooltip="back to the screen underneath"),  # not a second copy
        Binding("r", "refetch", "refetch peers", tooltip="fetch every peer again (ssh)"),
    ]
    HELP_NOTE = "↑ ↓ pgup pgdn scroll; a differing row is highlighted (red: must match for DDP/FSDP)."

    def __init__(self, watch: PeerWatch, board: "Board", local_name: str) -> None:
        super().__init__()
        self.peer_watch, self.board, self.local_name = watch, board, local_name
        self._tick = 0
        self._cmp_generation = -1
        self._cmp_width = -1

    def compose(self) -> ComposeResult:
        yield Label(Text("Machines side by side · r refetches the peers · q or escape returns", style="bold"), id="peers-title")
        with VerticalScroll(id="peers-body"):
            yield Static("", id="peers-notice")
            yield Static("", id="peers-machines")
            yield BoundedTable(id="peers-checks", cursor_type="none", zebra_stripes=False)
            yield BoundedTable(id="peers-compare", cursor_type="none", zebra_stripes=False)
            yield Static("", id="peers-summary")
        yield Footer()

    def on_mount(self) -> None:
        for t in self.query(DataTable):
            t.can_focus = False
        self.query_one("#peers-body").focus()
        self.peer_watch.listeners.append(self.show)
        self.set_interval(1.0, self._every_second)
        self.show()

    def on_unmount(self) -> None:
        if self.show in self.peer_watch.listeners:
            self.peer_watch.listeners.remove(self.show)

    def on_resize(self, event) -> None:
        self.show()

    def _every_second(self) -> None:
        self._tick += 1
        self.show()

    def action_refetch(self) -> None:
        if self.peer_watch.replay:
            self.notify("replay: peers are fetched on a live machine only", severity="warning")
        elif not self.peer_watch.specs:
            self.notify("no peers configured: sparktui --peer HOST, or [fleet] peers in the config", severity="warning")
        else:
            self.peer_watch.refresh()
            self.notify(f"fetching {len(self.peer_watch.specs)} peer(s) again")

    # -- what is shown --------------------------------------------------------------------------
    def machines(self) -> list[Machine]:
        return self.peer_watch.machines(self.board, self.local_name)

    @property
    def room(self) -> int:
        """Columns a table has: the screen less the body's padding and scrollbar."""
        return (self.size.width or 120) - 4

    @property
    def wide(self) -> bool:
        return (self.size.width or 120) >= 110

    def _machine_width(self, n_machines: int, fixed: int) -> int:
        """Each machine's column width, once ``fixed`` columns (cell padding included) are laid."""
        return max(8, (self.room - fixed) // max(1, n_machines) - 2)

    def show(self) -> None:
        if not self.is_mounted:
            return
        w = self.peer_watch
        notice = []
        if not w.specs:
            notice.append(HOW_TO)
        if w.replay:
            notice.append("This is a replay of a recording: peers are not fetched (they are compared with a live "
                          "machine; run sparktui without --replay)."
                          + (f" Configured peers: {', '.join(s.host for s in w.specs)}." if w.specs else ""))
        notice_w = self.query_one("#peers-notice", Static)
        update_text(notice_w, plain_lines("\n\n".join(notice)))  # Text: "[fleet]" is not markup
        notice_w.display = bool(notice)
        machines = self.machines()
        self._show_machines(machines)
        self._show_checks(machines)
        compare_w = self.query_one("#peers-compare", DataTable)
        summary_w = self.query_one("#peers-summary", Static)
        compare_w.display = summary_w.display = w.active
        if w.active and (self._cmp_generation != w.generation or self._cmp_width != self.size.width):
            self._cmp_generation, self._cmp_width = w.generation, self.size.width
            cmp = compare(machines)
            self._show_compare(cmp)
            update_text(summary_w, self._summary(cmp))

    def _state(self, i: int, m: Machine) -> tuple[Text, str]:
        """(the state cell, the full line for the machines list) of machine ``i``."""
        if i == 0:
            if self.peer_watch.replay:
                return Text("● here", style="bold"), "the recorded machine (replay)"
            return Text("● here", style="bold"), f"this machine, sparktui {m.sparktui_version}"
        spec = self.peer_watch.specs[i - 1]
        res = self.peer_watch.results.get(spec.host)
        took = self.peer_watch.fetching_s(spec.host)
        if took is not None:
            line = f"fetching… {took:.0f}s (ssh {spec.host})"
            if res is not None:
                line += f"; last answer: {STATE_WORDS[res.state]}"
            return Text(f"{SPINNER[self._tick % len(SPINNER)]} fetching… {took:.0f}s", style="cyan"), line
        if res is None:
            return Text("· not fetched", style="dim"), "not fetched yet"
        word = STATE_WORDS[res.state]
        if res.ok:
            extra = [f"sparktui {res.sparktui_version}" if res.sparktui_version else "", f"answered in {res.took_s:.1f}s"]
            extra += res.notes
            return Text(f"✔ {word}", style=STATUS_STYLE[Status.OK]), f"{word} · " + " · ".join(e for e in extra if e)
        return plain(f"✘ {word}: {res.reason or ''}".rstrip(": "), style=STATUS_STYLE[Status.FAIL]), f"{word}: {res.reason}"

    def _show_machines(self, machines: list[Machine]) -> None:
        text = Text()
        for i, m in enumerate(machines):
            cell, line = self._state(i, m)
            if i:
                text.append("\n")
            text.append(visible(f"{m.name}: "), style="bold")  # a peer's name and answers: outside text
            text.append(visible(line), style=cell.style)
        update_text(self.query_one("#peers-machines", Static), text)

    def _show_checks(self, machines: list[Machine]) -> None:
        label_w = 30 if self.wide else 20
        mw = self._machine_width(len(machines), label_w + 2)
        cols = [("check", "check", label_w)] + [(f"m{i}", m.name + (" (here)" if i == 0 else ""), mw)
                                                 for i, m in enumerate(machines)]
        rows: list[tuple[str, list]] = [("state", [Text("state", style="bold")] + [self._state(i, m)[0] for i, m in enumerate(machines)])]
        stale = [i > 0 and self.peer_watch.fetching_s(self.peer_watch.specs[i - 1].host) is not None for i in range(len(machines))]
        for cr in checklists(machines):
            cells: list[Any] = [Text(f"{cr.id} {cr.title}", no_wrap=True, overflow="ellipsis")]
            for i, st in enumerate(cr.statuses):
                if st is None:
                    running = i == 0 and self.board[cr.id].running_since is not None
                    cells.append(Text("⠿ checking", style="cyan") if running else Text("·", style="dim"))
                else:
                    style = "dim" if stale[i] else STATUS_STYLE[st]
                    cells.append(Text(f"{st.glyph} {st.value}", style=style, no_wrap=True, overflow="ellipsis"))
            rows.append((cr.id, cells))
        sync_table(self.query_one("#peers-checks", DataTable), cols, rows, self.room)

    def _show_compare(self, cmp: Comparison) -> None:
        label_w, match_w = (22, 14) if self.wide else (16, 13)
        mw = self._machine_width(len(cmp.machines), label_w + match_w + 4)
        cols = [("what", "what must match", label_w)]
        cols += [(f"m{i}", m.name + (" (here)" if m.local else ""), mw) for i, m in enumerate(cmp.machines)]
        cols.append(("match", "match", match_w))
        rows = []
        for r in cmp.rows:
            local = r.cells[0]
            cells: list[Any] = [plain(r.what, style="" if r.required else "dim", no_wrap=True, overflow="ellipsis")]
            for c in r.cells:  # each machine's value or reason came from that machine: plain, controls visible
                if not c.known:
                    cells.append(plain(f"? {c.why or 'unknown'}", style=UNKNOWN_STYLE, no_wrap=True, overflow="ellipsis"))
                elif c is not local and local.known and c.value != local.value:
                    cells.append(plain(c.value or "", style=DIFF_STYLE[r.required], no_wrap=True, overflow="ellipsis"))
                else:
                    cells.append(plain(c.value or "", no_wrap=True, overflow="ellipsis"))
            st = r.status
            word = {Status.OK: "same", Status.FAIL: "DIFFERS", Status.WARN: "differs"}.get(st, "cannot tell")
            cells.append(Text(f"{st.glyph} {word}", style=STATUS_STYLE[st]))
            rows.append((r.key, cells))
        sync_table(self.query_one("#peers-compare", DataTable), cols, rows, self.room)

    @staticmethod
    def _summary(cmp: Comparison) -> Text:
        st = cmp.status
        out = Text()
        if st is Status.FAIL:
            out.append(visible(f"✘ must match for DDP/FSDP, but differ: {', '.join(r.what for r in cmp.differing(True))}"),
                       style=STATUS_STYLE[st])
        elif st is Status.UNKNOWN:
            out.append("? nothing seen differs, but these could not be compared on every machine: "
                       + visible(", ".join(r.what for r in cmp.unknown())), style=STATUS_STYLE[st])
        elif st is Status.WARN:
            out.append("▲ what must match does; advisory rows differ", style=STATUS_STYLE[st])
        else:
            out.append("✔ everything that must match does", style=STATUS_STYLE[st])
        out.append("\nrows in dim are advisory: shown and flagged, never a failure", style="dim")
        whys = []
        for r in cmp.rows:
            for m, c in zip(cmp.machines, r.cells):
                if r.required and not c.known and m.reachable:
                    whys.append(visible(f"{r.what} on {m.name}: {c.why}"))
        if whys:
            out.append("\nunknown, with the reason:\n  " + "\n  ".join(whys[:12]), style="dim")
            if len(whys) > 12:
                out.append(f"\n  … {len(whys) - 12} more", style="dim")
        return out

