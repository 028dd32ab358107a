"""The pinned training-stack versions G9 compares against: the user's file, or a shipped set.

Reads requirements / constraints files the way pip does for the parts that carry versions:
``name==1.2``, ``name>=1,<2``, ``name[extra]==1``, ``; markers``, ``-r``/``-c`` includes
(relative to the including file), comments, continuations. Lines that carry no comparable
version (pip options, URLs, editables) are recorded as skipped. A malformed line is an error
that names the file, the line number and the reason, never the line's text (a pins file can hold an
index URL with a token); nothing is guessed.

Shipped sets live in ``sparktui/data/pins/<image>.txt``. A ``# sparktui: key=value`` comment
adds metadata (``image``, ``ngc``, ``cuda``) that the judge uses, e.g. the CUDA the set's torch
was built against.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from sparktui.core import shapes
from sparktui.core.config import Config
from sparktui.core.readings import Reading, read_regular
from sparktui.core.shapes import Pin, PinsData, PinSkipped
from sparktui.core.versions import (
    InvalidMarker,
    InvalidSpecifier,
    Marker,
    canonical_name,
    parse_specifiers,
)
from sparktui.probes.declared import Probe

SHIPPED_DIR = Path(__file__).resolve().parent.parent / "data" / "pins"
MAX_INCLUDE_DEPTH = 10
MAX_ERRORS_SHOWN = 5

_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_REQ_RE = re.compile(rf"^(?P<name>{_NAME})\s*(?:\[(?P<extras>[^\]]*)\])?\s*(?P<spec>.*)$")
MAX_PINS_BYTES = 16 * 1024 * 1024
MAX_PINS = 5_000  # a whole NGC image pins ~1,000; each pin is one metadata lookup in the target (~0.25 ms)
_INCLUDE_OPTS = {"-r": "requirement", "--requirement": "requirement", "-c": "constraint", "--constraint": "constraint"}
_IGNORED_OPTS = (
    "-i", "--index-url", "--extra-index-url", "--no-index", "-f", "--find-links", "--pre", "--trusted-host",
    "--prefer-binary", "--only-binary", "--no-binary", "--require-hashes", "--use-feature", "--hash",
)
_META_RE = re.compile(r"^#\s*sparktui:\s*(?P<body>.+)$")


class PinsError(ValueError):
    """A pins file that cannot be used; the message names the file and line."""


@dataclass
class PinSet:
    files: list[str] = field(default_factory=list)
    pins: list[Pin] = field(default_factory=list)
    skipped: list[PinSkipped] = field(default_factory=list)
    meta: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def shipped_sets() -> list[str]:
    try:
        return sorted(p.stem for p in SHIPPED_DIR.glob("*.txt"))
    except OSError:
        return []


def _logical_lines(text: str):
    """(first physical line number, joined text) with ``\\`` continuations joined."""
    buf, start = "", None
    for n, raw in enumerate(text.splitlines(), 1):
        if start is None:
            start = n
        if raw.endswith("\\") and not raw.lstrip().startswith("#"):
            buf += raw[:-1] + " "
            continue
        yield start, buf + raw
        buf, start = "", None
    if start is not None:
        yield start, buf


# What a version or marker error says, without the text it quotes (core/versions.py messages
# quote the line; a pins line can hold a token): the first phrase the message contains.
_SPEC_REASONS = {
    "use == for an exact version": "use == for an exact version",
    "is not a PEP 440 version": "not a PEP 440 version",
    "only works with == and !=": "a .* or a +local label only works with == and !=",
    "prefix must be plain release numbers": "a .* prefix must be plain release numbers, like ==2.9.*",
    "needs at least two release numbers": "~= needs at least two release numbers, like ~=2.9",
}
_MARKER_REASONS = {
    "unknown marker variable": "unknown marker variable",
    "needs versions on both sides": "a version comparison needs versions on both sides",
}


def _reason(e: ValueError, reasons: dict[str, str], default: str) -> str:
    return next((said for phrase, said in reasons.items() if phrase in str(e)), default)


def _without_credentials(line: str) -> str:
    """A skipped line as kept in the reading: a URL's user:token@ replaced by ***@ (through the
    line's last @: a token may hold any character). String search, not ``(://).*@``: that pattern
    rescanned the line from every ``://`` (quadratic on ``://`` x n, issue 22)."""
    start, at = line.find("://"), line.rfind("@")
    return line if start == -1 or at < start + 3 else f"{line[:start + 3]}***@{line[at + 1:]}"


