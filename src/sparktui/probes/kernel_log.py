"""The kernel log since boot: NVIDIA Xid, NV_ERR_NO_MEMORY, OOM kills, PCIe AER, soft lock-ups.

A process killed by the kernel leaves no Python traceback; the kernel log says what happened.
``parse_line`` / ``Parser`` recognise the lines (both ``/dev/kmsg`` records
``PRI,SEQ,TS_USEC,FLAGS;text`` and plain dmesg / journal text) in linear time, each line cut to
``MAX_PARSE`` characters first. ``read`` reads back since boot (``/dev/kmsg`` non-blocking from the
start, else ``journalctl -k -b -o json``, else ``dmesg``) and returns plain data; a failed reading
says why and how to grant access (no root for the whole app). ``KernelLogFollower`` follows the
log live for the dashboard: a blocking wait in its own thread (``select`` on the log and a
self-pipe: no polling), stopped promptly by ``stop()``.

Sources: public field reports on the kernel log (Xid format, Xid 169 on GB10 with the proprietary module,
OOM killer lines, ConnectX-7 fatal AER before soft lock-ups, access needs adm/systemd-journal or
kernel.dmesg_restrict=0); Linux Documentation/ABI/testing/dev-kmsg (record format, EPIPE on
overwritten records, SEEK_END); NVIDIA "Xid Errors" table (meanings below, abridged).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import re
import select
import stat
import subprocess
import threading
import time
from typing import Any, Callable, Iterable, Iterator

from sparktui.core import children
from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.xids import XIDS  # noqa: F401  (re-exported: the meanings, shared with G11's judge)

KMSG = "/dev/kmsg"
BOOT_ID = "/proc/sys/kernel/random/boot_id"
MAX_TEXT = 500  # characters of a line kept in an event
MAX_PARSE = 4096  # a line is cut here before any pattern runs (linear, bounded work per line)
MAX_EVENTS = 500  # events kept in a reading; the rest are counted ("truncated")
MAX_PARTIAL = 65536  # bytes of an unterminated line the follower buffers before cutting it
JOURNAL_TIMEOUT_S = 30.0
COALESCE_S = 0.05  # the follower's batching delay after a wake-up: 20 wake-ups/s at most in a storm (benchmarks/kernel_log_follow.py: 0.02 s cost ~1.1% of a core at 1000 lines/s, 0.05 s ~0.6%)
KINDS = ("xid", "nv_no_memory", "oom_kill", "aer", "soft_lockup")

GRANT_HINT = ("grant read access to the kernel log without running sparktui as root: "
              "`sudo usermod -aG adm,systemd-journal $USER` (then log in again), "
              "or `sudo sysctl kernel.dmesg_restrict=0` (until reboot; persist it in /etc/sysctl.d/)")

# Xids that point at memory exhaustion (G3/G6) rather than the driver or hardware.
OPEN_MODULE_XIDS = frozenset({169})

# --------------------------------------------------------------------------- line patterns
# Numbers are bounded: a time of 400 digits is no record's (and overflows a float); such a line is text.
_KMSG = re.compile(r"^(\d{1,20}),(\d{1,20}),(\d{1,20}),[^;]*;")
_DMESG_TS = re.compile(r"^\s*\[\s*(\d{1,12}\.\d{1,9})\]\s?")
_XID = re.compile(r"NVRM: Xid \(PCI:([0-9A-Fa-f:.]+)\): (\d+),\s?(.*)")
_XID_PID = re.compile(r"pid=(\d+|'<unknown>'|<unknown>)(?:, name=([^,]*))?")
_NOMEM = re.compile(r"NV_ERR_NO_MEMORY")
_OOM_KILLED = re.compile(r"[Oo]ut of memory(?: \([^)]*\))?: Killed process (\d+) \(([^)]*)\)(.*)")
_RSS = re.compile(r"(anon|file|shmem)-rss:(\d+)kB")
_OOM_SUMMARY = re.compile(r"oom-kill:.*?,task=([^,]*),pid=(\d+)")
_AER_RECEIVED = re.compile(r"(\S+) ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d): AER: (?:Multiple )?"
                           r"(Uncorrect(?:ed|able) \((Fatal|Non-Fatal)\)|Corrected) error (?:message )?received: "
                           r"([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d)")
_AER_BUS = re.compile(r"(\S+) ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d): PCIe Bus Error: "
                      r"severity=(Uncorrect(?:ed|able) \((Fatal|Non-Fatal)\)|Corrected)")
_DRIVER_BDF = re.compile(r"^(mlx5_core|nvidia|pcieport) ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d): ")
_LOCKUP = re.compile(r"BUG: soft lockup - CPU#(\d+) stuck for (\d+)s!(?: \[([^\]]*?):(\d+)\])?")

DEVICES = {"mlx5_core": "ConnectX-7 (mlx5)", "nvidia": "GPU (nvidia)", "pcieport": "PCIe port"}

Event = dict[str, Any]


def _severity(full: str, inner: str | None) -> str:
    if inner:
        return "fatal" if inner == "Fatal" else "non-fatal"
    return "corrected" if full == "Corrected" else "unknown"


def split_record(line: str) -> tuple[str, float | None]:
    """(message, seconds since boot or None) of one line: a /dev/kmsg record, a dmesg line, or text."""
    m = _KMSG.match(line)
    if m:
        return line[m.end():], int(m.group(3)) / 1e6
    m = _DMESG_TS.match(line)
    if m:
        return line[m.end():], float(m.group(1))
    return line, None


class Parser:
    """Turns kernel log lines into events. Stateful only for what spans lines: the BDF -> driver map
    (to name the device behind a port's AER line) and one pending event (an ``oom-kill:`` summary
    waits for its ``Killed process`` line, an AER ``error received`` for the device's ``PCIe Bus
    Error`` line) so one incident is one event. Call ``flush()`` at the end of input."""

    MAX_DEVICES = 256

    def __init__(self, boot_epoch: float | None = None) -> None:
        self.boot_epoch = boot_epoch
        self.drivers: dict[str, str] = {}
        self.pending: Event | None = None

    def feed(self, line: str, t: float | None = None) -> list[Event]:
        """Events completed by this line (0, 1 or 2). ``t`` (epoch) overrides the line's own time."""
        msg, since_boot = split_record(line[:MAX_PARSE].rstrip("\r\n"))
        if t is None and since_boot is not None and self.boot_epoch is not None:
            t = self.boot_epoch + since_boot
        out: list[Event] = []
        ev = self._match(msg, t)
        pend = self.pending
        if pend is not None:
            self.pending = None
            if ev is not None and self._merge(pend, ev):
                return [pend]
            out.append(pend)
        if ev is not None:
            if (ev["kind"] == "oom_kill" and ev.get("rss_kb") is None) or ev.get("_wait"):
                ev.pop("_wait", None)
                self.pending = ev
            else:
                out.append(ev)
        return out

    def flush(self) -> list[Event]:
        pend, self.pending = self.pending, None
        if pend is not None:
            pend.pop("_wait", None)
        return [pend] if pend is not None else []

    @staticmethod
    def _merge(pend: Event, ev: Event) -> bool:
        if pend["kind"] == "oom_kill" and ev["kind"] == "oom_kill" and pend.get("pid") == ev.get("pid"):
            pend.update({k: v for k, v in ev.items() if v is not None})
            return True
        if pend["kind"] == "aer" and ev["kind"] == "aer" and ev.get("pci") == pend.get("pci"):
            pend["device"] = ev["device"]
            return True
        return False

    def _match(self, msg: str, t: float | None) -> Event | None:
        d = _DRIVER_BDF.match(msg)
        if d and d.group(2) not in self.drivers and len(self.drivers) < self.MAX_DEVICES:
            self.drivers[d.group(2)] = d.group(1)
        text = msg[:MAX_TEXT]
        if "NVRM" in msg:
            m = _XID.search(msg)
            if m:
                pid = name = None
                p = _XID_PID.search(m.group(3))
                if p:
                    pid = int(p.group(1)) if p.group(1).isdigit() else None
                    name = p.group(2).strip() if p.group(2) else None
                pci = m.group(1)
                if len(self.drivers) < self.MAX_DEVICES:
                    self.drivers.setdefault(pci, "nvidia")
                return {"kind": "xid", "t": t, "text": text, "xid": int(m.group(2)), "pci": pci,
                        "pid": pid, "name": name, "device": DEVICES["nvidia"]}
        if "NV_ERR_NO_MEMORY" in msg and _NOMEM.search(msg):
            return {"kind": "nv_no_memory", "t": t, "text": text, "device": DEVICES["nvidia"]}
        if "ut of memory" in msg:
            m = _OOM_KILLED.search(msg)
            if m:
                rss = {k: int(v) for k, v in _RSS.findall(m.group(3))}
                total = sum(rss.values()) if rss else None
                return {"kind": "oom_kill", "t": t, "text": text, "pid": int(m.group(1)), "name": m.group(2),
                        "rss_kb": total, "anon_rss_kb": rss.get("anon")}
        if "oom-kill:" in msg:
            m = _OOM_SUMMARY.search(msg)
            if m:
                return {"kind": "oom_kill", "t": t, "text": text, "pid": int(m.group(2)), "name": m.group(1),
                        "rss_kb": None, "anon_rss_kb": None}
        if "AER" in msg or "PCIe Bus Error" in msg:
            m = _AER_RECEIVED.search(msg)
            if m:
                pci = m.group(5)
                drv = self.drivers.get(pci)
                return {"kind": "aer", "t": t, "text": text, "severity": _severity(m.group(3), m.group(4)),
                        "pci": pci, "device": DEVICES.get(drv or "", drv or "unknown"), "_wait": True}
            m = _AER_BUS.search(msg)
            if m:
                drv, pci = m.group(1), m.group(2)
                return {"kind": "aer", "t": t, "text": text, "severity": _severity(m.group(3), m.group(4)),
                        "pci": pci, "device": DEVICES.get(drv, drv)}
        if "soft lockup" in msg:
            m = _LOCKUP.search(msg)
            if m:
                return {"kind": "soft_lockup", "t": t, "text": text, "cpu": int(m.group(1)),
                        "stuck_s": int(m.group(2)), "name": m.group(3),
                        "pid": int(m.group(4)) if m.group(4) else None}
        return None


