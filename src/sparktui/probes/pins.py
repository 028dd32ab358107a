"""The pinned training-stack versions G9 compares against: the user's file, or a shipped set.

Reads requirements / constraints files the way pip does for the parts that carry versions:
``name==1.2``, ``name>=1,<2``, ``name[extra]==1``, ``; markers``, ``-r``/``-c`` includes
(relative to the including file), comments, continuations. Lines that carry no comparable
version (pip options, URLs, editables) are recorded as skipped. A malformed line is an error
that names the file, the line and the reason; nothing is guessed.

Shipped sets live in ``sparktui/data/pins/<image>.txt``. A ``# sparktui: key=value`` comment
adds metadata (``image``, ``ngc``, ``cuda``) that the judge uses, e.g. the CUDA the set's torch
was built against.
"""

from __future__ import annotations

import os
import stat
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.shapes import Pin, PinsData, PinSkipped
from sparktui.core.versions import (
    InvalidMarker,
    InvalidSpecifier,
    Marker,
    canonical_name,
    parse_specifiers,
)

SHIPPED_DIR = Path(__file__).resolve().parent.parent / "data" / "pins"
MAX_INCLUDE_DEPTH = 10
MAX_ERRORS_SHOWN = 5

_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_REQ_RE = re.compile(rf"^(?P<name>{_NAME})\s*(?:\[(?P<extras>[^\]]*)\])?\s*(?P<spec>.*)$")
MAX_PINS_BYTES = 16 * 1024 * 1024
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
        st = path.stat()
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError
        if not stat.S_ISREG(st.st_mode):  # a FIFO blocks with no writer; a pipe cannot be read twice
            ps.errors.append(f"{here}: not a regular file (a pipe or a device?); give a pins file")
            return ps
        if st.st_size > MAX_PINS_BYTES:
            ps.errors.append(f"{here}: {st.st_size} bytes, larger than a pins file can be ({MAX_PINS_BYTES} bytes)")
            return ps
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        ps.errors.append(f"{here}: no such file")
        return ps
    except IsADirectoryError:
        ps.errors.append(f"{here}: is a folder, not a pins file")
        return ps
    except UnicodeDecodeError:
        ps.errors.append(f"{here}: not UTF-8 text")
        return ps
    except OSError as e:
        ps.errors.append(f"{here}: cannot read: {e.strerror or e}")
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
        _requirement(line, str(path), lineno, where, ps)
    return ps


def _option(line: str, path: Path, where: str, ps: PinSet, depth: int, stack: tuple[Path, ...]) -> None:
    tokens = line.split()
    inc = _option_value(tokens)
    if inc is not None:
        kind, target = inc
        if not target:
            ps.errors.append(f"{where}: {tokens[0]} needs a file name")
        elif "://" in target:
            ps.skipped.append({"where": where, "text": line, "why": f"remote {kind} file not fetched"})
        else:
            sub = Path(os.path.expanduser(target))
            if not sub.is_absolute():
                sub = path.parent / sub
            load(sub, ps, depth + 1, stack, included_from=where)
        return
    if tokens[0] in ("-e", "--editable") or tokens[0].startswith("--editable="):
        ps.skipped.append({"where": where, "text": line, "why": "editable install: no version to compare"})
        return
    opt = tokens[0].split("=", 1)[0]
    why = "pip option, ignored" if opt in _IGNORED_OPTS else "unknown pip option, ignored"
    ps.skipped.append({"where": where, "text": line, "why": why})


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
        ps.skipped.append({"where": where, "text": line, "why": "a path or URL, not a versioned requirement"})
        return
    m = _REQ_RE.match(req)
    if not m:
        ps.errors.append(f"{where}: not a requirement: {line!r} (expected e.g. torch==2.9.0)")
        return
    name, extras, spec_text = m.group("name"), m.group("extras"), m.group("spec").strip()
    if spec_text.startswith("@"):
        ps.skipped.append({"where": where, "text": line, "why": "direct reference (name @ url): no version to compare"})
        return
    try:
        specs = parse_specifiers(spec_text)
    except InvalidSpecifier as e:
        ps.errors.append(f"{where}: {name}: {e}")
        return
    if marker_text is not None:
        if not marker_text:
            ps.errors.append(f"{where}: {name}: empty marker after ';'")
            return
        try:
            Marker(marker_text)
        except InvalidMarker as e:
            ps.errors.append(f"{where}: {name}: bad marker: {e}")
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
