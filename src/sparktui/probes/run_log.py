"""The training run beside sparktui (G14): which processes it is, where its log is, and following it.

``find_run`` picks the run from a processes reading (probes/processes.py: rows of kind "training",
a launcher and its ranks sharing ``group``). ``log_of`` finds its log, read only, in this order: the
log the user named (``--run-log FILE`` / ``[run] log``); the run's stdout/stderr where it goes to a
regular file (``/proc/PID/fd/1``, ``2``; a deleted file is still read through that link), also
through a pipe into ``tee FILE``; where it goes to a terminal, the tmux pane on that terminal
(``tmux capture-pane``: never a key sent, never ``pipe-pane``); else it says plainly why there is no
log (a pipe, /dev/null, a terminal outside tmux) and how to name one.

``LogFollower`` follows a growing file in a thread of its own: the recent history first (the last
``TAIL_BYTES``), then every write, woken by inotify (the file and its folder: rotation and
truncation survived) in a ``select`` on the inotify fd and a self-pipe, so no polling loop and a
prompt ``stop()``. Memory is bounded whatever the file holds: a line longer than ``MAX_PARTIAL``
bytes is cut (its head kept, counted). ``TmuxPane`` captures a pane on request and hands back the
lines added since the last capture (``new_lines``; found by overlap: the pane scrolls).

``read(cfg)`` is the one-shot probe "run" (``sparktui check G14``, ``snapshot``): it finds the run
and its log, reads the last ``TAIL_BYTES`` (or the pane) through the parser (probes/run_progress.py
``RunLog``), and returns ``RunData`` (core/shapes.py). A process scan that fails is no "no run":
the run is then ``found`` with no pids and ``alive`` None, and its log's ``error`` says that the
processes cannot be seen (G14: unknown, not skipped).
"""

from __future__ import annotations

import ctypes
import errno
import os
import select
import stat
import struct
import subprocess
import threading
import time
from typing import Any, Callable, Iterable, Mapping, Sequence

from sparktui.core import children, shapes
from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.shapes import RunData, RunLogSource
from sparktui.probes import processes
from sparktui.probes.declared import Probe
from sparktui.probes.kernel_log import poke
from sparktui.probes.run_progress import RunLog

TAIL_BYTES = 4 * 1024 * 1024  # the recent history read first (one-shot read, and a follower's start)
MAX_PARTIAL = 65536  # bytes of an unterminated line buffered before it is cut
CUT_KEEP = 16384  # bytes of a cut line's head that are delivered (the parser reads 4096 characters of a line)
READ_CHUNK = 65536
DRAIN_READS = 256  # reads per wake-up before the stop flag is looked at again (16 MiB)
COALESCE_S = 0.05  # as the kernel-log follower: after a wake-up, gather a burst's lines for this long
SAFETY_S = 30.0  # only where inotify is unavailable: how often the file is looked at
RECENT_S = 120.0  # a named log written this recently, by no process this user can see, may still live
MAX_FD_SCAN = 100_000  # /proc/*/fd links looked at, at most, to find a file's writer or a pipe's reader
TMUX_TIMEOUT_S = 5.0
TMUX_HISTORY = 2000  # lines of a pane's history captured
MAX_SOCKETS = 16  # tmux servers of this user tried
TMUX_DEFAULT_DIR = os.path.join(os.sep, "tmp")  # tmux's own default for its sockets' folder (_PATH_TMP), unless $TMUX_TMPDIR
ANCHOR = 50  # lines of the last capture matched in the next one

NAME_HINT = 'name it with `sparktui check G14 --run-log FILE` or `[run] log = "FILE"` in the config'

OnLines = Callable[[list[tuple[str, "float | None"]]], None]

# ----------------------------------------------------------------------------------- the run


def _run(found: bool, why: str | None, pids: list[int] | None = None, command: str | None = None,
         alive: bool | None = None, started_at: float | None = None) -> dict[str, Any]:
    return {"found": found, "why": why, "pids": pids or [], "command": command, "alive": alive, "started_at": started_at}


