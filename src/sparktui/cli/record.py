"""`sparktui record` and `sparktui check --replay`: telemetry to a file, and judging a file.

Recording runs the same Sampler the dashboard uses (one NVML session, fixed interval, no busy
loop) and appends each sample as a JSON line, flushed, so Ctrl-C, SIGTERM or a crash lose at most
the line being written.
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import threading
import time

from sparktui import __version__
from sparktui.core.recording import RecordingError, RecordingWriter, header, read_recording, readings_from_recording

MAX_SECONDS = 1e9  # about 31 years: longer is a typo, and a wait that long overflows
REPLAY_IDS = ("G3", "G4", "G6")  # what any recording's samples answer


def replay_ids_for(readings) -> list[str]:
    """G3, G4, G6 from the samples, plus every check whose readings the header carries."""
    from sparktui.core.recording import replay_ids
    from sparktui.gotchas import REGISTRY

    extra = set(replay_ids(readings, REGISTRY))
    return [gid for gid in REGISTRY if gid in REPLAY_IDS or gid in extra]


def positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not v > 0 or not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"must be a finite number greater than 0, got {text!r}")
    if v > MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_SECONDS:g} s, got {text!r}")
    return v


def nonnegative_float(text: str) -> float:
    """--processes-every: 0 (never) or a finite number of seconds."""
    if text.strip() in ("0", "0.0"):
        return 0.0
    return positive_float(text)


def add_parser(sub, common) -> None:
    r = sub.add_parser("record", help="append live telemetry to a JSON-lines recording (Ctrl-C stops)")
    common(r)
    r.add_argument("-o", "--output", metavar="FILE", required=True, help="recording to write (continued if it exists; '-' is refused: a recording is a file)")
    r.add_argument("--interval", type=positive_float, metavar="S", help="seconds between samples (default telemetry.interval_s)")
    r.add_argument("--duration", type=positive_float, metavar="S", help="stop after this many seconds (default: until Ctrl-C)")
    r.add_argument("--processes-every", type=nonnegative_float, metavar="S",
                   help="seconds between process-view snapshots (default telemetry.processes_every_s; 0 = never)")


def cmd_record(args: argparse.Namespace) -> int:
    from sparktui import probes
    from sparktui.cli.main import EXIT_OK, EXIT_USAGE, config_from_args
    from sparktui.probes.sampler import Sampler

    from sparktui.cli.main import UsageError

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

    def on_sample(s: dict) -> None:
        writer.sample(s)
        counts["samples"] += 1

    def on_processes(p: dict) -> None:
        writer.processes(p)
        counts["processes"] += 1

    sampler.on_sample, sampler.on_processes = on_sample, on_processes
    done = threading.Event()
    old_term = signal.signal(signal.SIGTERM, lambda *_: done.set()) if threading.current_thread() is threading.main_thread() else None
    nvml_note = (head["static"] or {}).get("error")
    print(f"sparktui: recording every {interval:g} s to {args.output}"
          + (f" for {args.duration:g} s" if args.duration else " until Ctrl-C")
          + (f" (NVML unavailable: {nvml_note}; host memory only)" if nvml_note else ""), file=sys.stderr)
    started = time.monotonic()
    sampler.start()
    try:
        done.wait(args.duration) if args.duration else _wait_forever(done)
    except KeyboardInterrupt:
        pass
    finally:
        sampler.stop()
        writer.close()
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)
    took = time.monotonic() - started
    extra = f", {sampler.callback_errors} write errors ({sampler.last_callback_error})" if sampler.callback_errors else ""
    print(f"sparktui: wrote {counts['samples']} samples and {counts['processes']} process snapshots "
          f"to {args.output} over {took:.0f} s{extra}", file=sys.stderr)
    return EXIT_OK


def _wait_forever(done: threading.Event) -> None:
    while not done.wait(3600):
        pass


def load_recording(path: str):
    """A recording file read and validated once; a bad one is a usage error with the reason."""
    from sparktui.cli.main import UsageError

    try:
        return read_recording(path)
    except RecordingError as e:
        raise UsageError(f"sparktui: {e}") from None


def check_replay(args: argparse.Namespace) -> int:
    """`check --replay FILE`: judge G3/G4/G6 on a recording."""
    from sparktui.cli import render
    from sparktui.cli.main import EXIT_FOR, EXIT_USAGE, _ids, config_from_args
    from sparktui.core.verdict import worst
    from sparktui.runner import run_checks

    try:
        rec = read_recording(args.replay)
    except RecordingError as e:
        print(f"sparktui: {e}", file=sys.stderr)
        return EXIT_USAGE
    for problem in rec.problems:
        print(f"sparktui: {args.replay}: {problem}", file=sys.stderr)
    cfg = config_from_args(args)
    readings = readings_from_recording(rec)
    ids = _ids(args.ids) if args.ids else replay_ids_for(readings)
    verdicts, _ = run_checks(ids, cfg, readings)
    host = dict(rec.header.get("host") or {})
    source = f"recording {args.replay} ({len(rec.samples)} samples over {rec.duration_s / 60:.1f} min)"
    if args.json:
        json.dump(render.document(verdicts, host, source), sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(f"{source}\n")
        sys.stdout.write(render.table(verdicts, verbose=args.verbose, stream=sys.stdout))
    return EXIT_FOR[worst([v.status for v in verdicts])]
