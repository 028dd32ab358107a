"""sparktui beside nvitop, a minimal Textual app and the floor (that minimal app also initialising
NVML and reading one field a second: the least any Textual app reading NVML in-process costs): each in
its own pty of the same size, run for the same time, measured the same way.

    python benchmarks/side_by_side.py [--seconds 60] [--cols 120 --rows 40] [--save FILE | --no-save]

Per program: CPU share (user+sys of the process and all its descendants, reaped ones included,
over wall time: steady, from 15 s after the settled first screen to the end of its window, once
sparktui's first checks (torch-side probes in child processes) have run; from the settled screen;
from exec), RSS (main process and descendants, peak and end), time to first output (first byte on
the pty after fork + exec), time to a settled first screen (the last byte of the first burst of
output that shows the program's own text, a burst ending at 200 ms of silence), a key's effect
(`?` until the help text is on the pty; three presses, first and median) and quit (`q` until the
process has exited); each also as a ratio to nvitop, to the minimal app and to the floor.

All four start in an empty folder (sparktui's G10 scans the folder it starts in; this repository,
with its virtualenv, is not what a user's run folder holds). They start one after another (their
start-up times do not contend) and then run together, each for --seconds after its own settled
first screen; keys are sent one program at a time after every window has ended. On a machine
without a GPU nvitop and the floor refuse to start (no NVML): the script says so and the targets
against them read "not measured". sparktui is byte-compiled first, as pip leaves it.

Targets (sparktui; issue 27 re-set the RSS one against the floor, measured in the same run: no
Textual app reading NVML in-process gets under it): steady CPU <= nvitop's, RSS (main + children,
end) <= 1.2 x the floor's, first output <= 0.5 s, settled first screen <= 1.0 s, quit <= 0.3 s,
key effect (median) <= 50 ms. Exit status: 0 every target met, 1 a target missed, 2 none missed but
some not measured (no nvitop or NVML here).
"""

from __future__ import annotations

import argparse
import codecs
import compileall
import datetime
import fcntl
import os
import platform
import pty
import re
import shlex
import shutil
import signal
import socket
import statistics
import struct
import sys
import tempfile
import termios
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
QUIET_S = 0.2  # a burst of output ends at this much silence: the first screen has been drawn
RSS_FLOOR_FACTOR = 1.2  # sparktui's RSS target: this many times the floor's (issue 27)
WARM_S = 15.0  # the steady CPU share starts this long after the settled screen (sparktui's first checks run once)

MINIMAL_APP = '''
import time
from textual.app import App
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Header, Static


class Help(ModalScreen):
    BINDINGS = [Binding("escape", "app.pop_screen", "close")]

    def compose(self):
        yield Static("minimal help: q quits")


class Minimal(App):
    TITLE = "minimal baseline"
    BINDINGS = [Binding("q", "quit", "quit"), Binding("question_mark", "help", "help")]

    def compose(self):
        yield Header(show_clock=True)
        yield DataTable()
        yield Footer()

    def on_mount(self):
        t = self.query_one(DataTable)
        t.add_columns("what", "value")
        t.add_row("time", "-", key="time")
        self.set_interval(1.0, self.tick)

    def tick(self):
        t = self.query_one(DataTable)
        t.update_cell_at((0, 1), time.strftime("%H:%M:%S"))

    def action_help(self):
        self.push_screen(Help())


Minimal().run()
'''

# The floor: the minimal app, plus NVML initialised and one field read a second (the GPU's
# temperature), shown in the table. No NVML: it exits with the reason (as nvitop does).
FLOOR_APP = MINIMAL_APP.replace('TITLE = "minimal baseline"', 'TITLE = "floor baseline"').replace(
    '"minimal help: q quits"', '"floor help: q quits"').replace(
    '        t.add_row("time", "-", key="time")\n',
    '        t.add_row("time", "-", key="time")\n        t.add_row("GPU 0 temperature", "-", key="temp")\n').replace(
    '        t.update_cell_at((0, 1), time.strftime("%H:%M:%S"))\n',
    '        t.update_cell_at((0, 1), time.strftime("%H:%M:%S"))\n'
    '        t.update_cell_at((1, 1), f"{pynvml.nvmlDeviceGetTemperature(GPU, pynvml.NVML_TEMPERATURE_GPU)} C")\n').replace("import time\n", '''import sys
import time

import pynvml

try:
    pynvml.nvmlInit()
    GPU = pynvml.nvmlDeviceGetHandleByIndex(0)
except pynvml.NVMLError as e:
    sys.exit(f"floor: no NVML here: {e}")
''', 1)
assert "pynvml.nvmlInit()" in FLOOR_APP and "floor baseline" in FLOOR_APP and "GPU 0 temperature" in FLOOR_APP


