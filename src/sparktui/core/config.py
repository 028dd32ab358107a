"""Configuration: a TOML file in the user's config dir (or ``--config``), every setting defaulted.

A bad value is a clear error naming the file, the key and what was expected; it is never
silently replaced by the default.
"""

import os
import sys
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Callable, Optional, get_args, get_origin, Union

from sparktui.core.readings import read_regular
from sparktui.core.units import is_number

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


class ConfigError(ValueError):
    """A config file or value that cannot be used; the message is shown to the user as is."""


MAX_CONFIG_BYTES = 1024 * 1024  # a real config is a few KiB; more is not read (a /dev/zero link, a log)


def _show(v: Any) -> str:
    """A value from the file as one short line (a quoted key may hold newlines, a list megabytes)."""
    r = repr(v)
    return r if len(r) <= 80 else r[:77] + "..."


MAX_SETTING = 1e9  # seconds (about 31 years), counts, watts: beyond this a value is a typo, and waits overflow


def _positive(v: float) -> Optional[str]:
    if not is_number(v):
        return "must be a finite number"
    if not v > 0:
        return "must be greater than 0"
    return None if v <= MAX_SETTING else f"must be at most {MAX_SETTING:g}"


MIN_INTERVAL_S = 0.01  # 100 samples a second; shorter is a busy loop that fills the disk


def _interval(v: float) -> Optional[str]:
    """A sampling period: positive is not enough, 1e-300 s is a busy loop."""
    return _positive(v) or (None if v >= MIN_INTERVAL_S else f"must be at least {MIN_INTERVAL_S:g} s")


def _positive_bytes(v: float) -> Optional[str]:
    if not is_number(v):
        return "must be a finite number"
    return None if 0 < v <= 1e15 else "must be greater than 0 and at most 1e15"


def _fraction(v: float) -> Optional[str]:
    return None if 0 < v <= 1 else "must be in (0, 1]"


def _setting(default: Any, help: str, check=None, used_by: str = ""):
    """``used_by``: which gotcha or command reads the setting (docs/config.md, tools/make_config_doc.py)."""
    return field(default=default, metadata={"help": help, "check": check, "used_by": used_by})


def _setting_list(default: list, help: str, used_by: str = ""):
    return field(default_factory=lambda: list(default), metadata={"help": help, "check": None, "used_by": used_by})


@dataclass(frozen=True)
class TargetConfig:
    """The training environment. Torch-side facts are read by a short-lived subprocess of its interpreter."""

    python: Optional[str] = _setting(None, "interpreter of the training environment (default: active venv/conda, else this one)", used_by="G1, G2, G7, G9 (torch-side probe); G5 (`bandwidth`)")
    timeout_s: float = _setting(90.0, "how long the torch-side probe may run before it counts as hung", _positive, used_by="G1, G2, G7, G9 (torch-side probe)")
    cuda_smoke: bool = _setting(True, "allocate one float on the GPU (torch.zeros(1).cuda()) to catch G1's first-.cuda() crash", used_by="G1")


@dataclass(frozen=True)
class ScanConfig:
    """Where G10 looks for launch scripts and configs with tensor-parallel settings."""

    paths: list = _setting_list(["."], "folders and files the G10 scan reads (recursively)", used_by="G10")
    max_file_bytes: int = _setting(4 * 1024 * 1024, "files larger than this are skipped by the G10 scan", _positive_bytes, used_by="G10")


@dataclass(frozen=True)
class PinsConfig:
    """The versions G9 compares the installed training stack against."""

    image: str = _setting("ngc-pytorch-25.11", "shipped pin set G9 compares against: a file in sparktui/data/pins/, named without .txt", used_by="G9")
    file: Optional[str] = _setting(None, "your own pins (requirements/constraints format); overrides image", used_by="G9")


