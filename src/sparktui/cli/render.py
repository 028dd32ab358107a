"""Plain-text and JSON output of verdicts for the headless CLI.

Text is fitted to the output's width (the terminal, COLUMNS, or 100 columns when stdout is a
file or pipe): a summary always wraps whole at word boundaries, continuation lines indented under
the finding; without ``-v`` an evidence or detail item takes at most two lines, the second cut
after a whole word and ended with "…", so nothing is ever cut mid-word without a mark; ``-v``
prints everything whole.

On an output whose encoding cannot carry the status glyphs (``PYTHONIOENCODING=ascii``, a latin-1
locale) each character it cannot encode is written as an ASCII stand-in (✔ +, ▲ !, ✘ x, … ...)
instead of failing: see ``fit_encoding``. JSON output is ASCII already.

What a verdict quotes from outside (another user's command line, a file name, a kernel-log line)
is shown inert: control and bidi characters as visible escapes (core/inert.py); JSON is exact.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import sys
import textwrap
import time
from typing import Any

from sparktui.core.inert import visible, visible_lines
from sparktui.core.verdict import Evidence, Status, Verdict
from sparktui.gotchas import REGISTRY

JSON_SCHEMA = 1
PIPE_WIDTH = 100  # stdout is a file or a pipe and COLUMNS is not set
MIN_WIDTH = 40  # narrower than this the indents leave no room for text
FINDING = " " * 5  # the finding column: summaries and fixes start here
EVIDENCE = " " * 7  # evidence and detail lines
ELLIPSIS = "…"

# What an output that cannot encode a character gets instead; anything else unencodable is "?".
ASCII_FOR = {"✔": "+", "▲": "!", "✘": "x", "–": "-", "—": "-", "…": "...", "·": "*", "°": " deg", "≥": ">=",
             "≤": "<=", "→": "->", "←": "<-", "×": "x", "±": "+/-", "µ": "u", "“": '"', "”": '"',
             "‘": "'", "’": "'"}
FALLBACK_ERRORS = "sparktui-ascii"


def _ascii_stand_in(e: UnicodeError) -> tuple[str, int]:
    if not isinstance(e, UnicodeEncodeError):
        raise e
    return "".join(ASCII_FOR.get(c, "?") for c in e.object[e.start:e.end]), e.end


codecs.register_error(FALLBACK_ERRORS, _ascii_stand_in)


def fit_encoding(stream) -> None:
    """Let ``stream`` write what its encoding cannot carry as ASCII stand-ins (``ASCII_FOR``): a
    verdict printed as "+ ok" is better than a UnicodeEncodeError (which used to exit 70)."""
    encoding = getattr(stream, "encoding", None)
    if not encoding or not hasattr(stream, "reconfigure"):
        return
    try:
        "".join(ASCII_FOR).encode(encoding)
    except UnicodeEncodeError:
        stream.reconfigure(errors=FALLBACK_ERRORS)
    except LookupError:
        return


# Without colour (NO_COLOR on a terminal) the worse a status, the louder: fail inverse, warn bold.
_MONO = {Status.FAIL: "\x1b[1;7m", Status.WARN: "\x1b[1m", Status.UNKNOWN: "", Status.OK: "", Status.SKIP: ""}
_LIST_ITEM = re.compile(r"(\s*(?:[-*]|\d+[.)])\s+)")
_TABLE_ROW = re.compile(r"^\s{2,}\S|\S {2,}\S")  # aligned columns: `free -g`, a process list


def use_colour(stream) -> bool:
    return "NO_COLOR" not in os.environ and hasattr(stream, "isatty") and stream.isatty()


def use_emphasis(stream) -> bool:
    """A terminal under NO_COLOR: statuses are told apart by bold and inverse instead of colour."""
    return "NO_COLOR" in os.environ and hasattr(stream, "isatty") and stream.isatty()


def status_sgr(s: Status) -> str:
    """The escape that starts ``s``'s colour: the dashboard's own (ui/format.py STATUS_RGB, the dark
    theme's shade), in 24-bit colour where the terminal says it has it (COLORTERM), else the nearest
    of the 256 (where the dashboard's colours were chosen to stay distinct)."""
    from rich.color import Color, ColorSystem

    from sparktui.ui.format import STATUS_RGB, status_styles

    system = (ColorSystem.TRUECOLOR if os.environ.get("COLORTERM", "").lower() in ("truecolor", "24bit")
              else ColorSystem.EIGHT_BIT)
    codes = (["1"] if "bold" in status_styles(True)[s].split() else [])
    codes += Color.parse(STATUS_RGB[True][s]).downgrade(system).get_ansi_codes(foreground=True)
    return f"\x1b[{';'.join(codes)}m"


def output_width(stream=None) -> int:
    """Columns to fit text to: COLUMNS when set, else the terminal's width, else (a file or a pipe,
    where lines are read by tools and people alike) 100."""
    stream = sys.stdout if stream is None else stream
    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit() and int(env) > 0:
        return max(int(env), MIN_WIDTH)
    if hasattr(stream, "isatty") and stream.isatty():
        try:
            return max(os.get_terminal_size(stream.fileno()).columns, MIN_WIDTH)
        except (AttributeError, OSError, ValueError):  # a stand-in terminal without a real descriptor
            pass
    return PIPE_WIDTH


def wraps_lines(stream=None) -> bool:
    """Whether a whole-line header (preflight's lines, `check --replay`'s `recording FILE (...)`)
    wraps: on a terminal, or wherever COLUMNS is set; into a pipe or a log without COLUMNS it stays
    one line, so a script's grep sees it whole."""
    stream = sys.stdout if stream is None else stream
    env = os.environ.get("COLUMNS", "").strip()
    return (env.isdigit() and int(env) > 0) or (hasattr(stream, "isatty") and stream.isatty())


def wrap(text: str, width: int, first: str, rest: str) -> list[str]:
    """``text`` wrapped at spaces to ``width``, the first line after ``first``, the others after
    ``rest``. Words are never split (a path longer than a line stays whole on its own line), nor at
    hyphens: `--gpu-memory-utilization` must stay one word. A line that fits is kept as it is, so
    aligned columns (`free -g` in G3's details) stay aligned."""
    if "\n" not in text and len(first) + len(text) <= width:
        return [first + text]
    return textwrap.wrap(" ".join(text.split()), width=width, initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False) or [first.rstrip()]


def cut(text: str, room: int) -> str:
    """``text`` on one line of at most ``room`` characters: cut at the last space that fits and
    marked with "…" (a single word too long for the room is cut, and marked too)."""
    text = " ".join(text.split())
    if len(text) <= room:
        return text
    head = text[: max(room - 1, 1)]
    if text[len(head)] != " " and " " in head:  # the cut fell inside a word: drop that word
        head = head[: head.rfind(" ")]
    return head.rstrip(" ,;:") + ELLIPSIS


def fitted(text: str, width: int, first: str, rest: str, whole: bool, max_lines: int = 2) -> list[str]:
    """Wrapped whole, or (not ``whole``) in at most ``max_lines`` lines, the last cut with "…"."""
    lines = wrap(text, width, first, rest)
    if whole:
        return lines
    # a word longer than the line (a path) is cut at the edge and marked; -v shows it whole
    lines = [line if len(line) <= width else line[: width - 1] + ELLIPSIS for line in lines]
    if len(lines) <= max_lines:
        return lines
    kept = lines[: max_lines - 1]
    shown = len(kept[0][len(first):].split()) + sum(len(line[len(rest):].split()) for line in kept[1:])
    return kept + [rest + cut(" ".join(text.split()[shown:]), width - len(rest))]


def reflow(text: str, width: int, indent: str) -> list[str]:
    """Markdown prose (a fix) re-wrapped to ``width``: paragraphs and list items wrap (an item's
    lines hang under its text), blank lines stay; lines inside ``` fences are kept as written,
    since a wrapped command no longer pastes."""
    out: list[str] = []
    para: list[str] = []
    first = rest = indent
    fenced = False

    def flush() -> None:
        if para:
            out.extend(wrap(" ".join(para), width, first, rest))
            para.clear()

    for line in text.strip().splitlines():
        item = _LIST_ITEM.match(line)
        if line.strip().startswith("```") or fenced or not line.strip():
            flush()
            fenced ^= line.strip().startswith("```")
            out.append((indent + line.rstrip()) if line.strip() else "")
        elif item or not para:
            flush()
            marker = item.group(1).lstrip() if item else ""
            first, rest = indent + marker, indent + " " * len(marker)
            para.append(line[item.end():] if item else line)
        else:
            para.append(line)
    flush()
    return out


def details_lines(details: list[str], width: int, whole: bool) -> list[str]:
    """A verdict's detail lines. Prose wraps (``fitted``); a run of lines with aligned columns
    (`free -g`, a process list) is a monospace block: its spacing is kept and every row of the run
    gets the same indent (less than the usual one where that makes the widest row fit), so its
    columns stay over each other. A row still too wide is whole with ``whole`` (-v), else cut with
    "…"."""
    out: list[str] = []
    i = 0
    while i < len(details):
        if not _TABLE_ROW.search(details[i]):
            out += fitted(details[i], width, EVIDENCE, EVIDENCE + "  ", whole)
            i += 1
            continue
        j = i
        while j < len(details) and _TABLE_ROW.search(details[j]):
            j += 1
        rows = [d.rstrip() for d in details[i:j]]
        room = width - max(len(r) for r in rows)
        indent = " " * room if 0 <= room < len(EVIDENCE) else EVIDENCE  # a row wider than the line: cut or whole
        for r in rows:
            line = indent + r
            out.append(line if whole or len(line) <= width else line[: width - 1] + ELLIPSIS)
        i = j
    return out


def status_label(s: Status, colour: bool, emphasis: bool = False) -> str:
    """`✘ fail   `: in the dashboard's colour for ``s`` (``colour``), or bold / inverse by severity
    (``emphasis``: a terminal under NO_COLOR, where a fail must not look quieter than a warning)."""
    text = f"{s.glyph} {s.value:<7}"
    start = status_sgr(s) if colour else _MONO[s] if emphasis else ""
    return f"{start}{text.rstrip()}\x1b[0m{' ' * (len(text) - len(text.rstrip()))}" if start else text


def _evidence(e: Evidence, width: int, whole: bool) -> list[str]:
    """`· what: value  [source]`, continuation lines under ``what``; shown inert (core/inert.py)."""
    value = e.value if isinstance(e.value, str) else json.dumps(e.value, default=str)
    return fitted(visible(f"{e.what}: {value}  [{e.source}]"), width, EVIDENCE + "· ", EVIDENCE + "  ", whole)


def table(verdicts: list[Verdict], verbose: bool = False, stream=None) -> str:
    """The verdicts as text, fitted to ``stream``'s width; coloured when ``stream`` (default:
    ``sys.stdout`` at call time) is a terminal; a line of counts at the end."""
    return blocks(verdicts, verbose, stream) + counts(verdicts)


def counts(verdicts: list[Verdict]) -> str:
    """The table's last lines: how many of each status."""
    n = {s: sum(1 for v in verdicts if v.status is s) for s in Status}
    return "\n" + "  ".join(f"{k} {s.value}" for s, k in n.items() if k) + "\n"


def blocks(verdicts: list[Verdict], verbose: bool = False, stream=None) -> str:
    """Each verdict's lines (status, finding, evidence, where its fix is), without the counts:
    ``check`` on a terminal writes each as soon as it is judged."""
    stream = sys.stdout if stream is None else stream
    colour, emphasis, width = use_colour(stream), use_emphasis(stream), output_width(stream)
    lines = []
    for v in verdicts:
        plain = f"{v.id:<4} {status_label(v.status, False)} "
        head = wrap(REGISTRY[v.id].title, width, plain, " " * len(plain))
        head[0] = f"{v.id:<4} {status_label(v.status, colour, emphasis)} " + head[0][len(plain):]
        lines += head
        lines += wrap(visible(v.summary), width, FINDING, FINDING)
        if verbose or v.status in (Status.WARN, Status.FAIL):
            for e in v.evidence:
                lines += _evidence(e, width, verbose)
            lines += details_lines([visible(d) for d in v.details[: (None if verbose else 10)]], width, verbose)
            if not verbose and len(v.details) > 10:
                lines.append(f"{EVIDENCE}{ELLIPSIS} {len(v.details) - 10} more (use --verbose)")
        if v.status in (Status.WARN, Status.FAIL) and v.fix:
            if verbose:
                lines += [f"{FINDING}fix:"] + reflow(visible_lines(v.fix), width, EVIDENCE)
            else:
                lines.append(f"{FINDING}fix: see `sparktui explain {v.id}`")
    return "".join(line + "\n" for line in lines)


def document(verdicts: list[Verdict], host: dict[str, Any], source: str) -> dict[str, Any]:
    """The ``check --json`` document (see docs/cli.md)."""
    return {
        "schema": JSON_SCHEMA,
        "kind": "sparktui-check",
        "generated_at": time.time(),
        "source": source,
        "host": host,
        "checks": [{**v.to_dict(), "title": REGISTRY[v.id].title, "intrusive": REGISTRY[v.id].intrusive} for v in verdicts],
    }


def markdown_text(text: str, stream=None) -> str:
    """Markdown (a gotcha's card: ``explain``) for ``stream``. On a terminal it is rendered (Rich) to
    its width, or COLUMNS: headings, emphasis, lists; a code line wider than the room wraps with a
    mark (``↩``) at the cut and its rest indented below, never cut and never broken unmarked. Into a
    pipe or a file it stays Markdown, re-wrapped to COLUMNS (else 100): paragraphs and list items
    wrap at spaces, lines inside ``` fences are kept as written (a wrapped command no longer pastes)."""
    stream = sys.stdout if stream is None else stream
    width = output_width(stream)
    if not (hasattr(stream, "isatty") and stream.isatty()):
        return "\n".join(reflow(text, width, "")) + "\n"
    import io

    from rich.console import Console
    from rich.markdown import CodeBlock, Markdown
    from rich.text import Text

    from sparktui.ui.format import CONTINUED, code_rows

    class MarkedCode(CodeBlock):
        def __rich_console__(self, console, options):
            for line in str(self.text).rstrip().split("\n"):
                for row in code_rows(line, options.max_width - 2):
                    out = Text("  " + row, style="cyan")
                    if row.endswith(CONTINUED):
                        out.stylize("dim", len(out) - 1)
                    yield out

    class CardMarkdown(Markdown):
        elements = {**Markdown.elements, "fence": MarkedCode, "code_block": MarkedCode}

    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=True, no_color=not use_colour(stream),
                      color_system="truecolor" if os.environ.get("COLORTERM", "").lower() in ("truecolor", "24bit")
                      else "256", highlight=False, emoji=False, markup=False)
    console.print(CardMarkdown(text, hyperlinks=False))
    return buffer.getvalue()
