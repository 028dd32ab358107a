"""Shape checks of data that crosses a process boundary (a probe child's JSON, a kept file): both
the probe that receives it and the judge that reads it use them, so neither imports the other."""

from __future__ import annotations

import functools
import sys
import types
import typing
from typing import Any, Callable

from sparktui.core.units import is_number


def _is_number(v: object) -> bool:
    """Of a number's type (finite or not): what tells "not a number" from "not a finite number"."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _show(v: object) -> str:
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


# Every figure judge_result formats: (field, what its absence means, or None when it may be absent,
# lower bound, bound is exclusive).
_NUMBERS = (("copy_gbs", "no copy figure", 0.0, True), ("read_gbs", None, 0.0, True),
            ("buffer_bytes", None, 0.0, False), ("iterations", None, 0.0, False), ("repeats", None, 0.0, False),
            ("spread_pct", None, 0.0, False), ("measured_at", None, 0.0, True))


def bandwidth_result_problem(res: object) -> str | None:
    """Why a measured result cannot be judged, naming the field; None when it can.

    A kept file can be edited or torn, and a target interpreter can print anything on its event
    channel: each figure is checked before it is formatted, so bad data reads as unknown, never as
    a crash or a made-up figure.
    """
    if not isinstance(res, dict):
        return f"not a JSON object ({type(res).__name__})"
    for name, missing, low, exclusive in _NUMBERS:
        v = res.get(name)
        if v is None:
            if missing is not None:
                return f"{name} is missing ({missing})"
            continue
        if not _is_number(v):
            return f"{name} is {_show(v)}, not a number"
        if not is_number(v):  # NaN, an infinity, an int past a float (math.isfinite raised on it)
            return f"{name} is {_show(v)}, not a finite number"
        if v < low or (exclusive and v == low):
            return f"{name} is {_show(v)}, must be {'over' if exclusive else 'at least'} {low:g}"
    dev = res.get("device")
    if dev is not None and not isinstance(dev, str):
        return f"device is {_show(dev)}, not a device name"
    return None




# --- what hardware can report at all: one table for the judges (G3, G4, G6) and the read boundary ---
# A value outside these is a measurement error (a corrupt file, an edited snapshot, a driver bug),
# never evidence: judges name it and say unknown; a snapshot or peer reading holding one is refused.
MEMTOTAL_MAX_BYTES = 2 * 1024 ** 4  # GB10: ~121.7 GiB usable; no DGX Spark-class machine has 2 TiB
TEMP_RANGE_C = (-40.0, 130.0)  # NVML's GPU temperature; a GPU shuts down well below 130 °C
POWER_MAX_W = 1000.0  # GB10's TDP is ~140 W; the largest data-centre parts are rated ~1000 W
SM_MAX_MHZ = 4000.0  # GB10 runs ~2400 MHz; no GPU clocks its SMs near 4 GHz
UTIL_MAX_PCT = 100.0

# (shape name, field) -> (lowest, highest, lowest is exclusive): the fields the table bounds.
PHYSICAL_BOUNDS: dict[tuple[str, str], tuple[float, float, bool]] = {
    **{(shape, "MemTotal"): (0.0, MEMTOTAL_MAX_BYTES, True) for shape in ("MemInfo", "MemInfoReading")},
    **{(shape, k): (0.0, MEMTOTAL_MAX_BYTES, False)
       for shape in ("MemInfo", "MemInfoReading")
       for k in ("MemFree", "MemAvailable", "Buffers", "Cached", "SReclaimable", "KReclaimable", "Shmem",
                 "AnonPages", "Unevictable", "Mlocked", "Dirty", "Mapped", "CmaTotal", "CmaFree", "SwapTotal",
                 "SwapFree", "SwapCached", "HugePages_Total", "HugePages_Free", "Hugepagesize")},
    ("GpuRow", "temp_c"): (*TEMP_RANGE_C, False),
    ("GpuRow", "power_w"): (0.0, POWER_MAX_W, False),
    ("GpuRow", "power_limit_w"): (0.0, POWER_MAX_W, False),
    ("GpuRow", "sm_mhz"): (0.0, SM_MAX_MHZ, False),
    ("GpuRow", "util_gpu"): (0.0, UTIL_MAX_PCT, False),
    ("GpuRow", "util_mem"): (0.0, UTIL_MAX_PCT, False),
    ("ProcessRow", "gpu_mem_bytes"): (0.0, MEMTOTAL_MAX_BYTES, False),
    ("ProcessRow", "rss_bytes"): (0.0, MEMTOTAL_MAX_BYTES, False),
}


def out_of_bounds(shape: str, name: str, v: float) -> str | None:
    """Why a number read for ``shape``'s field ``name`` cannot come from the machine, or None."""
    bound = PHYSICAL_BOUNDS.get((shape, name))
    if bound is None:
        return None
    low, high, exclusive = bound
    if low <= v <= high and not (exclusive and v == low):
        return None
    return f"{_show(v)} is outside what the machine can report ({'over' if exclusive else 'from'} {low:g} to {high:g})"


