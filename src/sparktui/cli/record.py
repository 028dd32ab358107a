"""`sparktui record` and `sparktui check --replay`: telemetry to a file, and judging a file.

Recording runs the same Sampler the dashboard uses (one NVML session, fixed interval, no busy
loop) and appends each sample as a JSON line, flushed, so Ctrl-C, SIGTERM or a crash lose at most
the line being written.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from typing import Callable

from sparktui import __version__
from sparktui.core.config import MIN_INTERVAL_S
from sparktui.core.recording import RecordingError, RecordingWriter, header, read_recording, readings_from_recording

MAX_SECONDS = 1e9  # about 31 years: longer is a typo, and a wait that long overflows
REPLAY_IDS = ("G3", "G4", "G6")  # what any recording's samples answer
# Readings the samples and the header already carry; every other probe a judge uses is read once
# when a recording starts and written as "readings" lines, so `check --replay` judges every check.
CARRIED_BY_SAMPLES = frozenset({"telemetry", "processes", "meminfo", "nvml"})
READINGS_WAIT_S = 60.0  # at the end of a short recording, how long the readings still being taken are awaited


def recorded_probes() -> list[str]:
    """The probes whose readings `record` writes as "readings" lines: every probe a check uses
    (G5 only reads the kept result; nothing intrusive runs) but those the samples carry."""
    from sparktui.gotchas import REGISTRY
    from sparktui.runner import needed_probes

    return [p for p in needed_probes(REGISTRY.values()) if p not in CARRIED_BY_SAMPLES]


class ReadingsRecorder:
    """Takes the check readings in a thread and appends each to the recording as it completes, so
    the samples start at once and a slow probe (the torch import in the target) costs no sample.
    Readings that a cancel cut short are not written: a replay then says the check was not recorded.
    A write the disk refuses goes to ``on_write_error`` (the recording then ends with 74, as when a
    sample's write is refused), never silently into the end-of-run summary alone."""

    def __init__(self, writer: RecordingWriter, cfg, names: list[str],
                 on_write_error: "Callable[[OSError], None] | None" = None) -> None:
        self.writer, self.cfg, self.names = writer, cfg, names
        self.on_write_error = on_write_error
        self.cancel = threading.Event()
        self.written: list[str] = []
        self.error: str | None = None
        self._lock = threading.Lock()
        self._closed = False
        self.thread = threading.Thread(target=self._run, name="sparktui-record-readings", daemon=True)

    def start(self) -> "ReadingsRecorder":
        self.thread.start()
        return self

    def _run(self) -> None:
        from sparktui.runner import collect_iter

        try:
            for reading in collect_iter(self.names, self.cfg, cancel=self.cancel):
                with self._lock:
                    if self.cancel.is_set() or self._closed:
                        continue
                    self.writer.readings({reading.probe: reading.to_dict()})
                    self.written.append(reading.probe)
        except OSError as e:  # the disk refused it: the recording ends there, said (74)
            self._write_failed(e)
        except Exception as e:  # a write that fails costs the readings, never the samples
            self.error = repr(e)

    def _write_failed(self, e: OSError) -> None:
        self.error = f"{e.strerror or e}"
        if self.on_write_error is not None:
            self.on_write_error(e)

    def finish(self, wait_s: float) -> None:
        """Wait for the readings still being taken (Ctrl-C skips them), then write nothing more."""
        if self.thread.is_alive():
            print(f"sparktui: waiting up to {wait_s:g} s for the check readings (Ctrl-C skips them)", file=sys.stderr)
            try:
                self.thread.join(wait_s)
            except KeyboardInterrupt:
                pass
        self.cancel.set()
        self.thread.join(2.0)
        with self._lock:
            self._read_again_at_end()
            self._closed = True

    READ_AGAIN_AT_END = ("kernel_log",)  # what happened during the run: an OOM kill at hour 3 is in it

    def _read_again_at_end(self) -> None:
        """Readings that grow during the run are taken again as it ends (a later "readings" line
        replaces the earlier one in a replay): the kernel log then holds every event of the run."""
        from sparktui import probes

        for name in (n for n in self.READ_AGAIN_AT_END if n in self.names):
            try:
                self.writer.readings({name: probes.safe_read(name, self.cfg).to_dict()})
            except OSError as e:
                self._write_failed(e)
            except Exception as e:  # a write that fails costs this reading, never the samples
                self.error = repr(e)

    @property
    def missing(self) -> list[str]:
        return [n for n in self.names if n not in self.written]


def replay_ids_for(readings) -> list[str]:
    """G3, G4, G6 from the samples, plus every check whose readings the header carries."""
    from sparktui.core.recording import replay_ids
    from sparktui.gotchas import REGISTRY

    extra = set(replay_ids(readings, REGISTRY))
    return [gid for gid in REGISTRY if gid in REPLAY_IDS or gid in extra]


def add_parser(sub, common) -> None:
    from sparktui.cli.common import bounded

    r = sub.add_parser("record", help="append live telemetry to a JSON-lines recording (Ctrl-C stops)")
    r.add_argument("-o", "--output", metavar="FILE", required=True, help="recording to write (continued if it exists; '-' is refused: a recording is a file)")
    r.add_argument("--interval", type=bounded(MIN_INTERVAL_S, 86400, "seconds"), metavar="S",
                   help="seconds between samples (default telemetry.interval_s)")
    r.add_argument("--duration", type=bounded(0.1, MAX_SECONDS, "seconds"), metavar="S",
                   help="stop after this many seconds (default: until Ctrl-C)")
    r.add_argument("--processes-every", type=bounded(MIN_INTERVAL_S, MAX_SECONDS, "seconds", zero="never"), metavar="S",
                   help="seconds between process-view snapshots (default telemetry.processes_every_s; 0 = never)")
    common(r)  # after the command's own options, in its usage line too


def cmd_record(args: argparse.Namespace) -> int:
    from sparktui import probes
    from sparktui.cli.common import EXIT_IOERR, EXIT_OK, EXIT_USAGE, config_from_args, mark_interrupted
    from sparktui.probes.sampler import Sampler

    from sparktui.cli.common import UsageError

    if args.output == "-":
        raise UsageError("sparktui record: -o - is not supported (a recording is appended to a file); give a file name")
    import os
    import stat

    if os.path.exists(args.output) and not stat.S_ISREG(os.stat(args.output).st_mode):
        raise UsageError(f"sparktui record: {args.output} is not a regular file (a pipe, device or folder?); give a file name")
    cfg = config_from_args(args)
    interval = args.interval or cfg.telemetry.interval_s
    every = cfg.telemetry.processes_every_s if args.processes_every is None else args.processes_every
    sampler = Sampler(cfg, interval_s=interval, history=64, processes_every_s=every or None)
    host = dict(probes.safe_read("host", cfg).data or {})
    head = header(interval_s=interval, host=host, static=sampler.static(), version=__version__,
                  processes_every_s=every or None)
    try:
        writer = RecordingWriter(args.output, head)
    except (RecordingError, OSError) as e:
        sampler.close()
        print(f"sparktui: {e}", file=sys.stderr)
        return EXIT_USAGE
    counts = {"samples": 0, "processes": 0}
    done = threading.Event()
    write_errors: list[OSError] = []

    def kept(write, obj: dict, kind: str) -> None:
        """A write the disk refuses (full, a quota, EIO) ends the recording at once: every line
        before it is whole, and going on would only fail again."""
        try:
            write(obj)
        except OSError as e:
            write_errors.append(e)
            done.set()
        else:
            counts[kind] += 1

    sampler.on_sample = lambda s: kept(writer.sample, s, "samples")
    sampler.on_processes = lambda p: kept(writer.processes, p, "processes")
    def refused(e: OSError) -> None:
        write_errors.append(e)
        done.set()

    taker = ReadingsRecorder(writer, cfg, recorded_probes(), on_write_error=refused)
    old_term = signal.signal(signal.SIGTERM, lambda *_: done.set()) if threading.current_thread() is threading.main_thread() else None
    nvml_note = (head["static"] or {}).get("error")
    print(f"sparktui: recording every {interval:g} s to {args.output}"
          + (f" for {args.duration:g} s" if args.duration else " until Ctrl-C")
          + (f" (NVML unavailable: {nvml_note}; host memory only)" if nvml_note else ""), file=sys.stderr)
    started = time.monotonic()
    sampler.start()
    taker.start()
    try:
        done.wait(args.duration) if args.duration else _wait_forever(done)
    except KeyboardInterrupt:  # how an open-ended recording ends; one with --duration was cut short (130)
        if args.duration:
            mark_interrupted()
    finally:
        sampler.stop()
        taker.finish(READINGS_WAIT_S)
        writer.close()
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)
    took = time.monotonic() - started
    extra = f", {sampler.callback_errors} write errors ({sampler.last_callback_error})" if sampler.callback_errors else ""
    if taker.error:
        extra += f"; check readings not written ({taker.error})"
    elif taker.missing:
        extra += f"; check readings not taken: {', '.join(taker.missing)} (their checks are not judged in a replay)"
    print(f"sparktui: wrote {counts['samples']} samples, {counts['processes']} process snapshots and "
          f"{len(taker.written)} check readings to {args.output} over {took:.0f} s{extra}", file=sys.stderr)
    if write_errors:
        e = write_errors[0]
        print(f"sparktui: cannot write {args.output}: {e.strerror or e}; the recording stopped there, "
              "whole up to its last line", file=sys.stderr)
        return EXIT_IOERR
    return EXIT_OK