def find_run(procs: Mapping[str, Any] | None, cfg: Config | None = None, *, pid: int | None = None) -> dict[str, Any]:
    """The training run, from a processes reading's data (probes/processes.py ``scan``/``read``):
    RunData's ``found``, ``why``, ``pids`` (launcher first, then its ranks), ``command`` (the
    launcher's, scrubbed by the scan), ``alive``, ``started_at``.

    The run is the group of training rows (a launcher and its ranks share ``group``) that started
    last, or the one holding ``pid``. With a log named (``cfg.run.log``) the run is that log's:
    ``alive`` says whether a process has it open for writing (``writers_of``), else it is a saved
    log read as a post-mortem (``alive`` False), ``why`` says which. ``found`` is False only when
    a scan was read and holds no training process and no log is named. A scan that failed or is
    missing is no "no run": ``found`` True with no pids and ``alive`` None, ``why`` saying the
    processes cannot be seen (``log_of`` then says so in the log's error: G14 is unknown, not
    skipped)."""
    named = cfg.run.log if cfg is not None else None
    run = _find(procs, pid)
    if not named:
        return run
    writers, denied = writers_of(named, first=run["pids"])
    if writers:
        if not set(writers) & set(run["pids"]):  # written by processes the scan does not call training
            run = _run(True, None, writers, _cmdline(writers[0]))
        run.update(found=True, alive=True, why=f"{named} is open for writing by pid "
                                                f"{', '.join(map(str, writers[:4]))}: a live run")
        return run
    try:
        age: float | None = time.time() - os.stat(named).st_mtime
    except OSError:
        age = None
    if age is not None and age < RECENT_S and denied:
        return _run(True, f"{named} was written {age:.0f} s ago but no process this user can see has it open "
                          f"({denied} process(es) could not be looked at): whether the run lives is unknown")
    return _run(True, f"no process has {named} open for writing: a saved log, read as a post-mortem", alive=False)


def _find(procs: Mapping[str, Any] | None, pid: int | None) -> dict[str, Any]:
    if not procs or procs.get("scan_error") or not isinstance(procs.get("rows"), list):
        err = (procs or {}).get("scan_error") or "the processes were not scanned"
        return _run(True, f"the training processes cannot be seen ({err}): whether a run trains is unknown")
    t = procs.get("t")
    groups: dict[int, list[Mapping[str, Any]]] = {}
    for row in procs["rows"]:
        if isinstance(row, Mapping) and row.get("kind") == "training" and isinstance(row.get("pid"), int):
            g = row.get("group")
            groups.setdefault(g if isinstance(g, int) else row["pid"], []).append(row)
    if not groups:
        return _run(False, "no torchrun, accelerate launch, deepspeed, llamafactory-cli, tune run or python "
                           "train/sft/finetune script runs; to judge a saved log, " + NAME_HINT)

    def start(rows: list[Mapping[str, Any]]) -> float | None:
        ages = [r["age_s"] for r in rows if isinstance(r.get("age_s"), (int, float))]
        return float(t - max(ages)) if ages and isinstance(t, (int, float)) else None

    if pid is not None:
        chosen = next((g for g, rows in groups.items() if g == pid or any(r["pid"] == pid for r in rows)), None)
        if chosen is None:
            return _run(False, f"pid {pid} is no training process")
    else:
        chosen = max(groups, key=lambda g: (start(groups[g]) or float("-inf"), g))
    rows = groups[chosen]
    top = next((r for r in rows if r["pid"] == chosen), None)
    ordered = ([top] if top is not None else []) + sorted((r for r in rows if r is not top), key=lambda r: r["pid"])
    return _run(True, None, [int(r["pid"]) for r in ordered], ordered[0].get("command") or None, True, start(rows))


# ----------------------------------------------------------------------------------- its log


def _fd_target(pid: int, fd: int, proc: str = "/proc") -> tuple[str, os.stat_result] | None:
    link = f"{proc}/{pid}/fd/{fd}"
    try:
        return os.readlink(link), os.stat(link)
    except OSError:
        return None


def _writes(pid: str, fd: str, proc: str = "/proc") -> bool:
    """Whether ``fd`` of ``pid`` is open for writing (its fdinfo flags)."""
    try:
        with open(f"{proc}/{pid}/fdinfo/{fd}", "rb") as f:
            for line in f.read(4096).splitlines():
                if line.startswith(b"flags:"):
                    return int(line.split()[1], 8) & 3 in (1, 2)
    except (OSError, ValueError, IndexError):
        pass
    return False


def _scan_fds(want: Callable[[str, str, str], bool], proc: str = "/proc",
              only: Iterable[int] | None = None) -> tuple[list[tuple[int, int]], int]:
    """((pid, fd) for every fd whose link text ``want(pid, fd, link)`` accepts, processes whose fds
    could not be read), over at most MAX_FD_SCAN links (about 7 us each); this process is skipped.
    ``only``: these processes, not every one."""
    found: list[tuple[int, int]] = []
    denied, seen, me = 0, 0, str(os.getpid())
    try:
        pids = [str(p) for p in only] if only is not None else [p for p in os.listdir(proc) if p.isdigit() and p != me]
    except OSError:
        return found, 1
    for p in pids:
        try:
            fds = os.listdir(f"{proc}/{p}/fd")
        except PermissionError:
            denied += 1
            continue
        except OSError:
            continue
        for fd in fds:
            seen += 1
            if seen > MAX_FD_SCAN:
                return found, denied
            try:
                link = os.readlink(f"{proc}/{p}/fd/{fd}")
            except OSError:
                continue
            if want(p, fd, link):
                found.append((int(p), int(fd)))
    return found, denied