MAX_JOURNAL_LINE = 1 << 20  # a `journalctl -o json` record longer than this is not one of the kernel's


def journal_record(raw: bytes | str) -> tuple[str, float | None, str | None] | None:
    """(message, unix time or None, boot id or None) of one `journalctl -o json` line; None when
    it is not a record with a message. A time that is no time (not a whole number of microseconds,
    negative, past a float) is None; a boot id that is not a string is None."""
    if len(raw) > MAX_JOURNAL_LINE:
        return None
    try:
        rec = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(rec, dict):
        return None
    msg = rec.get("MESSAGE")
    if isinstance(msg, list):  # non-UTF-8 messages come as byte arrays
        msg = bytes(b for b in msg if isinstance(b, int) and 0 <= b < 256).decode("utf-8", "replace")
    if not isinstance(msg, str):
        return None
    usec = rec.get("__REALTIME_TIMESTAMP")  # journalctl writes a string of digits
    if isinstance(usec, str) and usec.isascii() and usec.isdigit() and len(usec) <= 20:
        usec = int(usec)
    t = usec / 1e6 if type(usec) is int and 0 <= usec < 10 ** 20 else None
    boot = rec.get("_BOOT_ID")
    return msg, t, boot if isinstance(boot, str) else None


def parse_line(line: str, boot_epoch: float | None = None) -> Event | None:
    """The event one line holds on its own (no cross-line merging), or None."""
    p = Parser(boot_epoch)
    evs = p.feed(line) + p.flush()
    return evs[0] if evs else None