@dataclass(frozen=True)
class DriverConfig:
    """The known-bad driver/kernel table G13 matches this machine against."""

    known_bad: Optional[str] = _setting(None, "your own known-bad table (the TOML format of the shipped sparktui/data/known_bad.toml); used instead of the shipped one", used_by="G13")


@dataclass(frozen=True)
class HardwareConfig:
    """Facts about the machine that NVML cannot report on GB10."""

    rated_power_w: float = _setting(140.0, "GB10 rated power; NVML's limit reads N/A on GB10 (brick is 240 W, TDP 140 W)", _positive, used_by="G4; dashboard power meter")
    gpu_name_hint: Optional[str] = _setting(None, "treat the GPU as this model when NVML cannot name it", used_by="G1, G7")


@dataclass(frozen=True)
class MemoryConfig:
    """Thresholds for the one unified memory pool (G3, G6)."""

    available_floor_gib: float = _setting(8.0, "warn when MemAvailable drops below this (G3)", _positive, used_by="G3")
    cache_warn_fraction: float = _setting(0.25, "point out page cache above this share of MemTotal (G3)", _fraction, used_by="G3")
    server_cap_ok_fraction: float = _setting(0.5, "an inference server capped at or under this share of memory may share the box (G6)", _fraction, used_by="G6")


@dataclass(frozen=True)
class ThermalConfig:
    """Thresholds for the throttling judge (G4)."""

    window_min: float = _setting(10.0, "minutes of samples before G4 judges throttling", _positive, used_by="G4")
    hot_c: float = _setting(85.0, "temperature treated as 'high' for G4", _positive, used_by="G4")
    plateau_fraction: float = _setting(0.75, "power under this share of rated power counts as 'well under' (G4)", _fraction, used_by="G4")
    load_util_pct: float = _setting(50.0, "GPU utilization (%) from which a sample counts as 'under load' (G4)", _positive, used_by="G4")
    fault_clock_mhz: float = _setting(1000.0, "SM clock under load below this suggests a power-delivery fault (G4; normal ~2400)", _positive, used_by="G4")
    fault_power_w: float = _setting(40.0, "power under load below this suggests a power-delivery fault (G4; safe mode ~30 W)", _positive, used_by="G4")


@dataclass(frozen=True)
class TelemetryConfig:
    """Sampling for the dashboard, `check`, `record` and `export`."""

    interval_s: float = _setting(1.0, "sampling interval for the dashboard and recordings", _interval, used_by="sampling: dashboard, `record`, `export`, `check` (G4)")
    history: int = _setting(3600, "samples kept per series (ring buffer)", _positive, used_by="dashboard (meters and plots)")
    check_window_s: float = _setting(2.0, "seconds `sparktui check` samples for G4 (`--watch MIN` for longer)", _positive, used_by="G4 (`check`)")
    processes_every_s: float = _setting(10.0, "how often the process view (G6) is rescanned while sampling", _interval, used_by="G6 while sampling: dashboard, `record`, `export`")


@dataclass(frozen=True)
class PlaybooksConfig:
    """The official playbooks being followed and the GitHub API watched for their issues (G8)."""

    repo: str = _setting("NVIDIA/dgx-spark-playbooks", "GitHub repository of the playbooks being followed (G8)", used_by="G8")
    slugs: list = _setting_list([], "playbook slugs being followed, e.g. ['vllm'] (G8)", used_by="G8")
    commands: list = _setting_list([], "commands from your launch script to match issues against (G8)", used_by="G8")
    api_url: str = _setting("https://api.github.com", "GitHub REST API base URL (GitHub Enterprise, tests)", used_by="G8")
    ttl_s: float = _setting(600.0, "a refresh inside this many seconds makes no request (G8)", _positive, used_by="G8")