_LAST_WRITERS: dict[str, list[int]] = {}  # path -> the writers found last time: looked at first


def writers_of(path: str, proc: str = "/proc", first: Iterable[int] = ()) -> tuple[list[int], int]:
    """(pids that have ``path`` open for writing, processes whose fds could not be read). The
    processes in ``first`` (the run's) and the writers found last time are looked at before every
    process is: a run watched every few seconds costs a few links, not the whole of /proc."""
    try:
        st = os.stat(path)
    except OSError:
        return [], 0
    real = os.path.realpath(path)

    def want(p: str, fd: str, link: str) -> bool:
        if link != real and not link.startswith(real + " (deleted)"):
            return False
        try:
            s = os.stat(f"{proc}/{p}/fd/{fd}")
        except OSError:
            return False
        return (s.st_dev, s.st_ino) == (st.st_dev, st.st_ino) and _writes(p, fd, proc)

    likely = list(dict.fromkeys([*first, *_LAST_WRITERS.get(real, [])]))
    found, denied = _scan_fds(want, proc, likely) if likely else ([], 0)
    if not found:
        found, denied = _scan_fds(want, proc)
    writers = sorted({p for p, _ in found})
    if len(_LAST_WRITERS) > 64:
        _LAST_WRITERS.clear()
    _LAST_WRITERS[real] = writers
    return writers, denied


_PIPES: dict[tuple[str, tuple[int, ...]], tuple[float, str | None]] = {}  # (pipe, the run's pids) -> (when looked, the file)
PIPE_AGAIN_S = 60.0


def _pipe_file(pipe: str, pids: Sequence[int], proc: str = "/proc") -> str | None:
    """The regular file that the process reading ``pipe`` (``pipe:[N]``) writes: ``| tee FILE``."""
    key = (pipe, tuple(pids))  # a pipe's inode number may be handed out again once it is freed
    known = _PIPES.get(key)
    if known is not None and time.monotonic() - known[0] < PIPE_AGAIN_S and (known[1] is None or os.path.exists(known[1])):
        return known[1]
    if len(_PIPES) > 64:
        _PIPES.clear()
    found = _pipe_reader_file(pipe, pids, proc)
    _PIPES[key] = (time.monotonic(), found)
    return found


def _pipe_reader_file(pipe: str, pids: Sequence[int], proc: str = "/proc") -> str | None:
    mine = {str(p) for p in pids}
    readers, _ = _scan_fds(lambda p, fd, link: link == pipe and p not in mine and not _writes(p, fd, proc), proc)
    for rp in sorted({p for p, _ in readers}):
        try:  # tee's files (fd 3 up), then a `cat > FILE`'s stdout; never its stderr or stdin
            fds = sorted((int(s) for s in os.listdir(f"{proc}/{rp}/fd") if s.isdigit() and s not in ("0", "2")),
                         key=lambda n: (n == 1, n))
        except OSError:
            continue
        for fd in fds:
            if not _writes(str(rp), str(fd), proc):
                continue
            got = _fd_target(rp, fd, proc)
            if got is not None and stat.S_ISREG(got[1].st_mode):
                return _readable(got[0], rp, fd, proc)
    return None


def _readable(target: str, pid: int, fd: int, proc: str = "/proc") -> str:
    """The path a log is read by: the file's name, or the fd link where the file was deleted."""
    if target.endswith(" (deleted)") or not os.path.exists(target):
        return f"{proc}/{pid}/fd/{fd}"
    return target


def _rank(pid: int, proc: str = "/proc") -> int:
    """The process's RANK (torchrun, accelerate, deepspeed set it), for preferring rank 0's log;
    only that variable is looked for, nothing of the environment is kept. Unknown sorts last."""
    try:
        with open(f"{proc}/{pid}/environ", "rb") as f:
            env = b"\0" + f.read(256 * 1024)
    except OSError:
        return 1 << 30
    i = env.find(b"\0RANK=")
    if i < 0:
        return 1 << 30
    val = env[i + 6:env.find(b"\0", i + 6) if env.find(b"\0", i + 6) >= 0 else len(env)]
    return int(val) if val.isdigit() and len(val) < 8 else 1 << 30


def _source(kind: str, path: str | None = None, pane: str | None = None, error: str | None = None) -> RunLogSource:
    src: RunLogSource = {"kind": kind, "path": path, "pane": pane, "error": error, "size": None, "mtime": None}
    if path and kind != "tmux" and error is None:
        try:
            st = os.stat(path)
            src["size"], src["mtime"] = st.st_size, st.st_mtime
        except OSError as e:
            src["error"] = f"cannot read {path}: {e.strerror or e}"
    return src


