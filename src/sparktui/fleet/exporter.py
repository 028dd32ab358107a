"""`sparktui export`: telemetry and verdicts as Prometheus metrics, for fleets already watched by
Prometheus and Grafana.

One Sampler (one NVML session, fixed interval) feeds the telemetry gauges and the judges that
work on telemetry (G3, G4, G6); the other checks rerun on their own cadence (``Gotcha.cadence_s``;
checks without one hourly) in a background thread. A scrape only sends the last rendered text: it
never waits for a probe (fleet/metrics_server.py). A field NVML cannot read (GB10: memory clock, power limit) has no series at
all, rather than a made-up zero.

Check status codes (``sparktui_check_status``), the same as the CLI's exit codes where they exist:
0 ok, 1 warn, 2 fail, 3 unknown, 4 skip. ``sparktui_check_state{state=...}`` is the same as
one-hot series, which alert rules and state timelines read more easily.

The server binds to loopback by default. The metrics name the machine's driver, packages and
processes and there is no authentication, so a non-loopback address is refused unless
``--allow-remote`` is given (put a reverse proxy with TLS and auth in front, or let Prometheus
reach it through an SSH tunnel).
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import CollectorRegistry

from sparktui.core.config import Config
from sparktui.core.units import is_number
from sparktui.core.readings import Readings
from sparktui.core.telemetry import CLOCK_EVENT_COUNTERS, MEM_BYTE_FIELDS, REASON_BITS, THERMAL_POLICY_COUNTER, counter_ns
from sparktui.core.verdict import Status, Verdict
from sparktui.fleet.metrics_server import MetricsServer
from sparktui.gotchas import IDS, REGISTRY
from sparktui.live import SAMPLED_READINGS, window_readings

STATUS_CODE = {Status.OK: 0, Status.WARN: 1, Status.FAIL: 2, Status.UNKNOWN: 3, Status.SKIP: 4}
STATES = tuple(s.value for s in STATUS_CODE)
SAMPLER_PROBES = SAMPLED_READINGS  # read from the Sampler
SLOW_RERUN_S = 3600.0  # checks without a cadence (G2, G5's stored figure, G9) rerun hourly
DEFAULT_LISTEN = "127.0.0.1:9400"
RENDER_EVERY_S = 1.0


class ListenError(ValueError):
    """A --listen value that cannot be used; the message says why."""


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[IPv6]:PORT``, ``:PORT`` or ``PORT`` (loopback) -> (host, port)."""
    t = text.strip()
    if t.isdigit():
        host, port_text = "127.0.0.1", t
    elif t.startswith("["):
        end = t.find("]")
        if end < 0 or not t[end + 1:].startswith(":"):
            raise ListenError(f"--listen {text!r}: expected [ADDRESS]:PORT")
        host, port_text = t[1:end], t[end + 2:]
    else:
        host, sep, port_text = t.rpartition(":")
        if not sep:
            raise ListenError(f"--listen {text!r}: expected HOST:PORT (e.g. {DEFAULT_LISTEN})")
        if ":" in host:
            raise ListenError(f"--listen {text!r}: expected HOST:PORT (an IPv6 address goes in brackets: [::1]:9400)")
        host = host or "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        raise ListenError(f"--listen {text!r}: port {port_text!r} is not a number") from None
    if not 0 <= port <= 65535:
        raise ListenError(f"--listen {text!r}: port must be 0-65535")
    return host, port