@dataclass(frozen=True)
class FleetConfig:
    """Other machines compared with this one over ssh (docs/fleet.md)."""

    peers: list = _setting_list([], "peers (ssh destinations: host, user@host or ~/.ssh/config aliases) compared with this machine", used_by="fleet: dashboard, `peers`, `preflight`, `report`")
    peer_command: str = _setting("sparktui", "command that runs sparktui on a peer (` snapshot -o -` is appended), e.g. '~/.venv/bin/sparktui'", used_by="fleet: ssh to the peers")
    ssh_config: Optional[str] = _setting(None, "ssh client config file given to ssh with -F (default: ssh's own, ~/.ssh/config)", used_by="fleet: ssh to the peers")
    connect_timeout_s: float = _setting(10.0, "ssh ConnectTimeout for peers", _positive, used_by="fleet: ssh to the peers")
    peer_timeout_s: float = _setting(180.0, "total time a peer may take to answer (its torch-side probe included)", _positive, used_by="fleet: ssh to the peers")


@dataclass(frozen=True)
class SessionConfig:
    """The dashboard's kept session: what it saw, under $XDG_STATE_HOME/sparktui/sessions/ (`sparktui history`)."""

    keep: bool = _setting(True, "keep every live dashboard session as a recording (`--no-session` skips one run)", used_by="dashboard; `history`")
    max_mb: float = _setting(1000.0, "all kept sessions together stay under this many MB (a GB10 writes about 4 MB an hour): the oldest are deleted first", _positive, used_by="dashboard (session files)")
    max_session_mb: float = _setting(100.0, "a session file that reaches this many MB is rotated: it is closed and the session continues in a new file (capped at max_mb)", _positive, used_by="dashboard (session files)")
    max_days: float = _setting(30.0, "sessions last written more than this many days ago are deleted", _positive, used_by="dashboard (session files)")
    restore_within_min: float = _setting(60.0, "on start, the plots and events show this host's last session if it ended less than this many minutes ago", _positive, used_by="dashboard (restore on start)")


def _non_negative(v: float) -> Optional[str]:
    if not is_number(v):
        return "must be a finite number"
    return None if 0 <= v <= MAX_SETTING else f"must be at least 0 and at most {MAX_SETTING:g}"


def _one_of(*names: str) -> Callable[[str], Optional[str]]:
    """A setting that must be one of ``names``."""
    def check(v: str) -> Optional[str]:
        return None if v in names else f"must be one of {', '.join(names)}"
    return check


_status_name = _one_of("ok", "warn", "fail", "unknown")


@dataclass(frozen=True)
class RunConfig:
    """The training run sparktui sits beside (G14): its log, and when its pace counts as slow or stalled."""

    log: Optional[str] = _setting(None, "the run's log file, when it cannot be found from the run's processes (stdout/stderr redirected to a file, or a tmux pane); `--run-log FILE` wins", used_by="G14")
    slow_window_s: float = _setting(300.0, "seconds of recent progress whose rate is compared with the run's median (G14 slowdown)", _positive, used_by="G14")
    slow_ratio: float = _setting(0.7, "a recent rate under this share of the run's median rate is a slowdown (G14)", _fraction, used_by="G14")
    late_factor: float = _setting(10.0, "progress counts as on time while the last step is within this many of the run's median step intervals (G14)", _positive, used_by="G14")
    stall_after_s: Optional[float] = _setting(None, "no progress this long while the run lives is a stall (G14; default: from the run's own pace, at least 600 s)", _positive, used_by="G14")
    tmux: bool = _setting(True, "read the run's tmux pane (capture-pane, read only, never a key sent) when its output goes to a terminal", used_by="G14")


@dataclass(frozen=True)
class NotifyConfig:
    """Telling the person who is not looking (opt-in: nothing is sent unless a webhook or command is set)."""

    webhook: Optional[str] = _setting(None, "URL a JSON POST of each event at or above `min_status` goes to (Slack, Discord and ntfy accept it); never printed whole", used_by="dashboard (notifications)")
    command: list = _setting_list([], "command run for each such event, the event in its environment (SPARKTUI_EVENT_*), e.g. ['notify-send', 'sparktui']", used_by="dashboard (notifications)")
    min_status: str = _setting("fail", "the lowest status that is sent: warn or fail", _status_name, used_by="dashboard (notifications)")
    min_interval_s: float = _setting(60.0, "at most one notification per check this often (a flapping check does not flood)", _non_negative, used_by="dashboard (notifications)")
    timeout_s: float = _setting(10.0, "how long one webhook POST or command may take", _positive, used_by="dashboard (notifications)")
    retries: int = _setting(2, "attempts after a failed webhook POST (bounded, with back-off)", _non_negative, used_by="dashboard (notifications)")


