"""`sparktui report`: one Markdown document a user can paste into an issue.

It holds the host facts, every verdict with its evidence and fix, the training stack's versions
and a telemetry summary (min / max / last). Building it is pure (data in, text out); the text then
always goes through ``scrub_secrets`` (tokens and secret-looking values never leave), and through
``redact_paths`` when asked (home folders, the user's name and the host name become placeholders).

Whatever it quotes from outside (command lines, file names, kernel-log lines, host names, a peer's
answers) is inert Markdown (core/inert.py): prose and table cells with Markdown's structure
characters escaped, details, environment, the peers' table and each fix in fenced blocks longer
than any backtick run inside, control characters shown as escapes. A newline in another user's
command line cannot end a fence or start a heading of the report's own, nor can text add an image.
Each quoted piece is scrubbed of secrets before it is escaped, so an escape never hides a secret
from the scrubber.
"""

from __future__ import annotations

import contextvars
import getpass
import json
import os
import re
import socket
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence

from sparktui.core.inert import md_code, md_fence, md_text
from sparktui.core.readings import Readings
from sparktui.core.secrets import REDACTED, redact_ipv6, scrub_secrets, secret_env_values  # noqa: F401 (re-exported)
from sparktui.core.telemetry import CLOCK_EVENT_COUNTERS, THERMAL_POLICY_COUNTER, counter_ns
from sparktui.core.units import GIB, is_number, utc_text
from sparktui.core.verdict import Status, Verdict

# -- secrets: one scrubber for everything that leaves (core/secrets.py) ----------------------------

# -- --redact --------------------------------------------------------------------------------------

# Names too common to replace as words (they are also OS, vendor or tool names).
_COMMON_WORDS = frozenset({"root", "user", "admin", "ubuntu", "nvidia", "spark", "docker", "runner", "debian",
                           "python", "torch", "test", "local", "localhost", "home", "linux"})


@dataclass(frozen=True)
class Redaction:
    """What ``--redact`` hides; defaults are this process's own home, user and host."""

    home: str | None = None
    user: str | None = None
    hostnames: tuple[str, ...] = ()

    @classmethod
    def current(cls, extra_hostnames: Iterable[str] = ()) -> "Redaction":
        try:
            user = getpass.getuser()
        except Exception:
            user = None
        names = [socket.gethostname(), *extra_hostnames]
        try:
            names.append(socket.getfqdn())
        except OSError:
            pass
        return cls(home=os.path.expanduser("~"), user=user, hostnames=tuple(n for n in names if n))


def _word(name: str) -> re.Pattern:
    return re.compile(r"(?<![A-Za-z0-9_.-])" + re.escape(name) + r"(?![A-Za-z0-9_-])")


def redact_paths(text: str, r: Redaction) -> str:
    """Home folders become ``~`` (this user's) or ``/home/<user>`` (anyone's), ``/root`` becomes
    ``~``, and the user's name and the host names become ``<user>`` and ``<host>``."""
    home = (r.home or "").rstrip("/")
    if home and home != "" and len(home) > 1:
        text = re.sub(re.escape(home) + r"(?=/|\b|$)", "~", text)
    text = re.sub(r"(?<![A-Za-z0-9_.-])/home/[^/\s\"'`|)]+", "/home/<user>", text)
    text = re.sub(r"(?<![A-Za-z0-9_.-])/root(?=/|[\s\"'`|),:;]|$)", "~", text)
    for host in sorted(set(r.hostnames), key=len, reverse=True):
        if len(host) >= 3 and host.lower() not in _COMMON_WORDS:
            text = _word(host).sub("<host>", text)
    if r.user and len(r.user) >= 3 and r.user.lower() not in _COMMON_WORDS:
        text = _word(r.user).sub("<user>", text)
    # ssh's own words name the peer's real address or name (from ~/.ssh/config, not from us)
    text = redact_ipv6(_SSH_HOST.sub(lambda m: f"{m['pre']}<host>", text))  # IPv6 too (::1 stays)
    return _IPV4.sub(lambda m: m[0] if _keep_ip(m[0]) else "<ip>", text)