def is_loopback(host: str) -> bool:
    """True when every address ``host`` names is a loopback address."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    addrs = {str(i[4][0]).split("%")[0] for i in infos}
    return bool(addrs) and all(ipaddress.ip_address(a).is_loopback for a in addrs)


@dataclass
class CheckState:
    verdict: Verdict
    ran_at: float
    took_s: float
    runs: int


class CheckScheduler:
    """Reruns checks on their cadence in one background thread; ``state`` is what scrapes read.

    ``sampler_readings`` supplies the readings the Sampler already has (telemetry, meminfo, nvml,
    processes); everything else a due check needs is collected once per round (``collect``).
    """

    def __init__(self, cfg: Config, ids: Iterable[str], sampler_readings: Callable[[], Readings],
                 collect: Callable[[list[str], Config], Readings] | None = None,
                 clock: Callable[[], float] = time.time, slow_rerun_s: float = SLOW_RERUN_S) -> None:
        self.cfg = cfg
        self.ids = list(ids)
        self.sampler_readings = sampler_readings
        self.collect = collect or _collect
        self.clock = clock
        self.slow_rerun_s = slow_rerun_s
        self.state: dict[str, CheckState] = {}
        self.kernel_counts: dict[str, int] | None = None  # G11's kernel_log counts per kind this boot; None: unread
        self.last_error: str | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def cadence(self, gid: str) -> float:
        return REGISTRY[gid].cadence_s or self.slow_rerun_s

    def due(self, now: float | None = None) -> list[str]:
        now = self.clock() if now is None else now
        with self._lock:
            return [g for g in self.ids if g not in self.state or now - self.state[g].ran_at >= self.cadence(g)]

    def run(self, ids: list[str]) -> None:
        """Collect what the given checks need (once each) and judge them. Never raises."""
        from sparktui.runner import judge

        if not ids:
            return
        try:
            base = self.sampler_readings()
            need = {p for g in ids for p in REGISTRY[g].probes if p not in SAMPLER_PROBES or p not in base}
            readings = Readings(dict(base))
            if need:
                for r in self.collect(sorted(need), self.cfg).values():
                    readings.add(r)
            if "kernel_log" in readings:
                counts = kernel_counts(readings.data("kernel_log"))
                with self._lock:
                    self.kernel_counts = counts
            for g in ids:
                t0 = time.perf_counter()
                v = judge(REGISTRY[g], readings, self.cfg)
                with self._lock:
                    prev = self.state.get(g)
                    self.state[g] = CheckState(v, self.clock(), time.perf_counter() - t0 + (v.took_s or 0.0),
                                               (prev.runs if prev else 0) + 1)
        except Exception as e:  # a bug here must not stop the exporter; it shows as a stale check
            self.last_error = repr(e)

    def kernel_snapshot(self) -> dict[str, int] | None:
        with self._lock:
            return dict(self.kernel_counts) if self.kernel_counts is not None else None

    def snapshot(self) -> dict[str, CheckState]:
        with self._lock:
            return dict(self.state)

    def start(self, tick_s: float = 1.0) -> "CheckScheduler":
        def loop() -> None:
            while not self._stop.is_set():
                self.run(self.due())
                self._stop.wait(tick_s)

        self._thread = threading.Thread(target=loop, name="sparktui-export-checks", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)


def _collect(names: list[str], cfg: Config) -> Readings:
    from sparktui.runner import collect

    return collect(names, cfg)


def default_ids(cfg: Config, cwd: str | None = None) -> tuple[list[str], list[str]]:
    """(ids to export, notes). A check that cannot do without the folder scan (G10): run from "/"
    with the default scan path, it would walk the whole disk every few minutes, so it is left out
    then (say where to scan). One that reads the scan only to enrich its verdict stays."""
    ids, notes = list(IDS), []
    cwd = os.getcwd() if cwd is None else cwd
    if cwd == "/" and list(cfg.scan.paths) == ["."]:
        for g in [REGISTRY[i] for i in IDS if "tpscan" in REGISTRY[i].required]:
            ids.remove(g.id)
            notes.append(f"{g.id} left out: started in / with the default scan path; set [scan] paths (or --path DIR) to export it")
    return ids, notes


class Exporter:
    """A prometheus_client collector over one Sampler and one CheckScheduler."""

    def __init__(self, cfg: Config, *, ids: Iterable[str] | None = None, host_label: str | None = None,
                 sampler: Any = None, interval_s: float | None = None, collect=None) -> None:
        from sparktui import __version__
        from sparktui.live import new_sampler

        self.cfg = cfg
        self.version = __version__
        self.host = host_label or socket.gethostname()
        self.sampler = sampler or new_sampler(cfg, interval_s=interval_s, processes_every_s=cfg.telemetry.processes_every_s)
        self.static: dict[str, Any] = {}
        self.checks = CheckScheduler(cfg, ids if ids is not None else IDS, self._sampler_readings, collect=collect)
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self)
        # rendered as often as the sampler samples (at most 1 s apart): a scrape gets the last sample
        self.render_every_s = min(self.sampler.interval_s, RENDER_EVERY_S)
        self.render_error: str | None = None
        self._server: MetricsServer | None = None
        self._render_thread: threading.Thread | None = None
        self._stop_render = threading.Event()

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self, tick_s: float = 1.0) -> "Exporter":
        """Start sampling and the check thread (the HTTP server is ``serve``)."""
        self.static = self.sampler.static()
        self.sampler.start()
        self.checks.start(tick_s)
        return self

    def serve(self, host: str, port: int) -> tuple[str, int]:
        """Render once, start the HTTP server and the render thread; returns the bound (host, port).

        A scrape sends the last rendered text (metrics_server.py): it never waits for the
        sampler, a check or the render itself, however slow they are."""
        from prometheus_client.exposition import CONTENT_TYPE_LATEST

        self._server = MetricsServer(CONTENT_TYPE_LATEST)
        self.render()
        bound = self._server.start(host, port)
        self._render_thread = threading.Thread(target=self._render_loop, name="sparktui-export-render", daemon=True)
        self._render_thread.start()
        return bound

    def render(self) -> None:
        """Render the metrics now and hand them to the server. A bug here keeps the last text
        (its sample timestamp then shows how stale it is) and is kept in ``render_error``."""
        try:
            text = self.text()
        except Exception as e:
            self.render_error = repr(e)
            return
        if self._server is not None:
            self._server.publish(text)

    def text(self) -> bytes:
        """Everything a scrape gets: sparktui's own series, then dcgm-exporter's names for the
        fields that mean the same on GB10 (fleet/dcgm.py)."""
        from prometheus_client.exposition import generate_latest

        from sparktui.fleet import dcgm

        return generate_latest(self.registry) + dcgm.text(self.sampler.history.latest, self.static, self.host).encode()

    def _render_loop(self) -> None:
        while not self._stop_render.wait(self.render_every_s):
            self.render()

    def stop(self) -> None:
        self._stop_render.set()
        if self._render_thread is not None:
            self._render_thread.join(5)
            self._render_thread = None
        if self._server is not None:
            self._server.stop()
            self._server = None
        self.checks.stop()
        self.sampler.stop()

    # -- data ----------------------------------------------------------------------------------
    def _sampler_readings(self) -> Readings:
        """The Sampler's readings; while NVML fails mid-run, without the NVML facts read at start
        (the checks that need them read NVML afresh, and say why they cannot)."""
        static = None if getattr(self.sampler, "nvml_down_since", None) is not None else self.static or None
        readings = window_readings(self.sampler.history, self.cfg, static=static, processes=self.sampler.latest_processes,
                                   interval_s=self.sampler.interval_s, source="live samples", extra_s=2 * self.sampler.interval_s)
        return readings if readings is not None else Readings()  # (None only with ``since``)

    def collect(self) -> Iterator[Any]:
        """Called by prometheus_client on each render: reads the latest values only."""
        h = self.host
        info = GaugeMetricFamily("sparktui_info", "sparktui exporter running (value 1)", labels=["host", "version"])
        info.add_metric([h, self.version], 1)
        yield info
        yield from self._telemetry(h, self.sampler.history.latest)
        yield from self._check_metrics(h, self.checks.snapshot())
        yield from self._kernel_metrics(h, self.checks.kernel_snapshot())

    @staticmethod
    def _kernel_metrics(h: str, counts: dict[str, int] | None) -> Iterator[Any]:
        """G11's kernel log events this boot per kind; no series while the log is unread (never a zero)."""
        fam = CounterMetricFamily("sparktui_kernel_events", "Kernel log events since boot (G11), by kind",
                                  labels=["host", "kind"])
        for kind, n in sorted((counts or {}).items()):
            fam.add_metric([h, kind], n)
        yield fam

    def _telemetry(self, h: str, sample: dict[str, Any] | None) -> Iterator[Any]:
        up = GaugeMetricFamily("sparktui_nvml_up", "1 when the last sample read NVML, 0 when NVML was unavailable", labels=["host"])
        ts = GaugeMetricFamily("sparktui_sample_timestamp_seconds", "Unix time of the last telemetry sample", labels=["host"])
        temp = GaugeMetricFamily("sparktui_gpu_temperature_celsius", "GPU temperature", labels=["host", "gpu"])
        power = GaugeMetricFamily("sparktui_gpu_power_watts", "GPU power draw (NVML)", labels=["host", "gpu"])
        clock = GaugeMetricFamily("sparktui_gpu_clock_hertz", "Current clock", labels=["host", "gpu", "clock"])
        util = GaugeMetricFamily("sparktui_gpu_utilization_ratio", "GPU utilization, 0-1", labels=["host", "gpu"])
        limit = GaugeMetricFamily("sparktui_gpu_power_limit_watts", "Enforced power limit (absent on GB10: N/A)", labels=["host", "gpu"])
        reason = GaugeMetricFamily("sparktui_gpu_clock_event_reason", "1 while NVML reports this clock-event (throttle) reason",
                                   labels=["host", "gpu", "reason"])
        held = CounterMetricFamily("sparktui_gpu_clock_event_seconds",
                                   "Time NVML counted the clocks held down, per cause (nvidia-smi's clock-event "
                                   "reasons counters; thermal_policy: the older field 75, where 269 is unreadable)",
                                   labels=["host", "gpu", "reason"])
        mem = GaugeMetricFamily("sparktui_memory_bytes", "/proc/meminfo fields (unified memory: CPU and GPU share it)",
                                labels=["host", "field"])
        if sample is not None:
            errors = sample.get("errors") or {}
            up.add_metric([h], 0 if "nvml" in errors else 1)
            if isinstance(sample.get("t"), (int, float)):
                ts.add_metric([h], float(sample["t"]))
            for g in sample.get("gpus") or []:
                gi = str(g.get("index", 0))
                _put(temp, [h, gi], g.get("temp_c"))
                _put(power, [h, gi], g.get("power_w"))
                _put(limit, [h, gi], g.get("power_limit_w"))
                for key, name in (("sm_mhz", "sm"), ("gr_mhz", "graphics"), ("mem_mhz", "memory")):
                    _put(clock, [h, gi, name], g.get(key), 1e6)
                _put(util, [h, gi], g.get("util_gpu"), 0.01)
                if isinstance(g.get("reasons_mask"), int):
                    active = set(g.get("reasons") or [])
                    for _, name in REASON_BITS:
                        reason.add_metric([h, gi, name], 1 if name in active else 0)
                for key, reason_name in _COUNTER_REASONS:
                    _put(held, [h, gi, reason_name], counter_ns(g, key)[0], 1e-9)
            for key in MEM_BYTE_FIELDS:  # HugePages_Total/Free are counts, not bytes
                _put(mem, [h, key], (sample.get("mem") or {}).get(key))
        yield from (up, ts, temp, power, limit, clock, util, reason, held, mem)

    @staticmethod
    def _check_metrics(h: str, state: dict[str, CheckState]) -> Iterator[Any]:
        status = GaugeMetricFamily("sparktui_check_status", "Check status: 0 ok, 1 warn, 2 fail, 3 unknown, 4 skip",
                                   labels=["host", "id", "title"])
        onehot = GaugeMetricFamily("sparktui_check_state", "1 for the check's current state", labels=["host", "id", "state"])
        ran = GaugeMetricFamily("sparktui_check_last_run_timestamp_seconds", "Unix time the check last ran", labels=["host", "id"])
        took = GaugeMetricFamily("sparktui_check_duration_seconds", "How long the check's readings and judge took", labels=["host", "id"])
        runs = CounterMetricFamily("sparktui_check_runs", "Times the check ran", labels=["host", "id"])
        for gid in IDS:
            st = state.get(gid)
            if st is None:  # not run yet (or not exported): no series rather than a guess
                continue
            s = st.verdict.status
            status.add_metric([h, gid, REGISTRY[gid].title], STATUS_CODE[s])
            for name in STATES:
                onehot.add_metric([h, gid, name], 1 if name == s.value else 0)
            ran.add_metric([h, gid], st.ran_at)
            took.add_metric([h, gid], st.took_s)
            runs.add_metric([h, gid], st.runs)
        yield from (status, onehot, ran, took, runs)


