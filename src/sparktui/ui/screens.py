"""Screens pushed over the dashboard: a gotcha's card, confirmations, help, the events log."""

from __future__ import annotations

import re
from typing import Any, Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, DataTable, Footer, Label, Markdown, Static

from sparktui.core.events import EventLog
from sparktui.core.verdict import Status, Verdict
from sparktui.gotchas.base import Gotcha
from sparktui.ui.widgets import BoundedTable

_BLOCK = re.compile(r"```[a-zA-Z]*\n(.*?)```", re.S)


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


def _json(v: Any) -> str:
    import json

    return v if isinstance(v, str) else json.dumps(v, default=str)


def _md_cell(value: Any) -> str:
    """Evidence as table-cell text: lists joined, Markdown syntax taken literally (torch.__version__
    must not turn bold), one line, bounded."""
    if isinstance(value, (list, tuple)):
        text = "; ".join(str(x) for x in value)
    else:
        text = _json(value)
    text = " ".join(text.split())[:200]
    for ch in ("\\", "|", "_", "*", "`", "<", "[", "]"):
        text = text.replace(ch, "\\" + ch)
    return text


def card_markdown(g: Gotcha, v: Verdict | None, age_text: str) -> str:
    """A failing or warning card leads with its fix: that is what someone opening it needs."""
    lines = [f"# {g.id}: {g.title}", ""]
    fix = _number_blocks((v.fix if v is not None and v.fix else g.fix).strip())
    acting = v is not None and v.status in (Status.WARN, Status.FAIL)
    if v is None:
        lines += ["**Status:** not checked yet", ""]
    else:
        lines += [f"**Status: {v.status.value.upper()}** · {v.summary}", "",
                  f"*measured {age_text} ago" + (f", took {v.took_s:.1f} s*" if v.took_s is not None else "*"), ""]
        if acting:
            lines += ["## Fix", "", fix, ""]
        if v.evidence:
            lines += ["## Evidence", "", "| what | value | from |", "|---|---|---|"]
            for e in v.evidence:
                lines.append(f"| {_md_cell(e.what)} | {_md_cell(e.value)} | {_md_cell(e.source)} |")
            lines.append("")
        if v.details:
            lines += ["## Details", ""] + [f"- {d}" for d in v.details[:50]] + [""]
    lines += [f"**Symptom.** {g.symptom}", "", f"**Cause.** {g.cause}", "", f"**How sparktui checks it.** {g.check}", ""]
    if not acting:
        lines += ["## Fix" + ("" if v is None else " (for reference)"), "", fix, ""]
    return "\n".join(lines)


class CardScreen(Screen):
    """A gotcha's card: the live verdict's evidence first, then symptom, cause, check and fix."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "back"),
        Binding("c", "copy_fix(1)", "copy fix"),
        Binding("r", "rerun", "rerun"),
        *(Binding(str(n), f"copy_fix({n})", f"copy block {n}", show=False) for n in range(1, 10)),
    ]

    def __init__(self, gotcha: Gotcha, verdict: Verdict | None, age_text: str, on_rerun: Callable[[str], None]) -> None:
        super().__init__()
        self.gotcha, self.verdict, self.age_text, self.on_rerun = gotcha, verdict, age_text, on_rerun

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="card"):
            yield Markdown(card_markdown(self.gotcha, self.verdict, self.age_text), id="card-md")
        yield Footer()

    def update_verdict(self, verdict: Verdict | None, age_text: str) -> None:
        self.verdict, self.age_text = verdict, age_text
        self.query_one("#card-md", Markdown).update(card_markdown(self.gotcha, verdict, age_text))

    def action_copy_fix(self, block: int = 1) -> None:
        fix = (self.verdict.fix if self.verdict and self.verdict.fix else self.gotcha.fix)
        blocks = fix_blocks(fix)
        if not blocks:
            cmds, what = fix, "fix text"
        elif block > len(blocks):
            self.notify(f"{self.gotcha.id}'s fix has {len(blocks)} block(s)", severity="warning")
            return
        else:
            cmds = blocks[block - 1]
            what = f"block {block} of {len(blocks)}" if len(blocks) > 1 else "fix commands"
        where = copy_text(self.app, cmds)
        self.notify(f"copied {self.gotcha.id}'s {what} ({len(cmds.splitlines())} lines) {where}")

    def action_rerun(self) -> None:
        self.on_rerun(self.gotcha.id)
        self.notify(f"rerunning {self.gotcha.id}; this card updates when it is done")


class ConfirmScreen(ModalScreen[bool]):
    """Yes/no for anything intrusive; says exactly what will happen."""

    BINDINGS = [Binding("escape", "answer(False)", "cancel"), Binding("y", "answer(True)", "yes"),
                Binding("n", "answer(False)", "no")]

    def __init__(self, title: str, body: str) -> None:
        super().__init__()
        self.title_text, self.body = title, body

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            yield Label(Text(self.title_text, style="bold"), id="confirm-title")
            yield Static(self.body, id="confirm-body")
            with Horizontal(id="confirm-buttons"):
                yield Button("Run it (y)", variant="warning", id="yes")
                yield Button("Cancel (n)", variant="primary", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()  # Enter out of habit must not start an intrusive probe

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class MessageScreen(ModalScreen[None]):
    """A read-only text (an issue's body, a refusal)."""

    BINDINGS = [Binding("escape", "app.pop_screen", "close"), Binding("q", "app.pop_screen", "close")]

    def __init__(self, title: str, markdown: str) -> None:
        super().__init__()
        self.title_text, self.markdown = title, markdown

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="message"):
            yield Label(Text(self.title_text, style="bold"))
            yield Markdown(self.markdown)