_SSH_HOST = re.compile(r"(?P<pre>(?:connect to host|resolve hostname|Connection (?:closed|reset) by(?: remote host)?|"
                       r"Host key verification failed for|host key for) \[?)[^\s\]:]+")
_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.])")


def _keep_ip(text: str) -> bool:
    """Loopback, unspecified and version-like strings stay; any other address is the user's network."""
    import ipaddress

    try:
        ip = ipaddress.IPv4Address(text)
    except ValueError:
        return True  # 580.95.05.1 and the like: not an address
    return ip.is_loopback or ip.is_unspecified


# -- telemetry summary -----------------------------------------------------------------------------

_GPU_METRICS = (
    ("temp_c", "GPU temperature", "°C", 1.0, "{:.0f}"),
    ("power_w", "GPU power", "W", 1.0, "{:.1f}"),
    ("sm_mhz", "SM clock", "MHz", 1.0, "{:.0f}"),
    ("gr_mhz", "graphics clock", "MHz", 1.0, "{:.0f}"),
    ("util_gpu", "GPU utilization", "%", 1.0, "{:.0f}"),
)
_MEM_METRICS = (
    ("MemAvailable", "MemAvailable", "GiB", 1 / GIB, "{:.1f}"),
    ("Cached", "page cache (Cached)", "GiB", 1 / GIB, "{:.1f}"),
)


@dataclass
class SummaryRow:
    what: str
    unit: str
    min: float | None = None
    max: float | None = None
    last: float | None = None
    n: int = 0
    why: str | None = None  # why there are no values
    fmt: str = "{:g}"

    def cell(self, v: float | None) -> str:
        return "–" if v is None else self.fmt.format(v)


