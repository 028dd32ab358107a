"""The one boundary for outside text: whatever sparktui did not write is shown as data, never as a
command to the terminal, to Textual's markup parser or to a Markdown renderer.

Outside text is everything read from the machine or from others: command lines and process names
of other users, file names in scanned folders, kernel-log lines, peers' snapshots and host names,
GitHub issue titles, recordings and sessions. It is kept exact as data (JSON output escapes it by
itself and is never changed here); only its *presentation* goes through this module:

- ``visible(s)``: one line of text with every character that can move the cursor, change the
  terminal's state, reorder or hide text made visible as an escape: ``\\e`` (ESC), ``\\t``, ``\\n``,
  ``\\r``, ``\\xNN`` (other C0, DEL, C1 such as ``\\x9b`` (CSI), and a byte that was not UTF-8, which
  Python reads as a lone surrogate), ``\\uXXXX`` / ``\\UXXXXXXXX`` (bidi overrides and isolates, zero
  width and other invisible format characters, line and paragraph separators, tag characters).
  Everything else (any printable letter, CJK, emoji) is left as it is, and so is ``\\``: the result
  is for reading, not for parsing back.
- ``visible_lines(s)``: the same for text whose line breaks are its own (a fix block): ``\\n`` kept.
- ``md_code(s)`` / ``md_fence(s)``: outside text in a Markdown code span / fenced block, made with a
  run of backticks longer than any in the text, so nothing inside can close it.
- ``md_text(s)``: prose that may hold outside text, on one line, with what Markdown would read as
  structure escaped (links and images, HTML, code, a heading or a list at the start of the line,
  table pipes).

Every function is linear in the length of its input: one search with a single-character class (no
alternation, no repetition that can backtrack), then ``str.translate`` and other ``str`` methods
(about 5 ms per MB of ordinary text, 50 ms per MB of nothing but control characters).
"""

from __future__ import annotations

import re

__all__ = ["RISKY", "has_risky", "md_code", "md_fence", "md_text", "visible", "visible_lines"]

# The characters made visible. C0 and C1 controls and DEL: cursor movement, ESC/CSI/OSC/DCS (a
# title change, a cleared screen, OSC 52 writing the clipboard). Format characters that reorder or
# hide text: bidi embeddings, overrides, isolates and marks (Trojan Source), zero-width ones, the
# soft hyphen, word joiners and invisible operators, the BOM, interlinear annotations, the
# Mongolian vowel separator, tag characters (invisible ASCII). Line and paragraph separators (a
# line break to some renderers). Surrogates: a file name or argv byte that is not UTF-8.
_RANGES = (
    (0x00, 0x1F), (0x7F, 0x9F), (0xAD, 0xAD), (0x061C, 0x061C), (0x180E, 0x180E), (0x200B, 0x200F),
    (0x2028, 0x202E), (0x2060, 0x206F), (0xD800, 0xDFFF), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB),
    (0xE0000, 0xE007F),
)


def _char_class(ranges, skip: str = "") -> str:
    parts = []
    for lo, hi in ranges:
        for a, b in _split(lo, hi, {ord(c) for c in skip}):
            parts.append(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}")
    return "[" + "".join(parts) + "]"


def _split(lo: int, hi: int, skip: set[int]):
    start = lo
    for cp in range(lo, hi + 1):
        if cp in skip:
            if start < cp:
                yield start, cp - 1
            start = cp + 1
    if start <= hi:
        yield start, hi


RISKY = re.compile(_char_class(_RANGES))
_RISKY_BUT_NEWLINE = re.compile(_char_class(_RANGES, skip="\n"))