# --- the declared shapes (core/shapes.py), checked at run time -----------------------------------

MAX_SHAPE_PROBLEMS = 20  # past this a value is garbage: the first ones say enough


@functools.cache
def _hints(tp: type) -> dict[str, Any]:
    return typing.get_type_hints(tp)


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and typing.is_typeddict(tp)


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def shape_problems(value: Any, tp: Any, where: str = "data", strict: bool = True) -> list[str]:
    """Where ``value`` leaves the declared type ``tp`` (TypedDicts, lists, dicts, unions, scalars),
    as "field X: expected int, got str", at most MAX_SHAPE_PROBLEMS of them.

    ``strict`` (a probe's own output, tests/test_types.py) also names undeclared keys and missing
    required keys. Data read from outside (a snapshot, a peer) is checked without it: a newer
    sparktui may add a key, and a judge handles an absent one; but a value of the wrong type, a
    number that is not finite, or one no hardware produces (PHYSICAL_BOUNDS) is refused, since a
    judge would crash on it or build a verdict on it."""
    out: list[str] = []
    _check(value, tp, where, strict, out)
    return out[:MAX_SHAPE_PROBLEMS]


def fits(value: Any, tp: Any) -> bool:
    """Whether ``value`` holds ``tp`` as ``shape_problems(..., strict=False)`` finds nothing, only
    quicker: every judge's readings pass it before each judgement (a 12 h recording is 43,200
    samples), so the words are worked out only for data that does not fit."""
    return _fitter(tp)(value)


Fitter = Callable[[Any], bool]


