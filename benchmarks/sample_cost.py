"""What one telemetry sample costs, against the nvidia-smi call it replaces; and whether sampling
at 10 Hz for minutes grows the process.

    PYTHONPATH=src python3 benchmarks/sample_cost.py [--samples 2000] [--smi-calls 20] [--minutes 10]
    PYTHONPATH=src python3 benchmarks/sample_cost.py --fake --minutes 1     # no GPU: fake NVML, RSS part only

Exits 1 when a measured target is missed (>= 100x cheaper than nvidia-smi; < 5 MB RSS growth).

Part 1 (needs a GPU and nvidia-smi; otherwise it says so and goes on, not measured, not missed): the mean wall time
of one full sample (every NVML field of every GPU + /proc/meminfo, through the Sampler the dashboard
uses, session already open) next to one `nvidia-smi --query-gpu=... --format=csv` call reading the
same fields, measured alternately in the same run; prints both and the ratio. A bare NVML call
(temperature) is timed too, for scale.

Part 2: a Sampler thread at 10 Hz (interval 0.1 s, default history 3600 samples = 6 min at 10 Hz)
plus a process-view scan every 5 s, as the dashboard runs it, for --minutes; prints RSS at start,
every minute, at the end, the growth, CPU used, and samples taken vs expected.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import psutil  # noqa: E402

from sparktui.core.config import Config  # noqa: E402
from sparktui.probes import nvml  # noqa: E402
from sparktui.probes.sampler import Sampler  # noqa: E402

SMI_FIELDS = ("timestamp,temperature.gpu,power.draw,power.limit,clocks.sm,clocks.gr,clocks.mem,utilization.gpu,"
              "utilization.memory,clocks_event_reasons.active,memory.used,memory.total")
SMI_FALLBACK = "timestamp,temperature.gpu,power.draw,clocks.sm,clocks.gr,utilization.gpu,utilization.memory"


def smi_query() -> list[str] | None:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    for fields in (SMI_FIELDS, SMI_FALLBACK):
        cmd = [exe, f"--query-gpu={fields}", "--format=csv,noheader"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode == 0:
            return cmd
    return None


def part1(samples: int, smi_calls: int) -> bool | None:
    """True when the full sample is at least 100x cheaper than nvidia-smi; None when not measured."""
    print("== cost of one sample vs one nvidia-smi call ==")
    cmd = smi_query()
    s = Sampler(Config())
    t0 = time.perf_counter()
    session = s.open()
    init_ms = (time.perf_counter() - t0) * 1e3
    if not session.open or not s.readers:
        print(f"no GPU through NVML ({session.error or 'no devices'}): cost comparison skipped")
        s.close()
        return None
    if cmd is None:
        print("nvidia-smi not found or failing: cost comparison skipped")
        s.close()
        return None
    first = s.take()
    print(f"NVML session open (nvmlInit + handles): {init_ms:.1f} ms, once per session")
    print(f"GPUs: {len(first['gpus'])}; fields unavailable on GPU 0: {sorted(first['gpus'][0]['errors']) or 'none'}")
    print("nvidia-smi:", " ".join(cmd[1:]))
    print("sample GPU 0:", {k: first["gpus"][0][k] for k in ("temp_c", "power_w", "sm_mhz", "util_gpu", "reasons")})
    print("nvidia-smi  :", subprocess.run(cmd, capture_output=True, text=True).stdout.strip().splitlines()[0])
    sample_t, smi_t = [], []
    per_round = max(1, samples // smi_calls)
    for _ in range(smi_calls):  # alternate so both see the same machine state
        t = time.perf_counter()
        for _ in range(per_round):
            s.take()
        sample_t.append((time.perf_counter() - t) / per_round)
        t = time.perf_counter()
        subprocess.run(cmd, capture_output=True)
        smi_t.append(time.perf_counter() - t)
    h = s.readers[0].h
    nv = session.nv
    t = time.perf_counter()
    for _ in range(samples):
        nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)
    bare = (time.perf_counter() - t) / samples
    one, smi = statistics.mean(sample_t), statistics.mean(smi_t)
    print(f"one full sample (NVML + meminfo): mean {one * 1e6:.0f} us (median {statistics.median(sample_t) * 1e6:.0f} us, "
          f"{per_round * smi_calls} samples)")
    print(f"one nvidia-smi --query-gpu call : mean {smi * 1e3:.1f} ms (median {statistics.median(smi_t) * 1e3:.1f} ms, "
          f"{smi_calls} calls)")
    print(f"bare NVML call (temperature)    : mean {bare * 1e6:.1f} us -> {smi / bare:.0f}x cheaper than nvidia-smi")
    r0 = s.readers[0]
    t = time.perf_counter()
    for _ in range(50):
        r0._counters_due = 0.0  # force the counter read this sample takes every counters_every_s
        r0._counters()
    counters = (time.perf_counter() - t) / 50
    interval = Config().telemetry.interval_s
    amortized = one + counters * min(1.0, interval / r0.counters_every_s)
    print(f"violation counters, one read    : {counters * 1e6:.0f} us, every {r0.counters_every_s:g} s "
          f"({'field values' if r0.counter_fields else 'violation status'})")
    print(f"sample at the default {interval:g} s interval, counters amortized: {amortized * 1e6:.0f} us")
    met = smi / amortized >= 100
    print(f"RATIO nvidia-smi / full sample  : {smi / one:.0f}x; with counters amortized at {interval:g} s: "
          f"{smi / amortized:.0f}x (target >= 100x): {'PASS' if met else 'FAIL'}")
    s.close()
    return met


def breakdown(calls: int) -> None:
    """Each NVML call the sampler makes, timed on its own: where a sample's time goes."""
    print("== per-call cost (GPU 0) ==")
    session = nvml.NvmlSession()
    if not session.open or not session.handles:
        print(f"no GPU through NVML ({session.error or 'no devices'}): breakdown skipped")
        return
    nv, h = session.nv, session.handles[0]
    fi = [nv.NVML_FI_DEV_PERF_POLICY_THERMAL, nv.NVML_FI_DEV_PERF_POLICY_POWER]
    probes = {
        "temperature": lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),
        "power usage": lambda: nv.nvmlDeviceGetPowerUsage(h),
        "enforced limit": lambda: nv.nvmlDeviceGetEnforcedPowerLimit(h),
        "SM clock": lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
        "utilization": lambda: nv.nvmlDeviceGetUtilizationRates(h),
        "clock-event reasons": lambda: nv.nvmlDeviceGetCurrentClocksEventReasons(h),
        "memory info": lambda: nv.nvmlDeviceGetMemoryInfo(h),
        "violation status (thermal)": lambda: nv.nvmlDeviceGetViolationStatus(h, nv.NVML_PERF_POLICY_THERMAL),
        "violation status (power)": lambda: nv.nvmlDeviceGetViolationStatus(h, nv.NVML_PERF_POLICY_POWER),
        "field values (both counters)": lambda: nv.nvmlDeviceGetFieldValues(h, fi),
    }
    for name, fn in probes.items():
        try:
            fn()
        except Exception as e:
            print(f"  {name:30s}: {nvml.describe_error(nv, e)}")
            continue
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        print(f"  {name:30s}: {(time.perf_counter() - t) / calls * 1e6:8.1f} us")
    try:
        vs = [int(nv.nvmlDeviceGetViolationStatus(h, p).violationTime)
              for p in (nv.NVML_PERF_POLICY_THERMAL, nv.NVML_PERF_POLICY_POWER)]
        fv = [(int(v.nvmlReturn), int(v.valueType), int(v.value.ullVal)) for v in nv.nvmlDeviceGetFieldValues(h, fi)]
        print(f"  counters: violation status {vs}; field values (return, type, value) {fv}")
    except Exception as e:
        print(f"  counters compared: {nvml.describe_error(nv, e)}")
    session.close()