GUARD_ACTIONS = ("stop-container", "stop-unit", "term-kind", "pause-run")


_guard_action = _one_of(*GUARD_ACTIONS)


@dataclass(frozen=True)
class GuardConfig:
    """The memory guard (opt-in): acts before the unified pool wedges the host. Dry-run unless `act` is true."""

    enabled: bool = _setting(False, "watch MemAvailable and act when it stays under `floor_gib` (the dashboard and `sparktui guard`)", used_by="guard")
    floor_gib: float = _setting(4.0, "MemAvailable under this many GiB, held for `hold_s`, triggers the action", _positive, used_by="guard")
    hold_s: float = _setting(20.0, "seconds MemAvailable must stay under the floor (and PSI confirm it) before acting", _positive, used_by="guard")
    psi_full_avg10_min: float = _setting(10.0, "PSI memory full avg10 (%) that confirms the pressure; where PSI cannot be read the floor alone decides", _non_negative, used_by="guard")
    action: str = _setting("term-kind", "what to do: stop-container (docker stop `target`), stop-unit (systemctl stop `target`), term-kind (SIGTERM the processes of G6 kind `target`, an inference server by default), pause-run (SIGSTOP the training run)", _guard_action, used_by="guard")
    target: Optional[str] = _setting(None, "the container or unit name (stop-container, stop-unit), or the process kind for term-kind (default: server)", used_by="guard")
    act: bool = _setting(False, "really act; false is a dry run that only writes what it would have done to the audit log", used_by="guard")
    cooldown_s: float = _setting(120.0, "after an action, wait this long before the next one", _non_negative, used_by="guard")
    audit_log: Optional[str] = _setting(None, "JSON-lines audit log of every decision (default: guard.jsonl in the state folder)", used_by="guard")