@functools.cache
def _fitter(tp: Any) -> Fitter:
    """A predicate for ``tp``, built once per declared type."""
    if tp is Any:
        return lambda v: True
    if _is_typeddict(tp):
        return _object_fitter(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    scalars = args if origin in (typing.Union, types.UnionType) else (tp,)
    if all(a in _SCALARS for a in scalars):  # int | None and the like: one type lookup
        exact = frozenset(a for a in scalars if a is not float)
        numbers = float in scalars
        return lambda v: type(v) in exact or (numbers and _plain_number(v))
    if origin in (typing.Union, types.UnionType):
        arms = tuple(_fitter(a) for a in args)
        return lambda v: any(arm(v) for arm in arms)
    if origin is list:
        item = _fitter(args[0])
        return lambda v: isinstance(v, list) and all(item(x) for x in v)
    if origin is dict:
        key, val = _fitter(args[0]), _fitter(args[1])
        return lambda v: isinstance(v, dict) and all(key(k) and val(x) for k, x in v.items())
    if origin is typing.Literal:
        return lambda v: v in args
    return lambda v: _scalar_problem(v, tp) is None


_SCALARS = frozenset({int, float, str, bool, type(None)})


def _plain_number(v: Any) -> bool:
    """A JSON number a judge can do float arithmetic on: finite, and no integer past a float."""
    return type(v) in (int, float) and is_number(v)


def _object_fitter(tp: type) -> Fitter:
    fields = {k: _fitter(h) for k, h in _hints(tp).items()}
    bounds = {k: b for (shape, k), b in PHYSICAL_BOUNDS.items() if shape == tp.__name__}

    def fit(v: Any) -> bool:
        if type(v) is not dict:
            return False
        for k, x in v.items():
            check = fields.get(k)
            if check is not None and not check(x):
                return False
            b = bounds.get(k)
            if b is not None and x is not None and not (b[0] < x <= b[1] if b[2] else b[0] <= x <= b[1]):
                return False  # x is a number here: the field's check passed and every bounded field is one
        return True

    return fit


def _check(value: Any, tp: Any, where: str, strict: bool, out: list[str]) -> None:
    if len(out) >= MAX_SHAPE_PROBLEMS or tp is Any:
        return
    if _is_typeddict(tp):
        _check_object(value, tp, where, strict, out)
        return
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        arms = [a for a in args if a is not type(None)] if value is not None else list(args)
        tried = []
        for arm in arms:
            found: list[str] = []
            _check(value, arm, where, strict, found)
            if not found:
                return
            tried.append(found)
        out.extend(tried[0] if len(tried) == 1 else [f"{where}: expected {_type_name(tp)}, got {_got(value)}"])
    elif origin is list:
        if not isinstance(value, list):
            out.append(f"{where}: expected a list, got {_got(value)}")
            return
        for i, v in enumerate(value):
            _check(v, args[0], f"{where}[{i}]", strict, out)
    elif origin is dict:
        if not isinstance(value, dict):
            out.append(f"{where}: expected an object, got {_got(value)}")
            return
        for k, v in value.items():
            _check(k, args[0], f"{where} key", strict, out)
            _check(v, args[1], f"{where}[{k!r}]", strict, out)
    elif origin is typing.Literal:
        if value not in args:
            out.append(f"{where}: expected one of {', '.join(map(repr, args))}, got {_got(value)}")
    else:
        problem = _scalar_problem(value, tp)
        if problem:
            out.append(f"{where}: {problem}")


def _check_object(value: Any, tp: type, where: str, strict: bool, out: list[str]) -> None:
    if not isinstance(value, dict):
        out.append(f"{where}: expected a {tp.__name__} object, got {_got(value)}")
        return
    hints = _hints(tp)
    if strict:
        out.extend(f"{where}.{k}: not declared in {tp.__name__}" for k in value if k not in hints)
        required: frozenset[str] = getattr(tp, "__required_keys__", frozenset())
        out.extend(f"{where}: {tp.__name__} requires {k!r}" for k in required if k not in value)
    for k, v in value.items():
        if k not in hints:
            continue
        before = len(out)
        _check(v, hints[k], f"{where}.{k}", strict, out)
        if len(out) == before and _is_number(v):
            bad = out_of_bounds(tp.__name__, k, v)
            if bad:
                out.append(f"{where}.{k}: {bad}")


def _scalar_problem(value: Any, tp: Any) -> str | None:
    if tp is type(None):
        return None if value is None else f"expected null, got {_got(value)}"
    if tp is float:  # JSON writes 2.0 as 2
        if _is_number(value) and not _plain_number(value):
            return f"expected a finite number, got {_got(value)}"
        ok = _is_number(value)
    elif tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, tp)
    return None if ok else f"expected {_type_name(tp)}, got {_got(value)}"


def _got(value: Any) -> str:
    """What a wrong value is, in a few words: "str '12.1'", "float nan", "list"."""
    if isinstance(value, (dict, list)):
        return f"{type(value).__name__} of {len(value)}"
    return f"{type(value).__name__} {_show(value)}"