def rss_mb() -> float:
    return psutil.Process().memory_info().rss / 1e6


def part2(minutes: float, hz: float, processes_every: float, history: int | None = None) -> bool:
    """True when RSS grew less than 5 MB over the run."""
    print(f"== {hz:g} Hz for {minutes:g} min: RSS growth ==")
    cfg = Config()
    count = {"n": 0}
    s = Sampler(cfg, interval_s=1.0 / hz, on_sample=lambda _: count.__setitem__("n", count["n"] + 1),
                processes_every_s=processes_every, history=history)
    s.open()
    s.sample_once()  # first sample: imports and buffers warmed
    s.scan_processes()
    me = psutil.Process()
    cpu0 = sum(me.cpu_times()[:2])
    start = rss_mb()
    t0 = time.monotonic()
    print(f"history {s.history.maxlen} samples ({s.history.maxlen / hz / 60:.1f} min at {hz:g} Hz); RSS at start {start:.1f} MB")
    s.start()
    stop = threading.Event()
    peak = start
    try:
        minute = 0
        while not stop.wait(1.0):
            peak = max(peak, rss_mb())
            el = time.monotonic() - t0
            if el >= (minute + 1) * 60:
                minute += 1
                print(f"  {minute:>3} min: RSS {rss_mb():.1f} MB, samples {count['n']}, in history {len(s.history)}", flush=True)
            if el >= minutes * 60:
                break
    finally:
        s.stop()
    el = time.monotonic() - t0
    end = rss_mb()
    cpu = sum(me.cpu_times()[:2]) - cpu0
    met = end - start < 5
    print(f"RSS start {start:.1f} MB, end {end:.1f} MB, peak {peak:.1f} MB: GROWTH {end - start:+.2f} MB "
          f"(target < 5 MB): {'PASS' if met else 'FAIL'}")
    print(f"samples taken {count['n']} of {int(el * hz)} expected over {el:.0f} s; in history {len(s.history)}; "
          f"process scans every {processes_every:g} s")
    print(f"CPU used {cpu:.1f} s over {el:.0f} s = {100 * cpu / el:.1f}% of one core")
    return met