# sample key -> the clock-event reason label its counter is exported under (the names the
# sparktui_gpu_clock_event_reason gauge uses); an unreadable counter has no series, never a zero.
_COUNTER_REASONS = tuple(zip((k for k, _, _ in CLOCK_EVENT_COUNTERS),
                             ("sw_power_cap", "sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown",
                              "hw_power_brake_slowdown"))) + ((THERMAL_POLICY_COUNTER[0], "thermal_policy"),)


def kernel_counts(data: Any) -> dict[str, int] | None:
    """The per-kind counts of a kernel_log reading's data (probes/kernel_log.py), or None when the
    log was not read or the counts are malformed (then no series: an unread log is not zero events)."""
    counts = data.get("counts") if isinstance(data, dict) else None
    if not isinstance(counts, dict) or not counts:
        return None
    out = {k: v for k, v in counts.items() if isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0}
    return out if len(out) == len(counts) else None


def _put(family: Any, labels: list[str], value: Any, scale: float = 1.0) -> None:
    """A series only for a real number (core/units): N/A, NaN or infinity from a driver is no
    series, never a NaN sample a dashboard would draw as a value."""
    if is_number(value):
        family.add_metric(labels, float(value) * scale)


# -- node_exporter's textfile collector ------------------------------------------------------------

