"""Screens pushed over the dashboard: a gotcha's card, confirmations, help, the events log.

Every one of them goes back with `q` or `escape` (k9s / less style): only the main screen quits.
Each has its own footer, and `?` lists the keys of the view it was pressed in, read from the
view's active bindings, so neither ever offers a key that does nothing there.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table as RichTable
from rich.text import Text
from textual.app import ComposeResult
from textual.actions import parse as parse_action
from textual.binding import ActiveBinding, Binding, BindingsMap
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, DataTable, Label, Static

from sparktui.core.events import Change, EventLog
from sparktui.core.inert import md_text, visible, visible_lines
from sparktui.core.verdict import Status, Verdict
from sparktui.gotchas.base import Gotcha
from sparktui.ui.inert import plain, plain_lines
from sparktui.ui.widgets import BoundedTable
from sparktui.ui.widgets.footer import Footer  # keys dropped whole, never cut at the edge

if TYPE_CHECKING:
    from textual.app import App
    from textual.widgets import Markdown

_BLOCK = re.compile(r"```[a-zA-Z]*\n(.*?)```", re.S)
EVIDENCE_CHARS = 2000  # an evidence value is shown whole up to this; the card wraps it

# `q` and `escape` go back from every pushed view (the footer shows escape; help lists both).
BACK = (Binding("escape", "app.pop_screen", "back", tooltip="back to the screen underneath"),
        Binding("q", "app.pop_screen", "back", show=False, tooltip="back to the screen underneath"))


def fix_blocks(fix: str) -> list[str]:
    """A fix text's code blocks. They are alternatives or separate steps (stop the servers; or
    restart them capped), never one script: the card copies one block at a time."""
    return [b.strip() for b in _BLOCK.findall(fix) if b.strip()]


def fix_commands(fix: str, block: int = 1) -> str:
    """Code block ``block`` (1-based) of a fix text, ready to paste; "" when there is none."""
    blocks = fix_blocks(fix)
    return blocks[block - 1] if 0 < block <= len(blocks) else ""


def _number_blocks(fix: str) -> str:
    """With several code blocks, say above each which key copies it."""
    if len(fix_blocks(fix)) < 2:
        return fix
    n = 0

    def label(m: re.Match) -> str:
        nonlocal n
        n += 1
        key = "c or 1" if n == 1 else str(n)
        return f"*{key} copies this block:*\n\n{m.group(0)}" if n <= 9 else m.group(0)

    return _BLOCK.sub(label, fix)


def copy_text(app, text: str) -> str:
    """Copy through the terminal (OSC 52) and, inside tmux, into tmux's paste buffer too: tmux's
    default `set-clipboard external` drops OSC 52 from applications. Returns where it went."""
    import os
    import shutil
    import subprocess

    app.copy_to_clipboard(text)
    if os.environ.get("TMUX") and shutil.which("tmux"):
        try:
            subprocess.run(["tmux", "load-buffer", "-"], input=text.encode(), timeout=2, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return "to the clipboard and tmux's paste buffer (prefix + ] pastes)"
        except (OSError, subprocess.SubprocessError):
            pass
    return "to the clipboard"


def open_url(app, url: str | None) -> None:
    """Open a web address in the browser; anything else (a path, a scheme like file:) is refused."""
    import webbrowser

    if url and not str(url).startswith(("https://", "http://")):
        app.notify(f"not a web address, not opened: {str(url)[:80]}", severity="warning")
    elif url:
        opened = webbrowser.open(url)
        app.notify(f"opened {url}" if opened else f"no browser here; URL: {url}")


def copy_url(app, url: str | None) -> None:
    if url:
        app.notify(f"copied {url} {copy_text(app, url)}")


def slash_lines(url: str, width: int) -> list[str]:
    """``url`` in lines of at most ``width``, broken only after a `/`: a path segment stays whole
    (one longer than a line is folded, the last resort)."""
    width = max(1, width)
    lines, line = [], ""
    for part in re.findall(r"[^/]*/+|[^/]+$", url):
        if line and len(line) + len(part) > width:
            lines.append(line)
            line = ""
        line += part
        while len(line) > width:
            lines.append(line[:width])
            line = line[width:]
    return lines + [line] if line else lines


class SlashWrapped:
    """A Rich renderable: a URL wrapped at `/` to the width it is given (Rich would break it
    mid-word, at the edge, having no space to break at)."""

    def __init__(self, url: str, style: str = "") -> None:
        self.url, self.style = url, style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in slash_lines(self.url, options.max_width):
            yield Text(line, style=self.style)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        longest_part = max((len(p) for p in re.findall(r"[^/]*/+|[^/]+$", self.url)), default=0)
        return Measurement(min(longest_part, options.max_width), min(len(self.url), options.max_width))


# Textual's own screen keys (tab focus, copy a mouse selection): they pass a key on when they do
# not apply (ctrl+c with nothing selected reaches the app's ask-to-quit), so they hide no key here.
_TEXTUAL_SCREEN_ACTIONS = frozenset(b.action for b in Screen.BINDINGS if isinstance(b, Binding))


def _declared_bindings(node: DOMNode, active: dict[str, ActiveBinding]) -> list[tuple[str, Binding]]:
    """(key, binding) of ``node`` as Textual holds them: the BINDINGS its class and its bases declare,
    merged as Textual merges them (a class's bindings of a key replace its bases'), then those
    added while running (the app's command palette key), which only ``active_bindings`` shows."""
    keys: dict[str, list[Binding]] = {}
    for base in reversed(type(node).__mro__):
        if issubclass(base, DOMNode):
            keys.update(BindingsMap(base.__dict__.get("BINDINGS", [])).key_to_bindings)
    out = [(key, b) for key, bindings in keys.items() for b in bindings]
    declared = {(key, b.action) for key, b in out}
    return out + [(key, ab.binding) for key, ab in active.items() if ab.node is node and (key, ab.binding.action) not in declared]


def _action_allowed(app: App[Any], screen: Screen, node: DOMNode, action: str) -> bool:
    """Whether ``action`` (as a binding of ``node`` names it: "quit", "app.pop_screen", "copy_fix(2)")
    is allowed now: the check_action of the node it goes to."""
    namespace, name, parameters = parse_action(action)
    target = {"app": app, "screen": screen, "focused": app.focused}.get(namespace, node) if namespace else node
    return bool(target is not None and target.check_action(name, parameters))


def view_keys(screen: Screen) -> list[tuple[str, str]]:
    """(keys, what they do) for every key that works on ``screen`` now: its bindings and the
    app's (the app's unless the screen is modal), in the order a key press tries them, each
    node's check_action applied, a key listed once (the first that takes it), so help lists
    exactly what works in that view, keys hidden from the footer included. A focused widget's keys
    are the view's note (its enter is the app's: the row it selects opens). Keys with the same
    text share a row ("esc q"). Textual's public API only: the declared BINDINGS, and
    ``active_bindings`` for a binding added while running."""
    app = screen.app
    active = screen.active_bindings
    rows: dict[str, list[str]] = {}
    taken: set[str] = set()
    for node in (screen,) if screen.is_modal else (screen, app):
        for key, b in _declared_bindings(node, active):
            if b.system or b.action in _TEXTUAL_SCREEN_ACTIONS or key in taken:
                continue
            if _action_allowed(app, screen, node, b.action):
                taken.add(key)
                text = b.tooltip or b.description or b.action.replace("_", " ")
                rows.setdefault(text, []).append(app.get_key_display(b))
    listed = [(" ".join(keys), text) for text, keys in rows.items()]
    return sorted(listed, key=lambda row: row[0].startswith("^"))  # the view's own keys first, ctrl+ last


def _json(v: Any) -> str:
    import json

    return v if isinstance(v, str) else json.dumps(v, default=str)


def markdown_widget(text: str, **kwargs: Any) -> Markdown:
    """Textual's Markdown widget, imported when a card or message first opens: it brings
    markdown-it and pygments (2.6 MB, ~25 ms), which the first screen and a session that opens no
    card do not need. Its code blocks wrap with a mark (ui/widgets/text.py: wrapping_markdown): a
    fix's `--index-url` past the edge of an 80-column card was hidden, and typed by eye it installed
    the wrong wheel."""
    from sparktui.ui.widgets.text import wrapping_markdown

    return wrapping_markdown(text, **kwargs)  # type: ignore[return-value]


def _md_cell(value: Any) -> str:
    """Evidence as table-cell text: lists joined, Markdown syntax taken literally (torch.__version__
    must not turn bold), one line, bounded, controls visible."""
    if isinstance(value, (list, tuple)):
        text = "; ".join(str(x) for x in value)
    else:
        text = _json(value)
    text = " ".join(text.split())
    text = visible(text if len(text) <= EVIDENCE_CHARS else text[: EVIDENCE_CHARS - 1] + "…")  # a cut is marked
    for ch in ("\\", "|", "_", "*", "`", "<", "[", "]"):
        text = text.replace(ch, "\\" + ch)
    return text


def card_markdown(g: Gotcha, v: Verdict | None, age_text: str, running_s: float | None = None) -> str:
    """A failing or warning card leads with its fix: that is what someone opening it needs. While
    the check runs (``running_s`` seconds so far) the card says so, above the previous verdict."""
    lines = [f"# {g.id}: {g.title}", ""]
    fix = _number_blocks(visible_lines((v.fix if v is not None and v.fix else g.fix).strip()))
    acting = v is not None and v.status in (Status.WARN, Status.FAIL)
    if running_s is not None:
        lines += [f"**Status: running for {int(running_s)} s**" + (" · no previous verdict" if v is None else ""), ""]
    elif v is None:
        lines += ["**Status:** not checked yet", ""]
    if v is not None:
        previous = "Previous verdict: " if running_s is not None else "Status: "
        lines += [f"**{previous}{v.status.value.upper()}** · {md_text(v.summary, False)}", "",
                  f"*measured {age_text} ago" + (f", took {v.took_s:.1f} s*" if v.took_s is not None else "*"), ""]
        if acting:
            lines += ["## Fix", "", fix, ""]
        if v.evidence:
            lines += ["## Evidence", ""]  # a list, not a table: a table's columns cut what does not fit
            lines += [f"- **{_md_cell(e.what)}:** {_md_cell(e.value)} · *from {_md_cell(e.source)}*" for e in v.evidence]
            lines.append("")
        if v.details:
            lines += ["## Details", ""] + [f"- {md_text(d)}" for d in v.details[:50]]
            if len(v.details) > 50:  # never dropped unsaid
                lines.append(f"- *… {len(v.details) - 50} more: `sparktui check -v {g.id}` lists them all*")
            lines.append("")
    lines += [f"**Symptom.** {g.symptom}", "", f"**Cause.** {g.cause}", "", f"**How sparktui checks it.** {g.check}", ""]
    if not acting:
        lines += ["## Fix" + ("" if v is None else " (for reference)"), "", fix, ""]
    return "\n".join(lines)


class CardScreen(Screen):
    """A gotcha's card: the live verdict's evidence first, then symptom, cause, check and fix."""

    BINDINGS = [
        *BACK,
        Binding("c", "copy_fix(1)", "copy fix", tooltip="copy the fix's first code block (into tmux's paste buffer too)"),
        Binding("r", "rerun", "rerun", tooltip="rerun this check; the card updates when it is done"),
        *(Binding(str(n), f"copy_fix({n})", f"copy block {n}", show=False,
                  tooltip="copy the fix's code block of that number (alternatives or separate steps, never one script)")
          for n in range(1, 10)),
    ]
    HELP_NOTE = "↑ ↓ pgup pgdn scroll the card."

    def __init__(self, gotcha: Gotcha, verdict: Verdict | None, age_text: str, on_rerun: Callable[[str], None] | None,
                 running_s: Callable[[], float | None] = lambda: None) -> None:
        super().__init__()
        self.gotcha, self.verdict, self.age_text, self.on_rerun = gotcha, verdict, age_text, on_rerun
        self.running_s = running_s  # seconds the check has been running, None when it is not
        self._shown_running: int | None = None

    def _markdown(self) -> str:
        running = self.running_s()
        self._shown_running = None if running is None else int(running)
        return card_markdown(self.gotcha, self.verdict, self.age_text, running)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="card"):
            yield markdown_widget(self._markdown(), id="card-md")
        yield Footer()

    def on_mount(self) -> None:
        self.set_interval(1.0, self._follow_running)

    def _follow_running(self) -> None:
        """While the check runs, its seconds count up; redrawn only when the shown number changes."""
        running = self.running_s()
        if (None if running is None else int(running)) != self._shown_running:
            self._card().update(self._markdown())

    def update_verdict(self, verdict: Verdict | None, age_text: str) -> None:
        self.verdict, self.age_text = verdict, age_text
        self._card().update(self._markdown())

    def _card(self) -> Markdown:
        from textual.widgets import Markdown  # loaded already: the card is shown (markdown_widget)

        return self.query_one("#card-md", Markdown)

    def _fix_blocks(self) -> list[str]:
        return fix_blocks(self.verdict.fix if self.verdict and self.verdict.fix else self.gotcha.fix)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """Only the digits of blocks the fix has (1 also copies a fix without a code block)."""
        if action == "copy_fix":
            return parameters[0] <= max(1, len(self._fix_blocks()))
        if action == "rerun":
            return self.on_rerun is not None  # None: a replay, look-only
        return True

    def action_copy_fix(self, block: int = 1) -> None:
        blocks = self._fix_blocks()
        if not blocks:
            cmds, what = (self.verdict.fix if self.verdict and self.verdict.fix else self.gotcha.fix), "fix text"
        else:
            cmds = blocks[block - 1]
            what = f"block {block} of {len(blocks)}" if len(blocks) > 1 else "fix commands"
        where = copy_text(self.app, cmds)
        self.notify(f"copied {self.gotcha.id}'s {what} ({len(cmds.splitlines())} lines) {where}")

    def action_rerun(self) -> None:
        if self.on_rerun is None:  # a replay is look-only (check_action hides the key too)
            self.notify("a replay is look-only: nothing is rerun")
            return
        running = self.running_s()
        if running is not None:
            self.notify(f"{self.gotcha.id} is already running ({int(running)} s); this card updates when it is done")
            return
        self.on_rerun(self.gotcha.id)
        self.notify(f"rerunning {self.gotcha.id}; this card updates when it is done")


