"""The training run's log, read line by line: progress (step, total, rate, loss), non-finite values,
the error it ended with, and its end.

``ProgressParser.feed`` takes one physical line; ``RunLog`` keeps what the ``run`` reading shows,
bounded; ``parse_text`` reads a whole saved log. Pure, no I/O, linear time: each segment cut to
``MAX_PARSE`` characters, a substring check before any pattern, every pattern anchored or run on a
bounded window with bounded repeats. Outside text is data: never evaluated, never raised on.
"""

from __future__ import annotations

import math
import re
from collections import deque
from typing import Any

MAX_PARSE = 4096  # a line (a "\r" segment of it) is cut here before any pattern runs
MAX_TEXT = 300  # characters of a line kept in an event

Event = dict[str, Any]

_NUM = r"[-+]?(?:\d{1,20}(?:\.\d{0,20})?|\.\d{1,20})(?:[eE][-+]?\d{1,4})?"

_TQDM = re.compile(r"(\d{1,3})%\|[^|]{0,400}\| {0,8}(\d{1,15})/(\d{1,15}) {0,4}\[([^\]]{0,400})\]")
_PLAIN_STEP = re.compile(r"(?<![\w])(?:[Ss]tep|STEP)s?\s{0,4}[:=#]?\s{0,8}\[?\s{0,8}(\d{1,12})"
                         r"(?:\s{0,4}/\s{0,4}(\d{1,12}))?")
_LOSS = re.compile(r"(?<![\w])(?:train[_ ])?loss\s{0,4}[:=]?\s{0,4}(" + _NUM + r"|[Nn]a[Nn]|[-+]?[Ii]nf)")


def _float(s: str) -> float | None:
    try:
        return float(s)
    except (ValueError, OverflowError):
        return None


def _finite(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) else None


class ProgressParser:
    """Turns a run's log lines into events (see the module docstring)."""

    def __init__(self) -> None:
        self.cut = False  # the last line fed was cut at MAX_PARSE
        self.last_step: int | None = None

    def feed(self, line: str, t: float | None = None) -> list[Event]:
        self.cut = False
        try:
            return self._feed(line, t)
        except Exception:  # outside text must never stop the reader
            return []

    def flush(self) -> list[Event]:
        return []

    def _feed(self, line: str, t: float | None) -> list[Event]:
        line = line.rstrip("\n")
        segs = [s for s in line.split("\r") if s.strip()]
        out: list[Event] = []
        for seg in reversed(segs):
            if len(seg) > MAX_PARSE:
                seg = seg[:MAX_PARSE]
                self.cut = True
            p = self._progress(seg, t)
            if p is not None:
                out.append(p)
                break
        return out

    def _progress(self, seg: str, t: float | None) -> Event | None:
        pos = seg.find("%|")
        if pos >= 1:
            start = pos - 1
            while start > 0 and seg[start - 1].isdigit() and pos - start < 3:
                start -= 1
            m = _TQDM.match(seg, start)
            if m:
                step, total = int(m.group(2)), int(m.group(3))
                self.last_step = step
                return {"kind": "progress", "t": t, "step": step, "total": total, "format": "tqdm"}
        if "loss" in seg and ("step" in seg or "Step" in seg):
            m = _PLAIN_STEP.search(seg)
            lm = _LOSS.search(seg)
            if m and lm:
                step = int(m.group(1))
                self.last_step = step
                return {"kind": "progress", "t": t, "step": step,
                        "total": int(m.group(2)) if m.group(2) else None,
                        "loss": _finite(_float(lm.group(1))), "format": "plain"}
        return None


class RunLog:
    """Events -> the log part of the ``run`` reading, in bounded memory."""

    MAX_POINTS = 2000
    MAX_EVENTS = 200

    def __init__(self) -> None:
        self.parser = ProgressParser()
        self.progress: deque[dict] = deque(maxlen=self.MAX_POINTS)
        self.first: dict | None = None
        self.points_seen = 0
        self._head: list[dict] = []
        self._tail: deque[dict] = deque(maxlen=self.MAX_EVENTS - self.MAX_EVENTS // 2)
        self.error: dict | None = None
        self.finished: dict | None = None
        self.lines_read = 0
        self.cut_lines = 0
        self.formats: dict[str, int] = {}
        self.last_line_t: float | None = None

    def add(self, ev: dict) -> None:
        kind = ev.get("kind")
        if kind == "progress":
            point = {k: v for k, v in ev.items() if k != "kind"}
            self.points_seen += 1
            if self.first is None:
                self.first = point
            self.progress.append(point)
            fmt = str(point.get("format") or "")
            self.formats[fmt] = self.formats.get(fmt, 0) + 1
            return
        if kind not in ("nonfinite", "error", "finished"):
            return
        if len(self._head) < self.MAX_EVENTS // 2:
            self._head.append(ev)
        else:
            self._tail.append(ev)
        if kind == "error":
            self.error = ev
        elif kind == "finished":
            self.finished = ev

    def line(self, text: str, t: float | None = None) -> None:
        self.lines_read += 1
        for ev in self.parser.feed(text, t):
            self.add(ev)
        if self.parser.cut:
            self.cut_lines += 1
        if t is not None:
            self.last_line_t = t

    def flush(self) -> None:
        for ev in self.parser.flush():
            self.add(ev)

    def data(self) -> dict:
        return {"progress": list(self.progress), "first": self.first, "points_seen": self.points_seen,
                "events": self._head + list(self._tail), "error": self.error, "finished": self.finished,
                "lines_read": self.lines_read, "cut_lines": self.cut_lines, "formats": dict(self.formats),
                "last_line_t": self.last_line_t}


def parse_text(text: str, t: float | None = None) -> RunLog:
    """A whole saved log (lines split on "\\n" only: "\\r" is tqdm's, the parser's to split)."""
    log = RunLog()
    for line in text.split("\n"):
        log.line(line, t)
    log.flush()
    return log