def log_of(run: Mapping[str, Any] | Sequence[int], cfg: Config | None = None, *, proc: str = "/proc",
           tmux: bool | None = None, sockets: Iterable[str] | None = None) -> RunLogSource:
    """Where the run's log is (see the module's docstring for the order): ``run`` is ``find_run``'s
    answer or the run's pids (launcher first). A log that cannot be found comes back with
    ``error`` saying why, and how to name it."""
    named = cfg.run.log if cfg is not None else None
    if named:
        return named_source(named)
    if isinstance(run, Mapping):
        pids: Sequence[int] = run.get("pids") or []
        if not pids:
            why = str(run.get("why") or "no training run found")
            return _source("fd", error=why if NAME_HINT in why else f"{why}; {NAME_HINT}")
    else:
        pids = run
    use_tmux = (cfg.run.tmux if cfg is not None else True) if tmux is None else tmux
    files: list[tuple[int, float, int, str]] = []  # (rank: the launcher counts as 0, -mtime, launcher first, path)
    ttys: list[str] = []
    pipes: list[str] = []
    other: list[str] = []
    for order, pid in enumerate(pids):
        rank = 0 if order == 0 else _rank(pid, proc)
        for fd in (1, 2):
            got = _fd_target(pid, fd, proc)
            if got is None:
                continue
            target, st = got
            if stat.S_ISREG(st.st_mode):
                files.append((rank, -st.st_mtime, order, _readable(target, pid, fd, proc)))
            elif stat.S_ISCHR(st.st_mode) and target.startswith(("/dev/pts/", "/dev/tty")):
                ttys.append(target)
            elif target.startswith("pipe:"):
                pipes.append(target)
            else:
                other.append(target)
    if files:  # rank 0's or the launcher's, the one written last (torchrun --redirects, stdout and stderr apart)
        return _source("fd", sorted(files)[0][3])
    for pipe in dict.fromkeys(pipes):
        path = _pipe_file(pipe, pids, proc)
        if path is not None:
            return _source("fd", path)
    who = f"pid {pids[0]}" if pids else "the run"
    if ttys:
        tty = ttys[0]
        if not use_tmux:
            return _source("tmux", error=f"{who}'s output goes to the terminal {tty} and reading tmux panes is off "
                                         f"([run] tmux = false); {NAME_HINT}")
        found = find_pane(tty, sockets)
        if isinstance(found, tuple):
            return _source("tmux", path=found[0], pane=found[1])
        return _source("tmux", error=f"{who}'s output goes to the terminal {tty}, {found}; {NAME_HINT}")
    if pipes:
        return _source("fd", error=f"{who}'s output goes to a pipe ({pipes[0]}) that no `tee FILE` this user can "
                                   f"see writes to a file: sparktui cannot read it; {NAME_HINT}")
    if other:
        what = "/dev/null: nothing is kept" if "/dev/null" in other else f"{other[0]}, which is no log file"
        return _source("fd", error=f"{who}'s output goes to {what}; {NAME_HINT}")
    return _source("fd", error=f"{who}'s stdout and stderr cannot be read (another user's process, or it ended); "
                               f"{NAME_HINT}")


def named_source(path: str) -> RunLogSource:
    """The log the user named: a regular file, or why it is not one."""
    try:
        st = os.stat(path)
    except OSError as e:
        return _source("named", path, error=f"cannot read {path}: {e.strerror or e}")
    if not stat.S_ISREG(st.st_mode):
        what = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file (a pipe or a device?)"
        return _source("named", path, error=f"{path} is {what}: name the run's log file")
    if not os.access(path, os.R_OK):
        return _source("named", path, error=f"cannot read {path}: permission denied")
    return _source("named", path)


# ----------------------------------------------------------------------------------- tmux (read only)