class ConfirmScreen(ModalScreen[bool]):
    """Yes/no for anything intrusive (or final); says exactly what will happen."""

    BINDINGS = [Binding("y", "answer(True)", "yes"), Binding("n", "answer(False)", "no"),
                Binding("escape", "answer(False)", "no", show=False), Binding("q", "answer(False)", "no", show=False)]

    def __init__(self, title: str, body: str | Text, yes: str = "Run it", no: str = "Cancel") -> None:
        super().__init__()
        self.title_text, self.body, self.yes, self.no = title, body, yes, no

    def compose(self) -> ComposeResult:
        # Plain text, never markup: the body quotes a process's whole command line (an argv holding
        # `[X="]` made the dialog raise, and the process could not be signalled from the dashboard)
        body = self.body if isinstance(self.body, Text) else plain_lines(self.body)
        with Vertical(id="confirm"):
            yield Label(plain(self.title_text, style="bold"), id="confirm-title")
            yield Static(body, id="confirm-body")
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self.yes} (y)", variant="warning", id="yes")
                yield Button(f"{self.no} (n)", variant="primary", id="no")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()  # Enter out of habit must not start an intrusive probe

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class MessageScreen(ModalScreen[None]):
    """A read-only text (an issue's body, a refusal); with a ``url`` (an issue's), `o` / `y`
    open / copy it and it is drawn broken only at `/`."""

    BINDINGS = [*BACK, Binding("o", "open_url", "open URL", tooltip="open this issue's URL in a browser"),
                Binding("y", "copy_url", "copy URL", tooltip="copy this issue's URL (into tmux's paste buffer too)")]

    def __init__(self, title: str, markdown: str, url: str | None = None) -> None:
        super().__init__()
        self.title_text, self.markdown, self.url = title, markdown, url

    def compose(self) -> ComposeResult:
        """The title plain; the Markdown with its controls made visible (its callers escape or
        fence the outside text in it: core/inert.py)."""
        with VerticalScroll(id="message"):
            # wraps (a Label as wide as its text was cut at the border, unmarked: an issue's title)
            yield Static(plain(self.title_text, style="bold"), id="message-title")
            if self.url:
                yield Static(SlashWrapped(visible(self.url), style="underline"), id="message-url")
            yield markdown_widget(visible_lines(self.markdown))
        yield Footer()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        return bool(self.url) if action in ("open_url", "copy_url") else True

    def action_open_url(self) -> None:
        open_url(self.app, self.url)

    def action_copy_url(self) -> None:
        copy_url(self.app, self.url)


