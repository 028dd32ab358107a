"""G14's judge from numbers: run readings built as probes/run_log.py writes them (shapes.RunData, no
parser), telemetry samples as the sampler records them (GB10: ~2400 MHz under load, counters in ns),
meminfo, processes and kernel-log events as their probes write them. Each verdict of the contract's
list, its precedence, the evidence it carries, review mode over a recorded-like run, readings that
are missing ("not seen", never "no cause") and data that is odd or not finite (a judge never raises)."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.gotchas import g14_run_progress as g14
from tests.conftest import readings_of

T3 = 1_764_039_600.0  # 2025-11-25 03:00:00 UTC
GIB = 1024 ** 3
CFG = Config()
PIDS = [4100, 4101]


# --- builders ----------------------------------------------------------------------------------------

def pt(t: float | None, step: int | None, total: int | None = 100_000, **kw: Any) -> dict:
    return {"t": t, "step": step, "total": total, "format": "plain", **kw}


def steady(t0: float, seconds: float, every: float = 10.0, per_line: int = 10, step0: int = 0, total: int = 100_000) -> list[dict]:
    """A progress line every ``every`` s, ``per_line`` steps apart, from ``t0`` for ``seconds``."""
    n = int(round(seconds / every))
    return [pt(t0 + i * every, step0 + i * per_line, total) for i in range(n + 1)]


def run(progress: list[dict], read_at: float | None = None, alive: bool | None = True, **kw: Any) -> dict:
    timed = [p["t"] for p in progress if isinstance(p, dict) and isinstance(p.get("t"), float)]
    d = {"found": True, "why": None, "pids": list(PIDS), "command": "torchrun --nproc-per-node 1 train.py",
         "alive": alive, "started_at": (timed[0] - 60) if timed else None,
         "log": {"kind": "fd", "path": "/home/spark/runs/train.log", "error": None, "size": 4096, "mtime": None},
         "progress": progress, "first": progress[0] if progress else None, "points_seen": len(progress),
         "events": [], "error": None, "finished": None, "lines_read": 2 * len(progress), "cut_lines": 0,
         "formats": {"plain": len(progress)}, "last_line_t": timed[-1] if timed else None,
         "read_at": read_at if read_at is not None else (timed[-1] if timed else T3)}
    d.update(kw)
    return d


def gpu(sm: int = 2405, util: int = 97, reasons: list[str] | None = None, sw_thermal: int = 0, power_cap: int = 0,
        hw_thermal: int = 0, brake: int = 0) -> dict:
    return {"index": 0, "temp_c": 80, "power_w": 80.0, "power_limit_w": None, "sm_mhz": sm, "gr_mhz": sm,
            "mem_mhz": None, "util_gpu": util, "util_mem": 0, "reasons_mask": 0, "reasons": reasons or [],
            "sw_power_cap_ns": power_cap, "sync_boost_ns": 0, "sw_thermal_ns": sw_thermal, "hw_thermal_ns": hw_thermal,
            "hw_power_brake_ns": brake, "mem_used": None, "mem_total": None, "errors": {}}


MEM_OK = {"MemTotal": 127_611_700 * 1024, "MemAvailable": 100 * GIB, "MemFree": 90 * GIB, "SwapTotal": 16 * GIB,
          "SwapFree": 16 * GIB}


def samples(t0: float, seconds: float, fn=None, step: float = 5.0, mem=None) -> list[dict]:
    """Telemetry samples every ``step`` s; ``fn(t)`` gives GPU 0's record, ``mem(t)`` the memory figures."""
    n = int(round(seconds / step))
    out = []
    for i in range(n + 1):
        t = t0 + i * step
        out.append({"t": t, "gpus": [fn(t) if fn else gpu()], "mem": mem(t) if mem else dict(MEM_OK)})
    return out


def tele(smp: list[dict], review: bool = False) -> dict:
    d: dict[str, Any] = {"samples": smp, "window_s": smp[-1]["t"] - smp[0]["t"] if smp else 0.0, "source": "live"}
    if review:
        d.update(review=True, requested_window_s=None, source="run.jsonl")
    return d


