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
from typing import Any, Callable

from sparktui.core.config import MIN_INTERVAL_S
from sparktui.core.recording import RecordingError, RecordingWriter, read_recording, readings_from_recording

MAX_SECONDS = 1e9  # about 31 years: longer is a typo, and a wait that long overflows
READINGS_WAIT_S = 60.0  # at the end of a short recording, how long the readings still being taken are awaited


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


def _refuse_output(output: str) -> None:
    """A recording is a regular file appended to: '-', a pipe, a device or a folder is refused."""
    import os
    import stat

    from sparktui.cli.common import UsageError

    if output == "-":
        raise UsageError("sparktui record: -o - is not supported (a recording is appended to a file); give a file name")
    if os.path.exists(output) and not stat.S_ISREG(os.stat(output).st_mode):
        raise UsageError(f"sparktui record: {output} is not a regular file (a pipe, device or folder?); give a file name")


class _Written:
    """What reached the file, and the first write the disk refused (full, a quota, EIO): that ends
    the recording at once, every line before it whole (going on would only fail again)."""

    def __init__(self, done: threading.Event) -> None:
        self.done = done
        self.counts = {"samples": 0, "processes": 0, "run": 0}
        self.errors: list[OSError] = []

    def refused(self, e: OSError) -> None:
        self.errors.append(e)
        self.done.set()

    def kept(self, write: Callable[[dict], None], obj: dict, kind: str) -> None:
        try:
            write(obj)
        except OSError as e:
            self.refused(e)
        else:
            self.counts[kind] += 1


class RunRecorder:
    """The training run followed while recording (live/run.py): its progress written as "readings"
    lines every RECORD_EVERY_S, each holding what was seen since the last, and once more at the end,
    so `check --replay` judges the whole run with the time of each step (G14)."""

    def __init__(self, cfg: Any, write: Any) -> None:
        from sparktui.live.run import RunWatch

        self.write = write
        self.watch = RunWatch(cfg, self._changed)

    def _changed(self) -> None:
        r = self.watch.recorded_if_due()
        if r is not None:
            self.write(r)

    def finish(self) -> None:
        self.watch.stop()
        r = self.watch.record_at_end()
        if r is not None:
            self.write(r)


def cmd_record(args: argparse.Namespace) -> int:
    from sparktui.cli.common import EXIT_IOERR, EXIT_OK, EXIT_USAGE, config_from_args, mark_interrupted
    from sparktui.live import new_sampler, recording_head
    from sparktui.live.recorder import ReadingsRecorder, recorded_probes

    _refuse_output(args.output)
    cfg = config_from_args(args)
    interval = args.interval or cfg.telemetry.interval_s
    every = cfg.telemetry.processes_every_s if args.processes_every is None else args.processes_every
    sampler = new_sampler(cfg, interval_s=interval, processes_every_s=every, history=64)
    head, _ = recording_head(cfg, sampler, every)
    try:
        writer = RecordingWriter(args.output, head)
    except (RecordingError, OSError) as e:
        sampler.close()
        print(f"sparktui: {e}", file=sys.stderr)
        return EXIT_USAGE
    done = threading.Event()
    written = _Written(done)
    sampler.on_sample = lambda s: written.kept(writer.sample, s, "samples")
    run = RunRecorder(cfg, lambda r: written.kept(writer.readings, {r.probe: r.to_dict()}, "run"))

    def on_processes(p: dict[str, Any]) -> None:
        written.kept(writer.processes, p, "processes")
        run.watch.saw_processes(p)  # the run looked for again, in the watch's thread

    sampler.on_processes = on_processes
    taker = ReadingsRecorder(writer, cfg, [p for p in recorded_probes() if p != run.watch.reading_name],
                             on_write_error=written.refused)
    old_term = signal.signal(signal.SIGTERM, lambda *_: done.set()) if threading.current_thread() is threading.main_thread() else None
    nvml_note = (head["static"] or {}).get("error")
    print(f"sparktui: recording every {interval:g} s to {args.output}"
          + (f" for {args.duration:g} s" if args.duration else " until Ctrl-C")
          + (f" (NVML unavailable: {nvml_note}; host memory only)" if nvml_note else ""), file=sys.stderr)
    started = time.monotonic()
    sampler.start()
    taker.start()
    run.watch.start()
    try:
        done.wait(args.duration) if args.duration else _wait_forever(done)
    except KeyboardInterrupt:  # how an open-ended recording ends; one with --duration was cut short (130)
        if args.duration:
            mark_interrupted()
    finally:
        sampler.stop()
        run.finish()
        taker.finish(READINGS_WAIT_S)
        writer.close()
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)
    _say_written(args.output, written, sampler, taker, time.monotonic() - started)
    if written.errors:
        first = written.errors[0]
        print(f"sparktui: cannot write {args.output}: {first.strerror or first}; the recording stopped there, "
              "whole up to its last line", file=sys.stderr)
        return EXIT_IOERR
    return EXIT_OK


def _say_written(output: str, written: _Written, sampler: Any, taker: Any, took: float) -> None:
    extra = f", {sampler.callback_errors} write errors ({sampler.last_callback_error})" if sampler.callback_errors else ""
    if taker.error:
        extra += f"; check readings not written ({taker.error})"
    elif taker.missing:
        extra += f"; check readings not taken: {', '.join(taker.missing)} (their checks are not judged in a replay)"
    counts = written.counts
    print(f"sparktui: wrote {counts['samples']} samples, {counts['processes']} process snapshots and "
          f"{len(taker.written)} check readings to {output} over {took:.0f} s{extra}", file=sys.stderr)


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
    """`check --replay FILE`: review a whole recording: the telemetry-fed checks at their worst moment or window,
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
    from sparktui.live.recorder import replay_ids_for

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

        # wrapped on a terminal or to COLUMNS, like the verdicts under it; whole into a pipe (grep)
        head = render.wrap(visible(source), render.output_width(), "", "  ") if render.wraps_lines() else [visible(source)]
        sys.stdout.write("".join(line + "\n" for line in head))
        sys.stdout.write(render.table(verdicts, verbose=args.verbose, stream=sys.stdout))
    return EXIT_FOR[worst([v.status for v in verdicts])]
