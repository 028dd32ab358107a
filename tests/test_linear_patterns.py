"""Every compiled ``re`` pattern of the package is matched in linear time (issue 22, "Linear matching by
construction"): outside text (other users' argv, file names, kernel-log lines, configs) reaches them.

For each module-level ``re.Pattern`` (in a tuple, list or dict at module level too), adversarial
inputs are grown from the pattern itself: runs of every character it names or its classes hold
(``-`` x n, ``.`` x n, spaces), pairs such as ``a.`` x n or `` -`` x n, and each literal word of the
pattern repeated, followed by a space or a letter, or cut short (``AER`` x n, ``ghp_`` x n,
``token=`` x n). Each input is matched with ``finditer`` (what ``sub``/``findall``/``search`` do) at
n and 4n characters; time may grow 4x; over ``MAX_RATIO`` (a quadratic pattern grows 16x) and
above ``FLOOR_S`` (so timer noise on a loaded machine cannot fail it) the pattern fails, naming
the input. One match taking longer than ``GUARD_S`` fails at once (an exponential pattern never
finishes: Python's ``re`` checks signals, so a timer stops it).

``grows_linearly`` is shared with tests/test_secrets_shapes.py (a linearity case per secret shape).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import signal
import sys
import time
from typing import Any, Callable, Iterator

import pytest

import sparktui

if sys.version_info >= (3, 11):
    from re import _constants as sre_constants  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]
else:  # pragma: no cover - Python 3.10
    import sre_constants
    import sre_parse

SKIP_MODULES = {"sparktui.__main__"}  # runs the CLI when imported
N = 1024  # characters of the small input; the large one is 4N
MAX_RATIO = 8.0  # linear grows 4x from N to 4N, quadratic 16x
FLOOR_S = 0.0015  # a 4N input matched faster than this passes whatever the ratio
GUARD_S = 1.0  # one match on 4N characters taking this long fails at once
BASE_CHARS = "aA0_-. \t/:=,\nx"
MAX_WORDS = 16  # literal words of one pattern tried (the longest first)

# A pattern known to be super-linear while someone makes it linear: "module.NAME" -> the reason
# (its owner); it runs as a strict xfail, so the fix turns it into a failure until the entry goes.
KNOWN_SUPER_LINEAR: dict[str, str] = {}  # tpscan's four were here until the G10 helper made them linear


class _TooSlow(Exception):
    pass


def _alarm(*_: Any) -> None:
    raise _TooSlow()


def _time_once(match_all: Callable[[Any], Any], text: Any, guard_s: float = GUARD_S) -> float:
    """Seconds one ``match_all(text)`` takes; raises _TooSlow past ``guard_s`` (main thread only)."""
    use_timer = hasattr(signal, "setitimer") and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None, _alarm)
    if use_timer:
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, guard_s)
    try:
        t0 = time.perf_counter()
        match_all(text)
        return time.perf_counter() - t0
    finally:
        if use_timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)


def _finditer(pattern: Any) -> Callable[[Any], Any]:
    def run(text: Any) -> None:
        for _ in pattern.finditer(text):
            pass
    return run


def _anchored(pattern: Any) -> Callable[[Any], Any]:
    def run(text: Any) -> None:
        pattern.match(text)
        pattern.fullmatch(text)
    return run


def grows_linearly(match_all: Callable[[Any], Any], unit: Any, n: int = N, max_ratio: float = MAX_RATIO,
                   floor_s: float = FLOOR_S, guard_s: float = GUARD_S) -> str | None:
    """None when ``match_all`` on ``unit`` repeated to 4n characters is fast or grows at most
    ``max_ratio`` times from n; else why (input, sizes, seconds). A ratio over the limit is measured
    again and confirmed from 4n to 16n before it fails (a loaded machine stalls single runs)."""
    def sized(chars: int) -> Any:
        return unit * max(1, chars // len(unit))

    def best(text: Any, runs: int = 3) -> float:
        return min(_time_once(match_all, text, guard_s) for _ in range(runs))

    small, big = sized(n), sized(4 * n)
    try:
        if _time_once(match_all, big, guard_s) < floor_s or (t_big := best(big, 2)) < floor_s:
            return None
        t_small = best(small)
        ratio = t_big / max(t_small, 1e-6)
        if ratio > max_ratio:  # once more, interleaved: a stall during the small runs inflates it
            t_small, t_big = min(t_small, best(small)), min(t_big, best(big))
            ratio = t_big / max(t_small, 1e-6)
        if ratio <= max_ratio:
            return None
        why = (f"{unit[:20]!r} repeated: {len(small)} chars {t_small * 1e3:.1f} ms, {len(big)} chars "
               f"{t_big * 1e3:.1f} ms (x{ratio:.1f}, linear is x4)")
        if t_big > 0.25:
            return why
        huge = sized(16 * n)
        t_huge = best(huge, 2)
        ratio2 = t_huge / t_big
        return f"{why}, {len(huge)} chars {t_huge * 1e3:.1f} ms (x{ratio2:.1f})" if ratio2 > max_ratio else None
    except _TooSlow:
        return f"{unit[:20]!r} repeated: over {guard_s} s for one match on at most {16 * n} characters"


# -- what the patterns are -------------------------------------------------------------------------

def compiled_patterns() -> Iterator[tuple[str, re.Pattern, str]]:
    """(module.name, pattern, how it is used): "match" when its module only ever calls ``.match`` or
    ``.fullmatch`` on it (anchored at the start: one attempt), else "search" (finditer/sub/search)."""
    seen: set[int] = set()
    for info in pkgutil.walk_packages(sparktui.__path__, "sparktui."):
        if info.name in SKIP_MODULES:
            continue
        module = importlib.import_module(info.name)
        try:
            source = inspect.getsource(module)
        except (OSError, TypeError):
            source = ""
        for name, value in list(vars(module).items()):
            values = [(name, value)]
            if isinstance(value, (tuple, list)):
                values = [(f"{name}[{i}]", v) for i, v in enumerate(value)]
            elif isinstance(value, dict):
                values = [(f"{name}[{k!r}]", v) for k, v in value.items()]
            for label, v in values:
                if isinstance(v, re.Pattern) and id(v) not in seen:
                    seen.add(id(v))
                    yield f"{info.name}.{label}", v, _usage(source, label)


def _usage(source: str, name: str) -> str:
    methods = set(re.findall(r"(?<![\w.])" + re.escape(name) + r"\.(\w+)\(", source))
    return "match" if methods and methods <= {"match", "fullmatch"} else "search"


def _walk(items: Any, chars: set[str], words: list[str], word: list[str]) -> None:
    """Collect the characters a parsed pattern names and its literal words (runs of LITERALs)."""
    def flush() -> None:
        if len(word) >= 2:
            words.append("".join(word))
        word.clear()

    for op, av in items:
        if op is sre_constants.LITERAL:
            chars.add(chr(av))
            word.append(chr(av))
            continue
        flush()
        if op is sre_constants.NOT_LITERAL:
            chars.add(chr(av))
        elif op is sre_constants.IN:
            for sop, sav in av:
                if sop is sre_constants.LITERAL:
                    chars.add(chr(sav))
                elif sop is sre_constants.RANGE:
                    chars.update((chr(sav[0]), chr(sav[1])))
                elif sop is sre_constants.CATEGORY:
                    chars.update(_CATEGORY_CHARS.get(str(sav), ""))
        elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT) or op is getattr(sre_constants, "POSSESSIVE_REPEAT", None):
            _walk(av[2], chars, words, [])
        elif op is sre_constants.SUBPATTERN:
            _walk(av[-1], chars, words, [])
        elif op is sre_constants.BRANCH:
            for sub in av[1]:
                _walk(sub, chars, words, [])
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            _walk(av[1], chars, words, [])
        elif op is getattr(sre_constants, "ATOMIC_GROUP", None):
            _walk(av, chars, words, [])
        elif op is sre_constants.GROUPREF_EXISTS:
            _walk(av[1], chars, words, [])
            if av[2] is not None:
                _walk(av[2], chars, words, [])
    flush()


_CATEGORY_CHARS = {"CATEGORY_DIGIT": "5", "CATEGORY_NOT_DIGIT": "a", "CATEGORY_WORD": "a_9", "CATEGORY_NOT_WORD": " -.",
                   "CATEGORY_SPACE": " \t", "CATEGORY_NOT_SPACE": "a-"}


def adversarial_units(pattern: re.Pattern) -> list[str]:
    """The repeated units tried on ``pattern`` (see the module docstring)."""
    text = pattern.pattern if isinstance(pattern.pattern, str) else pattern.pattern.decode("latin-1")
    chars: set[str] = set(BASE_CHARS)
    words: list[str] = []
    try:
        _walk(sre_parse.parse(text, pattern.flags & ~re.ASCII & ~re.LOCALE if isinstance(pattern.pattern, str) else pattern.flags), chars, words, [])
    except Exception:  # an odd parse: the base characters still go
        pass
    chars = {c for c in chars if c.isprintable() or c in "\t\n"}
    if pattern.flags & re.IGNORECASE:
        words += [w.swapcase() for w in words]
    named = {c for c in chars if not c.isalnum()} - set(BASE_CHARS)  # the pattern's own punctuation
    units: list[str] = sorted(chars)
    units += ["a" + c for c in sorted(named | set(".-:/_"))] + [" " + c for c in sorted(named | set("-."))]
    units += ["0" + c for c in ".:-,"]
    for w in sorted(set(words), key=lambda w: (-len(w), w))[:MAX_WORDS]:
        units += [w, w + " ", w + "a", w[:-1]]
    return list(dict.fromkeys(u for u in units if u))


def _as_input(pattern: re.Pattern, unit: str) -> Any:
    return unit if isinstance(pattern.pattern, str) else unit.encode("utf-8", "surrogateescape")


PATTERNS = sorted(compiled_patterns(), key=lambda p: p[0])


def _params() -> list[Any]:
    out = []
    for name, pat, usage in PATTERNS:
        marks = []
        if name in KNOWN_SUPER_LINEAR:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_SUPER_LINEAR[name]))
        out.append(pytest.param(pat, usage, id=name, marks=marks))
    return out


def test_the_walk_reaches_the_package_and_the_scrubber():
    names = {n for n, _, _ in PATTERNS}
    assert len(names) > 100
    assert "sparktui.core.secrets._KEY_VALUE" in names and "sparktui.core.secrets._FLAG_VALUE" in names


def test_the_harness_catches_a_quadratic_and_an_exponential_pattern():
    quadratic = re.compile(r"[A-Za-z0-9_.-]*TOKEN")  # the scrubber's key before issue 22
    assert any(grows_linearly(_finditer(quadratic), u, n=512) for u in adversarial_units(quadratic))
    exponential = re.compile(r"(?:a|a)*b")
    assert grows_linearly(_finditer(exponential), "a", n=16, guard_s=0.3) is not None
    assert grows_linearly(_finditer(re.compile(r"[a-z]+\d")), "a.") is None  # a linear one passes


@pytest.mark.parametrize("pattern, usage", _params())
def test_pattern_is_linear_on_adversarial_input(pattern, usage):
    run = _anchored(pattern) if usage == "match" else _finditer(pattern)
    slow = []
    for unit in adversarial_units(pattern):
        why = grows_linearly(run, _as_input(pattern, unit))
        if why:
            slow.append(why)
            break  # one is enough to fail; keeps a bad pattern from eating the time budget
    assert not slow, f"super-linear: {pattern.pattern!r}: {slow}"
