"""The kernel log since boot: NVIDIA Xid, NV_ERR_NO_MEMORY, OOM kills, GPU lost, PCIe AER, lock-ups.

A process killed by the kernel leaves no Python traceback; the kernel log says what happened.
``parse_line`` / ``Parser`` recognise the lines in the wordings of kernels 2.6.32 to 6.x (the real
excerpts of tests/data/kernel_logs/), one event per incident, in linear time: each line cut to
``MAX_PARSE`` characters, a substring check before any pattern, every pattern anchored or run on a
bounded window. A line's format is detected on the line (``/dev/kmsg`` records
``PRI,SEQ,TS_USEC,FLAGS;text``, dmesg, ``dmesg -T``, journal JSON, syslog/journal short form, ISO
times). ``read`` reads back since boot (``/dev/kmsg`` non-blocking from the start, else
``journalctl -k -b -o json``, else ``dmesg``) and returns plain data: every event counted per kind
and AER severity, a bounded list kept (core/xids.py ``EventKeeper``), the first kmsg sequence
number (a wrapped ring buffer is "since SEQ", not since boot); a failed reading says why and how to
grant access (no root for the whole app). ``read_file`` judges a saved log (``--kernel-log``).
``KernelLogFollower`` follows the log live for the dashboard: a blocking wait in its own thread
(``select`` on the log and a self-pipe: no polling), stopped promptly by ``stop()``.

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
from datetime import datetime
from typing import Any, Callable, Iterable, Iterator

from sparktui.core import shapes
from sparktui.core import children
from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.xids import XIDS  # noqa: F401  (re-exported: the meanings, shared with G11's judge)
from sparktui.core.xids import EVENT_KINDS, MAX_KEPT, EventKeeper
from sparktui.probes.declared import Probe

KMSG = "/dev/kmsg"
BOOT_ID = "/proc/sys/kernel/random/boot_id"
MAX_TEXT = 500  # characters of a line kept in an event
MAX_PARSE = 4096  # a line is cut here before any pattern runs (linear, bounded work per line)
MAX_EVENTS = MAX_KEPT  # events kept in a reading, by class (core/xids.py EventKeeper); every one is counted
MAX_PARTIAL = 65536  # bytes of an unterminated line the follower buffers before cutting it
JOURNAL_TIMEOUT_S = 30.0
COALESCE_S = 0.05  # the follower's batching delay after a wake-up: 20 wake-ups/s at most in a storm (benchmarks/kernel_log_follow.py: 0.02 s cost ~1.1% of a core at 1000 lines/s, 0.05 s ~0.6%)
KINDS = EVENT_KINDS  # xid, nv_no_memory, oom_kill, aer, soft_lockup, gpu_lost
PENDING_FLUSH_S = 0.3  # the follower's wait for more lines of an incident (an AER report's details) once the log is quiet

GRANT_HINT = ("grant read access to the kernel log without running sparktui as root: "
              "`sudo usermod -aG adm,systemd-journal $USER` (then log in again), "
              "or `sudo sysctl kernel.dmesg_restrict=0` (until reboot; persist it in /etc/sysctl.d/)")

# Xids that point at memory exhaustion (G3/G6) rather than the driver or hardware.
OPEN_MODULE_XIDS = frozenset({169})

# --------------------------------------------------------------------------- line formats
# Every pattern is anchored (``match`` at a known position) or runs on a bounded window, and every
# repeat is bounded: a line costs linear time whatever it holds (4 KB of "AER" without a blank
# included). Numbers are bounded: a time of 400 digits is no record's; such a line is text.
_KMSG = re.compile(r"(\d{1,20}),(\d{1,20}),(\d{1,20}),[^;]{0,64};")
_KMSG_DICT = re.compile(r" [A-Z_]{1,32}=")  # a kmsg record's dictionary line (" SUBSYSTEM=pci")
_DMESG_TS = re.compile(r"\s{0,32}(?:<\d{1,3}>)?\[\s{0,16}(\d{1,12}\.\d{1,9})\]"
                       r"(?:\[\s{0,8}[TC]\d{1,7}\])?\s?")  # dmesg, dmesg -r, printk caller id "[ T7791]"
_DMESG_REL = re.compile(r"\s{0,16}\[\s{0,16}\+\s{0,4}\d{1,12}[.,]\d{1,9}\]\s?")  # dmesg --reltime / -H
_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                                        "Dec"), 1)}
_DMESG_T = re.compile(r"\s{0,16}\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
                      r"{1,2}(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{4})\]\s?")
_ISO = re.compile(r"\[?(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?)\]?:?\s")
_DECODE = re.compile(r"(?:kern|user|mail|daemon|auth|syslog|lpr|news|local\d) {0,4}:"
                     r"(?:emerg|alert|crit|err|warn|notice|info|debug) {0,4}: ")  # dmesg -x: "kern  :warn  : "
_TALOS = re.compile(r"\S{1,64}: kern: {0,4}[a-z]{2,8}: ")  # talosctl dmesg: "NODE: kern: warning: [TIME]: "
_SYSLOG = re.compile(r"(\S{1,12}) {1,2}(\d{1,2}) (\d\d):(\d\d):(\d\d)(?:\.\d{1,9})? (?:\S{1,255} )?(?:\S{1,32} )?kernel: ?")
_KERNEL_TAG = re.compile(r"\s{0,16}kernel: ?")  # a syslog line whose time was cut ("kernel: msg", " kernel:[ts] msg")
FORMATS = ("kmsg", "dmesg", "dmesg -T", "journal JSON", "syslog", "iso")  # what a saved kernel log may be in

# ------------------------------------------------------------------------- event patterns
_BDF = r"[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
_DEVICE = re.compile(r"([\w.-]{1,40}) (" + _BDF + r")(?::[\w.-]{1,20})?: ")  # "driver BDF: " (dev_printk), at the start
_XID = re.compile(r"NVRM: Xid \((?:PCI:)?([0-9A-Fa-f:.]{1,16})\): (\d{1,6}),\s?")
_XID_PID = re.compile(r"pid=(\d{1,10}|'<unknown>'|<unknown>)(?:, name=([^,]{0,64}))?")
_NV_GPU = re.compile(r"GPU (?:at )?(?:PCI:)?([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)")
_KILLED = re.compile(r"Killed process (\d{1,10})(?:, UID \d{1,10},)? \((.{0,64}?)\)(?=[ ,]|$)")
_KILL_CHOSEN = re.compile(r"Kill process (\d{1,10}) \((.{0,64}?)\) score")
_RSS = re.compile(r"(anon|file|shmem)-rss:(\d[\d,]{0,24})kB")
_PID_UID_END = re.compile(r",pid=(\d{1,10}),uid=\d{1,10}\s{0,8}$")
_PID_DIGITS = re.compile(r",pid=(\d{1,10})")
_MEMCG_FIELD = re.compile(r",(oom_memcg|task_memcg)=([^,]{0,200})")
_TASK_IN = re.compile(r"Task in (\S{1,200}) killed as a result of limit of (\S{1,200})")
_AER_HEAD = re.compile(r"(Multiple )?(Corrected|Correctable|Uncorrect(?:ed|able) \((Fatal|Non-Fatal)\)) error "
                       r"(?:message )?received(?::| from) ?(?:id=([0-9a-fA-F]{4})|(" + _BDF + r"))?")
_AER_SEV = re.compile(r"(Corrected|Correctable|Uncorrect(?:ed|able) \((Fatal|Non-Fatal)\))")
_LOCKUP = re.compile(r"BUG: soft lockup (?:- CPU#(\d{1,5}) stuck for (\d{1,7})s!(?: \[(.{0,64}?):(\d{1,10})\])?"
                     r"|detected on CPU#(\d{1,5}))")
_HARD_LOCKUP = re.compile(r"[Hh]ard LOCKUP on cpu (\d{1,5})")

DEVICES = {"mlx5_core": "ConnectX-7 (mlx5)", "nvidia": "GPU (nvidia)", "pcieport": "PCIe port", "aer": "PCIe port"}
PORT_DRIVERS = frozenset({"pcieport", "aer"})
GPU_LOST_REASONS = (("fallen off the bus", "fallen off the bus"), ("RmInitAdapter failed", "RmInitAdapter failed"),
                    ("rm_init_adapter failed", "RmInitAdapter failed"), ("probe routine failed", "the driver's probe failed"),
                    ("is not supported by the", "not supported by the loaded module"), ("GPU is lost", "GPU lost"))
AER_GAP_LINES = 4  # lines of other text that end an AER report (its header, then its devices' detail lines)
OOM_WAIT_LINES = 8  # lines an OOM header (oom-kill: summary, "Kill process ... or sacrifice child") waits for its kill
HARD_PANIC_LINES = 200  # a "not syncing: Hard LOCKUP" panic this close after a hard-lockup line is the same lockup
MEMCG_HINT_LINES = 5000  # "Task in X killed as a result of limit of Y" holds until the kill it announces

Event = dict[str, Any]


def _severity(full: str, inner: str | None) -> str:
    if inner:
        return "fatal" if inner == "Fatal" else "non-fatal"
    return "corrected" if full in ("Corrected", "Correctable") else "unknown"


def _device(driver: str | None) -> str:
    return DEVICES.get(driver or "", driver or "unknown")


def _iso_epoch(s: str) -> float | None:
    s = s.replace(",", ".").replace(" ", "T")
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    elif len(s) > 5 and s[-5] in "+-" and s[-4:].isdigit():
        s = s[:-2] + ":" + s[-2:]
    if "." in s:  # at most 6 fraction digits for Python 3.10's fromisoformat
        head, frac = s.split(".", 1)
        digits = frac[:len(frac) - len(frac.lstrip("0123456789"))]
        s = f"{head}.{(digits + '000000')[:6]}{frac[len(digits):]}"
    try:
        return datetime.fromisoformat(s).timestamp()
    except (ValueError, OverflowError, OSError):
        return None


def split_any(line: str) -> tuple[str, str, float | None, float | None, int | None]:
    """(format, message, seconds since boot or None, unix time or None, kmsg sequence or None) of one
    line of a saved or live kernel log, its format detected on the line itself: a /dev/kmsg record,
    ``dmesg`` (``[secs]``, also ``dmesg -r``'s ``<prio>`` and the relative ``[+secs]``), ``dmesg -T``,
    ISO times (``dmesg --time-format iso``, ``journalctl -o short-iso``, ``dmesg -x``'s facility
    first), the journal's or syslog's short form (``Mon DD HH:MM:SS host kernel:``, the month may be
    localized) or ``kernel:`` alone, else "text" (the line as it is). Journal JSON is ``journal_record``'s."""
    m = _KMSG.match(line)
    if m:
        return "kmsg", line[m.end():], int(m.group(3)) / 1e6, None, int(m.group(2))
    rest, fmt, epoch = line, None, None
    m = _DECODE.match(rest) or _TALOS.match(rest)
    if m:
        rest = rest[m.end():]
    m = _DMESG_T.match(rest)
    if m:
        mon, day, hh, mm, ss, year = m.groups()
        try:
            epoch = time.mktime((int(year), _MONTHS[mon], int(day), int(hh), int(mm), int(ss), 0, 0, -1))
        except (OverflowError, ValueError):
            epoch = None
        return "dmesg -T", rest[m.end():], None, epoch, None
    m = _ISO.match(rest)
    if m:
        fmt, epoch, rest = "iso", _iso_epoch(m.group(1)), rest[m.end():]
    else:
        m = _SYSLOG.match(rest)
        if m:
            fmt, rest = "syslog", rest[m.end():]
    if fmt is not None:
        k = _KERNEL_TAG.match(rest)
        if k:
            rest = rest[k.end():]
    else:
        k = _KERNEL_TAG.match(rest)
        if k:
            fmt, rest = "syslog", rest[k.end():]
    m = _DMESG_TS.match(rest)
    if m:
        return fmt or "dmesg", rest[m.end():], float(m.group(1)), epoch, None
    m = _DMESG_REL.match(rest)
    if m:
        return fmt or "dmesg", rest[m.end():], None, epoch, None
    return fmt or "text", rest, None, epoch, None


def split_record(line: str) -> tuple[str, float | None]:
    """(message, seconds since boot or None) of one line: a /dev/kmsg record, a dmesg line, or text."""
    _fmt, msg, since_boot, _epoch, _seq = split_any(line)
    return msg, since_boot


class Parser:
    """Turns kernel log lines into events, one per incident as the kernel counts them.

    Stateful only for what spans lines, each bounded: the BDF -> driver map (to name the device at an
    AER error's address), the last GPU address an NVRM line named (multi-line NVRM messages), a
    memory-cgroup hint ("Task in X killed as a result of limit of Y"), and one pending event: an OOM
    header (``oom-kill:`` summary, ``Kill process N ... or sacrifice child``) waits for its ``Killed
    process`` line, an AER report (its header line) for its devices' ``PCIe Bus Error`` detail
    lines, so one incident is one event. ``feed`` takes a line in any format ``split_any`` knows, or
    a journal JSON record; ``flush()`` at the end of input (or when the log goes quiet).

    Kept on the parser for the reader: ``formats`` (lines per format), ``first_seq``/``last_seq`` and
    ``seq_gaps`` (kmsg records missing between those read), ``first_boot_s`` (the first line's time
    since boot)."""

    MAX_DEVICES = 256

    def __init__(self, boot_epoch: float | None = None) -> None:
        self.boot_epoch = boot_epoch
        self.drivers: dict[str, str] = {}
        self.pending: Event | None = None
        self.formats: dict[str, int] = {}
        self.first_seq: int | None = None
        self.last_seq: int | None = None
        self.seq_gaps = 0
        self.first_boot_s: float | None = None
        self.non_kernel = 0  # journal records of another transport (a `journalctl -o json` without -k)
        self._line = 0
        self._pending_line = 0
        self._gap = 0
        self._prev_fmt = ""
        self._nv_gpu: tuple[str, int] | None = None
        self._lost: tuple[str | None, str, int] | None = None
        self._memcg: tuple[str, int] | None = None
        self._hard: int | None = None
        self._prev_time: tuple[float | None, float | None] = (None, None)
        self._stamp: str | None = None

    # ------------------------------------------------------------------ lines in
    def feed(self, line: str, t: float | None = None) -> list[Event]:
        """Events completed by this line. ``t`` (epoch) overrides the line's own time."""
        line = line[:MAX_PARSE].rstrip("\r\n")
        seq = since_boot = None
        formats = self.formats
        first = line[:1]
        if first == "{":
            rec = journal_record(line, with_transport=True)
            if rec is None:
                fmt, msg = "text", line
            else:
                msg, epoch, _boot, transport = rec
                if transport not in (None, "kernel"):
                    self.non_kernel += 1
                    formats["journal JSON"] = formats.get("journal JSON", 0) + 1
                    return []
                fmt, t = "journal JSON", t if t is not None else epoch
        elif first == " " and self._prev_fmt == "kmsg" and _KMSG_DICT.match(line):
            formats["kmsg"] += 1  # a record's dictionary line, not a message
            return []
        else:
            m = _KMSG.match(line) if "0" <= first <= "9" else None
            if m is not None:  # /dev/kmsg, the live case: split here, without split_any's other formats
                fmt, msg, since_boot, seq = "kmsg", line[m.end():], int(m.group(3)) / 1e6, int(m.group(2))
            else:
                fmt, msg, since_boot, epoch, seq = split_any(line)
                if t is None:
                    t = epoch
        formats[fmt] = formats.get(fmt, 0) + 1
        if fmt != "text":
            self._prev_fmt = fmt
            self._prev_time = (t, since_boot)
        elif t is None and since_boot is None and first in (" ", "\t"):
            t, since_boot = self._prev_time  # an indented continuation line of the record before (dmesg)
        if fmt == "syslog" and t is None:  # "Mon DD HH:MM:SS": no year, so no unix time; shown as printed
            m = _SYSLOG.match(line)
            self._stamp = f"{m.group(1)} {m.group(2)} {m.group(3)}:{m.group(4)}:{m.group(5)}" if m else None
        else:
            self._stamp = None
        if seq is not None:
            if self.first_seq is None:
                self.first_seq = seq
            elif self.last_seq is not None and seq > self.last_seq + 1:
                self.seq_gaps += seq - self.last_seq - 1
            self.last_seq = seq
        if since_boot is not None:
            if self.first_boot_s is None:
                self.first_boot_s = since_boot
            if t is None and self.boot_epoch is not None:
                t = self.boot_epoch + since_boot
        # one record may hold several lines: the journal keeps "\n", /dev/kmsg escapes it as "\x0a"
        if "\n" in msg or "\\x0a" in msg:
            out: list[Event] = []
            for part in (msg.split("\n") if "\n" in msg else msg.split("\\x0a")):
                out += self._message(part, t, since_boot)
            return out
        return self._message(msg, t, since_boot)

    def flush(self) -> list[Event]:
        pend, self.pending = self.pending, None
        return [self._done(pend)] if pend is not None else []

    @staticmethod
    def _done(ev: Event) -> Event:
        ev.pop("_wait", None)
        return ev

    # ------------------------------------------------------------------ one message
    def _message(self, msg: str, t: float | None, since_boot: float | None) -> list[Event]:
        self._line += 1
        if msg[:1] in (" ", "\t"):
            msg = msg.lstrip()
        sp = msg.find(" ", 1, 42)  # "driver 0000:01:00.0: ": only such a line is tried as a device's
        dev = _DEVICE.match(msg) if sp > 0 and msg[sp + 5:sp + 6] == ":" else None
        if dev and dev.group(2) not in self.drivers and len(self.drivers) < self.MAX_DEVICES:
            self.drivers[dev.group(2)] = dev.group(1)
        ev, detail = self._match(msg, dev, t)
        if ev is None and self.pending is None:
            return []  # most lines: nothing to do
        if ev is not None:
            ev["t"] = t
            if since_boot is not None and t is None:
                ev["t_boot"] = since_boot
            if t is None and self._stamp:
                ev["t_text"] = self._stamp
            ev.setdefault("text", msg[:MAX_TEXT])
        out: list[Event] = []
        pend = self.pending
        if pend is not None:
            if ev is not None and pend["kind"] == "oom_kill" and ev["kind"] == "oom_kill" and not ev.get("_wait") \
                    and (pend.get("pid") == ev.get("pid") or pend.get("_wait") == "chosen"):
                merged = {**pend, **{k: v for k, v in ev.items() if v is not None}}
                merged["cgroup"] = bool(pend.get("cgroup") or ev.get("cgroup"))
                merged["memcg"] = ev.get("memcg") or pend.get("memcg")
                self.pending = None
                return [self._done(merged)]
            waited = self._line - self._pending_line
            if ev is not None or (pend["kind"] == "aer" and self._gap >= AER_GAP_LINES) \
                    or (pend["kind"] == "oom_kill" and waited > OOM_WAIT_LINES):
                self.pending = None
                out.append(self._done(pend))
        if ev is not None:
            if ev.get("_wait"):
                self.pending, self._pending_line, self._gap = ev, self._line, 0
            else:
                out.append(ev)
        elif detail:
            self._gap = 0
        elif self.pending is not None:
            self._gap += 1
        return out

    def _match(self, msg: str, dev: re.Match[str] | None, t: float | None) -> tuple[Event | None, bool]:
        """(the event this message starts, or None; whether it is a detail of the pending AER report)."""
        if "NVRM" in msg:
            ev = self._nvrm(msg)
            if ev is not None:
                return ev, False
        elif "NV_ERR_NO_MEMORY" in msg:
            return {"kind": "nv_no_memory", "device": DEVICES["nvidia"]}, False
        if "process" in msg or "oom" in msg or "Task in" in msg:
            ev = self._oom(msg)
            if ev is not None:
                return ev, False
        if "AER" in msg or "PCIe Bus Error" in msg or "error received" in msg or "error message received" in msg:
            return self._aer(msg, dev, t)
        if "soft lockup" in msg:
            i = msg.find("BUG: soft lockup")
            m = _LOCKUP.match(msg, i) if i >= 0 else None
            if m:
                cpu = m.group(1) or m.group(5)
                return {"kind": "soft_lockup", "cpu": int(cpu), "stuck_s": int(m.group(2)) if m.group(2) else None,
                        "name": m.group(3), "pid": int(m.group(4)) if m.group(4) else None}, False
        if "LOCKUP" in msg:
            m = _HARD_LOCKUP.search(msg, 0, 200)
            last, self._hard = self._hard, self._line
            if m:
                return {"kind": "soft_lockup", "cpu": int(m.group(1)), "stuck_s": None, "name": None, "pid": None,
                        "hard": True}, False
            if "not syncing: Hard LOCKUP" in msg and (last is None or self._line - last > HARD_PANIC_LINES):
                # the panic a hard lockup ends in, its watchdog line not seen (cut off, or not printed)
                return {"kind": "soft_lockup", "cpu": None, "stuck_s": None, "name": None, "pid": None,
                        "hard": True}, False
        pend = self.pending
        detail = pend is not None and pend["kind"] == "aer" and (
            "status/mask" in msg or "TLP Header" in msg or (dev is not None and msg[dev.end():dev.end() + 1] in (" ", "["))
            or msg.startswith("type="))
        return None, detail

    def _nvrm(self, msg: str) -> Event | None:
        i = msg.find("NVRM: Xid (")
        if i >= 0:
            m = _XID.match(msg, i)
            if m:
                pid = name = None
                p = _XID_PID.match(msg, m.end())
                if p:
                    pid = int(p.group(1)) if p.group(1).isdigit() else None
                    name = p.group(2).strip() if p.group(2) and p.group(2).strip() != "<unknown>" else None
                pci = m.group(1)
                if len(self.drivers) < self.MAX_DEVICES:
                    self.drivers.setdefault(pci, "nvidia")
                return {"kind": "xid", "xid": int(m.group(2)), "pci": pci, "pid": pid, "name": name,
                        "device": DEVICES["nvidia"]}
        if "NV_ERR_NO_MEMORY" in msg:
            return {"kind": "nv_no_memory", "device": DEVICES["nvidia"]}
        g = _NV_GPU.search(msg, 0, 200)
        if g:
            self._nv_gpu = (g.group(1), self._line)
        reason = next((why for key, why in GPU_LOST_REASONS if key in msg), None)
        if reason is None:
            return None
        pci = g.group(1) if g else (self._nv_gpu[0] if self._nv_gpu and self._line - self._nv_gpu[1] <= 4 else None)
        last = self._lost
        self._lost = (pci, reason, self._line)
        if last is not None and last[:2] == (pci, reason) and self._line - last[2] <= 2:
            return None  # the same failure's next line (RmInitAdapter failed / rm_init_adapter failed)
        return {"kind": "gpu_lost", "reason": reason, "pci": pci, "device": DEVICES["nvidia"]}

    def _oom(self, msg: str) -> Event | None:
        i = msg.find("Killed process ")
        if i >= 0:
            m = _KILLED.match(msg, i)
            if m:
                rss = {k: int(v.replace(",", "")) for k, v in _RSS.findall(msg, m.end())}
                cgroup = "Memory cgroup out of memory" in msg[:i]
                hint = self._memcg if self._memcg and self._line - self._memcg[1] <= MEMCG_HINT_LINES else None
                self._memcg = None
                return {"kind": "oom_kill", "pid": int(m.group(1)), "name": m.group(2),
                        "rss_kb": sum(rss.values()) if rss else None, "anon_rss_kb": rss.get("anon"),
                        "cgroup": cgroup or hint is not None, "memcg": hint[0] if hint else None}
        i = msg.find("Kill process ")
        if i >= 0:
            m = _KILL_CHOSEN.match(msg, i)
            if m:
                hint = self._memcg if self._memcg and self._line - self._memcg[1] <= MEMCG_HINT_LINES else None
                return {"kind": "oom_kill", "pid": int(m.group(1)), "name": m.group(2), "rss_kb": None,
                        "anon_rss_kb": None, "cgroup": "Memory cgroup out of memory" in msg[:i] or hint is not None,
                        "memcg": hint[0] if hint else None, "_wait": "chosen"}
        i = msg.find("oom-kill:")
        if i >= 0:
            return self._oom_summary(msg, i)
        i = msg.find("Task in ")
        if i >= 0:
            m = _TASK_IN.match(msg, i)
            if m:
                self._memcg = (m.group(2), self._line)
        return None

    def _oom_summary(self, msg: str, i: int) -> Event | None:
        """``oom-kill:constraint=...,task_memcg=/x,task=NAME,pid=N,uid=U``: the name is what lies
        between ``,task=`` and the LAST ``,pid=N,uid=U`` (a process may be called ``x,pid=1``)."""
        end = _PID_UID_END.search(msg, i)  # anchored at the end of the line ($)
        j = msg.rfind(",pid=", i)
        if end is not None:
            j, pid = end.start(), int(end.group(1))
        else:
            p = _PID_DIGITS.match(msg, j) if j >= 0 else None
            if p is None:
                return None
            pid = int(p.group(1))
        k = msg.find(",task=", i, j)
        name = msg[k + 6:j] if k >= 0 else None
        fields = dict(_MEMCG_FIELD.findall(msg, i, k if k >= 0 else j))
        memcg = fields.get("oom_memcg") or None
        cgroup = "CONSTRAINT_MEMCG" in msg[i:j]
        return {"kind": "oom_kill", "pid": pid, "name": name, "rss_kb": None, "anon_rss_kb": None,
                "cgroup": cgroup, "memcg": memcg if cgroup else None, "_wait": "summary"}

    def _aer(self, msg: str, dev: re.Match[str] | None, t: float | None) -> tuple[Event | None, bool]:
        pend = self.pending
        i = msg.find("error received")
        if i < 0:
            i = msg.find("error message received")
        if i >= 0:
            m = _AER_HEAD.search(msg, max(0, i - 60), i + 90)  # a bounded window around the words
            if m:
                reporter = dev.group(2) if dev else None
                src = m.group(5)
                if src is None and m.group(4):  # "id=00e5": bus, device, function of the reporter's domain
                    rid = int(m.group(4), 16)
                    src = f"{(reporter or '0000')[:4]}:{rid >> 8:02x}:{(rid >> 3) & 0x1f:02x}.{rid & 7}"
                src = src or reporter
                drv = self.drivers.get(src or "")
                return {"kind": "aer", "severity": _severity(m.group(2), m.group(3)), "pci": src, "driver": drv,
                        "device": _device(drv), "reporter": reporter, "_wait": "report"}, False
        i = msg.find("PCIe Bus Error: severity=")
        if i >= 0:
            m = _AER_SEV.match(msg, i + 25)
            sev = _severity(m.group(1), m.group(2)) if m else "unknown"
            drv, bdf = (dev.group(1), dev.group(2)) if dev else (None, None)
            if pend is not None and pend["kind"] == "aer" and self._gap < AER_GAP_LINES \
                    and (t is None or pend.get("t") is None or abs(t - pend["t"]) <= 2.0):
                if drv and drv not in PORT_DRIVERS and (pend.get("driver") in (None, *PORT_DRIVERS)):
                    pend.update({"pci": bdf, "driver": drv, "device": _device(drv)})
                if pend.get("severity") == "unknown":
                    pend["severity"] = sev
                return None, True  # a detail of the report being read
            return {"kind": "aer", "severity": sev, "pci": bdf, "driver": drv, "device": _device(drv),
                    "reporter": None, "_wait": "report"}, False  # its header was cut off, or never printed
        return None, pend is not None and pend["kind"] == "aer"


MAX_JOURNAL_LINE = 1 << 20  # a `journalctl -o json` record longer than this is not one of the kernel's


def journal_record(raw: bytes | str, with_transport: bool = False) -> Any:
    """(message, unix time or None, boot id or None) of one `journalctl -o json` line; None when
    it is not a record with a message. A time that is no time (not a whole number of microseconds,
    negative, past a float) is None; a boot id that is not a string is None. ``with_transport``
    adds the record's ``_TRANSPORT`` ("kernel" for the kernel's; None when absent) as a fourth item."""
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
    if with_transport:
        transport = rec.get("_TRANSPORT")
        return msg, t, boot if isinstance(boot, str) else None, transport if isinstance(transport, str) else None
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
        self.keeper = EventKeeper()

    @property
    def events(self) -> list[Event]:
        return self.keeper.events

    def add(self, evs: list[Event]) -> None:
        for ev in evs:
            self.keeper.add(ev)

    def line(self, text: str, t: float | None = None) -> None:
        self.lines += 1
        self.add(self.parser.feed(text, t))

    def data(self, boot_id: str | None, note: str | None = None) -> dict[str, Any]:
        self.add(self.parser.flush())
        k, p = self.keeper, self.parser
        recognised = {f: n for f, n in sorted(p.formats.items()) if f != "text"}
        return {"source": self.source, "boot_id": boot_id, "lines_read": self.lines, "events": k.events,
                "truncated": k.not_kept > 0, "counts": dict(k.counts), "severities": dict(k.severities),
                "not_kept": k.not_kept, "note": note, "first_seq": p.first_seq, "lost_records": p.seq_gaps,
                "first_boot_s": p.first_boot_s, "formats": recognised}


def read_kmsg(path: str = KMSG, boot: float | None = None) -> tuple[_Collector, str | None]:
    """All records still in the ring buffer, non-blocking from the first. Raises OSError when the
    device cannot be opened or read (EPERM/EACCES under kernel.dmesg_restrict=1). The first record's
    sequence number says whether the ring buffer has wrapped (older records overwritten: the
    reading is "since SEQ", not since boot); gaps in the numbers count records lost while reading."""
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


MAX_FILE_LINES = 2_000_000  # lines of a saved kernel log read; the rest is said, not read


def read_file(path: str) -> Reading[Any]:
    """A saved kernel log judged as it is: ``dmesg``, ``dmesg -T``, ``journalctl -k -o json`` (one
    object a line), /dev/kmsg records, also the journal's or syslog's short form and ISO times; the
    format is detected on each line. A file with no line in any of them is not a kernel log: the
    reading then fails with the reason (G11 says unknown), never "0 events"."""
    started = time.time()
    col = _Collector("file", None)
    cut = False
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO must not block the open
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            os.close(fd)
            raise
        if not stat.S_ISREG(mode):
            os.close(fd)
            what = "a folder" if stat.S_ISDIR(mode) else "not a regular file (a pipe or a device?)"
            return Reading("kernel_log", None, source=path, started_at=started,
                           error=f"{path} is {what}: give a saved kernel log file (for this machine's own log, "
                                 "leave --kernel-log out)")
        with os.fdopen(fd, "r", encoding="utf-8", errors="replace") as f:
            while True:
                ln = f.readline(MAX_JOURNAL_LINE)  # bounded: a giant line is read in pieces, not whole
                if not ln:
                    break
                if col.lines >= MAX_FILE_LINES:
                    cut = True
                    break
                col.line(ln)
                while not ln.endswith("\n"):  # the rest of a line past the bound: skipped
                    ln = f.readline(MAX_JOURNAL_LINE)
                    if not ln:
                        break
    except OSError as e:
        return Reading("kernel_log", None, error=f"cannot read {path}: {e.strerror or e}", source=path, started_at=started)
    data = col.data(None, f"only the first {MAX_FILE_LINES} lines were read" if cut else None)
    if col.lines == 0:
        return Reading("kernel_log", None, error=f"{path} is empty: no kernel log to judge", source=path,
                       started_at=started)
    if not data["formats"]:
        seen = sum(data["counts"].values())
        return Reading("kernel_log", None, source=path, started_at=started,
                       error=f"{path} is not a kernel log this reader knows: none of its {col.lines} line(s) is a "
                             "dmesg, dmesg -T, journal JSON (journalctl -k -o json), /dev/kmsg or journal/syslog line"
                             + (f" (it holds {seen} line(s) that read like kernel messages, without their time or "
                                "record prefix)" if seen else "")
                             + "; save the log with `journalctl -k -b -o json > FILE` or `dmesg > FILE`")
    return Reading("kernel_log", data, source=path, started_at=started, took_s=time.time() - started)


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


def poke(fd: int) -> None:
    """Wake a follower's ``select`` through its self-pipe (nothing once the pipe is closed)."""
    if fd >= 0:
        try:
            os.write(fd, b"x")
        except OSError:
            pass


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
        poke(self._wake_w)
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
                    quiet = (PENDING_FLUSH_S if self.parser.pending is not None else None) if self._notify is not None else 0.25
                    ready, _, _ = select.select(waits, [], [], quiet)
                    if self._notify is not None and self._notify in ready:
                        try:
                            os.read(self._notify, 4096)
                        except BlockingIOError:
                            pass
                    if self.parser.pending is not None and not ready:
                        self._emit(self.parser.flush())
                else:
                    quiet = PENDING_FLUSH_S if self.parser.pending is not None else None
                    ready, _, _ = select.select([self._fd, self._wake_r], [], [], quiet)
                    if not ready:  # the log went quiet: an incident waiting for more lines is complete
                        self._emit(self.parser.flush())
                        continue
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

    def _records(self) -> Iterator[bytes]:
        """journalctl's output lines, read straight from the pipe; while an incident waits for more
        lines (an AER report's details) and the journal stays quiet ``PENDING_FLUSH_S``, it is delivered.
        A line longer than MAX_JOURNAL_LINE is skipped whole (it is no kernel record)."""
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        buf, skipping = b"", False
        while True:
            if self.parser.pending is not None and not select.select([fd], [], [], PENDING_FLUSH_S)[0]:
                self._emit(self.parser.flush())
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            buf += chunk
            start = 0
            while True:
                nl = buf.find(b"\n", start)
                if nl < 0:
                    break
                if not skipping:
                    yield buf[start:nl]
                skipping = False
                start = nl + 1
            buf = buf[start:]
            if len(buf) > MAX_JOURNAL_LINE:
                buf, skipping = b"", True
        if buf and not skipping:
            yield buf

    def _run(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for raw in self._records():
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


PROBES = (Probe(shapes.KERNEL_LOG, read),)