def scan_cost(extra: int, scans: int = 48) -> None:
    """The process view's phase 1 (every process's name and argv), psutil against the /proc
    lister the scan uses, over the same processes; the lister's figure is averaged over its
    cycle of cheap scans and a full one every twelfth."""
    from sparktui.probes import processes

    print("== process scan: psutil vs the /proc lister ==")
    kids = [subprocess.Popen(["sleep", "3600"]) for _ in range(extra)]
    try:
        lister = processes.ProcLister(fresh_s=0.0)  # as the dashboard sees settled processes
        n = len(lister.list()[0])
        t0 = time.perf_counter()
        for _ in range(scans):
            lister.list()
        ours = (time.perf_counter() - t0) / scans
        t0 = time.perf_counter()
        for _ in range(scans // 4):
            processes._psutil_candidates()
        theirs = (time.perf_counter() - t0) / (scans // 4)
    finally:
        for k in kids:
            k.kill()
            k.wait()
    print(f"{n} processes: psutil {theirs * 1000:.1f} ms per scan, /proc lister {ours * 1000:.2f} ms "
          f"-> {theirs / ours:.0f}x; every 5 s that is {theirs / 5 * 100:.2f}% vs {ours / 5 * 100:.3f}% of one core")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=2000, help="full samples timed in part 1")
    ap.add_argument("--smi-calls", type=int, default=20, help="nvidia-smi calls timed in part 1")
    ap.add_argument("--minutes", type=float, default=10.0, help="length of the 10 Hz RSS run (0 = skip)")
    ap.add_argument("--hz", type=float, default=10.0)
    ap.add_argument("--processes-every", type=float, default=5.0, help="process-view scan period in part 2")
    ap.add_argument("--breakdown", type=int, default=200, help="calls per NVML function in the per-call table (0 = skip)")
    ap.add_argument("--history", type=int, default=None, help="ring-buffer length in samples (default: the config's)")
    ap.add_argument("--skip-cost", action="store_true", help="only the RSS run (part 2)")
    ap.add_argument("--fake", action="store_true", help="use the fake GB10 NVML of sparktui.testing (no GPU here)")
    ap.add_argument("--extra-processes", type=int, default=0,
                    help="start this many idle processes for the process-scan figure (a desktop host has hundreds)")
    a = ap.parse_args()
    met: dict[str, bool | None] = {}
    if not a.skip_cost:
        scan_cost(a.extra_processes)
    if a.fake:
        from sparktui.testing import fake_nvml

        nvml.set_backend(fake_nvml.gb10_loaded())
        print("(fake GB10 NVML: part 1 skipped; part 2 measures sparktui's own memory only)")
    elif not a.skip_cost:
        if a.breakdown:
            breakdown(a.breakdown)
        met["sample >= 100x cheaper than nvidia-smi"] = part1(a.samples, a.smi_calls)
    if a.minutes > 0:
        met["RSS growth < 5 MB"] = part2(a.minutes, a.hz, a.processes_every, a.history)
    missed = [name for name, ok in met.items() if ok is False]  # None: not measured here (no GPU)
    if missed:
        print(f"missed: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