def parse_lines(lines: Iterable[str], boot_epoch: float | None = None) -> Iterator[Event]:
    p = Parser(boot_epoch)
    for line in lines:
        yield from p.feed(line)
    yield from p.flush()


def boot_epoch() -> float:
    """Unix time of boot, for kmsg / dmesg timestamps (printk's clock; suspend time can skew it)."""
    return time.time() - time.clock_gettime(time.CLOCK_MONOTONIC)


def read_boot_id(path: str = BOOT_ID) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read().strip().replace("-", "") or None
    except OSError:
        return None


# --------------------------------------------------------------------------- reading since boot
class _Collector:
    def __init__(self, source: str, boot: float | None) -> None:
        self.parser = Parser(boot)
        self.source = source
        self.lines = 0
        self.events: list[Event] = []
        self.counts: dict[str, int] = {k: 0 for k in KINDS}

    def add(self, evs: list[Event]) -> None:
        for ev in evs:
            self.counts[ev["kind"]] += 1
            if len(self.events) < MAX_EVENTS:
                self.events.append(ev)

    def line(self, text: str, t: float | None = None) -> None:
        self.lines += 1
        self.add(self.parser.feed(text, t))

    def data(self, boot_id: str | None, note: str | None = None) -> dict[str, Any]:
        self.add(self.parser.flush())
        return {"source": self.source, "boot_id": boot_id, "lines_read": self.lines, "events": self.events,
                "truncated": sum(self.counts.values()) > len(self.events), "counts": self.counts,
                "note": note}