TEXTFILE_NAME = "sparktui.prom"
TEXTFILE_EVERY_S = 60.0


class _Verdicts:
    """A collector of the verdicts alone (no telemetry: a textfile is read long after it was
    written, and node_exporter already serves the host's own figures)."""

    def __init__(self, host: str, version: str, state: dict[str, CheckState], kernel: dict[str, int] | None) -> None:
        self.host, self.version, self.state, self.kernel = host, version, state, kernel

    def collect(self) -> Iterator[Any]:
        info = GaugeMetricFamily("sparktui_info", "sparktui exporter running (value 1)", labels=["host", "version"])
        info.add_metric([self.host, self.version], 1)
        yield info
        yield from Exporter._check_metrics(self.host, self.state)
        yield from Exporter._kernel_metrics(self.host, self.kernel)


def verdicts_text(host: str, state: dict[str, CheckState], kernel: dict[str, int] | None) -> bytes:
    """The checks' series in the text format, for a textfile."""
    from prometheus_client.exposition import generate_latest

    from sparktui import __version__

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Verdicts(host, __version__, state, kernel))
    return generate_latest(registry)


def write_textfile(folder: str, data: bytes, name: str = TEXTFILE_NAME) -> str:
    """Write ``folder/name`` atomically, as node_exporter's textfile collector asks: the whole text
    into a temporary file of the same folder whose name does not end in `.prom` (the collector
    skips it), flushed to disk, then renamed over the old file. A scrape reads the old file or the
    new one, never half of one. Raises OSError."""
    from sparktui.core.atomic import write_text_atomic

    final = os.path.join(folder, name)
    write_text_atomic(final, data.decode("utf-8"), follow_links=False)  # temporary: .sparktui.prom.XXXX.tmp
    os.chmod(final, 0o644)  # node_exporter runs as its own user: readable whatever the umask
    return final


