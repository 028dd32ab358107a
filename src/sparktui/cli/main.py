"""``sparktui`` entry point: argument parsing and exit codes.

Exit codes (docs/cli.md): 0 all ok/skip, 1 a warning, 2 a failure, 3 unknowns but nothing
worse, 4 an intrusive action refused, 64 usage error, 78 config error, 70 internal error (a bug,
and only that), 74 stdout or an -o file cannot be written (one line says where and why), 141
stdout's reader went away (`| head`; quiet, 128 + SIGPIPE as for any filter), 130 interrupted.

Writing output is not a bug: stdout is guarded (``_Stdout``) so that a closed stdout, a full disk,
an I/O error or a reader that quit surface as ``StdoutError`` and end in 74 or 141, never in 70.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
from pathlib import Path

from sparktui import __version__
from sparktui.cli.common import (EXIT_BROKEN_PIPE, EXIT_CONFIG, EXIT_FAIL, EXIT_FOR,  # noqa: F401
                                 EXIT_INTERNAL, EXIT_IOERR, EXIT_OK, EXIT_REFUSED, EXIT_UNKNOWN, EXIT_USAGE,
                                 EXIT_WARN, UsageError, _Parser, add_common_options, add_sub_common_options,
                                 bounded, config_from_args, interpreter_problem, interruptibly, kernel_log_readings,
                                 parse_ids, positive_minutes)
from sparktui.core.config import Config, ConfigError
from sparktui.core.readings import SnapshotError, read_snapshot, snapshot_text, write_snapshot
from sparktui.core.verdict import Verdict, worst
from sparktui.gotchas import IDS, REGISTRY, UnknownGotcha, normalize_id

def build_parser() -> argparse.ArgumentParser:
    """The whole command line. Each parser lists its own options first and the shared ones after,
    under their own heading; cli/helptext.py gives each its description, examples and exit codes."""
    from sparktui.cli.helptext import document

    p = _Parser(prog="sparktui")
    p.add_argument("--version", action="version", version=f"sparktui {__version__}")
    p.add_argument("--replay", metavar="FILE|ID", help="show a recording, or a kept session by its ID from "
                   "`sparktui history`, instead of this machine")
    p.add_argument("--speed", type=bounded(0.01, 1e6, "times real time", zero="as fast as possible"), default=1.0, metavar="N", help="replay speed (default 1; 0 = as fast as possible)")
    p.add_argument("--bell", action="store_true", help="ring the terminal bell when a verdict gets worse")
    p.add_argument("--record", metavar="FILE", help="also append what the dashboard sees to a recording (JSON lines; "
                   "samples, process scans and check readings; replay it with --replay)")
    p.add_argument("--no-session", action="store_true", help="do not keep this run's session (no session file is "
                   "written, and the previous session is not shown again); see `sparktui history`")
    p.add_argument("--readonly", action="store_true", help="look only: the dashboard's actions on other processes "
                   "(k, signal a process) are off")
    sub = p.add_subparsers(dest="cmd", parser_class=_Parser, title="commands", metavar="COMMAND")
    add_common_options(p)  # after the commands in `sparktui --help`

    c = sub.add_parser("check", help="run the non-intrusive checks headless")
    c.add_argument("ids", nargs="*", metavar="ID", help=f"gotcha ids ({IDS[0]} ... {IDS[-1]}); default all")
    c.add_argument("--json", action="store_true", help="print a JSON document instead of a table")
    c.add_argument("--snapshot", metavar="FILE", help="judge a saved snapshot instead of this machine")
    c.add_argument("-v", "--verbose", action="store_true", help="show all evidence and fix texts")
    c.add_argument("--watch", type=positive_minutes, metavar="MIN", help="sample telemetry this many minutes for G4 (default: a few seconds)")
    c.add_argument("--replay", metavar="FILE", default=argparse.SUPPRESS,
                   help="judge a recording (G3, G4, G6 and whatever its readings answer) instead of this machine")
    c.add_argument("--kernel-log", metavar="FILE",
                   help="G11: judge a saved kernel log (dmesg, dmesg -T, journalctl -k -o json, /dev/kmsg records) "
                        "instead of this boot's")
    c.add_argument("--sys-root", type=sys_root_folder, metavar="DIR",
                   help="G12: read DIR/sys/class/net and DIR/sys/class/infiniband instead of /sys (a copied /sys, a test tree)")
    add_sub_common_options(c)

    s = sub.add_parser("snapshot", help="save every raw probe reading as JSON")
    s.add_argument("-o", "--output", metavar="FILE", help="where to write the snapshot ('-' for stdout)")
    s.add_argument("--json", action="store_true", help="write the snapshot to stdout (the same as -o -)")
    s.add_argument("--sys-root", type=sys_root_folder, metavar="DIR",
                   help="read DIR/sys/class/net and DIR/sys/class/infiniband for the link reading instead of /sys")
    add_sub_common_options(s)

    e = sub.add_parser("explain", help="print a gotcha's card: symptom, cause, check, fix")
    e.add_argument("id", metavar="ID", help=f"{IDS[0]} ... {IDS[-1]}")

    b = sub.add_parser("bandwidth", help="G5: measure memory bandwidth (intrusive: asks first)")
    b.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    b.add_argument("--force", action="store_true", help="run even though other GPU processes are present (never overrides the memory check)")
    b.add_argument("--size", type=float, default=4.0, metavar="GIB", help="buffer size in GiB (default 4; scaled down when memory is short)")
    b.add_argument("--json", action="store_true", help="print the result as JSON")
    add_sub_common_options(b)

    sub.add_parser("list", help=f"list the gotchas ({IDS[0]}-{IDS[-1]}: the ten, then the field reports')")
    from sparktui.cli import record as _record

    _record.add_parser(sub, add_sub_common_options)
    from sparktui.cli import fleet as _fleet

    _fleet.add_parsers(sub, add_sub_common_options)
    from sparktui.cli import history as _history

    _history.add_parser(sub)
    from sparktui.cli import linktest as _linktest

    _linktest.add_parser(sub, add_sub_common_options)
    from sparktui.cli import guard as _guard

    _guard.add_parser(sub, add_sub_common_options)
    document(p, None)
    for name, command in sub.choices.items():
        document(command, name)
    return p


def sys_root_folder(text: str) -> str:
    """--sys-root DIR: an existing folder (a typo would read as 'no ConnectX-7 here' instead)."""
    if not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text}: no such folder (give the folder that holds sys/class/net)")
    return text


def cmd_check(args: argparse.Namespace) -> int:
    from sparktui.cli import render
    from sparktui.runner import run_checks

    if getattr(args, "replay", None):
        from sparktui.cli.record import check_replay

        other = [f for f, on in (("--snapshot", args.snapshot), ("--watch", getattr(args, "watch", None)),
                                 ("--kernel-log", getattr(args, "kernel_log", None))) if on]
        if other:
            raise UsageError(f"sparktui check: --replay and {', '.join(other)} are alternatives; give one")

        return check_replay(args)
    ids = parse_ids(args.ids)
    cfg = config_from_args(args)
    streamed = False
    if args.snapshot and getattr(args, "sys_root", None):
        raise UsageError("sparktui check: --snapshot and --sys-root are alternatives; give one")
    if args.snapshot:
        readings, host, _ = read_snapshot(args.snapshot)
        if getattr(args, "kernel_log", None):
            readings = kernel_log_readings(args.kernel_log, ids, cfg, readings)
        verdicts, _ = run_checks(ids, cfg, readings)
        source = f"snapshot {args.snapshot}"
    else:
        if getattr(args, "watch", None):
            watched = ", ".join(g.id for g in REGISTRY.values() if "telemetry" in g.probes)
            print(f"sparktui: sampling telemetry for {args.watch:g} min ({watched}) ...", file=sys.stderr)
        from sparktui.live import sys_root

        with sys_root(getattr(args, "sys_root", None)):
            if getattr(args, "kernel_log", None):
                verdicts, readings = interruptibly(lambda cancel: run_checks(
                    ids, cfg, kernel_log_readings(args.kernel_log, ids, cfg, cancel=cancel)))
            elif not args.json and sys.stdout.isatty():
                verdicts, readings = _stream_interruptibly(ids, cfg, args.verbose)
                streamed = True
            else:
                verdicts, readings = _run_interruptibly(ids, cfg)
        host = host_facts(readings)
        source = "live" if not getattr(args, "sys_root", None) else f"live, /sys under {args.sys_root}"
    if getattr(args, "kernel_log", None):
        source += f", kernel log {args.kernel_log}"
    if args.json:
        json.dump(render.document(verdicts, host, source), sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    elif streamed:  # each check's lines are out already, as it was judged
        sys.stdout.write(render.counts(verdicts))
    else:
        sys.stdout.write(render.table(verdicts, verbose=args.verbose))
    return EXIT_FOR[worst([v.status for v in verdicts])]


def _stream_interruptibly(ids: list[str], cfg: Config, verbose: bool):
    """On a terminal: each check's lines as soon as it is judged (runner.stream), so a hung
    training interpreter holds only the checks that need it; a check whose enriching readings are
    still coming is written once they are in. Ctrl-C as in ``_run_interruptibly``. Returns the
    verdicts in the order asked, and the readings."""
    from sparktui import runner
    from sparktui.cli import render
    from sparktui.core.readings import Readings

    def run(cancel):
        final: dict[str, Verdict] = {}
        written: set[str] = set()
        readings = Readings()

        def write(vs: list[Verdict]) -> None:
            sys.stdout.write(render.blocks(vs, verbose=verbose))
            sys.stdout.flush()
            written.update(v.id for v in vs)

        for batch in runner.stream(ids, cfg, cancel):
            for name in batch.readings:
                readings.add(batch.readings.get_reading(name))
            final.update((v.id, v) for v in batch.verdicts)
            write([v for v in batch.verdicts if batch.cancelled
                   or all(p in batch.readings for p in REGISTRY[v.id].probes)])
        write([final[i] for i in ids if i in final and i not in written])  # their enrichment never came
        return [final[i] for i in ids if i in final], readings

    return interruptibly(run)


def _run_interruptibly(ids: list[str], cfg: Config):
    """Run the checks in a thread so Ctrl-C reaches us: the first one stops the sampling (and any
    torch-side probe) and judges what was read, so a `--watch 15` cut short still says what it saw;
    a second one quits at once."""
    from sparktui.runner import run_checks

    return interruptibly(lambda cancel: run_checks(ids, cfg, cancel=cancel))


def host_facts(readings) -> dict:
    from sparktui import runner

    h = readings.get("host") or runner.read("host", Config())
    return dict(h.data or {})


def cmd_snapshot(args: argparse.Namespace) -> int:
    from sparktui.runner import collect, probe_names

    cfg = config_from_args(args)
    if args.json and args.output not in (None, "-"):
        raise UsageError("sparktui snapshot: --json writes to stdout; it does not go with -o FILE")
    out = "-" if args.json else args.output
    if out is None:
        raise UsageError("sparktui snapshot: give -o FILE, or --json (or -o -) for stdout")
    if out != "-":  # before a minute of probing, not after
        target = Path(out)
        if target.is_dir():
            raise UsageError(f"sparktui snapshot: {out} is a folder; give a file name (or '-' for stdout)")
        if not target.parent.is_dir():
            raise UsageError(f"sparktui snapshot: {target.parent} does not exist")
    from sparktui.live import sys_root

    with sys_root(getattr(args, "sys_root", None)):
        readings = interruptibly(lambda cancel: collect(probe_names(), cfg, cancel=cancel), first=None)
    host = dict(readings.get_reading("host").data or {})
    if out == "-":
        sys.stdout.write(snapshot_text(readings, host, __version__))
    else:
        try:
            write_snapshot(out, readings, host, __version__)
        except OSError as e:  # atomic: an earlier snapshot at `out` is still whole
            print(f"sparktui: cannot write {out}: {e.strerror or e}", file=sys.stderr)
            return EXIT_IOERR
        failed = [r.probe for r in readings.values() if not r.ok]
        print(f"wrote {out}: {len(readings)} readings" + (f" ({len(failed)} unavailable: {', '.join(failed)})" if failed else ""),
              file=sys.stderr)
    return EXIT_OK


def cmd_explain(args: argparse.Namespace) -> int:
    try:
        g = REGISTRY[normalize_id(args.id)]
    except UnknownGotcha as e:
        raise UsageError(str(e.args[0])) from None
    from sparktui.cli.render import markdown_text

    sys.stdout.write(markdown_text(g.explain()))  # rendered on a terminal, wrapped Markdown into a pipe
    return EXIT_OK


def cmd_bandwidth(args: argparse.Namespace) -> int:
    from sparktui.cli import bandwidth, render

    bandwidth.size_bytes(args.size)  # a bad --size is named before anything else is looked at
    verdict, result = bandwidth.run(config_from_args(args), args.size, args.yes, args.force, args.json)
    if args.json:
        json.dump({"verdict": verdict.to_dict(), "result": result}, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render.table([verdict], verbose=True))
    if result.get("status") == "refused":
        return EXIT_REFUSED
    return EXIT_FOR[verdict.status]


def cmd_dashboard(args: argparse.Namespace) -> int:
    cfg = config_from_args(args)
    if args.replay and args.record:
        raise UsageError("sparktui: --record records this machine; it cannot be combined with --replay")
    recording = None
    if args.replay:  # read (and validated) once, here; the dashboard replays what was read
        from sparktui.cli.record import load_recording

        recording = load_recording(args.replay)
    if not (sys.stdout.isatty() and sys.stdin.isatty()):  # a pipe, a cron job, `ssh host sparktui`
        print("sparktui: not a terminal, so no dashboard; the checklist once (scripts: `sparktui check`)",
              file=sys.stderr)
        return cmd_check(argparse.Namespace(**{**vars(args), "ids": [], "json": False, "snapshot": None,
                                               "verbose": False, "watch": None}))
    from sparktui.ui.app import run_dashboard

    return run_dashboard(cfg, replay=args.replay, speed=args.speed or None, bell=args.bell, record=args.record,
                         recording=recording, keep_session=not args.no_session, readonly=args.readonly)


def cmd_list(args: argparse.Namespace) -> int:
    for g in REGISTRY.values():
        tag = " (intrusive)" if g.intrusive else ""
        print(f"{g.id:<4} {g.title}{tag}")
    return EXIT_OK


def _cmd_record(args: argparse.Namespace) -> int:
    from sparktui.cli.record import cmd_record

    return cmd_record(args)


def _cmd_history(args: argparse.Namespace) -> int:
    from sparktui.cli.history import cmd_history

    return cmd_history(args)


def _cmd_link_test(args: argparse.Namespace) -> int:
    from sparktui.cli.linktest import cmd_link_test

    return cmd_link_test(args)


def _cmd_guard(args: argparse.Namespace) -> int:
    from sparktui.cli.guard import cmd_guard

    return cmd_guard(args)


def _cmd_fleet(args: argparse.Namespace) -> int:
    from sparktui.cli import fleet

    return fleet.run(args)


REPLAYABLE = (None, "check", "report", "preflight")  # the dashboard and these judge a recording


def _refuse_misplaced(args: argparse.Namespace) -> None:
    """A dashboard option given with a subcommand that ignores it is a usage error, not a silent
    no-op: `sparktui --replay X snapshot` must not snapshot the live machine."""
    if args.cmd is None:
        return
    given = [flag for flag, on in (("--replay", args.replay and args.cmd not in REPLAYABLE), ("--speed", args.speed != 1.0),
                                   ("--bell", args.bell), ("--record", args.record),
                                   ("--no-session", args.no_session), ("--readonly", args.readonly)) if on]
    if given:
        raise UsageError(f"sparktui {args.cmd}: {', '.join(given)} {'is a dashboard option' if len(given) == 1 else 'are dashboard options'}"
                         + (f" (--replay works with: sparktui, {', '.join(c for c in REPLAYABLE if c)})" if "--replay" in given else ""))


class StdoutError(OSError):
    """Writing to stdout failed (closed, disk full, I/O error, the reader quit): not a bug."""


class _Stdout:
    """``sys.stdout`` while a command runs: a failed write or flush raises StdoutError, so ``main``
    can tell stdout's failures from a bug's OSError; all else is the real stream's. A stdout that
    was closed before sparktui started (``>&-``: Python gives None) fails on its first write."""

    def __init__(self, stream) -> None:
        self._stream = stream
        self.failed: StdoutError | None = None  # kept: argparse's --help swallows an OSError on write

    def _guarded(self, name: str, *args):
        if self._stream is None:
            if name == "flush":  # nothing was written: `snapshot -o FILE >&-` needs no stdout
                return None
            self.failed = StdoutError(errno.EBADF, os.strerror(errno.EBADF))
            raise self.failed
        try:
            return getattr(self._stream, name)(*args)
        except OSError as e:
            self.failed = StdoutError(e.errno, e.strerror or str(e))
            raise self.failed from e

    def settle(self) -> None:
        """Flush, and raise the first failure, even one that a caller caught and dropped."""
        self.flush()
        if self.failed is not None:
            raise self.failed

    def write(self, text: str) -> int:
        return self._guarded("write", text)

    def flush(self) -> None:
        self._guarded("flush")

    def isatty(self) -> bool:
        return self._stream is not None and self._stream.isatty()

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


class _Stderr:
    """``sys.stderr`` while a command runs: a message that cannot be written (``2>/dev/full``, a
    closed pipe) is dropped, so the command still exits with its own code (64 for a usage error,
    78 for a config error), never 1 from an OSError raised inside an error handler. Every message
    is made inert on the way (core/inert.py): an error may quote outside text (a file's contents,
    a peer's answer), and a control sequence in it must not reach the terminal."""

    def __init__(self, stream) -> None:
        self._stream = stream
        self.failed = False

    def write(self, text: str) -> int:
        from sparktui.core.inert import visible_lines

        if self.failed:
            return len(text)
        try:
            return self._stream.write(visible_lines(text))
        except (OSError, ValueError):  # ValueError: written after close
            self._give_up()
            return len(text)

    def flush(self) -> None:
        if self.failed:
            return
        try:
            self._stream.flush()
        except (OSError, ValueError):
            self._give_up()

    def _give_up(self) -> None:
        """Stop writing, and point descriptor 2 at /dev/null so the interpreter's final flush of
        what stayed buffered fails neither (that would make the exit status 120)."""
        self.failed = True
        _drop_pending_output(self._stream)

    def isatty(self) -> bool:
        return not self.failed and self._stream.isatty()

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _closed_std_streams() -> None:
    """``>&-`` / ``2>&-``: keep descriptors 1 and 2 taken (by /dev/null) so that a file opened later
    never becomes "stdout" for a probe's child, and give print(file=sys.stderr) somewhere to go."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is None:
            try:
                os.fstat(fd)
            except OSError:
                null = os.open(os.devnull, os.O_WRONLY)
                if null != fd:
                    os.dup2(null, fd)
                    os.close(null)
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (lives as long as the process)


def _drop_pending_output(stream) -> None:
    """After stdout failed, point descriptor 1 at /dev/null so the interpreter's final flush of what is
    still buffered neither fails again nor prints "Exception ignored" (Python's docs on SIGPIPE)."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real descriptor (a test's capture)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, fd)
    os.close(null)