@dataclass
class TelemetrySummary:
    samples: int = 0
    span_s: float = 0.0
    first_t: float | None = None
    last_t: float | None = None
    rows: list[SummaryRow] = field(default_factory=list)
    reasons: dict[str, int] = field(default_factory=dict)  # clock-event reason -> samples showing it
    # growth of each of NVML's clock-event counters over the samples (s; GPU 0), by its words
    throttled_s: dict[str, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def _row(what: str, unit: str, values: list[Any], scale: float, fmt: str, why: str | None) -> SummaryRow:
    nums = [float(v) * scale for v in values if is_number(v)]  # a NaN or inf sample is no figure
    if not nums:
        return SummaryRow(what, unit, why=why or "not reported", fmt=fmt)
    return SummaryRow(what, unit, min(nums), max(nums), nums[-1], len(nums), fmt=fmt)


def telemetry_summary(samples: Sequence[dict[str, Any]]) -> TelemetrySummary:
    """min / max / last of each series over ``samples`` (telemetry.py's sample shape)."""
    s = TelemetrySummary(samples=len(samples))
    if not samples:
        return s
    s.first_t, s.last_t = samples[0].get("t"), samples[-1].get("t")
    if isinstance(s.first_t, (int, float)) and isinstance(s.last_t, (int, float)):
        s.span_s = float(s.last_t - s.first_t)
    errs: dict[str, Any] = {}
    for smp in samples:
        errs.update(smp.get("errors") or {})
    s.errors = sorted({f"{k}: {v}" for k, v in errs.items()})
    ngpu = max((len(smp.get("gpus") or []) for smp in samples), default=0)
    for gi in range(ngpu):
        gpus = [((smp.get("gpus") or [])[gi] if gi < len(smp.get("gpus") or []) else {}) for smp in samples]
        prefix = f"GPU{gi} " if ngpu > 1 else ""
        for key, what, unit, scale, fmt in _GPU_METRICS:
            why = next((g.get("errors", {}).get(key) or g.get("errors", {}).get("util" if key == "util_gpu" else key)
                        for g in reversed(gpus) if (g.get("errors") or {}).get(key)), None)
            s.rows.append(_row(prefix + what, unit, [g.get(key) for g in gpus], scale, fmt, why))
        for g in gpus:
            for reason in g.get("reasons") or []:
                s.reasons[reason] = s.reasons.get(reason, 0) + 1
        for key, words, _ in (*CLOCK_EVENT_COUNTERS, THERMAL_POLICY_COUNTER):
            vals = [v for g in gpus if isinstance(v := counter_ns(g, key)[0], (int, float))]
            if len(vals) >= 2 and gi == 0:
                s.throttled_s[words] = max(0.0, (vals[-1] - vals[0]) / 1e9)
    if ngpu == 0:
        why = errs.get("nvml") or "no GPU in the samples"
        for _key, what, unit, _scale, fmt in _GPU_METRICS:
            s.rows.append(SummaryRow(what, unit, why=why, fmt=fmt))
    for key, what, unit, scale, fmt in _MEM_METRICS:
        s.rows.append(_row(what, unit, [(smp.get("mem") or {}).get(key) for smp in samples], scale, fmt,
                           errs.get("meminfo")))
    return s


# -- the document ----------------------------------------------------------------------------------

_ENV_SECRETS: "contextvars.ContextVar[list[str] | None]" = contextvars.ContextVar("sparktui_report_env", default=None)


def _scrubbed(text: str) -> str:
    """``text`` scrubbed of secrets, the environment's read once per report (``build_report``)."""
    values = _ENV_SECRETS.get()
    return scrub_secrets(text, secret_env_values() if values is None else values)


def _cell(value: Any, limit: int = 300, starts_line: bool = False) -> str:
    """A table cell or prose after a label (``starts_line``: a line or list item of its own): secrets
    scrubbed, line breaks as ⏎, then inert Markdown (md_text: `|` escaped too); cut to ``limit``
    characters, never inside an escape."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = _scrubbed(text).replace("\r\n", "\n").replace("\n", " ⏎ ")
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return md_text(text, starts_line)


def _code(value: Any, limit: int = 300) -> str:
    """A value read from outside (an evidence value) as a code span in a table cell: its delimiter
    longer than any backtick run inside, `|` escaped, secrets scrubbed, cut to ``limit``."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = _scrubbed(text)
    return md_code(text if len(text) <= limit else text[: limit - 1] + "…", table=True) or "–"


def _fenced(lines: Any, info: str = "") -> list[str]:
    """Lines in a fenced block no line inside can close (secrets scrubbed first)."""
    if isinstance(lines, str):
        lines = lines.split("\n")
    return md_fence([_scrubbed(str(line)) for line in lines], info)


def _when(t: float | None) -> str:
    """A UTC time; "?" for none, or one no clock has (NaN and inf raised in fromtimestamp)."""
    return (utc_text(t) if is_number(t) and t > 0 else None) or "?"


def _field(d: Any) -> Any:
    return d.get("value") if isinstance(d, dict) else d


def host_lines(host: Mapping[str, Any], nvml: Mapping[str, Any] | None, nvml_error: str | None,
               container: Mapping[str, Any] | None) -> list[str]:
    mem = host.get("mem_total_bytes")
    rows = [
        ("host name", host.get("hostname")),
        ("product (DMI)", host.get("dmi_product")),
        ("OS", host.get("os_release")),
        ("kernel", host.get("kernel")),
        ("architecture", host.get("machine")),
        ("CPUs", host.get("cpu_count")),
        ("memory (MemTotal)", f"{mem / GIB:.1f} GiB" if isinstance(mem, (int, float)) else None),
    ]
    if nvml:
        rows.append(("NVIDIA driver", _field(nvml.get("driver_version"))))
        rows.append(("CUDA (driver API)", _field(nvml.get("cuda_driver_version"))))
        for dev in _list(nvml.get("devices")):
            if not isinstance(dev, dict):
                continue
            cc = _field(dev.get("compute_capability"))
            cc_text = f" (compute capability {cc[0]}.{cc[1]})" if isinstance(cc, (list, tuple)) and len(cc) == 2 else ""
            rows.append((f"GPU {dev.get('index', '?')}", f"{_field(dev.get('name'))}{cc_text}"))
    else:
        rows.append(("NVML", f"unavailable: {nvml_error or 'not read'}"))
    if container is not None:
        from sparktui.fleet.compare import container_image
        from sparktui.core.readings import Reading

        rd = Readings()
        rd.add(Reading("container", container))
        img = container_image(rd)
        where = f"{container.get('runtime') or 'container'}" if container.get("in_container") else "none detected"
        rows.append(("container", where + (f" · {img.value}" if img.known else "")))
    out = ["| | |", "|---|---|"]
    out += [f"| {k} | {_cell(v if v is not None else '?')} |" for k, v in rows]
    return out


def _list(v: Any) -> list:
    """A field that should be a list, or [] (unknown) when it is missing or of another type."""
    return v if isinstance(v, list) else []


def stack_lines(readings: Readings) -> list[str]:
    from sparktui.fleet.compare import NOT_INSTALLED, _nccl, _obj, _torch_field, _torch_version, packages_of

    t = readings.data("target")
    if not t:
        why = readings.get_reading("target").error or "not read"
        return [f"_The training interpreter could not be read: {_cell(why)}_"]
    py = _obj(t.get("python"))
    lines = ["| | |", "|---|---|",
             f"| interpreter | {_cell(t.get('interpreter') or py.get('executable') or '?')} ({_cell(t.get('selected_by') or '')}) |",
             f"| Python | {_cell(py.get('version') or '?')} |"]
    for what, cell in (("torch", _torch_version(readings)), ("torch built for CUDA", _torch_field(readings, "cuda", "torch.version.cuda")),
                       ("cuDNN", _torch_field(readings, "cudnn", "cuDNN")), ("NCCL", _nccl(readings))):
        lines.append(f"| {what} | {_cell(cell.value if cell.known else f'? ({cell.why})')} |")
    tc = _obj(t.get("torch_cuda"))
    if tc.get("arch_list") and isinstance(tc["arch_list"], list):
        lines.append(f"| torch arch list | {_cell(' '.join(str(a) for a in tc['arch_list']))} |")
    pk, why = packages_of(readings)
    if pk is None:
        lines.append(f"_Package versions unavailable: {_cell(why)}_")
        return lines
    installed = {k: v for k, v in sorted(pk.items()) if v}
    missing = sorted(k for k, v in pk.items() if not v)
    if installed:
        # names and versions as the interpreter's own metadata gives them: outside text
        lines += ["", "| package | version |", "|---|---|"] + [f"| {_cell(k, 120)} | {_cell(v)} |" for k, v in installed.items()]
    if missing:
        lines += ["", f"{NOT_INSTALLED.capitalize()}: " + _cell(", ".join(missing), 2000)]
    env = _obj(py.get("env"))
    if env:
        lines += ["", "Environment seen by the interpreter:", ""] + _fenced([f"{k}={v}" for k, v in sorted(env.items())])
    return lines


def telemetry_lines(s: TelemetrySummary, source: str) -> list[str]:
    if not s.samples:
        return [f"_No telemetry samples ({_cell(source)})._"]
    lines = [f"{s.samples} samples over {s.span_s:.0f} s ({_cell(source)}; {_when(s.first_t)} → {_when(s.last_t)}).", "",
             "| metric | min | max | last |", "|---|---|---|---|"]
    for r in s.rows:
        if r.n:
            lines.append(f"| {r.what} ({r.unit}) | {r.cell(r.min)} | {r.cell(r.max)} | {r.cell(r.last)} |")
        else:
            lines.append(f"| {r.what} ({r.unit}) | unavailable: {_cell(r.why, 80)} | | |")
    if s.reasons:
        lines += ["", "Clock-event reasons seen (samples): "
                  + ", ".join(f"{_cell(k, 80)} ({n})" for k, n in sorted(s.reasons.items(), key=lambda kv: -kv[1]))]
    parts = [f"{_cell(what, 80)} {v:.1f} s" for what, v in s.throttled_s.items()]
    if parts:
        lines += ["", "Time NVML counted the clocks held down during the window, per cause: " + ", ".join(parts) + "."]
    if s.errors:
        lines += ["", "Unreadable fields: " + "; ".join(_cell(e, 120) for e in s.errors[:12])]
    return lines


def verdict_lines(v: Verdict) -> list[str]:
    from sparktui.gotchas import REGISTRY

    g = REGISTRY.get(v.id)
    title = g.title if g else v.id
    lines = [f"### {v.id} · {title}: {v.status.glyph} {v.status.value}", "", _cell(v.summary, 100_000, starts_line=True), ""]
    if v.evidence:
        lines += ["| evidence | value | source |", "|---|---|---|"]
        lines += [f"| {_cell(e.what, 120)} | {_code(e.value)} | {_cell(e.source, 160)} |" for e in v.evidence]
        lines.append("")
    if v.details:
        shown = list(v.details[:30])
        lines += _fenced(shown + ([f"… {len(v.details) - 30} more"] if len(v.details) > 30 else [])) + [""]
    if v.status in (Status.WARN, Status.FAIL):
        fix = (v.fix or (g.fix if g else "")).strip()
        if fix:  # its Markdown source, fenced: a command in it may quote a newline from outside
            lines += ["**Fix.**", ""] + _fenced(fix.split("\n"), "markdown") + [""]
    return lines


@dataclass
class ReportInput:
    """Everything one report is made of (gathered by the CLI, or given by a test)."""

    verdicts: list[Verdict]
    readings: Readings
    host: dict[str, Any]
    source: str  # "live", "snapshot FILE", "recording FILE"
    version: str
    generated_at: float
    samples: list[dict[str, Any]] = field(default_factory=list)
    samples_source: str = ""
    problems: list[str] = field(default_factory=list)  # e.g. malformed recording lines
    comparison: Any = None  # fleet.compare.Comparison, when peers were asked for
    checklist: Any = None  # fleet.compare.checklists(...) rows
    stack: bool = True  # False for a recording: it holds no training-stack facts


def build_report(inp: ReportInput) -> str:
    """The Markdown text (not yet scrubbed: use ``render_report``)."""
    token = _ENV_SECRETS.set(secret_env_values())
    try:
        return _build_report(inp)
    finally:
        _ENV_SECRETS.reset(token)


def _build_report(inp: ReportInput) -> str:
    counts = {s: sum(1 for v in inp.verdicts if v.status is s) for s in Status}
    host_name = inp.host.get("hostname") or "?"
    out = [f"# sparktui report: {_cell(host_name, 200)}", "",
           f"Generated {_when(inp.generated_at)} by sparktui {_cell(inp.version, 80)} from {_cell(inp.source)}. "
           + ", ".join(f"{n} {s.value}" for s, n in counts.items() if n) + ".", ""]
    from sparktui.gotchas import REGISTRY

    out += ["| check | status | summary |", "|---|---|---|"]
    # whole: a Markdown viewer wraps a cell, so a title or summary cut here (`no tensor parallelism
    # for trai…`) hid words for nothing; the cap is only against a runaway outside text
    out += [f"| {v.id} {_cell(REGISTRY[v.id].title if v.id in REGISTRY else '', 1000)} | {v.status.glyph} {v.status.value} | "
            f"{_cell(v.summary, 100_000)} |" for v in inp.verdicts]
    out += ["", "## Host", ""]
    nv = inp.readings.get_reading("nvml")
    cont = inp.readings.data("container")
    out += host_lines(inp.host, nv.data, nv.error, cont)
    out += ["", "## Checks", ""]
    for v in inp.verdicts:
        out += verdict_lines(v)
    out += ["## Training stack", ""]
    out += stack_lines(inp.readings) if inp.stack else ["_Not in a recording: run `sparktui report` on the machine for it._"]
    out += ["", "## Telemetry", ""]
    out += telemetry_lines(telemetry_summary(inp.samples), inp.samples_source or inp.source)
    if inp.comparison is not None:
        from sparktui.fleet.compare import format_comparison

        out += ["", "## Peers", ""] + _fenced(format_comparison(inp.comparison, inp.checklist).rstrip())
    if inp.problems:
        out += ["", "## Input problems", ""] + [f"- {_cell(p, 300, starts_line=True)}" for p in inp.problems[:50]]
    return "\n".join(out).rstrip() + "\n"


def render_report(inp: ReportInput, redact: Redaction | None = None) -> str:
    """The report as it may leave the machine: secrets always scrubbed, paths redacted on request."""
    if redact is not None and inp.host.get("hostname"):  # short names escape the word match below
        inp = replace(inp, host={**inp.host, "hostname": "<host>"})
    text = scrub_secrets(build_report(inp), secret_env_values())
    if redact is not None:
        text = redact_paths(text, redact)
    return text