def _strip_comment(line: str) -> str:
    return re.sub(r"(^|\s)#.*$", "", line).strip()


def _option_value(tokens: list[str]) -> tuple[str, str] | None:
    """For ``-r x``, ``-rx``, ``--requirement=x``: (kind, value); None when not an include."""
    head = tokens[0]
    for flag, kind in _INCLUDE_OPTS.items():
        if head == flag:
            return kind, (tokens[1] if len(tokens) > 1 else "")
        if flag.startswith("--") and head.startswith(flag + "="):
            return kind, head[len(flag) + 1:]
        if not flag.startswith("--") and head.startswith(flag) and len(head) > len(flag):
            return kind, head[len(flag):]
    return None


def load(path: Path, pinset: PinSet | None = None, depth: int = 0, stack: tuple[Path, ...] = (),
         included_from: str | None = None) -> PinSet:
    """Parse ``path`` and its includes into ``pinset``; problems go to ``pinset.errors``, each
    naming the file and line (and, for an include, the line that included it)."""
    ps = pinset if pinset is not None else PinSet()
    here = f"{included_from}: included {path}" if included_from else str(path)
    try:
        real = path.resolve()
    except OSError:
        real = path
    if real in stack:
        chain = " -> ".join(str(p) for p in (*stack, real))
        ps.errors.append(f"{here}: include cycle ({chain})")
        return ps
    if depth > MAX_INCLUDE_DEPTH:
        ps.errors.append(f"{here}: includes nested deeper than {MAX_INCLUDE_DEPTH} levels")
        return ps
    try:
        text = read_regular(path, MAX_PINS_BYTES, PinsError, "pins").decode("utf-8")
    except PinsError as e:  # ``here`` names the file (and the line that included it)
        ps.errors.append(f"{here}: {str(e).removeprefix(f'{path}: ')}")
        return ps
    except UnicodeDecodeError:
        ps.errors.append(f"{here}: not UTF-8 text")
        return ps
    ps.files.append(str(path))
    for lineno, raw in _logical_lines(text):
        where = f"{path}:{lineno}"
        meta = _META_RE.match(raw.strip())
        if meta:
            for part in meta.group("body").split(","):
                if "=" in part:
                    k, v = part.split("=", 1)
                    ps.meta.setdefault(k.strip(), v.strip())
            continue
        line = _strip_comment(raw)
        if not line:
            continue
        if line.startswith("-"):
            _option(line, path, where, ps, depth, (*stack, real))
            continue
        if len(ps.pins) >= MAX_PINS:
            ps.errors.append(f"{where}: more than {MAX_PINS} pins; G9 compares at most {MAX_PINS} "
                             "(pin the training stack, not a whole package index)")
            break
        _requirement(line, str(path), lineno, where, ps)
    return ps


def _option(line: str, path: Path, where: str, ps: PinSet, depth: int, stack: tuple[Path, ...]) -> None:
    tokens = line.split()
    inc = _option_value(tokens)
    if inc is not None:
        kind, target = inc
        if not target:
            ps.errors.append(f"{where}: a {kind} include (-r/-c) needs a file name")
        elif "://" in target:
            ps.skipped.append({"where": where, "text": _without_credentials(line), "why": f"remote {kind} file not fetched"})
        else:
            sub = Path(os.path.expanduser(target))
            if not sub.is_absolute():
                sub = path.parent / sub
            load(sub, ps, depth + 1, stack, included_from=where)
        return
    if tokens[0] in ("-e", "--editable") or tokens[0].startswith("--editable="):
        ps.skipped.append({"where": where, "text": _without_credentials(line), "why": "editable install: no version to compare"})
        return
    opt = tokens[0].split("=", 1)[0]
    why = "pip option, ignored" if opt in _IGNORED_OPTS else "unknown pip option, ignored"
    ps.skipped.append({"where": where, "text": _without_credentials(line), "why": why})