_NAMED = {"\x1b": "\\e", "\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _shown(ch: str) -> str:
    named = _NAMED.get(ch)
    if named is not None:
        return named
    cp = ord(ch)
    if cp <= 0xFF:
        return f"\\x{cp:02x}"
    if 0xDC80 <= cp <= 0xDCFF:  # surrogateescape: the byte that was not UTF-8
        return f"\\x{cp - 0xDC00:02x}"
    return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"


_TABLES: dict[bool, dict[int, str]] = {}


def _table(keep_newline: bool) -> dict[int, str]:
    """The ``str.translate`` table of every risky character to its escape (about 2,300 entries, built
    on first use: 1 ms, which a run that never meets one does not pay)."""
    table = _TABLES.get(keep_newline)
    if table is None:
        table = {cp: _shown(chr(cp)) for lo, hi in _RANGES for cp in range(lo, hi + 1)}
        if keep_newline:
            del table[ord("\n")]
        _TABLES[keep_newline] = table
    return table


def _text(s: object) -> str:
    return s if isinstance(s, str) else str(s)


def has_risky(s: object) -> bool:
    """Whether ``s`` holds a character ``visible`` would change."""
    return RISKY.search(_text(s)) is not None


def visible(s: object) -> str:
    """``s`` (made a str) on one line, every control, bidi or invisible format character shown as
    an escape (``\\e``, ``\\n``, ``\\x9b``, ``\\u202e``); text without one comes back unchanged."""
    s = _text(s)
    return s.translate(_table(False)) if RISKY.search(s) else s


def visible_lines(s: object) -> str:
    """As ``visible``, but a line break ``\\n`` stays one: for multi-line text (a fix) shown as such."""
    s = _text(s)
    return s.translate(_table(True)) if _RISKY_BUT_NEWLINE.search(s) else s


def _longest_backtick_run(s: str) -> int:
    longest = run = 0
    if "`" not in s:
        return 0
    for ch in s:
        if ch == "`":
            run += 1
            if run > longest:
                longest = run
        else:
            run = 0
    return longest


def md_code(s: object, table: bool = False) -> str:
    """``s`` as a Markdown code span on one line: delimited by more backticks than the longest run
    inside, padded with a space where it starts or ends with a backtick or a space. ``table``: in
    a GFM table cell, where ``|`` must be escaped even inside code (GitHub shows it as ``|``).
    An empty ``s`` gives an empty string (an empty span does not exist)."""
    s = visible(s)
    if not s:
        return ""
    if table:
        s = s.replace("|", "\\|")
    ticks = "`" * (_longest_backtick_run(s) + 1)
    pad = " " if s[0] in "` " or s[-1] in "` " else ""
    return f"{ticks}{pad}{s}{pad}{ticks}"


def md_fence(lines, info: str = "") -> list[str]:
    """A fenced code block of ``lines`` (a str is split at its line breaks), each made visible, the
    fence longer than any backtick run inside (and at least three): no line can close it early, so
    a newline in a command line cannot start a heading of the report's own."""
    if isinstance(lines, str):
        lines = lines.split("\n")
    body = [visible(line) for line in lines]
    fence = "`" * max(3, max((_longest_backtick_run(line) for line in body), default=0) + 1)
    return [fence + visible(info).replace("`", ""), *body, fence]


# `]` only where it would end a link or image's text (`](`, `][`, `]:`): a lone `[redacted]` stays as
# written; no link definition can be made, since outside text never starts a line unescaped.
_MD_ESCAPED = str.maketrans({c: "\\" + c for c in "\\`<>|"})
_MD_LINE_START = re.compile(r"( {0,3})([#>+=*_~\[-]|\d{1,9}[.)])")


def md_text(s: object, starts_line: bool = True) -> str:
    """Prose for Markdown that may hold outside text, on one line: controls made visible, and the
    characters Markdown reads as structure escaped with a backslash (``\\ ` < > |``, a ``]`` that
    would close a link's text; ``#``, ``>``, ``[``, a list or rule marker at the start of the line).
    It renders as the same words, inert: ``![x](http://host/img)`` is text, not an image; ``## G6
    ok`` is text, not a heading. ``starts_line=False``: the text goes after something else on its
    line (a table cell, after a label), where a leading ``#`` or ``1.`` means nothing."""
    s = visible(s).translate(_MD_ESCAPED)
    if "]" in s:
        s = s.replace("](", "\\](").replace("][", "\\][").replace("]:", "\\]:")
    m = _MD_LINE_START.match(s) if starts_line else None
    if m:  # `\#`, `\-`; a list number keeps its digits: `1\.`
        at = m.end() - 1 if m.group(2)[0].isdigit() else m.end(1)
        s = s[:at] + "\\" + s[at:]
    return s