def main(argv: list[str] | None = None) -> int:
    _closed_std_streams()
    from sparktui.cli.render import fit_encoding

    real_stdout = sys.stdout
    for stream in (real_stdout, sys.stderr):
        fit_encoding(stream)
    guarded = sys.stdout = _Stdout(real_stdout)
    real_stderr, sys.stderr = sys.stderr, _Stderr(sys.stderr)
    try:
        try:
            code = _tracked(argv)
        except SystemExit:  # --help, --version, a second Ctrl-C: what they printed is settled here too
            guarded.settle()
            raise
        guarded.settle()  # what is still buffered fails here, inside the handlers below
        return code
    except StdoutError as e:
        _drop_pending_output(real_stdout)
        if e.errno == errno.EPIPE:  # `sparktui check | head -1`: the reader has what it wanted
            return EXIT_BROKEN_PIPE
        print(f"sparktui: cannot write stdout: {e.strerror}", file=sys.stderr)
        return EXIT_IOERR
    finally:
        sys.stdout = real_stdout
        sys.stderr.flush()
        sys.stderr = real_stderr


def _tracked(argv: list[str] | None) -> int:
    """``_main`` with SIGTERM/SIGHUP killing every child process group sparktui started (then exit
    143/129; core/children.py), and a run cut short by Ctrl-C exiting 130 whatever its partial
    result judged: `sparktui check && launch` must not launch on half a look."""
    from sparktui.cli.common import EXIT_INTERRUPTED, clear_interrupted, was_interrupted
    from sparktui.core import children

    clear_interrupted()
    replaced = children.install_signal_handlers()
    try:
        code = _main(argv)
    except BaseException:  # a second Ctrl-C, a signal: no child outlives the run
        children.kill_all()
        raise
    finally:
        children.restore_signal_handlers(replaced)
    if was_interrupted():
        children.kill_all()  # the peers' ssh, still answering when Ctrl-C came
        return EXIT_INTERRUPTED if code < EXIT_USAGE else code
    return code