def _requirement(line: str, file: str, lineno: int, where: str, ps: PinSet) -> None:
    # Like pip, a requirement ends at the first option token (``--hash=sha256:...``).
    tokens = line.split()
    for i, tok in enumerate(tokens[1:], 1):
        if tok.startswith("-"):
            line = " ".join(tokens[:i])
            break
    req, marker_text = line, None
    if ";" in line:
        req, marker_text = line.split(";", 1)
        marker_text = marker_text.strip()
    req = req.strip()
    if "://" in req or req.startswith((".", "/", "~")) or re.search(r"\.(whl|zip|tar\.gz|tgz)$", req):
        ps.skipped.append({"where": where, "text": _without_credentials(line), "why": "a path or URL, not a versioned requirement"})
        return
    m = _REQ_RE.match(req)
    if not m:
        ps.errors.append(f"{where}: not a requirement (expected e.g. torch==2.9.0)")
        return
    name, extras, spec_text = m.group("name"), m.group("extras"), m.group("spec").strip()
    if spec_text.startswith("@"):
        ps.skipped.append({"where": where, "text": _without_credentials(line), "why": "direct reference (name @ url): no version to compare"})
        return
    try:
        specs = parse_specifiers(spec_text)
    except InvalidSpecifier as e:
        ps.errors.append(f"{where}: not a version specifier ({_reason(e, _SPEC_REASONS, 'expected e.g. ==2.9.0 or >=1.0,<2')})")
        return
    if marker_text is not None:
        if not marker_text:
            ps.errors.append(f"{where}: empty marker after ';'")
            return
        try:
            Marker(marker_text)
        except InvalidMarker as e:
            why = _reason(e, _MARKER_REASONS, "expected e.g. python_version >= '3.10'")
            ps.errors.append(f"{where}: bad marker after ';' ({why})")
            return
    ps.pins.append({
        "name": canonical_name(name),
        "spec": ",".join(str(s) for s in specs),
        "marker": marker_text,
        "extras": [e.strip() for e in extras.split(",") if e.strip()] if extras else [],
        "file": file,
        "line": lineno,
    })


def _source_path(cfg: Config) -> tuple[Path | None, str, str | None]:
    """(path, origin, error): the user's file when configured, else the shipped set."""
    if cfg.pins.file:
        return Path(os.path.expanduser(cfg.pins.file)), "file", None
    path = SHIPPED_DIR / f"{cfg.pins.image}.txt"
    if not path.is_file():
        have = ", ".join(shipped_sets()) or "none"
        return None, "shipped", f"no shipped pin set named {cfg.pins.image!r} (shipped: {have})"
    return path, "shipped", None


def pinned_names(cfg: Config) -> list[str]:
    """Distribution names the pins mention, for the target probe to ask about. Never raises:
    a broken pins file yields whatever names could still be read."""
    try:
        path, _, err = _source_path(cfg)
        if path is None:
            return []
        return list(dict.fromkeys(p["name"] for p in load(path).pins))
    except Exception:  # a pins problem must not cost the target reading
        return []


def read(cfg: Config) -> Reading[PinsData]:
    started = time.time()
    path, origin, err = _source_path(cfg)
    source = str(path) if path else f"shipped pins ({SHIPPED_DIR})"
    if path is None:
        return Reading("pins", None, error=err, source=source, started_at=started)
    ps = load(path)
    if ps.errors:
        shown = ps.errors[:MAX_ERRORS_SHOWN]
        more = len(ps.errors) - len(shown)
        msg = "pins file unusable: " + "; ".join(shown) + (f" (+{more} more)" if more > 0 else "")
        return Reading("pins", None, error=msg, source=source, started_at=started)
    data: PinsData = {
        "origin": origin,
        "image": cfg.pins.image if origin == "shipped" else None,
        "path": str(path),
        "files": ps.files,
        "meta": ps.meta,
        "pins": ps.pins,
        "skipped": ps.skipped,
        "shipped_sets": shipped_sets(),
    }
    return Reading("pins", data, source=source, started_at=started)


PROBES = (Probe(shapes.PINS, read),)
