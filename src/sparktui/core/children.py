"""Every process group sparktui starts, in one place, so that no process outlives sparktui.

Children (the target probe, ssh to the peers, journalctl, all_reduce_perf) run in a session of
their own: a terminal's Ctrl-C or hang-up must not hit a probe halfway through a stage, sparktui
decides when they stop. The price is that nothing stops them when sparktui goes, so:

- a child that ends: ``reap`` kills what is left of its group (the grandchildren it left) and
  forgets it;
- sparktui stopped by SIGTERM, SIGHUP or Ctrl-C: ``kill_all`` (cli/main.py's signal handlers,
  the dashboard's exit path);
- sparktui killed by SIGKILL (no handler runs) or ending any other way: a watchdog process,
  started with the first child, holds the read end of a pipe whose write end only sparktui holds.
  sparktui tells it each group it starts (``+PGID``) and reaps (``-PGID``); at end of file, when
  sparktui is gone however it went, it SIGKILLs every group still listed and exits.
  PR_SET_PDEATHSIG was not used: it fires when the *thread* that forked the child ends, and
  sparktui starts children from worker threads that end; it covers no grandchild either.

  A SIGKILL can land after a child started and before sparktui told the watchdog its group (the
  pid is not known before fork; on a loaded machine the child runs first for a while). So every
  child also carries ``SPARKTUI_CHILD_OF=<token>`` in its environment, and at end of file the
  watchdog also kills every process whose environment holds this run's token (descendants that
  kept their environment: grandchildren, and even a child that left its group).
  SIGTERM and SIGHUP need no such help: ``kill_all`` waits for a spawn in progress (one lock).

Not covered: a descendant that cleared its environment *and* left its group, and one that blocks
SIGKILL in the kernel (uninterruptible sleep) until it wakes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from typing import Any

# A POSIX shell script (dash: ~1.6 MB resident; a Python watchdog held ~10 MB for the whole session,
# measured on the lent H100), in its own session, so the terminal's signals do not reach it either.
# It reads the group lines on stdin (the pipe) and acts only at end of file. $1: this run's token.
WATCHDOG = r"""
groups=
while IFS= read -r line; do
  case $line in
    +*) groups="$groups ${line#+}" ;;
    -*) gone=${line#-}; kept=
        for g in $groups; do [ "$g" = "$gone" ] || kept="$kept $g"; done
        groups=$kept ;;
  esac
done
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
grep -l -a -F -e "SPARKTUI_CHILD_OF=$1" /proc/[0-9]*/environ 2>/dev/null | while IFS= read -r f; do
  pid=${f#/proc/}; pid=${pid%/environ}
  [ "$pid" = "$$" ] || kill -s KILL "$pid" 2>/dev/null
done
"""

_lock = threading.RLock()  # re-entrant: a signal handler may run while the main thread holds it
_groups: dict[int, subprocess.Popen] = {}
_watchdog: dict[str, Any] = {}  # "fd": the pipe's write end, "proc": the watchdog
_stopping = threading.Event()
MARK_VAR = "SPARKTUI_CHILD_OF"  # WATCHDOG greps for it by name
WATCHDOG_SHELL = "/bin/sh"
_TOKEN = f"{os.getpid()}-{os.urandom(8).hex()}"  # this sparktui run, in every child's environment


class Stopping(OSError):
    """sparktui is stopping (kill_all ran): no new child is started."""


def spawn(argv: list[str], **popen: Any) -> subprocess.Popen:
    """``subprocess.Popen(argv, **popen)`` in a new session, tracked until ``reap``."""
    with _lock:
        if _stopping.is_set():
            raise Stopping(f"not starting {argv[0]}: sparktui is stopping")
        _start_watchdog()
        env = dict(os.environ if popen.get("env") is None else popen["env"])
        env[MARK_VAR] = _TOKEN  # found by the watchdog even if it never hears of this child
        proc = subprocess.Popen(argv, start_new_session=True, **{**popen, "env": env})
        _groups[proc.pid] = proc
        _tell(f"+{proc.pid}")
    return proc


def reap(proc: subprocess.Popen) -> int:
    """Kill ``proc``'s whole group (itself if still running, else the grandchildren it left),
    wait for it and forget it. Returns its exit status."""
    kill_group(proc)
    rc = proc.wait()
    with _lock:
        if _groups.pop(proc.pid, None) is not None:
            _tell(f"-{proc.pid}")
    return rc


def running() -> list[int]:
    """The process groups started and not yet reaped (their leaders' pids)."""
    with _lock:
        return sorted(_groups)


def kill_all() -> None:
    """SIGKILL every tracked group (a Ctrl-C, the dashboard's exit, a signal handler)."""
    with _lock:
        procs = list(_groups.values())
    for proc in procs:
        kill_group(proc)


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL ``proc``'s whole group (a timeout: a grandchild holding its pipe would keep a read
    waiting after ``proc.kill()``); it stays tracked until ``reap``."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:  # the group is gone; the leader may not have joined it yet (killed between fork and setsid)
            proc.kill()
        except OSError:
            pass


def _start_watchdog() -> None:
    if "fd" in _watchdog or "failed" in _watchdog:
        return
    rfd, wfd = os.pipe()
    try:
        _watchdog["proc"] = subprocess.Popen([WATCHDOG_SHELL, "-c", WATCHDOG, "sparktui-watchdog", _TOKEN], stdin=rfd,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                             start_new_session=True)
    except OSError as e:  # children still die on reap and kill_all; only SIGKILL of sparktui is uncovered
        os.close(wfd)
        _watchdog["failed"] = str(e)
        return
    finally:
        os.close(rfd)
    _watchdog["fd"] = wfd


def _tell(line: str) -> None:
    fd = _watchdog.get("fd")
    if fd is None:
        return
    try:
        os.write(fd, (line + "\n").encode())  # shorter than PIPE_BUF: never interleaved
    except OSError:
        pass  # the watchdog is gone (killed by hand): reap and kill_all still work


def on_signal(signum: int, _frame: Any = None) -> None:
    """SIGTERM/SIGHUP handler for the CLI: kill every child group, start no new one (a worker
    thread may be about to), say so, then exit 128 + signal."""
    _stopping.set()
    kill_all()
    try:
        print(f"sparktui: stopped by {signal.Signals(signum).name}", file=sys.stderr)
    except (OSError, ValueError):  # stderr closed or gone with the terminal (SIGHUP)
        pass
    raise SystemExit(128 + signum)


def install_signal_handlers() -> dict[int, Any]:
    """``on_signal`` for SIGTERM and SIGHUP (main thread only); returns the handlers it replaced."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGHUP)}


def restore_signal_handlers(old: dict[int, Any]) -> None:
    for sig, handler in old.items():
        signal.signal(sig, handler)