def run_textfile(cfg: Config, folder: str, ids: list[str] | None, host_label: str | None, *, once: bool = False,
                 every_s: float = TEXTFILE_EVERY_S, stop: threading.Event | None = None, err=None) -> int:
    """`sparktui export --textfile DIR`: the verdicts into DIR/sparktui.prom for node_exporter's
    textfile collector. ``once``: judge every check once, write, exit (a cron job or systemd timer);
    otherwise keep the checks on their cadence and rewrite the file every ``every_s`` until stopped.
    Exit 73 when the folder cannot be written (it is checked before any probe runs)."""
    err = err or sys.stderr
    if not os.path.isdir(folder):
        print(f"sparktui export: --textfile {folder!r} is not a folder (node_exporter's --collector.textfile.directory)", file=err)
        return 73
    if not os.access(folder, os.W_OK | os.X_OK):
        print(f"sparktui export: cannot write in {folder!r} (permission denied)", file=err)
        return 73
    notes: list[str] = []
    if ids is None:
        ids, notes = default_ids(cfg)
    for n in notes:
        print(f"sparktui export: {n}", file=err)
    host = host_label or socket.gethostname()
    if once:
        from sparktui.runner import run_checks

        verdicts, readings = run_checks(ids, cfg)
        now = time.time()
        state = {v.id: CheckState(v, now, v.took_s or 0.0, 1) for v in verdicts}
        kernel = kernel_counts(readings.data("kernel_log")) if "kernel_log" in readings else None
        return _write_or_say(folder, verdicts_text(host, state, kernel), err)
    exporter = Exporter(cfg, ids=ids, host_label=host)
    stop = stop or threading.Event()
    print(f"sparktui export: writing {os.path.join(folder, TEXTFILE_NAME)} every {every_s:g} s; checks {', '.join(ids)}; "
          "Ctrl-C stops", file=err)
    code = 0
    with _until_stopped(stop, exporter):
        exporter.start()
        while True:
            if exporter.checks.snapshot():  # nothing judged yet: the old file (if any) stays
                code = _write_or_say(folder, verdicts_text(host, exporter.checks.snapshot(),
                                                           exporter.checks.kernel_snapshot()), err)
            if stop.wait(every_s if exporter.checks.snapshot() else min(every_s, 1.0)):
                break
    return code