def _replay_target(name: str) -> str:
    """--replay's file: a path, or a kept session's ID or a prefix of exactly one. A prefix several
    sessions share (`--replay 2026`) is a usage error that lists them, not "no such file"."""
    from sparktui.core.session import resolve, session_files

    path = resolve(name)
    if path == name and not os.path.exists(name) and os.sep not in name:
        matches = [p.stem for p in session_files() if p.stem.startswith(name)]
        if len(matches) > 1:
            shown = ", ".join(matches[:8]) + (f" and {len(matches) - 8} more" if len(matches) > 8 else "")
            raise UsageError(f"sparktui: --replay {name} is ambiguous: {len(matches)} kept sessions start with it "
                             f"({shown}); give more of the ID (`sparktui history` lists them)")
    return path


def _main(argv: list[str] | None) -> int:
    try:
        args = build_parser().parse_args(argv)
        _refuse_misplaced(args)
        if getattr(args, "replay", None):  # a session ID from `sparktui history` names its file
            args.replay = _replay_target(args.replay)
        empty = [flag for flag, key in (("--api-url", "api_url"), ("--python", "python"), ("--listen", "listen"),
                                        ("--config", "config"), ("--pins", "pins")) if getattr(args, key, None) == ""]
        if empty:  # "" used to mean the default quietly
            raise UsageError(f"sparktui: {empty[0]} needs a value; leave the option out for the default")
        handler = {"check": cmd_check, "snapshot": cmd_snapshot, "explain": cmd_explain, "list": cmd_list,
                   "bandwidth": cmd_bandwidth, "record": _cmd_record, "history": _cmd_history,
                   "link-test": _cmd_link_test, "guard": _cmd_guard,
                   **dict.fromkeys(("peers", "export", "report", "preflight"), _cmd_fleet)}.get(args.cmd)
        if handler is None:
            handler = cmd_dashboard
        return handler(args)
    except UsageError as e:
        print(f"{e}\nTry 'sparktui --help'.", file=sys.stderr)
        return EXIT_USAGE
    except ConfigError as e:
        print(f"sparktui: config error: {e}", file=sys.stderr)
        return EXIT_CONFIG
    except SnapshotError as e:
        print(f"sparktui: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except StdoutError:
        raise  # main's
    except Exception as e:  # a bug: say so in one line and exit 70, not 1 (which means "a warning")
        import traceback

        if os.environ.get("SPARKTUI_DEBUG"):
            raise
        where = traceback.extract_tb(e.__traceback__)[-1]
        print(f"sparktui: internal error (a bug, please report it): {type(e).__name__}: {e} "
              f"[{Path(where.filename).name}:{where.lineno}]; SPARKTUI_DEBUG=1 shows the traceback", file=sys.stderr)
        return EXIT_INTERNAL