class HelpScreen(ModalScreen[None]):
    """The keys of the view `?` was pressed in (``keys``: see view_keys), with its ``note``: one
    line a key, so an 80x24 pane shows most of them without scrolling."""

    BINDINGS = [*BACK, Binding("question_mark", "app.pop_screen", "back", show=False, tooltip="back to the screen underneath")]

    def __init__(self, title: str, keys: list[tuple[str, str]], note: str = "") -> None:
        super().__init__()
        self.title_text, self.keys, self.note = title, keys, note

    def compose(self) -> ComposeResult:
        table = RichTable(show_header=False, box=None, padding=(0, 2, 0, 0), expand=True)
        table.add_column(style="bold", no_wrap=True)
        table.add_column(ratio=1)
        for keys, text in self.keys:
            table.add_row(Text(keys), Text(text))
        with VerticalScroll(id="help"):
            yield Label(Text(self.title_text, style="bold"), id="help-title")
            yield Static(table, id="help-keys")
            yield Static(Text(self.note, style="dim"), id="help-note")
        yield Footer()


def event_time(t: float, now: float | None = None) -> str:
    """Time of day for today's events; with the date for older ones (a dashboard left for days)."""
    import time

    lt, today = time.localtime(t), time.localtime(now if now is not None else time.time())
    same_day = (lt.tm_year, lt.tm_yday) == (today.tm_year, today.tm_yday)
    return time.strftime("%H:%M:%S" if same_day else "%a %d %b %H:%M", lt)


