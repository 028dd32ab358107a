"""PEP 440 versions, specifiers and PEP 508 markers: just enough to compare a training stack
with a pin set (G9), without making ``packaging`` a runtime dependency.

Semantics follow ``packaging`` with pre-releases allowed (as ``pip check`` does): an installed
``2.10.0a0`` is judged by where it sits, not excluded for being a pre-release. Local labels
(``+cu130``, ``+b558c986e8.nv25.11``) are ignored by ``==2.9.0`` but must match exactly when the
pin carries one (``==2.9.0+cu130``): for torch the label names the CUDA build, so it matters.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from functools import total_ordering
from typing import Callable, Mapping


class InvalidVersion(ValueError):
    pass


class InvalidSpecifier(ValueError):
    pass


class InvalidMarker(ValueError):
    pass


class UndefinedMarkerVariable(LookupError):
    """A marker names a variable the environment did not report (e.g. platform_release)."""


_VERSION_RE = re.compile(
    r"""^\s*v?
    (?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?P<pre>[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
    (?P<post>(?:-(?P<post_n1>[0-9]+))|(?:[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?))?
    (?P<dev>[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    \s*$""",
    re.VERBOSE | re.IGNORECASE,
)
_PRE_ORDER = {"a": 0, "b": 1, "rc": 2}
_PRE_ALIASES = {"alpha": "a", "beta": "b", "c": "rc", "pre": "rc", "preview": "rc"}


def canonical_name(name: str) -> str:
    """PEP 503 normalised distribution name: ``Flash_Attn`` -> ``flash-attn``."""
    return re.sub(r"[-_.]+", "-", name).lower()


@total_ordering
class Version:
    """A parsed PEP 440 version. Raises InvalidVersion for anything else."""

    __slots__ = ("text", "epoch", "release", "pre", "post", "dev", "local", "_key")

    def __init__(self, text: str) -> None:
        m = _VERSION_RE.match(text or "")
        if not m:
            raise InvalidVersion(f"not a PEP 440 version: {text!r}")
        self.text = text.strip()
        self.epoch = int(m.group("epoch") or 0)
        self.release = tuple(int(x) for x in m.group("release").split("."))
        if m.group("pre"):
            letter = m.group("pre_l").lower()
            self.pre: tuple[str, int] | None = (_PRE_ALIASES.get(letter, letter), int(m.group("pre_n") or 0))
        else:
            self.pre = None
        if m.group("post"):
            self.post: int | None = int(m.group("post_n1") or m.group("post_n2") or 0)
        else:
            self.post = None
        self.dev: int | None = int(m.group("dev_n") or 0) if m.group("dev") else None
        local = m.group("local")
        self.local: tuple[int | str, ...] | None = (
            tuple(int(p) if p.isdigit() else p.lower() for p in re.split(r"[-_.]", local)) if local else None
        )
        self._key = self._sort_key(with_local=True)

    def _sort_key(self, with_local: bool) -> tuple:
        release = list(self.release)
        while len(release) > 1 and release[-1] == 0:
            release.pop()
        if self.pre is None and self.post is None and self.dev is not None:
            pre = (-1, 0)  # 1.0.dev0 sorts before 1.0a0
        elif self.pre is None:
            pre = (3, 0)
        else:
            pre = (_PRE_ORDER[self.pre[0]], self.pre[1])
        post = -1 if self.post is None else self.post
        dev = (1, 0) if self.dev is None else (0, self.dev)
        if not with_local or self.local is None:
            local: tuple = (0,)
        else:  # numeric segments sort above alphanumeric ones
            local = (1,) + tuple((1, p, "") if isinstance(p, int) else (0, 0, p) for p in self.local)
        return (self.epoch, tuple(release), pre, post, dev, local)

    @property
    def public(self) -> "Version":
        return self if self.local is None else Version(self.text.split("+", 1)[0])

    @property
    def base(self) -> "Version":
        """Epoch and release only: ``2.10.0a0+x`` -> ``2.10.0``."""
        prefix = f"{self.epoch}!" if self.epoch else ""
        return Version(prefix + ".".join(str(x) for x in self.release))

    @property
    def is_prerelease(self) -> bool:
        return self.pre is not None or self.dev is not None

    @property
    def is_postrelease(self) -> bool:
        return self.post is not None

    @property
    def local_text(self) -> str | None:
        return None if self.local is None else ".".join(str(p) for p in self.local)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Version) and self._key == other._key

    def __lt__(self, other: "Version") -> bool:
        return self._key < other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"Version({self.text!r})"

    def __str__(self) -> str:
        return self.text


def parse_version(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


_SPEC_RE = re.compile(r"^\s*(~=|===|==|!=|<=|>=|<|>)\s*([^\s,;]+)\s*$")


@dataclass(frozen=True)
class Specifier:
    """One clause such as ``>=2.9`` or ``==2.10.*``. Raises InvalidSpecifier when malformed."""

    op: str
    version: str

    @classmethod
    def parse(cls, text: str) -> "Specifier":
        m = _SPEC_RE.match(text)
        if not m and re.match(r"^\s*=[^=]", text):
            raise InvalidSpecifier(f"not a version specifier: {text.strip()!r} (use == for an exact version)")
        if not m:
            raise InvalidSpecifier(f"not a version specifier: {text.strip()!r} (expected e.g. ==1.2, >=1.0)")
        spec = cls(m.group(1), m.group(2))
        spec._validate()
        return spec

    def _validate(self) -> None:
        if self.op == "===":
            return
        text = self.version
        if text.endswith(".*"):
            if self.op not in ("==", "!="):
                raise InvalidSpecifier(f"'{self}': a trailing .* only works with == and !=")
            v = parse_version(text[:-2])
            if v is None or v.pre or v.post is not None or v.dev is not None or v.local:
                raise InvalidSpecifier(f"'{self}': a .* prefix must be plain release numbers, like ==2.9.*")
            return
        v = parse_version(text)
        if v is None:
            raise InvalidSpecifier(f"'{self}': {text!r} is not a PEP 440 version")
        if v.local is not None and self.op not in ("==", "!="):
            raise InvalidSpecifier(f"'{self}': a local label (+...) only works with == and !=")
        if self.op == "~=" and len(v.release) < 2:
            raise InvalidSpecifier(f"'{self}': ~= needs at least two release numbers, like ~=2.9")

    def __str__(self) -> str:
        return f"{self.op}{self.version}"

    def contains(self, candidate: Version | str) -> bool:
        """Whether ``candidate`` satisfies this clause (pre-releases allowed)."""
        if isinstance(candidate, str):
            if self.op == "===":
                return candidate.strip().lower() == self.version.lower()
            candidate = Version(candidate)
        if self.op == "===":
            return candidate.text.lower() == self.version.lower()
        if self.version.endswith(".*"):
            hit = _prefix_match(candidate, Version(self.version[:-2]))
            return hit if self.op == "==" else not hit
        spec = Version(self.version)
        if self.op in ("==", "!="):
            same = candidate == spec if spec.local is not None else candidate.public == spec
            return same if self.op == "==" else not same
        if self.op == "~=":
            prefix = Version(".".join(str(x) for x in spec.release[:-1]))
            if spec.epoch:
                prefix = Version(f"{spec.epoch}!{prefix.text}")
            return candidate.public >= spec and _prefix_match(candidate, prefix)
        if self.op == ">=":
            return candidate.public >= spec
        if self.op == "<=":
            return candidate.public <= spec
        if self.op == "<":
            # <V excludes V's own pre-releases: <2.10 must not admit 2.10.0a0 (unless V is one itself)
            if not candidate.public < spec:
                return False
            if spec.pre is not None or spec.dev is not None or not _same_release(candidate, spec):
                return True
            if spec.post is None:
                return False
            return not (candidate.pre is None and candidate.post == spec.post and candidate.dev is not None)
        if self.op == ">":
            # >V excludes V's post-releases and local builds: >2.9.0 must not admit 2.9.0.post1 or 2.9.0+cu130
            if not candidate.public > spec:
                return False
            if spec.dev is None and spec.post is None and _same_release(candidate, spec):
                return candidate.pre != spec.pre
            return True
        raise InvalidSpecifier(f"unknown operator {self.op!r}")  # pragma: no cover - parse() guards


def _same_release(a: Version, b: Version) -> bool:
    return a._key[:2] == b._key[:2]  # epoch and release, trailing zeros trimmed


def _prefix_match(candidate: Version, prefix: Version) -> bool:
    if candidate.epoch != prefix.epoch:
        return False
    n = len(prefix.release)
    release = candidate.release + (0,) * max(0, n - len(candidate.release))
    return release[:n] == prefix.release


def parse_specifiers(text: str) -> tuple[Specifier, ...]:
    """``>=2.9, <2.11`` -> clauses; an empty string means "any version"."""
    text = text.strip()
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    if not text.strip():
        return ()
    return tuple(Specifier.parse(part) for part in text.split(","))


def specifiers_contain(specs: tuple[Specifier, ...], candidate: Version | str) -> bool:
    return all(s.contains(candidate) for s in specs)


# ---- PEP 508 environment markers -------------------------------------------------------------

MARKER_VARIABLES = (
    "python_version", "python_full_version", "os_name", "sys_platform", "platform_release",
    "platform_system", "platform_version", "platform_machine", "platform_python_implementation",
    "implementation_name", "implementation_version", "extra",
)
_MARKER_TOKEN = re.compile(
    r"""\s*(?:
      (?P<lp>\()|(?P<rp>\))
    | (?P<str>'[^']*'|"[^"]*")
    | (?P<op>===|==|!=|<=|>=|~=|<|>|not\s+in\b|in\b)
    | (?P<bool>and\b|or\b)
    | (?P<var>[A-Za-z_][A-Za-z0-9_.]*)
    )""",
    re.VERBOSE,
)
_STR_OPS: dict[str, Callable[[str, str], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


def _tokenize(text: str) -> list[tuple[str, str]]:
    tokens, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _MARKER_TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise InvalidMarker(f"cannot read the marker at {text[pos:].strip()[:30]!r}")
        kind = m.lastgroup or ""
        value = m.group(kind)
        if kind == "var" and value not in MARKER_VARIABLES:
            raise InvalidMarker(f"unknown marker variable {value!r} (known: {', '.join(MARKER_VARIABLES)})")
        if kind == "op":
            value = re.sub(r"\s+", " ", value)
        tokens.append((kind, value))
        pos = m.end()
    return tokens


class Marker:
    """A parsed marker such as ``python_version >= "3.11" and platform_machine == "aarch64"``."""

    def __init__(self, text: str) -> None:
        self.text = text.strip()
        self._tokens = _tokenize(self.text)
        self._pos = 0
        self._tree = self._or()
        if self._pos != len(self._tokens):
            raise InvalidMarker(f"unexpected {self._tokens[self._pos][1]!r} in marker {self.text!r}")

    # Grammar: or := and ('or' and)* ; and := atom ('and' atom)* ; atom := '(' or ')' | value op value
    def _peek(self) -> tuple[str, str] | None:
        return self._tokens[self._pos] if self._pos < len(self._tokens) else None

    def _take(self, kind: str) -> str:
        tok = self._peek()
        if tok is None or tok[0] != kind:
            found = "end of marker" if tok is None else repr(tok[1])
            raise InvalidMarker(f"expected {kind} but found {found} in marker {self.text!r}")
        self._pos += 1
        return tok[1]

    def _or(self):
        node = self._and()
        while self._peek() == ("bool", "or"):
            self._pos += 1
            node = ("or", node, self._and())
        return node

    def _and(self):
        node = self._atom()
        while self._peek() == ("bool", "and"):
            self._pos += 1
            node = ("and", node, self._atom())
        return node

    def _atom(self):
        tok = self._peek()
        if tok is not None and tok[0] == "lp":
            self._pos += 1
            node = self._or()
            self._take("rp")
            return node
        left = self._value()
        op = self._take("op")
        right = self._value()
        return ("cmp", left, op, right)

    def _value(self):
        tok = self._peek()
        if tok is None or tok[0] not in ("str", "var"):
            found = "end of marker" if tok is None else repr(tok[1])
            raise InvalidMarker(f"expected a variable or a quoted string but found {found} in marker {self.text!r}")
        self._pos += 1
        return ("str", tok[1][1:-1]) if tok[0] == "str" else ("var", tok[1])

    def evaluate(self, env: Mapping[str, str]) -> bool:
        """Raises UndefinedMarkerVariable when the marker needs a variable ``env`` lacks."""
        return _eval(self._tree, env)

    def __str__(self) -> str:
        return self.text


def _eval(node, env: Mapping[str, str]) -> bool:
    kind = node[0]
    if kind == "or":
        return _eval(node[1], env) or _eval(node[2], env)
    if kind == "and":
        return _eval(node[1], env) and _eval(node[2], env)
    _, left, op, right = node
    lhs, rhs = _resolve(left, env), _resolve(right, env)
    if op == "in":
        return lhs in rhs
    if op == "not in":
        return lhs not in rhs
    try:
        return Specifier.parse(f"{op}{rhs}").contains(lhs)
    except (InvalidSpecifier, InvalidVersion):
        pass
    fn = _STR_OPS.get(op)
    if fn is None:
        raise InvalidMarker(f"{op!r} needs versions on both sides, got {lhs!r} and {rhs!r}")
    return fn(lhs, rhs)


def _resolve(value, env: Mapping[str, str]) -> str:
    kind, text = value
    if kind == "str":
        return text
    if text not in env or env[text] is None:
        raise UndefinedMarkerVariable(text)
    return str(env[text])