@dataclass
class Program:
    """How to start one program and what on its screen says it has drawn (the main screen, help)."""

    name: str
    argv: list[str]
    screen_text: str
    help_text: str
    help_close: bytes = b"\x1b"


@dataclass
class Figures:
    """What was measured of one program; None where it was not (it refused, or never showed it)."""

    first_output: float | None = None
    settled: float | None = None
    cpu_share: float | None = None
    cpu_share_steady: float | None = None
    cpu_share_from_exec: float | None = None
    rss_main_end: float | None = None
    rss_children_end: float | None = None
    rss_peak: float | None = None
    rss_end: float | None = None
    key_effect: float | None = None  # median of the presses
    key_effect_first: float | None = None
    quit: float | None = None
    refused: str | None = None
    notes: list[str] = field(default_factory=list)


ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|P[^\x1b]*\x1b\\|[()][0-9A-Za-z]|[@-Z\\-_=>])")


def plain(text: str) -> str:
    """The text a terminal would show, without escape sequences (enough to find a word drawn in
    one piece)."""
    return ANSI.sub("", text)


class Pty:
    """One program on a pty of a fixed size; a thread keeps draining its output (a program whose
    terminal is not read blocks) and wakes whoever waits for some text."""

    def __init__(self, argv: list[str], cols: int, rows: int, env: dict[str, str], cwd: str | None = None) -> None:
        self.started = time.monotonic()
        pid, fd = pty.fork()
        if pid == 0:  # the child: the pty is its controlling terminal, sized before exec
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
            try:
                if cwd:
                    os.chdir(cwd)
                os.execvpe(argv[0], argv, env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.text = ""  # everything decoded so far, escape sequences included
        self.first_byte: float | None = None
        self.last_byte: float | None = None
        self.closed = False
        self.changed = threading.Condition()
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                chunk = b""
            now = time.monotonic()
            with self.changed:
                if not chunk:
                    self.closed = True
                    self.changed.notify_all()
                    return
                if self.first_byte is None:
                    self.first_byte = now
                self.last_byte = now
                self.text += self._decoder.decode(chunk)
                self.changed.notify_all()

    def mark(self) -> int:
        """Where the output stands now: a later wait looks only at what comes after it."""
        with self.changed:
            return max(0, len(self.text) - 64)  # a little back: an escape sequence cut at the mark

    def wait_for(self, needle: str, since: int, timeout: float) -> float | None:
        """The time `needle` first shows in the output after `since`, or None."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while needle not in plain(self.text[since:]):
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    return None
                self.changed.wait(left)
            return self.last_byte

    def wait_quiet(self, quiet_s: float, timeout: float) -> float | None:
        """The time of the last byte before the first `quiet_s` of silence."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.changed:
                last = self.last_byte
            if last is not None and time.monotonic() - last >= quiet_s:
                return last
            time.sleep(0.01)
        return None

    def send(self, data: bytes) -> float:
        t = time.monotonic()
        os.write(self.fd, data)
        return t

    def wait_exit(self, timeout: float) -> float | None:
        """When the process was seen to have exited (polled every millisecond), or None."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, _ = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return time.monotonic()
            time.sleep(0.001)
        return None

    def kill(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)  # pty.fork's child leads its own session and group
        except ProcessLookupError:
            return
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass

    def head(self, n: int = 200) -> str:
        with self.changed:
            return " ".join(plain(self.text).split())[:n]


def tree(pid: int) -> list[psutil.Process]:
    try:
        p = psutil.Process(pid)
        return [p, *p.children(recursive=True)]
    except psutil.Error:
        return []


def cpu_seconds(pid: int) -> float:
    """user+sys of the process and every live descendant, each with what its reaped children used."""
    total = 0.0
    for p in tree(pid):
        try:
            c = p.cpu_times()
        except psutil.Error:
            continue
        total += c.user + c.system + c.children_user + c.children_system
    return total


def rss(pid: int) -> tuple[int, int]:
    """RSS of the main process and, summed, of its live descendants."""
    main, children = 0, 0
    for i, p in enumerate(tree(pid)):
        try:
            r = p.memory_info().rss
        except psutil.Error:
            continue
        if i == 0:
            main = r
        else:
            children += r
    return main, children


class Run:
    """One program's life in the benchmark: start, window, keys, quit."""

    def __init__(self, prog: Program, cols: int, rows: int, env: dict[str, str], cwd: str) -> None:
        self.prog, self.fig = prog, Figures()
        self.pty = Pty(prog.argv, cols, rows, env, cwd)
        self.cpu0 = self.window_start = self.window_end = None
        self.cpu_warm: tuple[float, float] | None = None  # (cpu seconds, when) WARM_S into the window
        self.rss_peak = 0

    def start(self, timeout: float) -> bool:
        p, f = self.pty, self.fig
        seen = p.wait_for(self.prog.screen_text, 0, timeout)
        if p.first_byte is not None:
            f.first_output = p.first_byte - p.started
        if seen is None:  # no figures for a program that never showed its screen (the error's time is not one)
            f.refused = ("exited" if p.closed else f"no '{self.prog.screen_text}' in {timeout:.0f} s") + \
                f"; its output: {p.head() or '(none)'}"
            f.first_output = None
            return False
        settled = p.wait_quiet(QUIET_S, timeout)
        f.settled = (settled or seen) - p.started
        self.cpu0, self.window_start = cpu_seconds(p.pid), time.monotonic()
        return True

    def sample(self) -> None:
        if self.cpu_warm is None and time.monotonic() - self.window_start >= WARM_S:
            self.cpu_warm = (cpu_seconds(self.pty.pid), time.monotonic())
        main, children = rss(self.pty.pid)
        self.rss_peak = max(self.rss_peak, main + children)

    def end_window(self) -> None:
        p, f = self.pty, self.fig
        self.window_end = time.monotonic()
        cpu = cpu_seconds(p.pid)
        f.cpu_share = (cpu - self.cpu0) / (self.window_end - self.window_start) * 100
        f.cpu_share_from_exec = cpu / (self.window_end - p.started) * 100
        if self.cpu_warm is not None:
            f.cpu_share_steady = (cpu - self.cpu_warm[0]) / (self.window_end - self.cpu_warm[1]) * 100
        main, children = rss(p.pid)
        f.rss_main_end, f.rss_children_end, f.rss_end = main / 2**20, children / 2**20, (main + children) / 2**20
        f.rss_peak = max(self.rss_peak, main + children) / 2**20

    def keys(self, presses: int = 3) -> None:
        """`?` until the help text shows, then close it, `presses` times (the first press may find
        cold caches: first and median are both kept); then `q` until the process has exited."""
        p, f = self.pty, self.fig
        took = []
        for _ in range(presses):
            since = p.mark()
            sent = p.send(b"?")
            shown = p.wait_for(self.prog.help_text, since, 5.0)
            if shown is None:
                f.notes.append(f"'?' did not show '{self.prog.help_text}' in 5 s")
                break
            took.append(shown - sent)
            p.send(self.prog.help_close)
            time.sleep(1.5)  # closed and settled (curses waits up to 1 s to tell escape from a sequence)
        if took:
            f.key_effect_first, f.key_effect = took[0], statistics.median(took)
        sent = p.send(b"q")
        gone = p.wait_exit(10.0)
        if gone is None:
            f.notes.append("still running 10 s after q: killed")
            p.kill()
        else:
            f.quit = gone - sent


def programs(spark_args: list[str]) -> list[Program]:
    """Each program with a word of its main screen and of its help (one word where curses may
    move the cursor over blanks it finds unchanged instead of writing them)."""
    py = sys.executable
    minimal = Path(tempfile.mkdtemp(prefix="side-by-side-")) / "minimal.py"
    minimal.write_text(MINIMAL_APP)
    floor = minimal.with_name("floor.py")
    floor.write_text(FLOOR_APP)
    return [
        Program("sparktui", [py, "-m", "sparktui", *spark_args], "G10", "sparktui keys"),
        Program("nvitop", [py, "-m", "nvitop", "-m", "full", "--interval", "1"], "NVITOP", "Xuehai"),
        Program("minimal", [py, str(minimal)], "minimal baseline", "minimal help"),
        Program("floor", [py, str(floor)], "floor baseline", "floor help"),
    ]


def machine_lines() -> list[str]:
    from importlib.metadata import PackageNotFoundError, version

    gpus = "no nvidia-smi"
    if shutil.which("nvidia-smi"):
        import subprocess

        out = subprocess.run(["nvidia-smi", "-L"], check=False, capture_output=True, text=True)
        gpus = " | ".join(out.stdout.strip().splitlines()) or f"nvidia-smi failed: {out.stderr.strip()[:120]}"
    versions = []
    for mod in ("textual", "nvitop", "psutil"):
        try:
            versions.append(f"{mod} {version(mod)}")
        except PackageNotFoundError:
            versions.append(f"{mod} not installed")
    memory = psutil.virtual_memory().total / 2**30
    return [f"machine: {socket.gethostname()} ({platform.machine()}, {os.cpu_count()} CPUs, {memory:.0f} GiB); GPUs: {gpus}",
            f"python {platform.python_version()}; " + ", ".join(versions)]


def fmt(x: float | None, unit: str) -> str:
    if x is None:
        return "—"
    return {"s": f"{x:.2f} s", "ms": f"{x * 1000:.0f} ms", "%": f"{x:.2f} %", "MB": f"{x:.1f} MB"}[unit]


def ratio(a: float | None, b: float | None) -> str:
    return "—" if a is None or b is None or b <= 0 else f"{a / b:.2f}x"


ROWS = (  # label, Figures attribute, unit
    ("CPU share, steady", "cpu_share_steady", "%"),
    ("CPU share, settled to end", "cpu_share", "%"),
    ("CPU share, from exec", "cpu_share_from_exec", "%"),
    ("RSS main, end", "rss_main_end", "MB"),
    ("RSS children, end", "rss_children_end", "MB"),
    ("RSS main+children, end", "rss_end", "MB"),
    ("RSS main+children, peak", "rss_peak", "MB"),
    ("first output", "first_output", "s"),
    ("settled first screen", "settled", "s"),
    ("key effect, first ?", "key_effect_first", "ms"),
    ("key effect, median of 3 ?", "key_effect", "ms"),
    ("quit (q to exit)", "quit", "ms"),
)


def table(figs: dict[str, Figures]) -> list[str]:
    s, n, m, fl = figs["sparktui"], figs["nvitop"], figs["minimal"], figs["floor"]
    head = (f"{'':26} {'sparktui':>10} {'nvitop':>10} {'minimal':>10} {'floor':>10}   {'spark/nvitop':>12} "
            f"{'spark/minimal':>13} {'spark/floor':>11} {'nvitop/minimal':>14}")
    lines = [head, "-" * len(head)]
    for label, attr, unit in ROWS:
        a, b, c, d = (getattr(f, attr) for f in (s, n, m, fl))
        lines.append(f"{label:26} {fmt(a, unit):>10} {fmt(b, unit):>10} {fmt(c, unit):>10} {fmt(d, unit):>10}   "
                     f"{ratio(a, b):>12} {ratio(a, c):>13} {ratio(a, d):>11} {ratio(b, c):>14}")
    return lines


def targets(figs: dict[str, Figures]) -> list[tuple[str, bool | None]]:
    """Each target with True (met), False (missed) or None (not measured)."""
    s, n, fl = figs["sparktui"], figs["nvitop"], figs["floor"]
    floor_rss = None if fl.rss_end is None else RSS_FLOOR_FACTOR * fl.rss_end

    def at_most(x: float | None, limit: float | None) -> bool | None:
        return None if x is None or limit is None else x <= limit

    def seen(x: float | None, limit: float) -> bool:
        return x is not None and x <= limit  # never shown counts as missed: sparktui must show it

    return [
        (f"steady CPU share <= nvitop's ({fmt(s.cpu_share_steady, '%')} vs {fmt(n.cpu_share_steady, '%')})",
         at_most(s.cpu_share_steady, n.cpu_share_steady)),
        (f"RSS main+children <= {RSS_FLOOR_FACTOR:g} x the floor's ({fmt(s.rss_end, 'MB')} vs {fmt(floor_rss, 'MB')} = "
         f"{RSS_FLOOR_FACTOR:g} x {fmt(fl.rss_end, 'MB')}; nvitop {fmt(n.rss_end, 'MB')})", at_most(s.rss_end, floor_rss)),
        (f"first output <= 0.5 s ({fmt(s.first_output, 's')})", seen(s.first_output, 0.5)),
        (f"settled first screen <= 1.0 s ({fmt(s.settled, 's')})", seen(s.settled, 1.0)),
        (f"quit <= 0.3 s ({fmt(s.quit, 'ms')})", seen(s.quit, 0.3)),
        (f"key effect (median of 3 presses) <= 50 ms ({fmt(s.key_effect, 'ms')})", seen(s.key_effect, 0.05)),
    ]


def measure(progs: list[Program], seconds: float, cols: int, rows: int) -> dict[str, Figures]:
    env = {k: v for k, v in os.environ.items() if k not in ("LINES", "COLUMNS", "TMUX")}
    env.update(TERM="xterm-256color", COLORTERM="truecolor", PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH", "")) if p))
    runs: list[Run] = []
    cwd = tempfile.mkdtemp(prefix="side-by-side-cwd-")  # G10 scans "." by default: an empty folder, not this repo
    try:
        for prog in progs:  # one at a time: start-up times measured without the others starting
            run = Run(prog, cols, rows, env, cwd)
            print(f"  {prog.name}: started ...", flush=True)
            if not run.start(timeout=30.0):
                print(f"  {prog.name}: REFUSED: {run.fig.refused}", flush=True)
                run.pty.kill()
            runs.append(run)
        live = [r for r in runs if r.window_start is not None]
        print(f"  running together: {', '.join(r.prog.name for r in live)}, {seconds:g} s each", flush=True)
        while any(r.window_end is None for r in live):
            for r in live:
                if r.window_end is None:
                    r.sample()
                    if time.monotonic() - r.window_start >= seconds:
                        r.end_window()
            time.sleep(0.5)
        for r in live:
            r.keys()
    finally:
        for r in runs:
            r.pty.kill()
    return {r.prog.name: r.fig for r in runs}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="each program's measured window (default 60)")
    ap.add_argument("--cols", type=int, default=120)
    ap.add_argument("--rows", type=int, default=40)
    ap.add_argument("--sparktui-args", default="", help="extra arguments for sparktui (e.g. '--replay FILE')")
    ap.add_argument("--machine", default=socket.gethostname(), help="name in the results file (default: host name)")
    ap.add_argument("--save", help="where to write the output (default benchmarks/results/side-by-side-MACHINE-DATE.txt)")
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--note", default="", help="a line for the top of the output (the load, the tree measured)")
    a = ap.parse_args()
    now = datetime.datetime.now(datetime.timezone.utc)
    out = [f"date: {now:%Y-%m-%d %H:%M:%S} UTC", *machine_lines(),
           "command: " + shlex.join([Path(sys.executable).name, *sys.argv]),
           f"pty {a.cols}x{a.rows}, {a.seconds:g} s each after its settled first screen", *([f"note: {a.note}"] if a.note else [])]
    print("\n".join(out), flush=True)
    # byte-compiled first, as pip leaves an installed package: start-up is not a compile of the source
    compileall.compile_dir(ROOT / "src", quiet=1)
    figs = measure(programs(shlex.split(a.sparktui_args)), a.seconds, a.cols, a.rows)
    body = [""]
    for name, f in figs.items():
        if f.refused:
            body.append(f"{name} did not run: {f.refused}")
        body += [f"{name}: {note}" for note in f.notes]
    body += ["", *table(figs), ""]
    results = targets(figs)
    for text, ok in results:
        body.append(f"{'PASS' if ok else 'FAIL' if ok is False else 'NOT MEASURED'}: {text}")
    missed = [t for t, ok in results if ok is False]
    unmeasured = [t for t, ok in results if ok is None]
    body.append(f"\n{len(missed)} target(s) missed, {len(unmeasured)} not measured"
                + (" (no nvitop figures: it did not run here)" if figs["nvitop"].refused else "")
                + (" (no floor figures: no NVML here)" if figs["floor"].refused else ""))
    print("\n".join(body), flush=True)
    if not a.no_save:
        path = Path(a.save) if a.save else RESULTS / f"side-by-side-{a.machine}-{now:%Y-%m-%d}.txt"
        path.write_text("\n".join(out + body) + "\n")
        print(f"saved {path}")
    return 1 if missed else 2 if unmeasured else 0


if __name__ == "__main__":
    raise SystemExit(main())
