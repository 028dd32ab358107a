"""Stored readings spoilt one field at a time, and the judges run on them with a hang limit.

Shared by the never-lie property tests (tests/test_verdicts_never_lie.py, tests/hostile/
test_snapshot_fields.py) and ``tools/exhaustive_fields.py``, which walks every field the property
tests only sample. The sources are real machines' readings kept in a checkout of the repository
(the lent H200's snapshot and an H200 recording under a matmul load in tests/data/h200/, and the
shipped GB10 demo recording).
"""

from __future__ import annotations

import functools
import json
import signal
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

from sparktui.core.config import Config
from sparktui.core.readings import Readings, read_snapshot
from sparktui.core.recording import read_recording, readings_from_recording
from sparktui.core.verdict import Status, Verdict
from sparktui.gotchas import REGISTRY
from sparktui.runner import judge

ROOT = Path(__file__).resolve().parents[3]  # the checkout: src/sparktui/testing/spoil.py
H200 = ROOT / "tests" / "data" / "h200"
SOURCES: dict[str, Callable[[], Readings]] = {
    "h200": lambda: read_snapshot(H200 / "snapshot.json")[0],
    "h200-load": lambda: readings_from_recording(read_recording(H200 / "load-matmul.jsonl")),
    "gb10-demo": lambda: readings_from_recording(read_recording(ROOT / "src" / "sparktui" / "data" /
                                                                "gb10-demo.jsonl")),
}
JUDGE_ERROR = "judge error (a sparktui bug"
HANG_S = 2.0  # a judge call takes milliseconds; past this it hangs (and that field is not tried again)

DEEP = "\x00nested 1000 deep\x00"  # stands for [[[...]]] 1000 levels: json.dumps itself cannot nest that deep
DEEP_JSON = "[" * 1000 + "]" * 1000


@functools.cache
def source(label: str) -> Readings:
    return SOURCES[label]()


# --- paths into a reading's data: keys, list indexes, and "*" for every element of a list ---------

def elements(lst: list) -> list:
    """Which elements of a list to spoil: each of a short list (rows of different kinds), else the
    first, the last, and all at once (one bad sample, and a whole series N/A)."""
    if len(lst) <= 4:
        return list(range(len(lst))) + (["*"] if len(lst) > 1 else [])
    return [0, len(lst) - 1, "*"]


DELETE = object()


def with_value(data: Any, path: tuple, value: Any) -> Any:
    """``data`` with the node at ``path`` set to ``value`` (or deleted), copying only along the path
    (judges are pure, so the rest is shared). "*" goes through every element of a list that has
    the next key."""
    if not path:
        return value
    k, rest = path[0], path[1:]
    if isinstance(data, list):
        if not rest and value is DELETE:
            return [] if k == "*" else data[:k] + data[k + 1:]
        items = list(data)
        for i in (range(len(items)) if k == "*" else [k] if k < len(items) else []):  # "*" leads to shorter lists too
            if not rest or has(items[i], rest[0]):
                items[i] = with_value(items[i], rest, value)
        return items
    if not isinstance(data, dict) or k not in data:
        return data
    out = dict(data)
    if not rest and value is DELETE:
        del out[k]
    else:
        out[k] = with_value(out[k], rest, value)
    return out


def has(node: Any, k: Any) -> bool:
    if isinstance(node, dict):
        return k in node
    return isinstance(node, list) and (k == "*" or (isinstance(k, int) and k < len(node)))


def without(data: Any, path: tuple) -> Any:
    return with_value(data, path, DELETE)


# --- a judge call with a hang limit -----------------------------------------------------------------

class _Hang(BaseException):  # not an Exception: the runner turns those into "judge error" verdicts
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Hang()


def timed(run: Callable[[Readings], Verdict], readings: Readings) -> Verdict | None:
    """The verdict, or None when the judge took longer than HANG_S (a judge that steps through a
    window reaching to a sample at t=1e15 never ends)."""
    if threading.current_thread() is not threading.main_thread():
        return run(readings)  # no alarm outside the main thread: a hang then shows as a slow test
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, HANG_S)
    try:
        return run(readings)
    except _Hang:
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# --- whole stored documents: any field at any depth --------------------------------------------------

def snapshot_doc(readings: Readings) -> dict[str, Any]:
    """A snapshot document holding ``readings``, as ``sparktui snapshot`` writes it."""
    return {"schema": 1, "kind": "sparktui-snapshot", "sparktui_version": "test", "taken_at": 1.7e9,
            "host": {"hostname": "spark"}, "readings": readings.to_dict()}


@functools.cache
def source_doc(label: str) -> dict[str, Any]:
    return snapshot_doc(source(label))


def paths(obj: Any, prefix: tuple = (), depth: int = 9) -> Iterator[tuple]:
    """Every key path into ``obj`` (lists: the first, the last and every element at once)."""
    if depth == 0:
        return
    items = (list(obj.items()) if isinstance(obj, dict)
             else [(i, obj[0 if i == "*" else i]) for i in elements(obj)] if isinstance(obj, list) and obj else [])
    for k, v in items:
        yield prefix + (k,)
        yield from paths(v, prefix + (k,), depth - 1)


@functools.cache
def source_paths(label: str) -> tuple[tuple, ...]:
    doc = source_doc(label)
    return tuple(("readings",) + p for p in paths(doc["readings"]))


def write(doc: dict[str, Any], folder: str) -> Path:
    text = json.dumps(doc).replace(json.dumps(DEEP), DEEP_JSON)
    path = Path(folder) / "snapshot.json"
    path.write_text(text, encoding="utf-8")
    return path


def _judged(gid: str, readings: Readings) -> Verdict:
    return judge(REGISTRY[gid], readings, Config())


def verdict_problems(readings: Readings, base: dict[str, Status], gids: list[str]) -> list[str]:
    """What went wrong judging ``readings``: a crash, a hang, a status outside the enum, or an ok the
    unspoilt readings (``base``) did not have."""
    found = []
    for gid in gids:
        run = functools.partial(timed, functools.partial(_judged, gid), readings)
        v = run() or run()  # once more before calling it a hang: a busy shared machine stalls a call, a hang repeats
        if v is None:
            found.append(f"{gid} hangs (> {HANG_S:g} s)")
        elif JUDGE_ERROR in v.summary:
            found.append(f"{gid} crashes: {v.summary}")
        elif not isinstance(v.status, Status):
            found.append(f"{gid} status {v.status!r}")
        elif v.status is Status.OK and base[gid] is not Status.OK:
            found.append(f"{gid} {base[gid].value} -> ok: {v.summary}")
    return found


@functools.cache
def base_statuses(label: str) -> dict[str, Status]:
    with tempfile.TemporaryDirectory() as d:
        readings = read_snapshot(write(source_doc(label), d))[0]
    return {gid: judge(g, readings, Config()).status for gid, g in REGISTRY.items()}


def judges_of(path: tuple) -> list[str]:
    """The gotchas a spoilt path can change: those using the reading, or all for the envelope."""
    if len(path) < 2:
        return list(REGISTRY)
    return [gid for gid, g in REGISTRY.items() if path[1] in g.probes]