def read_kmsg(path: str = KMSG, boot: float | None = None) -> tuple[_Collector, str | None]:
    """All records still in the ring buffer, non-blocking from the first. Raises OSError when the
    device cannot be opened or read (EPERM/EACCES under kernel.dmesg_restrict=1)."""
    col = _Collector("kmsg", boot if boot is not None else boot_epoch())
    lost = 0
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):  # a saved copy of kmsg records (tests, reviews)
            with os.fdopen(os.dup(fd), "r", encoding="utf-8", errors="replace") as f:
                for ln in f:
                    col.line(ln)
            col.source = "file"
            return col, None
        while True:
            try:
                rec = os.read(fd, 8192)
            except BlockingIOError:
                break
            except OSError as e:
                if e.errno == errno.EPIPE:  # records overwritten while we read: go on from the next
                    lost += 1
                    continue
                if col.lines == 0:
                    raise
                break
            if not rec:
                break
            col.line(rec.decode("utf-8", "replace").split("\n", 1)[0])
    finally:
        os.close(fd)
    return col, (f"{lost} stretch(es) of records were overwritten while reading" if lost else None)


def read_journal(cmd: tuple[str, ...] = ("journalctl", "-k", "-b", "-o", "json", "--no-pager"),
                 timeout_s: float = JOURNAL_TIMEOUT_S) -> tuple[_Collector, str | None]:
    """The kernel's messages of this boot from the journal. Raises OSError/RuntimeError when the
    journal cannot be read, including the silent case: without adm/systemd-journal journalctl
    exits 0 with no kernel messages and only a hint on stderr."""
    col = _Collector("journalctl", None)
    deadline = time.monotonic() + timeout_s
    proc = children.spawn(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    timer = threading.Timer(timeout_s, children.kill_group, (proc,))  # a grandchild may hold the pipe
    timer.start()
    try:
        assert proc.stdout is not None and proc.stderr is not None
        boot_id = None
        for raw in proc.stdout:
            rec = journal_record(raw)
            if rec is None:
                continue
            msg, t, boot = rec
            boot_id = boot_id or boot
            col.line(msg, t)
        err = proc.stderr.read().decode("utf-8", "replace").strip()
        # Its output has ended, but a process closes its output a moment before it exits: reaping
        # now would SIGKILL a journalctl that read the whole journal (exit -9, a good read thrown
        # away; seen on a loaded machine). It gets until the deadline to exit on its own.
        _wait_until(proc, deadline)
    finally:
        timer.cancel()
        rc = children.reap(proc)
    if rc != 0:
        if time.monotonic() >= deadline:
            raise RuntimeError(f"journalctl ran past {timeout_s:g} s and was stopped")
        raise RuntimeError(f"journalctl exited {rc}: {err[:300] or 'no message'}")
    if "not seeing messages" in err or ("permission" in err.lower() and col.lines == 0):
        raise PermissionError(f"journalctl: {' '.join(err.split())[:300]}")
    if col.lines == 0:
        raise RuntimeError("journalctl returned no kernel messages for this boot (journal not persistent?)")
    col.boot_id = boot_id  # type: ignore[attr-defined]
    return col, None


def _wait_until(proc: subprocess.Popen, deadline: float) -> None:
    """Wait for ``proc`` to exit by itself, at most until ``deadline`` (monotonic)."""
    try:
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        pass


def read_dmesg(cmd: tuple[str, ...] = ("dmesg",), timeout_s: float = JOURNAL_TIMEOUT_S) -> tuple[_Collector, str | None]:
    col = _Collector("dmesg", boot_epoch())
    proc = subprocess.run(list(cmd), capture_output=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise RuntimeError(f"dmesg: {proc.stderr.decode('utf-8', 'replace').strip()[:300] or f'exit {proc.returncode}'}")
    for ln in proc.stdout.decode("utf-8", "replace").splitlines():
        col.line(ln)
    return col, None


def read_file(path: str) -> Reading[Any]:
    """A saved kernel log (kmsg records, dmesg output or journal text) judged as this boot's."""
    started = time.time()
    col = _Collector("file", None)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for ln in f:
                col.line(ln)
    except OSError as e:
        return Reading("kernel_log", None, error=f"cannot read {path}: {e.strerror or e}", source=path, started_at=started)
    return Reading("kernel_log", col.data(None), source=path, started_at=started)


def _why(e: BaseException) -> str:
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    return str(e) or type(e).__name__


def read(cfg: Config | None = None, kmsg: str = KMSG,
         journal_cmd: tuple[str, ...] = ("journalctl", "-k", "-b", "-o", "json", "--no-pager"),
         dmesg_cmd: tuple[str, ...] = ("dmesg",), boot_id_path: str = BOOT_ID) -> Reading[Any]:
    """The kernel log since boot, from the first source that can be read; never raises."""
    started = time.time()
    boot_id = read_boot_id(boot_id_path)
    failures: list[str] = []
    denied = False
    attempts: list[tuple[str, Callable[[], tuple[_Collector, str | None]]]] = [
        (kmsg, lambda: read_kmsg(kmsg)),
        ("journalctl -k -b", lambda: read_journal(journal_cmd)),
        ("dmesg", lambda: read_dmesg(dmesg_cmd)),
    ]
    for label, fn in attempts:
        try:
            col, note = fn()
        except (OSError, RuntimeError, subprocess.SubprocessError) as e:
            denied = denied or isinstance(e, PermissionError) or "not permitted" in str(e) or "ermission" in str(e)
            failures.append(f"{label}: {_why(e)}")
            continue
        bid = getattr(col, "boot_id", None) or boot_id
        note_all = "; ".join([*failures, *([note] if note else [])]) or None
        return Reading("kernel_log", col.data(bid, note_all), source=col.source, started_at=started,
                       took_s=time.time() - started)
    why = "; ".join(failures)
    hint = GRANT_HINT if denied else "check that the kernel log exists on this system; " + GRANT_HINT
    return Reading("kernel_log", None, error=f"cannot read the kernel log ({why}); {hint}", source="kernel log",
                   started_at=started, took_s=time.time() - started)


# --------------------------------------------------------------------------- live follower
IN_MODIFY, IN_CLOEXEC, IN_NONBLOCK = 0x2, 0o2000000, 0o4000


def _inotify(path: str) -> int | None:
    """An inotify fd watching ``path`` for writes, or None (then a growing file is re-read on a timer)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.inotify_init1(IN_CLOEXEC | IN_NONBLOCK)
        if fd < 0:
            return None
        if libc.inotify_add_watch(fd, os.fsencode(path), IN_MODIFY) < 0:
            os.close(fd)
            return None
        return int(fd)
    except (OSError, AttributeError):
        return None


class KernelLogFollower:
    """Follows the kernel log from now on and calls ``callback(event)`` for each parsed event.

    ``path`` is /dev/kmsg (it seeks to the end: only new records), a FIFO (opened read-write so a
    writer closing is not an end-of-file spin) or a growing regular file (followed from its current
    end, woken by inotify). The thread waits in ``select`` on the log and a self-pipe: no polling,
    and ``stop()`` wakes it at once. Partial lines are buffered (at most ``MAX_PARTIAL`` bytes; a
    longer line is cut and counted in ``cut_lines``). ``on_error(str)`` hears a read failure, after
    which the thread ends. Events are not stored: memory stays flat whatever the rate. After a
    wake-up the thread waits ``coalesce_s`` (interruptible by stop) and then reads all that is there,
    so a storm costs one wake-up per ``coalesce_s`` rather than one per line; an event reaches the
    callback at most about ``coalesce_s`` late."""

    DRAIN_READS = 4096  # reads per wake-up before the stop flag is looked at again

    def __init__(self, callback: Callable[[Event], None], path: str = KMSG,
                 on_error: Callable[[str], None] | None = None, from_start: bool = False,
                 coalesce_s: float = COALESCE_S) -> None:
        self.callback = callback
        self.path = path
        self.on_error = on_error
        self.from_start = from_start
        self.parser = Parser(boot_epoch())
        self.lines = 0
        self.events = 0
        self.cut_lines = 0
        self.callback_errors = 0
        self.error: str | None = None
        self._fd = -1
        self._wake_r, self._wake_w = -1, -1
        self._notify: int | None = None
        self._record_mode = False
        self._skip_to_newline = False
        self._buf = b""
        self.coalesce_s = coalesce_s
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    def start(self) -> "KernelLogFollower":
        """Open the log (raises OSError, e.g. PermissionError, right here) and start the thread."""
        fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            mode = os.fstat(fd).st_mode
            if stat.S_ISFIFO(mode):
                os.close(fd)
                fd = os.open(self.path, os.O_RDWR | os.O_NONBLOCK)
            elif stat.S_ISREG(mode):
                if not self.from_start:
                    os.lseek(fd, 0, os.SEEK_END)
                self._notify = _inotify(self.path)
            else:  # /dev/kmsg: one record per read(); SEEK_END skips what is already there
                self._record_mode = True
                if not self.from_start:
                    os.lseek(fd, 0, os.SEEK_END)
        except OSError:
            os.close(fd)
            raise
        self._fd = fd
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._run, name="kernel-log-follower", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        self._stopping.set()
        if self._wake_w >= 0:
            try:
                os.write(self._wake_w, b"x")
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout)
        for fd in (self._fd, self._wake_r, self._wake_w, self._notify if self._notify is not None else -1):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._fd = self._wake_r = self._wake_w = -1
        self._notify = None

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _emit(self, evs: list[Event]) -> None:
        for ev in evs:
            self.events += 1
            try:
                self.callback(ev)
            except Exception:  # a UI callback's bug must not end the follower
                self.callback_errors += 1

    def _line(self, raw: bytes) -> None:
        self.lines += 1
        self._emit(self.parser.feed(raw.decode("utf-8", "replace")))

    def _chunk(self, chunk: bytes) -> None:
        if self._record_mode:  # /dev/kmsg: one whole record per read
            self._line(chunk.split(b"\n", 1)[0])
            return
        buf = self._buf + chunk
        start = 0
        while True:
            nl = buf.find(b"\n", start)
            if nl < 0:
                break
            if self._skip_to_newline:  # the tail of a line already cut
                self._skip_to_newline = False
            else:
                self._line(buf[start:nl])
            start = nl + 1
        buf = buf[start:]
        if len(buf) > MAX_PARTIAL:  # an unterminated giant line: keep its head, drop the rest
            if not self._skip_to_newline:
                self._line(buf[:MAX_PARSE])
                self.cut_lines += 1
            buf = b""
            self._skip_to_newline = True
        self._buf = buf

    def _drain(self) -> bool:
        """Read what is there now, up to DRAIN_READS reads; False at a FIFO's or file's end."""
        for _ in range(self.DRAIN_READS):
            try:
                chunk = os.read(self._fd, 8192 if self._record_mode else 65536)
            except BlockingIOError:
                return True
            except OSError as e:
                if e.errno == errno.EPIPE:  # kmsg: records overwritten before we read them
                    continue
                raise
            if not chunk:
                return False
            self._chunk(chunk)
        return True

    def _run(self) -> None:
        regular = self._notify is not None or (not self._record_mode and stat.S_ISREG(os.fstat(self._fd).st_mode))
        try:
            while not self._stopping.is_set():
                if regular:
                    if self._drain():
                        continue
                    # at the end of a growing file: wait for a write (inotify) or stop
                    waits = [self._wake_r] + ([self._notify] if self._notify is not None else [])
                    ready, _, _ = select.select(waits, [], [], None if self._notify is not None else 0.25)
                    if self._notify is not None and self._notify in ready:
                        try:
                            os.read(self._notify, 4096)
                        except BlockingIOError:
                            pass
                    if self.parser.pending is not None and not ready:
                        self._emit(self.parser.flush())
                else:
                    ready, _, _ = select.select([self._fd, self._wake_r], [], [])
                    if self._wake_r in ready:
                        continue
                if self.coalesce_s > 0:  # let a storm's lines gather: one wake-up per coalesce_s, not per line
                    if select.select([self._wake_r], [], [], self.coalesce_s)[0]:
                        continue
                if not self._drain() and not regular:
                    raise OSError("end of the log (the writer went away)")
        except OSError as e:
            if not self._stopping.is_set():
                self.error = f"{self.path}: {_why(e)}"
                if self.on_error is not None:
                    self.on_error(self.error)
        finally:
            self._emit(self.parser.flush())


class JournalFollower:
    """The fallback where /dev/kmsg cannot be read: ``journalctl -k -f -o json -n 0`` in a child,
    its output read line by line (blocking) in a thread; ``stop()`` kills the child."""

    def __init__(self, callback: Callable[[Event], None], on_error: Callable[[str], None] | None = None,
                 cmd: tuple[str, ...] = ("journalctl", "-k", "-f", "-o", "json", "-n", "0", "--no-pager")) -> None:
        self.callback = callback
        self.on_error = on_error
        self.cmd = cmd
        self.parser = Parser(None)
        self.lines = 0
        self.events = 0
        self.callback_errors = 0
        self.error: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    def start(self) -> "JournalFollower":
        self._proc = children.spawn(list(self.cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    stdin=subprocess.DEVNULL)
        self._thread = threading.Thread(target=self._run, name="kernel-journal-follower", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for raw in self._proc.stdout:
            rec = journal_record(raw)
            if rec is None:
                continue
            msg, t, _boot = rec
            self.lines += 1
            self._emit(self.parser.feed(msg, t))
        self._emit(self.parser.flush())
        if not self._stopping.is_set():  # ended by itself: let it exit rather than kill it mid-exit
            _wait_until(self._proc, time.monotonic() + 2.0)
        rc = children.reap(self._proc)
        if not self._stopping.is_set():
            err = self._proc.stderr.read().decode("utf-8", "replace").strip() if self._proc.stderr else ""
            self.error = f"journalctl exited {rc}: {err[:300] or 'no message'}"
            if self.on_error is not None:
                self.on_error(self.error)

    def _emit(self, evs: list[Event]) -> None:
        for ev in evs:
            self.events += 1
            try:
                self.callback(ev)
            except Exception:
                self.callback_errors += 1

    def stop(self, timeout: float = 2.0) -> None:
        self._stopping.set()
        if self._proc is not None:
            children.reap(self._proc)
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()


def follow(callback: Callable[[Event], None], on_error: Callable[[str], None] | None = None,
           path: str = KMSG) -> KernelLogFollower | JournalFollower:
    """A started follower: /dev/kmsg where it can be opened, else the journal. Raises OSError when
    neither can start (e.g. no journalctl); the message then carries ``GRANT_HINT``."""
    try:
        return KernelLogFollower(callback, path, on_error).start()
    except PermissionError as e:
        try:
            return JournalFollower(callback, on_error).start()
        except OSError as e2:
            raise PermissionError(f"{path}: {_why(e)}; journalctl: {_why(e2)}; {GRANT_HINT}") from e2