KEYS_HELP = """\
| key | what it does |
|---|---|
| ↑ ↓ | move in the checklist / tables |
| enter | open the selected gotcha's card (or playbook issue) |
| r | rerun the selected check |
| R | rerun all non-intrusive checks |
| c | cancel the running checks |
| b | G5: measure bandwidth (asks first: it loads the machine) |
| / | filter the process table |
| s | change the process table's sort |
| p | pause / resume sampling |
| e | the events log: every verdict change and when |
| m | peers: this machine beside the others (ssh), what must match for DDP/FSDP; `r` there refetches |
| tab | move between panels |
| o / y | playbook issue: open its URL / copy it |
| ctrl+p | command palette (every action by name; shown in the footer from 120 columns) |
| ? | this help |
| q | quit |

In a card: `c` copies the fix's first code block, `2`-`9` the others (they are alternatives or
separate steps, never one script), `r` reruns, `escape` returns. Here: `escape`, `?` or `q` close.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape", "app.pop_screen", "close"), Binding("question_mark", "app.pop_screen", "close", show=False),
                Binding("q", "app.pop_screen", "close", show=False)]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Markdown("# sparktui keys\n\n" + KEYS_HELP)


def event_time(t: float, now: float | None = None) -> str:
    """Time of day for today's events; with the date for older ones (a dashboard left for days)."""
    import time

    lt, today = time.localtime(t), time.localtime(now if now is not None else time.time())
    same_day = (lt.tm_year, lt.tm_yday) == (today.tm_year, today.tm_yday)
    return time.strftime("%H:%M:%S" if same_day else "%a %d %b %H:%M", lt)


class EventsScreen(Screen):
    """Every verdict change in this session, newest first."""

    BINDINGS = [Binding("escape", "app.pop_screen", "back")]

    def __init__(self, log: EventLog, fmt_time: Callable[[float], str] | None = None) -> None:
        super().__init__()
        self.event_log, self.fmt_time = log, fmt_time or event_time

    def compose(self) -> ComposeResult:
        yield Label(Text("Verdict changes this session (newest first) · escape returns", style="bold"))
        yield BoundedTable(id="events-table", cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        t = self.query_one(DataTable)
        t.add_columns("time", "check", "from", "to", "finding")
        # newest first by the latest occurrence (a repeated change moves up); ties in log order
        order = list(enumerate(self.event_log))
        self._shown = [c for _, c in sorted(order, key=lambda ic: (ic[1].last_t or ic[1].t, ic[0]), reverse=True)]
        for ch in self._shown:
            style = "bold red" if ch.new is Status.FAIL else "bold yellow" if ch.new is Status.WARN else ""
            when = self.fmt_time(ch.t) + (f" (x{ch.repeats}, last {self.fmt_time(ch.last_t)})" if ch.repeats > 1 else "")
            t.add_row(when, ch.id, ch.old.value if ch.old else "—", Text(ch.new.value, style=style),
                      Text(ch.summary, overflow="ellipsis", no_wrap=True))
        if not len(self.event_log):
            t.add_row("", "", "", "", Text("no changes yet", style="dim"))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter: the whole finding, which the table cuts to its width."""
        i = event.cursor_row
        if 0 <= i < len(getattr(self, "_shown", [])):
            ch = self._shown[i]
            when = self.fmt_time(ch.t) + (f", {ch.repeats} times, last {self.fmt_time(ch.last_t)}" if ch.repeats > 1 else "")
            self.app.push_screen(MessageScreen(f"{ch.id}: {ch.old.value if ch.old else '—'} → {ch.new.value} ({when})",
                                               ch.summary))
