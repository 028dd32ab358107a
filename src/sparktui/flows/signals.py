"""Signalling a process from the dashboard's process table: who may be signalled, send, wait,
escalate. Asking is the caller's job (the dashboard asks before each signal); nothing here knows
about Textual.

Refused, with the reason: sparktui itself and its own children (its probes, ssh to peers: ending
them is what `c` is for), pid 0/1, and another user's process unless sparktui runs as root (the
kernel would refuse too; saying so first is clearer than EPERM). The process is held by identity
(pid and start time): a pid reused between the question and the signal is never signalled.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass

import psutil

TERM_GRACE_S = 3.0  # how long a process gets to exit on SIGTERM before SIGKILL is offered
KILL_WAIT_S = 2.0


class Refused(Exception):
    """The process may not (or can no longer) be signalled; the message says why."""


@dataclass(frozen=True)
class Target:
    """One process, as read when the user picked it (what the confirmation shows)."""

    pid: int
    user: str
    command: str
    rss_bytes: int | None
    proc: psutil.Process  # holds the start time: send() refuses a reused pid

    def summary(self, gpu_mem_bytes: int | None = None) -> str:
        """The confirmation's text: who it is, what it runs, what it holds."""
        gpu = f"{gpu_mem_bytes / 2**30:.1f} GiB" if gpu_mem_bytes is not None else "not listed by NVML"
        rss = f"{self.rss_bytes / 2**30:.1f} GiB" if self.rss_bytes is not None else "unreadable"
        return (f"pid {self.pid}, user {self.user}\nGPU memory {gpu}, resident memory {rss}\n\n"
                f"{self.command}")


def effective_uid() -> int:
    """sparktui's effective uid (one function, so tests can stand in for a non-root run)."""
    return os.geteuid()


def _uid_name(uid: int) -> str:
    import pwd

    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


STARTED_TOLERANCE_S = 1.0  # /proc/PID/stat's start (clock ticks since boot) against psutil's: rounding only


def target(pid: int, own_pid: int | None = None, started: float | None = None) -> Target:
    """The process ``pid`` if sparktui may signal it; raises Refused saying why not. ``started``:
    the start time (epoch s) the pid was read with (a process table row, a recording): a process
    that started at another time holds a reused pid and is never signalled."""
    me = os.getpid() if own_pid is None else own_pid
    if pid <= 1:
        raise Refused(f"pid {pid} is the system's init: never signalled from here")
    if pid == me:
        raise Refused(f"pid {pid} is sparktui itself: quit with q")
    try:
        proc = psutil.Process(pid)
        with proc.oneshot():
            if me in (p.pid for p in proc.parents()):
                raise Refused(f"pid {pid} is one of sparktui's own processes (a probe or peer connection): "
                              "c cancels running checks")
            if started is not None and abs(proc.create_time() - started) > STARTED_TOLERANCE_S:
                raise Refused(f"pid {pid} is now another process (started {time.strftime('%H:%M:%S', time.localtime(proc.create_time()))}, "
                              f"the row's started {time.strftime('%H:%M:%S', time.localtime(started))}): not signalled")
            owner = proc.uids().real
            command = " ".join(proc.cmdline()) or f"[{proc.name()}]"
            try:
                rss: int | None = int(proc.memory_info().rss)
            except psutil.AccessDenied:
                rss = None
    except psutil.NoSuchProcess:
        raise Refused(f"pid {pid} has already exited") from None
    except psutil.AccessDenied:
        raise Refused(f"pid {pid}: permission denied reading it") from None
    me_uid = effective_uid()
    if owner != me_uid and me_uid != 0:
        raise Refused(f"pid {pid} belongs to {_uid_name(owner)}, and sparktui runs as {_uid_name(me_uid)}, not root: "
                      "only root may signal another user's process")
    return Target(pid, _uid_name(owner), command, rss, proc)


def send(t: Target, sig: signal.Signals) -> None:
    """Send ``sig``; raises Refused when the process is gone, its pid reused, or the kernel says no."""
    if gone(t):
        raise Refused(f"pid {t.pid} has already exited")
    try:
        t.proc.send_signal(sig)  # psutil checks the start time first: a reused pid raises NoSuchProcess
    except psutil.NoSuchProcess:
        raise Refused(f"pid {t.pid} has already exited") from None
    except psutil.AccessDenied:
        raise Refused(f"pid {t.pid}: permission denied sending {sig.name}") from None


def gone(t: Target) -> bool:
    """Exited (a zombie waiting for its parent counts: it runs no code and holds no memory)."""
    try:
        return not t.proc.is_running() or t.proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def wait_gone(t: Target, timeout_s: float, poll_s: float = 0.05) -> bool:
    """Whether the process exited within ``timeout_s`` (polled: it need not be our child)."""
    deadline = time.monotonic() + timeout_s
    while not gone(t):
        if time.monotonic() >= deadline:
            return False
        time.sleep(poll_s)
    return True


def terminate(t: Target, grace_s: float = TERM_GRACE_S) -> bool:
    """SIGTERM, then wait: True when it exited, False when SIGKILL should be offered."""
    send(t, signal.SIGTERM)
    return wait_gone(t, grace_s)


def kill(t: Target, wait_s: float = KILL_WAIT_S) -> bool:
    """SIGKILL (asked for again by the caller), then wait: True when it exited."""
    send(t, signal.SIGKILL)
    return wait_gone(t, wait_s)