class EventsScreen(Screen):
    """Every verdict change, newest first; it follows the log while open (a change, or a restored
    session's rows arriving after the screen was opened, shows within a second)."""

    BINDINGS = [*BACK]
    HELP_NOTE = "↑ ↓ move; enter shows the whole finding of the selected change."
    FOLLOW_EVERY_S = 1.0

    def __init__(self, log: EventLog, fmt_time: Callable[[float], str] | None = None) -> None:
        super().__init__()
        self.event_log, self.fmt_time = log, fmt_time or event_time
        self._shown: list[Change] = []
        self._version = -1

    def compose(self) -> ComposeResult:
        yield Label(Text("Verdict changes, newest first · q or escape returns", style="bold"))
        yield BoundedTable(id="events-table", cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("time", "check", "from", "to", "finding")
        self._fill()
        self.set_interval(self.FOLLOW_EVERY_S, self._fill)

    def _fill(self) -> None:
        """The rows again when the log moved since they were drawn; the cursor stays on its row."""
        if self.event_log.version == self._version:
            return
        self._version = self.event_log.version
        t = self.query_one(DataTable)
        at = self._shown[t.cursor_row] if 0 <= t.cursor_row < len(self._shown) else None
        t.clear()
        # newest first by the latest occurrence (a repeated change moves up); ties in log order
        order = list(enumerate(self.event_log))
        self._shown = [c for _, c in sorted(order, key=lambda ic: (ic[1].last_t or ic[1].t, ic[0]), reverse=True)]
        for ch in self._shown:
            if ch.kind == "gap":  # not a change: where the dashboard was not running
                t.add_row(Text(self.fmt_time(ch.t), style="dim"), Text("—", style="dim"), Text(""), Text(""),
                          plain(ch.summary, style="dim italic", overflow="ellipsis", no_wrap=True))
                continue
            style = "bold red" if ch.new is Status.FAIL else "bold yellow" if ch.new is Status.WARN else ""
            when = self.fmt_time(ch.t) + (f" (x{ch.repeats}, last {self.fmt_time(ch.last_t or ch.t)})" if ch.repeats > 1 else "")
            # Text cells: a str is markup (a restored event id "[/]" ended the dashboard); the id and
            # the finding come from a kept session or quote outside text: controls visible
            t.add_row(Text(when), plain(ch.id), Text(ch.old.value if ch.old else "—"), Text(ch.new.value, style=style),
                      plain(ch.summary, overflow="ellipsis", no_wrap=True))
        if not len(self.event_log):
            t.add_row(Text(""), Text(""), Text(""), Text(""), Text("no changes yet", style="dim"))
        if at is not None and at in self._shown:
            t.move_cursor(row=self._shown.index(at))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter: the whole finding, which the table cuts to its width."""
        i = event.cursor_row
        if 0 <= i < len(getattr(self, "_shown", [])):
            ch = self._shown[i]
            when = self.fmt_time(ch.t) + (f", {ch.repeats} times, last {self.fmt_time(ch.last_t or ch.t)}" if ch.repeats > 1 else "")
            self.app.push_screen(MessageScreen(f"{ch.id}: {ch.old.value if ch.old else '—'} → {ch.new.value} ({when})",
                                               md_text(ch.summary)))