@dataclass(frozen=True)
class Config:
    target: TargetConfig = field(default_factory=TargetConfig)
    scan: ScanConfig = field(default_factory=ScanConfig)
    pins: PinsConfig = field(default_factory=PinsConfig)
    driver: DriverConfig = field(default_factory=DriverConfig)
    hardware: HardwareConfig = field(default_factory=HardwareConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    thermal: ThermalConfig = field(default_factory=ThermalConfig)
    telemetry: TelemetryConfig = field(default_factory=TelemetryConfig)
    playbooks: PlaybooksConfig = field(default_factory=PlaybooksConfig)
    fleet: FleetConfig = field(default_factory=FleetConfig)
    session: SessionConfig = field(default_factory=SessionConfig)
    run: RunConfig = field(default_factory=RunConfig)
    notify: NotifyConfig = field(default_factory=NotifyConfig)
    guard: GuardConfig = field(default_factory=GuardConfig)
    source: Optional[str] = None  # the file it was read from, if any

    def with_overrides(self, **sections: dict) -> "Config":
        """Apply CLI flags: ``cfg.with_overrides(target={"python": p})``."""
        new = self
        for name, values in sections.items():
            sec = getattr(new, name)
            clean = {k: v for k, v in values.items() if v is not None}
            if clean:
                new = replace(new, **{name: _build_section(type(sec), {**_asdict(sec), **clean}, f"--{name}", None)})
        return new


def _asdict(sec) -> dict:
    return {f.name: getattr(sec, f.name) for f in fields(sec)}


def default_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "sparktui" / "config.toml"


def default_state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "sparktui"


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sparktui"


def _type_name(tp) -> str:
    if get_origin(tp) is Union:
        inner = [a for a in get_args(tp) if a is not type(None)]
        return f"{_type_name(inner[0])} (or omitted)"
    return {float: "a number", int: "a whole number", bool: "true or false", str: "a string", list: "a list of strings"}.get(tp, str(tp))


def _coerce(tp, value, where: str):
    if get_origin(tp) is Union:
        inner = [a for a in get_args(tp) if a is not type(None)][0]
        return None if value is None else _coerce(inner, value, where)
    ok = (
        (tp is float and isinstance(value, (int, float)) and not isinstance(value, bool))
        or (tp is int and isinstance(value, int) and not isinstance(value, bool))
        or (tp is bool and isinstance(value, bool))
        or (tp is str and isinstance(value, str))
        or (tp is list and isinstance(value, list) and all(isinstance(x, str) for x in value))
    )
    if not ok:
        raise ConfigError(f"{where}: expected {_type_name(tp)}, got {_show(value)}")
    return float(value) if tp is float else value


def _build_section(cls, values: dict, section: str, path: Optional[str]):
    known = {f.name: f for f in fields(cls)}
    kwargs = {}
    for key, value in values.items():
        name = key if key.isidentifier() else _show(key)
        where = f"{path}: [{section}] {name}" if path else f"{section} {name}"
        if key not in known:
            hint = ", ".join(sorted(known))
            raise ConfigError(f"{where}: unknown setting (known in [{section}]: {hint})")
        f = known[key]
        v = _coerce(f.type, value, where)
        check = f.metadata.get("check")
        if check is not None and v is not None:
            problem = check(v)
            if problem:
                raise ConfigError(f"{where}: {problem}, got {_show(value)}")
        kwargs[key] = v
    return cls(**kwargs)


def load_config(path: Optional[os.PathLike | str] = None) -> Config:
    """Load ``path`` (must exist) or the default file (may be absent). Whatever is at either
    place (a FIFO, a device, a folder, a huge or deeply nested file, invalid UTF-8, a folder that
    cannot be read) is a ConfigError with one line saying why, never another exception."""
    explicit = path is not None
    p = Path(path) if path is not None else default_config_path()
    try:
        os.stat(p)
    except FileNotFoundError:
        if explicit:
            raise ConfigError(f"{p}: config file not found") from None
        return Config()
    except OSError as e:  # a folder that cannot be searched, a symlink loop, a file where a folder should be
        raise ConfigError(f"{p}: cannot read: {e.strerror or e}") from None
    raw = read_regular(p, MAX_CONFIG_BYTES, ConfigError, "TOML config")
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ConfigError(f"{p}: not UTF-8 text (byte {e.start}); a config is a TOML text file") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{p}: not valid TOML: {e}") from None
    except RecursionError:
        raise ConfigError(f"{p}: not valid TOML: nested too deeply") from None
    sections = {f.name: f for f in fields(Config) if f.name != "source"}
    kwargs: dict = {}
    for name, table in doc.items():
        if name not in sections:
            shown = name if name.isidentifier() else _show(name)
            raise ConfigError(f"{p}: unknown section [{shown}] (known: {', '.join(sorted(sections))})")
        if not isinstance(table, dict):
            raise ConfigError(f"{p}: [{name}] must be a table")
        kwargs[name] = _build_section(sections[name].default_factory, table, name, str(p))
    return Config(**kwargs, source=str(p))


def describe_settings() -> list[tuple[str, str, Any, str]]:
    """(section.key, type, default, help) for docs and `sparktui config`."""
    out = []
    for sf in fields(Config):
        if sf.name == "source":
            continue
        factory = sf.default_factory
        assert callable(factory), f"Config.{sf.name} needs a default_factory"  # every section has one
        sec = factory()
        for f in fields(sec):
            out.append((f"{sf.name}.{f.name}", _type_name(f.type), getattr(sec, f.name), f.metadata.get("help", "")))
    return out