def meminfo(**kw: Any) -> dict:
    return {**MEM_OK, **kw}


def procs(*rows: dict, t: float | None = None) -> dict:
    d: dict[str, Any] = {"rows": list(rows), "nvml": {"ok": True, "error": None, "count": 1},
                         "container": {"inside": False}, "skipped": {"vanished": 0, "denied": 0}}
    if t is not None:
        d["t"] = t
    return d


def proc(pid: int, age_s: float, name: str = "vllm serve", kind: str = "server", **kw: Any) -> dict:
    return {"pid": pid, "ppid": 1, "kind": kind, "server": "vllm" if kind == "server" else None, "name": name,
            "command": f"/usr/bin/python3 -m {name}", "age_s": age_s, "group": pid, **kw}


def klog(*events: dict) -> dict:
    return {"source": "kmsg", "boot_id": "4e7c", "lines_read": 1200, "events": list(events), "truncated": False,
            "counts": {}, "severities": {}, "not_kept": 0}


def oom(pid: int = 4101, t: float = T3 + 720, anon_kb: int = 102_970_000) -> dict:
    return {"kind": "oom_kill", "t": t, "text": f"Out of memory: Killed process {pid} (python3)", "pid": pid,
            "name": "python3", "rss_kb": anon_kb + 4000, "anon_rss_kb": anon_kb}


def verdict(r: dict, cfg: Config | None = None, **readings: Any):
    return g14.judge(readings_of(run=r, **readings), cfg or CFG)


def everything(r: dict, t_end: float, **over: Any) -> dict:
    """Every enriching reading present and quiet over the run (30 min of samples before ``t_end``)."""
    base: dict[str, Any] = {"telemetry": tele(samples(t_end - 1800, 1800)), "meminfo": meminfo(),
                            "processes": procs(t=t_end), "kernel_log": klog()}
    base.update(over)
    return base


def ev(v) -> dict[str, Any]:
    return {e.what: e.value for e in v.evidence}


def slowed(per_line_slow: int, now_extra: float = 0.0) -> tuple[dict, float]:
    """1200 s at 0.1 s/step (100 steps a 10 s line), then 300 s at ``per_line_slow`` steps a line."""
    base = steady(T3, 1200, per_line=100)
    last = base[-1]["step"]
    tail = [pt(T3 + 1200 + 10 * i, last + per_line_slow * i) for i in range(1, 31)]
    now = T3 + 1500 + now_extra
    return run(base + tail, read_at=now), now


# --- the declaration ----------------------------------------------------------------------------------

def test_declaration():
    g = g14.GOTCHA
    assert (g.id, g.slug, g.title) == ("G14", "run-progress", "The run is making progress")
    assert g.probes == ("run", "telemetry", "meminfo", "processes", "kernel_log")
    assert g.enriched_by == ("telemetry", "meminfo", "processes", "kernel_log") and g.required == ("run",)
    assert g.feed is g14.Feed.TELEMETRY and g.cadence_s == 30 and g.intrusive is False
    assert "03:12" in g.symptom and g.references


# --- skip and unknown ---------------------------------------------------------------------------------

def test_no_run_found_skips_with_why():
    v = verdict({"found": False, "why": "no training process and no log named", "read_at": T3})
    assert v.status is Status.SKIP and v.summary == "no training run found: no training process and no log named"
    assert [(e.what, e.value) for e in v.evidence] == [("training run", "no training process and no log named")]
    assert verdict({"found": False}).summary == "no training run found"


def test_a_failed_run_reading_is_unknown_with_its_reason():
    v = g14.judge(readings_of(run=None), CFG)
    assert v.status is Status.UNKNOWN and "run unavailable (test)" in v.summary


def test_a_reading_without_found_is_unknown():
    v = verdict({"read_at": T3, "progress": []})
    assert v.status is Status.UNKNOWN and "no found field" in v.summary