def _wait_forever(done: threading.Event) -> None:
    while not done.wait(3600):
        pass


def load_recording(path: str):
    """A recording file read and validated once; a bad one is a usage error with the reason."""
    from sparktui.cli.common import UsageError

    try:
        return read_recording(path)
    except RecordingError as e:
        raise UsageError(f"sparktui: {e}") from None


def check_replay(args: argparse.Namespace) -> int:
    """`check --replay FILE`: review a whole recording: G3/G4/G6 at their worst moment or window,
    said with when, and every check whose readings the recording carries. The dashboard ends a
    replay on the same readings (core/recording.readings_from_recording)."""
    from sparktui.cli import render
    from sparktui.cli.common import EXIT_FOR, EXIT_USAGE, parse_ids, config_from_args
    from sparktui.core.verdict import worst
    from sparktui.runner import run_checks

    try:
        rec = read_recording(args.replay)
    except RecordingError as e:
        print(f"sparktui: {e}", file=sys.stderr)
        return EXIT_USAGE
    for problem in rec.problems:
        print(f"sparktui: {args.replay}: {problem}", file=sys.stderr)
    if rec.problems_unnamed:
        print(f"sparktui: {args.replay}: {rec.problems_unnamed} more malformed lines skipped", file=sys.stderr)
    if rec.thinning_note():
        print(f"sparktui: {args.replay}: {rec.thinning_note()}", file=sys.stderr)
    cfg = config_from_args(args)
    readings = readings_from_recording(rec)
    ids = parse_ids(args.ids) if args.ids else replay_ids_for(readings)
    verdicts, _ = run_checks(ids, cfg, readings)
    host = dict(rec.header.get("host") or {})
    thinned = f", every {rec.sample_stride}th judged" if rec.sample_stride > 1 else ""
    synthetic = f"; {rec.synthetic_note()}" if rec.synthetic_note() else ""
    source = f"recording {args.replay} ({rec.samples_seen} samples over {rec.duration_s / 60:.1f} min{thinned}{synthetic})"
    if args.json:
        json.dump(render.document(verdicts, host, source), sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        from sparktui.core.inert import visible  # the recording's own note is outside text

        sys.stdout.write(f"{visible(source)}\n")
        sys.stdout.write(render.table(verdicts, verbose=args.verbose, stream=sys.stdout))
    return EXIT_FOR[worst([v.status for v in verdicts])]