# --------------------------------------------------------------------------- user-given patterns

KERNEL_RELEASE_MAX = 64  # the kernel's release string (uname -r) holds at most 64 characters (__NEW_UTS_LEN)
PATTERN_MAX_CHARS = 200
PATTERN_MAX_PATHS = 1_000_000  # ways a pattern can be tried on a KERNEL_RELEASE_MAX-character text, at most


def pattern_problem(pattern: object, subject_max: int = KERNEL_RELEASE_MAX) -> str | None:
    """Why a user-given regular expression (a known-bad table's ``kernel_release``) cannot be matched in
    bounded time by Python's backtracking ``re``, or None. Outside text matched in linear time: a
    quantifier may stand on one character or class only (``[0-9]+``, ``.*``, ``(-64k)?``), never on a
    group that repeats (``(.*.*)*``, ``(a+)+``, ``(ab){2,}``: exponential), and the ways the pattern can be
    tried on a ``subject_max``-character text (each repeat: up to subject_max + 1 lengths, each
    alternative: one more) are bounded by PATTERN_MAX_PATHS (``.*.*.*`` is fine, five of them are not).
    Backreferences and lookarounds are refused. The subject itself is never longer than subject_max."""
    if sys.version_info >= (3, 11):
        from re import _constants as c  # type: ignore[attr-defined]
        from re import _parser as parser  # type: ignore[attr-defined]
    else:  # pragma: no cover - Python 3.10
        import sre_constants as c
        import sre_parse as parser
    import re

    if not isinstance(pattern, str) or not pattern:
        return f"must be a non-empty regular expression string, not {_show(pattern)}"
    if len(pattern) > PATTERN_MAX_CHARS:
        return f"{len(pattern)} characters; a pattern holds at most {PATTERN_MAX_CHARS}"
    try:
        tree = parser.parse(pattern)
    except (re.error, RecursionError, OverflowError) as e:
        return f"bad regular expression: {e}"
    single = {c.LITERAL, c.NOT_LITERAL, c.ANY, c.IN}
    refused = {c.GROUPREF: "a backreference", c.GROUPREF_EXISTS: "a conditional group",
               c.ASSERT: "a lookahead/lookbehind", c.ASSERT_NOT: "a negative lookahead/lookbehind"}
    for name, what in (("ATOMIC_GROUP", "an atomic group"), ("POSSESSIVE_REPEAT", "a possessive quantifier")):
        if hasattr(c, name):
            refused[getattr(c, name)] = what
    repeats = {c.MAX_REPEAT, c.MIN_REPEAT}

    class Refused(Exception):
        pass

    def cost(items: Any) -> int:
        total = 1
        for op, av in items:
            if op in refused:
                raise Refused(f"{refused[op]} is not allowed in a pattern (it cannot be matched in bounded time)")
            if op in repeats:
                lo, hi, body = av
                if hi > 1:
                    if len(body) != 1 or body[0][0] not in single:
                        raise Refused("a quantifier on a group that repeats ((...)*, (...)+, (...){n,}) can take "
                                      "exponential time; quantify one character or class, e.g. 10[0-9]+ or .*")
                    n = min(hi, subject_max) - min(lo, subject_max) + 1
                else:
                    n = 1 + cost(body)
            elif op == c.SUBPATTERN:
                n = cost(av[-1])
            elif op == c.BRANCH:
                n = sum(cost(b) for b in av[1])
            else:
                n = 1
            total = min(total * max(n, 1), PATTERN_MAX_PATHS + 1)
        return total

    try:
        paths = cost(tree)
    except Refused as e:
        return str(e)
    if paths > PATTERN_MAX_PATHS:
        return (f"can be tried more than {PATTERN_MAX_PATHS:,} ways on a {subject_max}-character release "
                "(too many .* / + / alternatives one after another); make it more literal")
    return None