def test_found_neither_true_nor_false_is_unknown():
    v = verdict({"found": "yes", "read_at": T3})
    assert v.status is Status.UNKNOWN and v.summary == "cannot tell: the run reading's found field is not true or false"
    assert [(e.what, e.value) for e in v.evidence] == [("training run", "unavailable: found is not a bool")]


@pytest.mark.parametrize("log", [{"kind": "fd", "path": "/x/train.log", "error": "permission denied"}, None])
def test_an_unreadable_or_missing_log_is_unknown_saying_how_to_name_it(log):
    v = verdict(run(steady(T3, 100), log=log, why="stdout goes to a terminal outside tmux"))
    assert v.status is Status.UNKNOWN
    assert "--run-log FILE" in v.summary and "[run] log" in v.summary
    assert ("permission denied" if log else "stdout goes to a terminal outside tmux") in v.summary


def test_no_progress_line_yet_is_unknown_with_lines_read():
    v = verdict(run([], lines_read=37))
    assert v.status is Status.UNKNOWN and v.summary.startswith("no progress line recognised yet (37 lines read)")


# --- died ---------------------------------------------------------------------------------------------

def test_died_with_cuda_oom_names_step_time_and_the_error_kind():
    err = {"kind": "error", "t": T3 + 720, "step": 1200, "error": "cuda_oom",
           "text": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\x1b[31m [bold]x[/]"}
    v = verdict(run(steady(T3, 700, per_line=10, total=5000), alive=False, error=err))
    assert v.status is Status.FAIL
    assert v.summary.startswith("died at step 1200/5000 (03:12 UTC): CUDA out of memory")
    line = ev(v)["error line"]
    assert "\x1b" not in line and line.startswith("torch.OutOfMemoryError: CUDA out of memory.")
    assert "[bold]" not in v.summary  # the outside line is its own field, never the summary's


def test_the_error_line_is_cut():
    err = {"kind": "error", "t": T3, "step": 3, "error": "traceback", "text": "RuntimeError: " + "x" * 5000}
    v = verdict(run(steady(T3, 30), alive=False, error=err))
    assert g14.ERROR_TEXT_CHARS == 300
    assert len(ev(v)["error line"]) == 300 and ev(v)["error line"] == "RuntimeError: " + "x" * 285 + "…"
    assert "a Python exception" in v.summary


def test_an_error_while_the_processes_live_is_not_death():
    err = {"kind": "error", "t": T3 + 50, "step": 50, "error": "traceback", "text": "ValueError: x"}
    v = verdict(run(steady(T3, 100), alive=True, error=err))
    assert v.status is Status.OK


@pytest.mark.parametrize("err_t,status", [(T3 + 101, Status.FAIL), (T3 + 50, Status.UNKNOWN)])
def test_with_liveness_unknown_only_an_error_after_the_last_progress_is_death(err_t, status):
    err = {"kind": "error", "t": err_t, "step": None, "error": "nccl_timeout", "text": "Watchdog caught collective operation timeout"}
    v = verdict(run(steady(T3, 100), alive=None, error=err, read_at=None) | {"read_at": "n/a"})
    assert v.status is status, v.summary
    if status is Status.FAIL:
        assert v.summary == ("died at step 100/100000 (03:01 UTC): NCCL timeout (the log ends with it; the line is in "
                             "the evidence)")


def test_died_before_any_progress_line():
    err = {"kind": "error", "t": T3, "step": None, "error": "cuda_oom", "text": "CUDA out of memory"}
    v = verdict(run([], alive=False, error=err))
    assert v.status is Status.FAIL and v.summary.startswith("died before any progress line (03:00 UTC)")


def test_an_unknown_error_kind_is_said_inertly():
    err = {"kind": "error", "t": T3, "step": 5, "error": "[red]boom\n", "text": "x"}
    v = verdict(run(steady(T3, 50), alive=False, error=err))
    assert "an error ([red]boom)" in v.summary and "\n" not in v.summary


def test_an_oom_kill_naming_a_run_pid_fails_with_pid_time_and_anon_rss():
    v = verdict(run(steady(T3, 700), alive=False), kernel_log=klog(oom()))
    assert v.status is Status.FAIL
    assert v.summary == ("died at step 700/100000: the kernel log shows OOM kill of pid 4101 (python3), anon-rss 98.2 GiB "
                         "at 03:12 UTC, one of the run's processes (G11)")


def test_an_xid_naming_a_live_run_pid_fails():
    x = {"kind": "xid", "t": T3 + 50, "xid": 31, "pid": 4100, "name": "python3", "text": "NVRM: Xid ..."}
    v = verdict(run(steady(T3, 100)), kernel_log=klog(x))
    assert v.status is Status.FAIL and v.summary.startswith("hit at step 100/100000: the kernel log shows Xid 31 naming pid 4100")


@pytest.mark.parametrize("event", [oom(pid=999), oom(t=T3 - 3600), {"kind": "aer", "t": T3 + 10, "pid": 4100},
                                   {"kind": "nv_no_memory", "t": T3 + 10}])
def test_kernel_events_of_other_or_earlier_processes_are_not_the_runs_death(event):
    v = verdict(run(steady(T3, 100)), kernel_log=klog(event))
    assert v.status is Status.OK, v.summary


def test_many_kernel_deaths_name_the_last_and_count_the_rest():
    v = verdict(run(steady(T3, 700), alive=False), kernel_log=klog(oom(pid=4100, t=T3 + 700), oom(pid=4101)))
    assert "pid 4101" in v.summary and "(and 1 more naming the run)" in ev(v)["kernel log"]


# --- ended, non-finite --------------------------------------------------------------------------------

def test_finished_is_ok_with_the_step():
    fin = {"kind": "finished", "t": T3 + 100, "step": 100, "text": "Training completed."}
    v = verdict(run(steady(T3, 100, total=100), alive=False, finished=fin))
    assert v.status is Status.OK and v.summary == "finished at step 100/100 (03:01 UTC)"
    assert ev(v)["finished"] == "at 03:01 UTC"


def test_a_nan_loss_fails_naming_the_step_and_when():
    bad = [{"kind": "nonfinite", "t": T3 + 40, "step": 40, "field": "loss", "value": "nan", "text": "loss=nan"},
           {"kind": "nonfinite", "t": T3 + 50, "step": 50, "field": "grad_norm", "value": "inf", "text": "x"}]
    v = verdict(run(steady(T3, 100), events=bad))
    assert v.status is Status.FAIL
    assert v.summary == "loss was nan at step 40 (03:00 UTC) (1 more non-finite values after it)"


# --- progress, late, stall ----------------------------------------------------------------------------

def test_ok_gives_step_rate_age_and_eta_and_its_evidence():
    v = verdict(run(steady(T3, 1000, per_line=10, total=2000), read_at=T3 + 1005))
    assert v.status is Status.OK
    assert v.summary == "progressing: step 1000/2000 at 1 s/step (median 1 s/step), last progress 5 s ago; ETA 17 min (03:33 UTC)"
    e = ev(v)
    assert e["last progress"] == "step 1000/2000 at 03:16 UTC" and e["age of the last progress"] == "5 s"
    assert e["median step interval"] == "1 s/step (from progress times, 100 observations)"
    assert e["median gap between progress lines"] == "10 s; late after 10 x"
    assert e["log"] == "fd: /home/spark/runs/train.log" and e["run processes"] == "4100, 4101 (alive)"
    assert e["progress lines"] == "101 of 202 lines read"
    assert all(x.source == "/home/spark/runs/train.log" for x in v.evidence)


def test_the_printed_rate_is_evidence_and_fast_paces_read_as_steps_per_second():
    p = steady(T3, 100, per_line=100)
    p[-1].update(rate=9.87, rate_unit="it/s")
    v = verdict(run(p))
    assert ev(v)["printed rate"] == "9.87 it/s" and "10 steps/s" in v.summary


def test_a_step_gap_in_the_log_gives_the_same_pace():
    """Lines every 10 steps or every step: seconds per step from dt / dstep."""
    every = verdict(run(steady(T3, 100, every=1.0, per_line=1)))
    tenth = verdict(run(steady(T3, 100, every=10.0, per_line=10)))
    assert "at 1 s/step" in every.summary and "at 1 s/step" in tenth.summary


def test_without_times_the_printed_rate_gives_the_pace():
    p = [pt(None, 10 * i, 500, step_s=0.5) for i in range(5)]
    v = verdict(run(p, alive=None, last_line_t=None, read_at=T3))
    assert v.status is Status.UNKNOWN and "when that was, and whether the run still lives, is not known" in v.summary
    assert ev(v)["median step interval"] == "2 steps/s (from printed rate, 0 observations)"


def test_timed_points_with_a_printed_rate_only_give_the_pace():
    p = [pt(T3 + 10 * i, None, None, step_s=2.0) for i in range(10)]
    v = verdict(run(p, read_at=T3 + 95))
    assert v.status is Status.OK and "at 2 s/step" in v.summary and "from printed rate" in ev(v)["median step interval"]


def test_one_line_and_no_rate_is_a_pace_not_known_yet():
    v = verdict(run([pt(T3, 5)], read_at=T3 + 1))
    assert v.status is Status.UNKNOWN and "pace is not known yet" in v.summary


def test_the_age_falls_back_to_the_logs_last_write_when_lines_have_no_time():
    p = [pt(None, 10 * i, 500, step_s=1.0) for i in range(5)]
    v = verdict(run(p, read_at=T3 + 50, last_line_t=T3))
    assert v.status is Status.OK and ev(v)["last progress"] == "step 40/500 at 03:00 UTC (the log's last line)"


def test_stall_names_duration_since_and_the_causes_seen_since():
    p = steady(T3, 1000)
    now = T3 + 1000 + 23 * 60
    thr = lambda t: gpu(sw_thermal=int(max(0.0, t - (T3 + 1000)) * 0.5e9))  # noqa: E731
    v = verdict(run(p, read_at=now), **everything(run(p), now, telemetry=tele(samples(T3, now - T3, thr))))
    assert v.status is Status.FAIL
    assert v.summary.startswith("no progress for 23 min (since 03:16 UTC) at step 1000/100000, the processes alive "
                                "while SW thermal slowdown +690.0 s (50% of the time)")
    assert ev(v)["stall after"] == "600 s (the floor; the run's pace gives 300 s)"
    assert ev(v)["stall"] == "23 min from 03:16 UTC"


def test_a_stall_only_while_the_processes_live():
    p = steady(T3, 1000)
    gone = verdict(run(p, read_at=T3 + 5000, alive=False))
    assert gone.status is Status.WARN and gone.summary.startswith("the log stops at step 1000/100000 (03:16 UTC)")
    unknown = verdict(run(p, read_at=T3 + 5000, alive=None))
    assert unknown.status is Status.WARN and "whether the run still lives is not known" in unknown.summary


# --- slowdown and its causes --------------------------------------------------------------------------

def test_slowdown_warns_with_rates_and_no_cause_seen_when_every_source_was_read():
    r, now = slowed(50)
    v = verdict(r, **everything(r, now))
    assert v.status is Status.WARN
    assert v.summary == ("slowdown: 5 steps/s over the last 5 min against the run's median 10 steps/s (50% of its rate, "
                         "slow under 70%); no cause seen in the telemetry, memory, processes or kernel log")


def test_a_missing_reading_is_not_seen_never_no_cause():
    r, now = slowed(50)
    v = verdict(r, meminfo=meminfo(), processes=procs(t=now))
    assert "no cause seen in the memory or processes" in v.summary
    assert "not seen: telemetry: telemetry unavailable (test)" not in v.summary  # absent, not failed
    assert "(not seen: telemetry: probe 'telemetry' was not run; kernel log: probe 'kernel_log' was not run)" in v.summary
    none = verdict(r)
    assert "no cause could be looked for (not seen: telemetry" in none.summary
    assert "no cause seen" not in none.summary
    failed = verdict(r, telemetry=None, meminfo=None, processes=None, kernel_log=None)
    assert "telemetry: telemetry unavailable (test)" in failed.summary
    assert "processes: processes unavailable (test)" in failed.summary


def test_telemetry_without_samples_in_the_window_is_not_seen():
    r, now = slowed(50)
    v = verdict(r, **everything(r, now, telemetry=tele(samples(T3 - 9000, 600))))
    assert v.summary.endswith("no cause seen in the memory, processes or kernel log (not seen: telemetry: no samples in "
                              "that stretch)")


def test_slowdown_causes_clock_counters_memory_process_kernel():
    r, now = slowed(50)
    start = now - 300

    def g(t):
        inside = t >= start
        return gpu(sm=1900 if inside else 2400, sw_thermal=int(max(0.0, t - start) * 0.2e9),
                   reasons=["sw_thermal_slowdown"] if inside else [])

    def m(t):
        return {**MEM_OK, "MemAvailable": int(6 * GIB) if t >= start + 100 else 100 * GIB,
                "SwapFree": int(16 * GIB - (1 * GIB if t >= start + 100 else 0))}

    v = verdict(r, telemetry=tele(samples(T3, now - T3, g, mem=m)), meminfo=meminfo(psi={"some": {"avg10": 12.5, "avg60": 3.0}}),
                processes=procs(proc(5120, 120.0), proc(4102, 100.0, name="python3", kind="training", group=4100),
                                proc(6000, 60.0, name="sparktui", kind="other"), proc(7000, 900.0), t=now),
                kernel_log=klog({"kind": "aer", "t": now - 10, "severity": "non-fatal"}))
    assert v.status is Status.WARN
    s = v.summary
    assert "SW thermal slowdown +60.0 s (20% of the time)" in s
    assert "clock-event reason sw_thermal_slowdown in 61 of 61 samples" in s
    assert "SM clock under load 2400 → 1900 MHz (-21%)" in s
    assert "memory pressure: PSI some avg10 12.5%" in s
    assert "MemAvailable down to 6.0 GiB at 03:21 UTC (floor 8 GiB)" in s
    assert "swap in use grew 0.0 GiB → 1.0 GiB" in s
    assert "vllm serve (pid 5120, vllm) started at 03:23 UTC" in s
    assert "pid 4102" not in s and "pid 6000" not in s and "pid 7000" not in s
    assert "PCIe AER error at 03:24 UTC" in s
    assert ev(v)["causes in the slowdown"] in s


def test_no_slowdown_at_the_median_pace():
    r, now = slowed(100)
    assert verdict(r, **everything(r, now)).status is Status.OK


# --- precedence ---------------------------------------------------------------------------------------

FIN = {"kind": "finished", "t": T3 + 1500, "step": 1, "text": "done"}
ERR = {"kind": "error", "t": T3 + 1500, "step": 1, "error": "cuda_oom", "text": "CUDA out of memory"}
NAN = [{"kind": "nonfinite", "t": T3 + 100, "step": 100, "field": "loss", "value": "nan", "text": "nan"}]


@pytest.mark.parametrize("extra,kernel,want", [
    ({"alive": False, "error": ERR, "finished": FIN}, None, "died at step"),
    ({"alive": False, "finished": FIN}, klog(oom()), "died at step 13500/100000: the kernel log"),
    ({"finished": FIN, "events": NAN}, None, "finished at step"),
    ({"events": NAN}, None, "loss was nan"),
])
def test_precedence_died_kernel_finished_nonfinite(extra, kernel, want):
    r, now = slowed(50)
    r.update(extra)
    v = verdict(r, kernel_log=kernel or klog())
    assert v.summary.startswith(want), v.summary


def test_precedence_stall_over_slowdown_over_late():
    r, now = slowed(50)
    cfg = Config().with_overrides(run={"stall_after_s": 150.0})
    stalled = verdict(dict(r, read_at=now + 150), cfg)  # 16 lines in the window: a slowdown too
    assert stalled.summary.startswith("no progress for 2 min (since 03:25 UTC)")
    slow = verdict(dict(r, read_at=now + 101))  # late too (over 10 x 10 s)
    assert slow.summary.startswith("slowdown:")
    late = verdict(run(steady(T3, 1500), read_at=T3 + 1601))
    assert late.status is Status.WARN and late.summary == (
        "late: no progress for 101 s (since 03:25 UTC) at step 1500/100000, over 10 x the median gap of 10 s "
        "(a stall from 10 min)")


# --- review mode --------------------------------------------------------------------------------------

def recorded_stall() -> tuple[dict, dict]:
    """02:00-03:10 at 1 s/step, nothing 03:10-03:33 while SW thermal slowdown held the clocks, then on to 04:00."""
    before = steady(T3 - 3600, 3600 + 600)
    after = steady(T3 + 33 * 60, 27 * 60, step0=before[-1]["step"] + 10)
    r = run(before + after, read_at=T3 + 3600)

    def g(t):
        held = T3 + 600 <= t <= T3 + 33 * 60
        cum = min(max(0.0, t - (T3 + 600)), 23 * 60) * 0.3e9
        return gpu(sm=2000 if held else 2405, sw_thermal=int(cum), reasons=["sw_thermal_slowdown"] if held else [])

    return r, tele(samples(T3 - 3600, 7200, g), review=True)


def test_review_names_the_23_minute_stall_from_0310_while_g4_throttled():
    r, t = recorded_stall()
    v = verdict(r, telemetry=t, meminfo=meminfo(review=True), processes=procs(t=T3 + 3600), kernel_log=klog())
    assert v.status is Status.FAIL
    assert v.summary.startswith("stalled 23 min from 03:10 UTC to 03:33 UTC while SW thermal slowdown +414.0 s (30% of the time)")
    assert "SM clock under load 2405 → 2000 MHz (-17%)" in v.summary
    assert v.summary.endswith("[the whole recorded run]")
    assert ev(v)["stall"] == "23 min from 03:10 UTC to 03:33 UTC"


def test_live_the_same_run_sees_only_its_tail():
    r, t = recorded_stall()
    live = dict(t, review=False)
    assert verdict(r, telemetry=live).status is Status.OK


def test_review_reports_the_deepest_slowdown_with_when_and_its_cause():
    base = steady(T3 - 3600, 1800, per_line=100)  # 02:00-02:30 at 0.1 s/step
    mild = [pt(base[-1]["t"] + 10 * i, base[-1]["step"] + 60 * i) for i in range(1, 31)]  # 60%: 02:30-02:35
    mid = [pt(mild[-1]["t"] + 10 * i, mild[-1]["step"] + 100 * i) for i in range(1, 61)]  # 02:35-02:45
    deep = [pt(mid[-1]["t"] + 10 * i, mid[-1]["step"] + 30 * i) for i in range(1, 31)]  # 30%: 02:45-02:50
    end = [pt(deep[-1]["t"] + 10 * i, deep[-1]["step"] + 100 * i) for i in range(1, 61)]  # 02:50-03:00
    r = run(base + mild + mid + deep + end, read_at=T3)
    deep_t0 = deep[0]["t"] - 10

    def g(t):
        return gpu(sm=1500 if deep_t0 <= t <= deep[-1]["t"] else 2405)

    v = verdict(r, telemetry=tele(samples(T3 - 3600, 3600, g), review=True))
    assert v.status is Status.WARN
    assert v.summary.startswith("slowdown: 3 steps/s from 02:45 UTC to 02:50 UTC against the run's median 10 steps/s "
                                "(30% of its rate, slow under 70%) while clocks were held by a setting: SM clock under load "
                                "2405 → 1500 MHz (-38%)")


def test_review_of_a_finished_run_without_trouble_is_ok():
    p = steady(T3, 1200)
    fin = {"kind": "finished", "t": T3 + 1200, "step": 1200, "text": "done"}
    v = verdict(run(p, alive=False, finished=fin), telemetry=tele(samples(T3, 1200), review=True))
    assert v.status is Status.OK and v.summary.startswith("finished at step 1200")


# --- odd data never raises ----------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_numbers_are_left_out(bad):
    p = steady(T3, 100)
    p[3]["t"] = bad
    p[4]["step_s"] = bad
    p[5]["rate"] = bad
    v = verdict(run(p, read_at=T3 + 101))
    assert v.status is Status.OK, v.summary
    assert verdict(run(p, read_at=bad)).status in (Status.OK, Status.UNKNOWN)


def test_non_finite_data_through_the_declared_shape_is_unknown():
    p = steady(T3, 100)
    p[3]["t"] = math.nan
    v = g14.GOTCHA.judge(readings_of(run=run(p)), CFG)
    assert v.status is Status.UNKNOWN


ODD: list[Any] = [None, 0, -1, True, "x", [], {}, [1, "a", None], {"t": "x"}, math.nan, 10 ** 400, -(10 ** 30), 1e308]


def _spoil(d: Any, rng: random.Random) -> Any:
    if isinstance(d, dict):
        out = {k: _spoil(v, rng) for k, v in d.items()}
        if out and rng.random() < 0.3:
            out[rng.choice(list(out))] = rng.choice(ODD)
        return out
    if isinstance(d, list):
        return [_spoil(x, rng) for x in d[:12]]
    return rng.choice(ODD) if rng.random() < 0.05 else d


def test_spoilt_readings_never_raise():
    rng = random.Random(14)
    r, now = slowed(50)
    r["error"] = ERR
    r["events"] = NAN
    full = everything(r, now, kernel_log=klog(oom()), processes=procs(proc(5120, 120.0), t=now))
    for _ in range(300):
        spoilt = {k: _spoil(v, rng) for k, v in full.items()}
        v = g14.judge(readings_of(run=_spoil(r, rng), **spoilt), CFG)
        assert v.id == "G14" and isinstance(v.summary, str)
        rv = g14.judge(readings_of(run=_spoil(r, rng), telemetry=_spoil(tele(samples(T3, 60), review=True), rng)), CFG)
        assert rv.id == "G14"


@pytest.mark.parametrize("data", [{"found": True}, {"found": True, "log": {}}, {"found": True, "log": {"kind": "fd"}, "progress": "x"},
                                  {"found": True, "log": {"kind": "tmux", "pane": "%3"}, "progress": [None, 1, "a"], "pids": "1"},
                                  {"found": True, "log": {"kind": "fd"}, "progress": [{"t": 1.0, "step": 1}, {"t": 1.0, "step": 1}],
                                   "read_at": 2.0}])
def test_empty_and_odd_runs_never_raise(data):
    v = verdict(data)
    assert v.status in (Status.UNKNOWN, Status.OK, Status.WARN)


def test_a_tmux_pane_is_the_evidence_source():
    r = run(steady(T3, 100), log={"kind": "tmux", "pane": "%7", "path": None, "error": None})
    assert verdict(r).evidence[0].source == "tmux pane %7"


def test_the_wrapped_judge_is_the_modules():
    assert g14.GOTCHA.judge.__wrapped__ is g14.judge  # type: ignore[attr-defined]


def test_review_finds_a_slowdown_without_read_at():
    r, now = slowed(50)
    r["read_at"] = None
    v = verdict(r, telemetry=tele(samples(T3, 1500), review=True))
    assert v.status is Status.WARN and v.summary.startswith("slowdown: 5 steps/s from 03:20 UTC to 03:25 UTC")
    assert verdict(r).status is Status.UNKNOWN