@contextlib.contextmanager
def _until_stopped(stop: threading.Event, exporter: "Exporter") -> Iterator[None]:
    """SIGTERM sets ``stop`` (from the main thread), Ctrl-C ends the block quietly, and the exporter
    is stopped after it, however it ended: `export`'s normal stop either way (exit 0)."""
    import signal

    old = None
    if threading.current_thread() is threading.main_thread():
        old = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        yield
    except KeyboardInterrupt:
        pass
    finally:
        exporter.stop()
        if old is not None:
            signal.signal(signal.SIGTERM, old)


def _write_or_say(folder: str, data: bytes, err) -> int:
    try:
        write_textfile(folder, data)
    except OSError as e:
        print(f"sparktui export: cannot write {os.path.join(folder, TEXTFILE_NAME)}: {e.strerror or e}", file=err)
        return 74
    return 0


def run_export(cfg: Config, listen: str, allow_remote: bool, ids: list[str] | None, host_label: str | None,
               stop: threading.Event | None = None, err=None) -> int:
    """The `sparktui export` command body; returns an exit code (64 for a refused address,
    69 when the address cannot be bound)."""
    err = err or sys.stderr
    try:
        host, port = parse_listen(listen)
    except ListenError as e:
        print(f"sparktui export: {e}", file=err)
        return 64
    if not is_loopback(host) and not allow_remote:
        print(f"sparktui export: refusing to listen on {host}: it is not a loopback address. The metrics name this "
              "machine's driver, packages and processes, and the endpoint has no authentication. Listen on 127.0.0.1 "
              "and let Prometheus reach it through a tunnel or an authenticating proxy, or pass --allow-remote.", file=err)
        return 64
    notes: list[str] = []
    if ids is None:
        ids, notes = default_ids(cfg)
    exporter = Exporter(cfg, ids=ids, host_label=host_label)
    try:
        exporter.start()
        bound = exporter.serve(host, port)
    except OSError as e:
        exporter.stop()
        print(f"sparktui export: cannot listen on {host}:{port}: {e.strerror or e}", file=err)
        return 69
    for n in notes:
        print(f"sparktui export: {n}", file=err)
    shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
    warn = "" if is_loopback(host) else " (REACHABLE FROM THE NETWORK: --allow-remote)"
    print(f"sparktui export: serving http://{shown}:{bound[1]}/metrics{warn}; checks {', '.join(ids)}; Ctrl-C stops",
          file=err)
    stop = stop or threading.Event()
    with _until_stopped(stop, exporter):
        while not stop.wait(3600):
            pass
    return 0
