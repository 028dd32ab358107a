"""What every ``sparktui`` command shares: exit codes, the usage error, the shared options, the
config built from them, and running a probe so that Ctrl-C reaches the user. The subcommands
import this, never cli.main (which imports them).

Exit codes (docs/cli.md): 0 all ok/skip, 1 a warning, 2 a failure, 3 unknowns but nothing
worse, 4 an intrusive action refused, 64 usage error, 78 config error, 70 internal error,
74 output error (stdout or an -o file cannot be written: closed, disk full, I/O error), 130
interrupted, 141 the reader of stdout went away (`| head`: 128 + SIGPIPE, what a shell reports for
any filter stopped that way; quietly, as `yes | head` does).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from sparktui.core.config import Config, ConfigError, load_config
from sparktui.core.verdict import Status
from sparktui.gotchas import IDS, UnknownGotcha, normalize_id

EXIT_OK, EXIT_WARN, EXIT_FAIL, EXIT_UNKNOWN = 0, 1, 2, 3
EXIT_REFUSED = 4  # `bandwidth` refused by a gate or not confirmed
EXIT_USAGE, EXIT_UNAVAILABLE, EXIT_INTERNAL, EXIT_CONFIG = 64, 69, 70, 78  # 69: `export` cannot bind its address
EXIT_IOERR = 74  # EX_IOERR: output could not be written; the message names where and why
EXIT_INTERRUPTED = 130
EXIT_HANGUP, EXIT_TERMINATED = 129, 143  # 128 + SIGHUP / SIGTERM, after every child group was killed (core/children.py)
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: stdout's reader closed it; the verdict was not all delivered
EXIT_FOR = {Status.OK: EXIT_OK, Status.SKIP: EXIT_OK, Status.WARN: EXIT_WARN, Status.FAIL: EXIT_FAIL,
            Status.UNKNOWN: EXIT_UNKNOWN}
# What each code means for the commands that judge; a command's --help lists the codes it uses,
# with its own wording where it differs (cli/helptext.py).
EXIT_MEANING = {
    EXIT_OK: "every check ok (or skipped)",
    EXIT_WARN: "at least one warning, no failure",
    EXIT_FAIL: "at least one failure",
    EXIT_UNKNOWN: "some checks could not be determined (unknown), nothing worse",
    EXIT_REFUSED: "bandwidth: refused by a gate, or not confirmed",
    EXIT_USAGE: "usage error: a bad option or value, an unknown id, an unreadable input file",
    EXIT_UNAVAILABLE: "export: the listen address cannot be bound",
    EXIT_INTERNAL: "internal error: a sparktui bug (SPARKTUI_DEBUG=1 shows the traceback)",
    EXIT_CONFIG: "config error: the message names the file, the key and what was expected",
    EXIT_IOERR: "output error: stdout or the output file cannot be written (closed, disk full); "
                "a file written whole is left as it was",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C): what was read so far is shown, but a look cut short never exits as "
                      "if it were whole",
    EXIT_HANGUP: "hung up (SIGHUP: the terminal closed); every process sparktui started was stopped",
    EXIT_TERMINATED: "stopped by SIGTERM; every process sparktui started was stopped",
    EXIT_BROKEN_PIPE: "stdout's reader went away (`| head`): stopped quietly, as any filter does",
}
SHARED_OPTIONS = "options shared by all commands"


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse would exit 2, which means "failure" here
        raise UsageError(f"{self.prog}: {message}")

    def parse_known_args(self, args=None, namespace=None):
        """`--speed=--`: Python 3.11 and 3.12.1 turn the value into [] without calling the option's
        type; 3.12.3 and 3.13 keep it as '--' (`--python=--` ran an interpreter named '--'). Refused
        here the same way on every Python, not left for a later comparison to crash on."""
        ns, extra = super().parse_known_args(args, namespace)
        for action in self._actions:
            value = getattr(ns, action.dest, None)
            if action.option_strings and action.nargs is None and _lone_double_dash(value):
                self.error(f"argument {'/'.join(action.option_strings)}: expected a value, got '--'")
        return ns, extra


def _lone_double_dash(value: Any) -> bool:
    """An option's value that is only the `--` separator, as any Python's argparse leaves it."""
    if isinstance(value, list):
        return value == [] or [] in value or "--" in value
    return value == "--"


def add_common_options(p: argparse.ArgumentParser, sub: bool = False) -> None:
    """Options every command shares. A subcommand's copy defaults to "not given" (SUPPRESS), so
    `sparktui --python X check` and `sparktui check --python X` mean the same: a default there
    would overwrite what was given before the subcommand."""
    d: dict[str, Any] = {"default": argparse.SUPPRESS} if sub else {}
    g = p.add_argument_group(SHARED_OPTIONS)  # listed after the command's own options
    g.add_argument("--config", metavar="FILE", help="config file (default: ~/.config/sparktui/config.toml)", **d)
    g.add_argument("--python", metavar="PATH", help="interpreter of the training environment (torch-side probes run there)", **d)
    g.add_argument("--path", metavar="DIR", action="append", help="where G10 scans for launch configs (repeatable; default .)", **d)
    g.add_argument("--pins", metavar="FILE", help="pinned versions for G9 (requirements/constraints format)", **d)
    g.add_argument("--timeout", type=bounded(0.1, 86400, "seconds"), metavar="S", help="how long the torch-side probe may take (default 90)", **d)
    g.add_argument("--no-cuda-smoke", action="store_true", help="do not allocate on the GPU in the target interpreter", **d)
    g.add_argument("--playbook", metavar="SLUG", action="append", help="G8: playbook slug being followed (repeatable)", **d)
    g.add_argument("--command", dest="commands", metavar="CMD", action="append", help="G8: a command from your launch script (repeatable)", **d)
    g.add_argument("--api-url", metavar="URL", help="G8: GitHub REST API base URL", **d)
    g.add_argument("--peer", metavar="HOST", action="append", help="another machine to compare with, over ssh (repeatable; used by the dashboard, peers, preflight, report, link-test)", **d)
    g.add_argument("--peer-command", metavar="CMD", help="how to run sparktui on the peers (default 'sparktui'), e.g. '~/.venv/bin/sparktui'", **d)
    g.add_argument("--ssh-config", metavar="FILE", help="ssh client config for the peers (passed to ssh as -F FILE)", **d)
    g.add_argument("--run-log", metavar="FILE", help="G14: the training run's log (a saved one is a post-mortem; a growing one is followed), when it is not found from the run's processes", **d)


def bounded(lo: float, hi: float, unit: str, zero: str | None = None):
    """An argparse type for a numeric option: a finite number from ``lo`` to ``hi`` ``unit``, or
    exactly 0 where ``zero`` says what 0 means. nan, inf, negatives and 1e-300 used to be taken at
    face value (`record --interval 1e-300` sampled in a busy loop); argparse puts the option's name
    before the message, and a usage error (64) follows."""
    import math

    def shown(x: float) -> str:
        return f"{x:g}".replace("e+0", "e").replace("e+", "e")

    allowed = f"{'0 (' + zero + ') or ' if zero else ''}a number from {shown(lo)} to {shown(hi)} {unit}"

    def number(text: str) -> float:
        if text == "--":  # Python 3.12.3+ hands it to the type; older ones leave it to parse_known_args
            raise argparse.ArgumentTypeError("expected a value, got '--'")
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}; give {allowed}") from None
        if zero is not None and v == 0:
            return 0.0
        if not (math.isfinite(v) and lo <= v <= hi):
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {text}")
        return v

    return number


# --watch MIN: 0 used to fall back to the default quietly; 1e6 minutes (about two years) is a typo
positive_minutes = bounded(0.01, 1e6, "minutes")


def add_sub_common_options(p: argparse.ArgumentParser) -> None:
    add_common_options(p, sub=True)


# the setting each flag sets, so a bad value is reported under the flag the user typed
_FLAG_FOR = {"--target python": "--python", "--target timeout_s": "--timeout", "--scan paths": "--path",
             "--pins file": "--pins", "--playbooks slugs": "--playbook", "--playbooks commands": "--command",
             "--playbooks api_url": "--api-url", "--telemetry check_window_s": "--watch", "--fleet peers": "--peer",
             "--fleet peer_command": "--peer-command", "--fleet ssh_config": "--ssh-config",
             "--run log": "--run-log"}


def interpreter_problem(path: str) -> str | None:
    """Why ``path`` cannot be the training interpreter, or None when it names an executable file.

    A bare name (``python3``) is looked up on PATH, as the target probe does. A missing or
    non-executable interpreter used to reach the probe, which made every torch-side check
    ``unknown`` while ``preflight`` printed PASSED."""
    import os
    import shutil
    import stat

    if os.sep not in path:
        return None if shutil.which(path) else f"{path}: no such command on PATH"
    hint = " (~ is not expanded here: write the full path)" if path.startswith("~") else ""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return f"{path}: no such file{hint}"
    except OSError as e:
        return f"{path}: cannot be used: {e.strerror or e}"
    if stat.S_ISDIR(mode):
        return f"{path}: is a folder, not an interpreter (give its bin/python)"
    if not stat.S_ISREG(mode):
        return f"{path}: not a regular file (a pipe or a device?)"
    if not os.access(path, os.X_OK):
        return f"{path}: not executable"
    return None


def _refuse_bad_interpreter(cfg: Config, args: argparse.Namespace) -> None:
    """--python must name an executable (usage error, 64) whatever the command; a config file's
    [target] python too (config error, 78), but only where it will run: judging a snapshot or a
    recording does not start it, and a config shared with a laptop must not block that."""
    flag = getattr(args, "python", None)
    if flag:
        problem = interpreter_problem(flag)
        if problem:
            raise UsageError(f"sparktui: --python {problem}; give the training environment's interpreter, "
                             "e.g. ~/venv/bin/python")
        return
    offline = getattr(args, "replay", None) or getattr(args, "snapshot", None)
    if cfg.target.python and not offline:
        problem = interpreter_problem(cfg.target.python)
        if problem:
            raise ConfigError(f"{cfg.source or 'config'}: [target] python: {problem}; "
                              "give the training environment's interpreter")


def config_from_args(args: argparse.Namespace) -> Config:
    cfg = load_config(getattr(args, "config", None))  # refuses a FIFO, device or folder (read_regular)
    try:
        cfg = _with_flags(cfg, args)
    except ConfigError as e:
        msg = str(e)
        for setting, flag in _FLAG_FOR.items():
            if msg.startswith(setting + ":"):
                raise ConfigError(flag + msg[len(setting):]) from None
        raise
    _refuse_bad_interpreter(cfg, args)
    return cfg


def _with_flags(cfg: Config, args: argparse.Namespace) -> Config:
    return cfg.with_overrides(
        target={"python": args.python, "timeout_s": args.timeout,
                "cuda_smoke": False if getattr(args, "no_cuda_smoke", False) else None},
        scan={"paths": args.path},
        pins={"file": args.pins},
        playbooks={"slugs": args.playbook, "commands": args.commands, "api_url": args.api_url},
        telemetry={"check_window_s": args.watch * 60 if getattr(args, "watch", None) is not None else None},
        fleet={"peers": getattr(args, "peer", None), "peer_command": getattr(args, "peer_command", None),
               "ssh_config": getattr(args, "ssh_config", None)},
        run={"log": getattr(args, "run_log", None)},
    )


def parse_ids(raw: list[str]) -> list[str]:
    if not raw:
        return list(IDS)
    try:
        return list(dict.fromkeys(normalize_id(x) for x in raw))
    except UnknownGotcha as e:
        raise UsageError(str(e.args[0])) from None


_INTERRUPTED: list[bool] = []  # set by interruptibly's first Ctrl-C; cli/main.py resets it per run


def clear_interrupted() -> None:
    _INTERRUPTED.clear()


def mark_interrupted() -> None:
    """A command that takes Ctrl-C as its end (record) still exits 130: `record && next` stops."""
    _INTERRUPTED.append(True)


def was_interrupted() -> bool:
    """Whether this run was cut short by Ctrl-C: its result is partial, so it exits 130 whatever
    it judged (a gate must never pass on a cut-short look), and preflight prints no PASSED."""
    return bool(_INTERRUPTED)


def interruptibly(fn, first: str | None = "judging what was read so far"):
    """``fn(cancel)`` in a thread so Ctrl-C reaches us while a probe (a hung --python) runs. The
    first Ctrl-C sets ``cancel`` and, with ``first``, waits for what was read (a second quits at
    once) and marks the run interrupted (exit 130 after the partial result is shown); without
    ``first`` (snapshot: half a snapshot is not one) it quits at once (130)."""
    import threading

    cancel, done = threading.Event(), threading.Event()
    box: dict = {}

    def work() -> None:
        try:
            box["result"] = fn(cancel)
        except BaseException as e:  # surfaced in the main thread
            box["error"] = e
        finally:
            done.set()

    threading.Thread(target=work, name="checks", daemon=True).start()
    try:  # Event.wait, not Thread.join: a join cut by Ctrl-C can leave is_alive() wrong (CPython)
        while not done.wait(0.2):
            pass
    except KeyboardInterrupt:
        cancel.set()  # stops sampling and subprocess probes
        mark_interrupted()
        if first is None:
            print("sparktui: interrupted", file=sys.stderr)
            raise SystemExit(130) from None
        print(f"sparktui: interrupted: {first} (Ctrl-C again to quit)", file=sys.stderr)
        try:
            while not done.wait(0.2):
                pass
        except KeyboardInterrupt:
            raise SystemExit(130) from None
    if "error" in box:
        raise box["error"]
    return box["result"]


def kernel_log_readings(path: str, ids: list[str], cfg: Config, readings: Any = None, cancel: Any = None) -> Any:
    """`--kernel-log FILE`: the readings for ``ids`` with the kernel_log reading taken from a saved
    kernel log (dmesg, dmesg -T, journal JSON, /dev/kmsg records; probes/kernel_log.py read_file),
    the others from ``readings`` (a snapshot, a recording) or read from this machine."""
    from sparktui.core.readings import Readings
    from sparktui.gotchas import REGISTRY
    from sparktui.live import kernel_log_file
    from sparktui.runner import collect, needed_probes

    if readings is None:
        rest = [p for p in needed_probes([REGISTRY[i] for i in ids]) if p != "kernel_log"]
        readings = collect(rest, cfg, cancel=cancel) if rest else Readings()
    out = Readings({n: readings.get_reading(n) for n in readings if n != "kernel_log"})
    out.add(kernel_log_file(path))
    return out