def _tmux(server: Sequence[str], args: Sequence[str], timeout_s: float = TMUX_TIMEOUT_S) -> tuple[int, str, str]:
    """Run one read-only tmux client command (list-panes, capture-pane) against ``server`` (``-S
    SOCKET`` or ``-L NAME``, or nothing for the default); (exit status, stdout, stderr)."""
    proc = children.spawn(["tmux", *server, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        out, err = b"", f"tmux did not answer within {timeout_s:g} s".encode()
    finally:
        rc = children.reap(proc)
    return (124 if rc < 0 and not out else rc), out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def tmux_sockets() -> list[str]:
    """This user's tmux servers: the one sparktui runs in ($TMUX), then those in tmux's folder."""
    found: list[str] = []
    inside = os.environ.get("TMUX", "").split(",")[0]
    if inside:
        found.append(inside)
    folder = os.path.join(os.environ.get("TMUX_TMPDIR") or TMUX_DEFAULT_DIR, f"tmux-{os.getuid()}")
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        names = []
    for name in names:
        p = os.path.join(folder, name)
        try:
            if stat.S_ISSOCK(os.stat(p).st_mode) and p not in found:
                found.append(p)
        except OSError:
            continue
    return found[:MAX_SOCKETS]


def find_pane(tty: str, sockets: Iterable[str] | None = None) -> tuple[str, str] | str:
    """(socket, pane id) of the tmux pane on terminal ``tty``, or why none was found."""
    tried = 0
    failures: list[str] = []
    for sock in (tmux_sockets() if sockets is None else sockets):
        tried += 1
        try:
            rc, out, err = _tmux(("-S", sock), ("list-panes", "-a", "-F", "#{pane_id} #{pane_tty}"))
        except OSError as e:  # no tmux installed
            return f"and tmux cannot be run ({e.strerror or e})"
        if rc != 0:
            failures.append(err.strip()[:120])
            continue
        for line in out.splitlines():
            pane, _, pty = line.partition(" ")
            if pty.strip() == tty and pane.startswith("%"):
                return sock, pane
    if not tried:
        return "and no tmux server of this user runs (a terminal outside tmux cannot be read)"
    return f"which is no pane of this user's {tried} tmux server(s) (a terminal outside tmux cannot be read)"


class TmuxPane:
    """A tmux pane read on request: ``capture()`` returns the lines added since the last capture
    (the first returns the whole pane and its history, up to ``history`` lines). Read only:
    ``capture-pane -p -J``, never a key sent. New lines are found by overlap: the last capture's
    last ``ANCHOR`` lines (but its last one, which a progress bar may have rewritten since) are
    looked for in the new capture, latest first; what follows them is new. ``socket``: the tmux
    server's (RunLogSource ``path`` for a pane); None is the server tmux itself picks ($TMUX, the
    default one). When they are not found
    (the pane scrolled further than its history, or was cleared) the whole capture is new and
    ``gaps`` counts it. Memory: the last capture only (bounded by ``history``)."""

    def __init__(self, pane: str, socket: str | None = None, history: int = TMUX_HISTORY,
                 timeout_s: float = TMUX_TIMEOUT_S) -> None:
        self.pane = pane
        self.server: tuple[str, ...] = ("-S", socket) if socket else ()
        self.history = history
        self.timeout_s = timeout_s
        self.last: list[str] = []
        self.captures = 0
        self.gaps = 0
        self.error: str | None = None

    def lines(self) -> list[str]:
        """The pane's text now (its history and screen), trailing blank lines dropped. Raises OSError."""
        rc, out, err = _tmux(self.server, ("capture-pane", "-p", "-J", "-t", self.pane, "-S", f"-{self.history}"),
                             self.timeout_s)
        if rc != 0:
            raise OSError(f"tmux capture-pane -t {self.pane}: {err.strip()[:200] or f'exit status {rc}'}")
        got = [ln.rstrip() for ln in out.split("\n")]
        while got and not got[-1]:
            got.pop()
        return got

    def new_lines(self) -> list[str]:
        """The lines new since the last capture. Raises OSError (tmux gone, the pane closed)."""
        try:
            now = self.lines()
        except OSError as e:
            self.error = str(e)
            raise
        self.error = None
        self.captures += 1
        prev, self.last = self.last, now
        return added_lines(prev, now, self)

    def capture(self) -> list[str]:
        """``new_lines`` that never raises: [] on a failure, said in ``error``."""
        try:
            return self.new_lines()
        except OSError:
            return []


def added_lines(prev: list[str], now: list[str], counter: TmuxPane | None = None) -> list[str]:
    """What ``now`` (a pane's capture) adds to ``prev`` (the one before); see ``TmuxPane``."""
    if not prev:
        return list(now)
    anchor = prev[-ANCHOR - 1:-1]
    k = len(anchor)
    end = -1
    if k == 0:
        end = 0
    else:
        first = anchor[0]
        for i in range(len(now) - k, -1, -1):
            if now[i] == first and now[i:i + k] == anchor:
                end = i + k
                break
    if end < 0:
        if counter is not None:
            counter.gaps += 1
        return list(now)
    rest = now[end:]
    if rest and rest[0] == prev[-1]:
        rest = rest[1:]  # the last line, unchanged
    return rest


# ----------------------------------------------------------------------------------- following a file
IN_MODIFY, IN_ATTRIB, IN_MOVED_TO, IN_CREATE = 0x2, 0x4, 0x80, 0x100
IN_DELETE_SELF, IN_MOVE_SELF, IN_Q_OVERFLOW, IN_IGNORED = 0x400, 0x800, 0x4000, 0x8000
IN_CLOEXEC, IN_NONBLOCK = 0o2000000, 0o4000
FILE_EVENTS = IN_MODIFY | IN_MOVE_SELF | IN_DELETE_SELF | IN_ATTRIB
DIR_EVENTS = IN_CREATE | IN_MOVED_TO
_EVENT = struct.Struct("iIII")


class _Inotify:
    """inotify through ctypes (no dependency): the file's watch and its folder's."""

    def __init__(self) -> None:
        self.libc = ctypes.CDLL(None, use_errno=True)
        fd = self.libc.inotify_init1(IN_CLOEXEC | IN_NONBLOCK)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self.fd = int(fd)

    def add(self, path: str, mask: int) -> int:
        wd = self.libc.inotify_add_watch(self.fd, os.fsencode(path), mask)
        if wd < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {path} failed")
        return int(wd)

    def rm(self, wd: int) -> None:
        self.libc.inotify_rm_watch(self.fd, wd)

    def events(self) -> list[tuple[int, int, bytes]]:
        """(wd, mask, name) of every event queued now."""
        out: list[tuple[int, int, bytes]] = []
        while True:
            try:
                buf = os.read(self.fd, 65536)
            except BlockingIOError:
                return out
            i = 0
            while i + _EVENT.size <= len(buf):
                wd, mask, _cookie, n = _EVENT.unpack_from(buf, i)
                name = buf[i + _EVENT.size:i + _EVENT.size + n].rstrip(b"\0")
                out.append((wd, mask, name))
                i += _EVENT.size + n
            if len(buf) < 32768:  # not near full: the queue is empty now (no second read to hear so)
                return out

    def close(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass


class LogFollower:
    """Follows a growing log file and calls ``on_lines([(text, t), ...])`` with each batch of lines.

    From ``offset`` when given; by default the last ``tail_bytes`` first (the run's recent history;
    these lines carry ``t`` None: when they were written is not known), then each write as it comes
    (``t`` = when the line was read). Lines are split on ``\\n`` only (the parser splits on ``\\r``);
    a line still unterminated whose ``\\r``-separated updates (a progress bar writing to a file) are
    complete is handed on up to its last ``\\r``, so a bar that ends its line only when the loop ends
    is still seen live. A line longer than ``MAX_PARTIAL`` bytes is cut: its first ``CUT_KEEP`` bytes
    are delivered, the rest skipped to its end, counted in ``cut_lines``.

    The thread waits in ``select`` on inotify (the file: IN_MODIFY, IN_MOVE_SELF, IN_DELETE_SELF,
    IN_ATTRIB; its folder: IN_CREATE, IN_MOVED_TO) and a self-pipe: no polling loop; where inotify
    cannot be had, the file is looked at every ``SAFETY_S``. After a wake-up it waits ``coalesce_s``
    (as the kernel-log follower does) so a burst costs one wake-up, not one per line. Rotation (the
    name now points at another file): the old file is read to its end, then the new one from its
    start (``rotations``). Truncation (the file is shorter than what was read): read again from the
    start, said once through ``on_error`` (``truncations`` counts them). A deleted file is read on
    through the open descriptor until a new file takes its name. ``on_error`` hears a failure; the
    follower then ends; nothing here is fatal to the caller."""

    def __init__(self, path: str, on_lines: OnLines, on_error: Callable[[str], None] | None = None, *,
                 offset: int | None = None, tail_bytes: int = TAIL_BYTES, coalesce_s: float = COALESCE_S) -> None:
        self.path = path
        self.on_lines = on_lines
        self.on_error = on_error
        self.offset = offset
        self.tail_bytes = tail_bytes
        self.coalesce_s = coalesce_s
        self.lines = 0
        self.cut_lines = 0
        self.bytes_read = 0
        self.rotations = 0
        self.truncations = 0
        self.callback_errors = 0
        self.error: str | None = None
        self.inotify = False
        self._fd = -1
        self._pos = 0
        self._ino: tuple[int, int] = (0, 0)
        self._buf = b""
        self._skip = False  # inside a cut line: drop bytes to its end
        self._history = True  # the lines of the start's tail: t None
        self._history_end = 0  # the file's size at the start: what lies before it is history
        self._out: list[tuple[str, float | None]] = []
        self._now = 0.0
        self._notify: _Inotify | None = None
        self._file_wd = -1
        self._dir_wd = -1
        self._wake_r, self._wake_w = -1, -1
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._closing = threading.Lock()

    # ---------------------------------------------------------------- life
    def start(self) -> "LogFollower":
        """Watch and open the file (raises OSError here when it cannot be opened), start the thread."""
        try:
            self._notify = _Inotify()
            self._watch()
            self.inotify = True
        except (OSError, AttributeError):
            if self._notify is not None:
                self._notify.close()
            self._notify = None
        try:
            self._open(self.offset)
        except OSError:
            if self._notify is not None:
                self._notify.close()
                self._notify = None
            raise
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._run, name="run-log-follower", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        self._stopping.set()
        poke(self._wake_w)
        t = self._thread
        if t is not None and t is not threading.current_thread():  # stop() from on_lines: the thread ends after it
            t.join(timeout)
        if t is not None and t.is_alive():
            return  # still in a consumer's call: the thread closes its descriptors as it ends (never one reused)
        self._close()

    def _close(self) -> None:
        with self._closing:
            for fd in (self._fd, self._wake_r, self._wake_w):
                if fd >= 0:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            self._fd = self._wake_r = self._wake_w = -1
            if self._notify is not None:
                self._notify.close()
                self._notify = None

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def position(self) -> int:
        """Bytes of the current file read so far."""
        return self._pos

    # ---------------------------------------------------------------- files
    def _watch(self) -> None:
        assert self._notify is not None
        if self._file_wd >= 0:
            self._notify.rm(self._file_wd)
            self._file_wd = -1
        self._file_wd = self._notify.add(self.path, FILE_EVENTS)
        folder = os.path.dirname(os.path.abspath(self.path))
        if self._dir_wd < 0 and not folder.startswith("/proc/"):  # /proc/PID/fd/N: no rotation by name
            try:
                self._dir_wd = self._notify.add(folder, DIR_EVENTS)
            except OSError:
                self._dir_wd = -1

    def _open(self, offset: int | None) -> None:
        fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(errno.EINVAL, f"{self.path} is not a regular file")
        except OSError:
            os.close(fd)
            raise
        self._fd, self._ino = fd, (st.st_dev, st.st_ino)
        self._buf, self._skip = b"", False
        self._history_end = st.st_size
        if offset is None:
            offset = max(0, st.st_size - self.tail_bytes)
            self._history = True
            if offset > 0 and os.pread(fd, 1, offset - 1) not in (b"\n", b"\r"):
                self._skip = True  # mid-line: the first (partial) segment is dropped
        else:
            self._history = offset < st.st_size
        self._pos = offset

    def _drain(self) -> bool:
        """Read what is there now (up to DRAIN_READS reads); True when more may be waiting."""
        for _ in range(DRAIN_READS):
            if self._history and self._pos >= self._history_end:
                self._history = False  # what was there at the start is read: what follows is seen now
            want = min(READ_CHUNK, self._history_end - self._pos) if self._history else READ_CHUNK
            chunk = os.pread(self._fd, want, self._pos)
            if not chunk:
                self._flush_out()
                self._history = False
                return False
            self._pos += len(chunk)
            self.bytes_read += len(chunk)
            self._chunk(chunk)
            self._flush_out()
            if self._stopping.is_set():
                return False
        return True

    # ---------------------------------------------------------------- lines
    def _emit(self, raw: bytes) -> None:
        if raw.endswith(b"\r"):
            raw = raw.rstrip(b"\r")
        if not raw:
            return
        self.lines += 1
        self._out.append((raw.decode("utf-8", "replace"), None if self._history else self._now))

    def _flush_out(self) -> None:
        if not self._out:
            return
        out, self._out = self._out, []
        try:
            self.on_lines(out)
        except Exception:  # a consumer's bug must not end the follower
            self.callback_errors += 1

    def _chunk(self, chunk: bytes) -> None:
        self._now = time.time()  # when this chunk's lines were seen
        buf = self._buf + chunk if self._buf else chunk
        start = 0
        if self._skip:  # the rest of a cut line (or the tail's first partial segment)
            nl = buf.find(b"\n")
            cr = buf.find(b"\r") if self.lines == 0 and self._history else -1  # the tail may start inside a bar
            cut = min(x for x in (nl, cr) if x >= 0) if max(nl, cr) >= 0 else -1
            if cut < 0:
                self._buf = b""
                return
            self._skip = False
            start = cut + 1
        while True:
            nl = buf.find(b"\n", start)
            if nl < 0:
                break
            self._emit(buf[start:nl])
            start = nl + 1
        rest = buf[start:]
        if b"\r" in rest:  # a bar's complete updates: on now, not when its line ends
            cr = rest.rfind(b"\r")
            if cr > 0:
                self._emit(rest[:cr])
            rest = rest[cr + 1:]
        if len(rest) > MAX_PARTIAL:
            self._emit(rest[:CUT_KEEP])
            self.cut_lines += 1
            rest, self._skip = b"", True
        self._buf = rest

    def _end_of_file(self) -> None:
        """The file is done (rotated away): its unterminated last line counts as a line."""
        if self._buf and not self._skip:
            self._emit(self._buf)
        self._buf, self._skip = b"", False
        self._flush_out()

    # ---------------------------------------------------------------- changes
    def _check(self, moved: bool) -> None:
        """After a wake-up: truncated? rotated (the name now points at another file)?"""
        try:
            size = os.fstat(self._fd).st_size
        except OSError:
            size = self._pos
        if size < self._pos:
            self.truncations += 1
            if self.truncations == 1 and self.on_error is not None:
                try:
                    self.on_error(f"{self.path} was truncated (from {self._pos} to {size} bytes): read again from its start")
                except Exception:
                    self.callback_errors += 1
            self._pos, self._buf, self._skip = 0, b"", False
        if not moved:
            return
        try:
            st = os.stat(self.path)
        except OSError:
            return  # deleted or moved away, no new file yet: read on through the open descriptor
        if (st.st_dev, st.st_ino) == self._ino or not stat.S_ISREG(st.st_mode):
            return
        while self._drain():  # finish the old file
            pass
        self._end_of_file()
        old = self._fd
        try:
            self._open(0)
        except OSError:
            return  # gone again: keep the old one
        self._history = False
        self.rotations += 1
        try:
            os.close(old)
        except OSError:
            pass
        if self._notify is not None:
            try:
                self._watch()
            except OSError:
                pass

    def _wait(self) -> bool:
        """Block until the file changes or stop(); True when something may have changed."""
        waits = [self._wake_r] + ([self._notify.fd] if self._notify is not None else [])
        ready, _, _ = select.select(waits, [], [], None if self._notify is not None else SAFETY_S)
        if self._stopping.is_set():
            return False
        moved = self._notify is None
        if self._notify is not None and self._notify.fd in ready:
            for wd, mask, name in self._notify.events():
                if wd == self._dir_wd:
                    moved = moved or name == os.path.basename(self.path).encode()
                elif mask & (IN_MOVE_SELF | IN_DELETE_SELF | IN_ATTRIB | IN_IGNORED | IN_Q_OVERFLOW):
                    moved = True
        if self.coalesce_s > 0 and select.select([self._wake_r], [], [], self.coalesce_s)[0]:
            return False
        self._check(moved)
        return True

    def _run(self) -> None:
        try:
            while not self._stopping.is_set():
                if self._drain():
                    continue
                self._wait()
        except OSError as e:
            if not self._stopping.is_set():
                self.error = f"{self.path}: {e.strerror or e}"
                if self.on_error is not None:
                    try:
                        self.on_error(self.error)
                    except Exception:
                        self.callback_errors += 1
        finally:
            self._flush_out()
            if self._stopping.is_set():
                self._close()


# ----------------------------------------------------------------------------------- the one-shot probe


def read_tail(path: str, log: RunLog, tail_bytes: int = TAIL_BYTES) -> int:
    """Feed the last ``tail_bytes`` of ``path`` to ``log`` (lines cut and split as the follower
    does); returns the lines read. Raises OSError."""
    def take(lines: list[tuple[str, float | None]]) -> None:
        for text, t in lines:
            log.line(text, t)

    f = LogFollower(path, take, tail_bytes=tail_bytes)
    f._open(None)
    try:
        while f._drain():
            pass
        f._end_of_file()
    finally:
        os.close(f._fd)
    return f.lines


def _cmdline(pid: int, proc: str = "/proc") -> str | None:
    try:
        with open(f"{proc}/{pid}/cmdline", "rb") as fh:
            raw = fh.read(processes.CMDLINE_BYTES)
    except OSError:
        return None
    return processes.command_text([a.decode("utf-8", "replace") for a in raw.rstrip(b"\0").split(b"\0")]) or None


def _scan(cfg: Config) -> dict[str, Any]:
    """The process scan, without NVML: the run is found by its command line."""
    return processes.scan(None, cfg)


def read(cfg: Config) -> Reading[Any]:
    """Probe "run": the training run, its log's recent history parsed. Never raises."""
    started = time.time()
    run = find_run(_scan(cfg), cfg)
    data: dict[str, Any] = {**run, "log": None}
    log = RunLog()
    src: RunLogSource | None = None
    if run["found"]:
        src = log_of(run, cfg)
        data["log"] = src
        if src.get("error") is None:
            try:
                if src["kind"] == "tmux":
                    for text in TmuxPane(src["pane"] or "", src["path"]).lines():
                        log.line(text, None)
                else:
                    read_tail(src["path"] or "", log)
            except OSError as e:
                src["error"] = f"cannot read {src.get('path') or src.get('pane')}: {e.strerror or e}; {NAME_HINT}"
        log.flush()
    data.update(log.data())
    if src is not None and data.get("last_line_t") is None and src.get("mtime") is not None:
        data["last_line_t"] = src["mtime"]
    data["read_at"] = time.time()
    where = (src.get("path") if src["kind"] != "tmux" else f"tmux pane {src.get('pane')}") if src else None
    return Reading("run", data, source=where or "process scan", started_at=started, took_s=time.time() - started)


PROBES = (Probe(shapes.RUN, read),)

__all__ = ["LogFollower", "RunData", "TmuxPane", "find_pane", "find_run", "log_of", "named_source", "added_lines", "read",
           "read_tail", "writers_of"]
