"""A probe read in a short-lived child process of sparktui's own interpreter (``Probe(isolated=True)``).

Why: the dashboard lives for days beside a run, and what a probe allocates while it works stays in
its heap after the probe is done. Python's small-object arenas are given back only when wholly
empty, and the sampler's thread keeps adding long-lived samples between a scan's short-lived
strings, so one G10 scan of a project folder left +11.8 MB resident for good, and one G8 fetch
+13.3 MB (httpx, and OpenSSL's copy of the system's CA certificates), measured after gc and
malloc_trim. In a child the whole of it goes back to the system when the child ends.

The child gets the Config (pickled: sparktui's own data, to its own code) on stdin and prints the
Reading as JSON (``Reading.to_dict``); the parent reads it back with ``Reading.from_dict``, which
checks the probe's declared shape. The child runs in its own process group, tracked by
core/children.py (cancel, sparktui's exit and its watchdog stop it); a crash, a non-zero exit, a
timeout or output that is not a reading is a failed Reading naming it, never an exception.

    python -m sparktui.probes.isolated MODULE NAME   # the child: Config on stdin, the Reading on stdout

The child imports the probe's own module only (not every probe's), so it starts in a fraction of
a second.
"""

from __future__ import annotations

import json
import pickle
import signal
import subprocess
import sys
import threading
import time
from typing import Any

from sparktui.core import children
from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.probes.declared import Probe

TIMEOUT_S = 300.0  # past its own bounds (G10: 60 s deadline; G8: 3 attempts of 10 s, and the waits)
POLL_S = 0.25  # how often the parent looks at ``cancel`` while it waits
STDERR_KEPT = 300  # characters of the child's last stderr line kept in the reason


def read_in_child(probe: Probe, cfg: Config, cancel: threading.Event | None = None,
                  timeout_s: float = TIMEOUT_S) -> Reading[Any]:
    """``probe`` read by a child process; whatever happens, a Reading."""
    started, t0 = time.time(), time.perf_counter()
    name = probe.name

    def failed(why: str) -> Reading[Any]:
        return Reading(probe=name, data=None, error=why, started_at=started, took_s=time.perf_counter() - t0)

    try:
        proc = children.spawn([sys.executable, "-m", "sparktui.probes.isolated", probe.read.__module__, name],
                              stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as e:  # children.Stopping too: sparktui is going
        return failed(f"could not start its child process: {e}")
    payload: bytes | None = pickle.dumps(cfg)
    out = err = b""
    try:
        while True:
            try:
                out, err = proc.communicate(payload, timeout=POLL_S)
                break
            except subprocess.TimeoutExpired:
                payload = None  # written already: a retry sends nothing more
            if cancel is not None and cancel.is_set():
                return failed("cancelled")
            if time.perf_counter() - t0 > timeout_s:
                return failed(f"its child process did not finish within {timeout_s:.0f} s (stopped)")
    finally:
        rc = children.reap(proc)
    if rc != 0:
        return failed(f"its child process {_ended(rc)}{_last_line(err)}")
    try:
        reading = Reading.from_dict(json.loads(out))
    except (ValueError, TypeError, KeyError) as e:
        return failed(f"its child process printed no reading ({type(e).__name__}: {str(e)[:120]}){_last_line(err)}")
    if reading.probe != name:
        return failed(f"its child process printed a reading of {reading.probe!r}, not {name!r}")
    return reading


def _ended(rc: int) -> str:
    if rc < 0:
        try:
            return f"was killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"was killed by signal {-rc}"
    return f"exited with status {rc}"


def _last_line(err: bytes) -> str:
    lines = err[-STDERR_KEPT * 4:].decode("utf-8", "replace").strip().splitlines()  # its tail only
    return f": {lines[-1][:STDERR_KEPT]}" if lines else ""


def main() -> int:
    """The child: read probe argv[2] of module argv[1] with the Config given on stdin, print the
    Reading as JSON."""
    import importlib

    from sparktui.probes import read_declared

    module, name = sys.argv[1], sys.argv[2]
    cfg = pickle.load(sys.stdin.buffer)
    reading: Reading[Any]
    try:
        probe = next(p for p in importlib.import_module(module).PROBES if p.name == name)
    except Exception as e:  # not a probe module, no such probe: said, as a reading
        reading = Reading(probe=name, data=None, error=f"no probe {name!r} in {module}: {type(e).__name__}: {e}")
    else:
        reading = read_declared(probe, cfg)
    sys.stdout.write(json.dumps(reading.to_dict()))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
