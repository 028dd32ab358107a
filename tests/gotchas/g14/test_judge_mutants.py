"""G14's judge pinned where mutation testing would find it loosely held: the words of each kernel
incident, the evidence of every path (the log's source, the run's pids and liveness, the printed
rate, where the last progress time came from), the fix naming the run's pids, non-finite fields and
values as the parser writes them, and the small texts (pace, duration, cut). Readings are built as in
test_judge.py."""

from __future__ import annotations

import pytest

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.gotchas import g14_run_progress as g14
from tests.gotchas.g14.test_judge import (GIB, T3, ev, everything, gpu, klog, procs, proc, pt, run, samples, slowed,
                                          steady, tele, verdict)


# --- kernel incidents, in words -----------------------------------------------------------------------

@pytest.mark.parametrize("event,words", [
    ({"kind": "xid", "xid": 79, "pid": 4100, "name": "python3"}, "Xid 79 naming pid 4100 (python3)"),
    ({"kind": "xid", "xid": "x", "pid": 4100}, "Xid ? naming pid 4100"),
    ({"kind": "nv_no_memory", "pid": 4101}, "NVIDIA driver out of memory (NV_ERR_NO_MEMORY) for pid 4101"),
    ({"kind": "oom_kill", "pid": 4101, "name": "", "anon_rss_kb": None}, "OOM kill of pid 4101 at"),
    ({"kind": "oom_kill", "pid": 4101, "name": "pt_main_thread", "anon_rss_kb": 1024}, "OOM kill of pid 4101 (pt_main_thread), anon-rss 0.0 GiB"),
])
def test_kernel_deaths_in_words(event, words):
    v = verdict(run(steady(T3, 100), alive=False), kernel_log=klog({**event, "t": T3 + 200}))
    assert v.status is Status.FAIL
    assert f"the kernel log shows {words}" in v.summary, v.summary
    assert v.summary.endswith("at 03:03 UTC, one of the run's processes (G11)")


@pytest.mark.parametrize("event,words", [
    ({"kind": "aer", "pid": None}, "PCIe AER error at"),
    ({"kind": "soft_lockup", "pid": 77, "name": "kworker"}, "CPU lockup (pid 77 (kworker)) at"),
    ({"kind": "gpu_lost"}, "GPU lost at"),
    ({"kind": "mystery"}, "kernel log incident at"),
    ({"kind": "oom_kill", "pid": 999, "name": "other", "anon_rss_kb": 2 * 1024 * 1024}, "OOM kill of pid 999 (other), anon-rss 2.0 GiB at"),
    ({"kind": "xid", "xid": 13}, "Xid 13 at"),
    ({"kind": "nv_no_memory"}, "NVIDIA driver out of memory (NV_ERR_NO_MEMORY) at"),
])
def test_kernel_events_as_causes_in_words(event, words):
    r, now = slowed(50)
    v = verdict(r, kernel_log=klog({**event, "t": now - 5}))
    assert v.status is Status.WARN and f"while {words} 03:24 UTC" in v.summary, v.summary


def test_an_untimed_kernel_death_still_counts_and_says_when_unknown():
    v = verdict(run(steady(T3, 100), alive=False), kernel_log=klog({"kind": "oom_kill", "pid": 4100, "t": None}))
    assert v.status is Status.FAIL and "at an unknown time, one of the run's processes" in v.summary


def test_without_the_runs_pids_no_kernel_event_is_its_death():
    v = verdict(run(steady(T3, 100), pids=[]), kernel_log=klog({"kind": "oom_kill", "pid": 4100, "t": T3 + 50}))
    assert v.status is Status.OK


def test_without_started_at_any_kernel_death_naming_a_pid_counts():
    v = verdict(run(steady(T3, 100), started_at=None), kernel_log=klog({"kind": "oom_kill", "pid": 4100, "t": T3 - 9999}))
    assert v.status is Status.FAIL


def test_a_kernel_event_at_the_runs_start_counts():
    r = run(steady(T3, 100))
    v = verdict(r, kernel_log=klog({"kind": "xid", "xid": 31, "pid": 4100, "t": r["started_at"]}))
    assert v.status is Status.FAIL


# --- evidence -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("log,source,shown", [
    ({"kind": "tmux", "pane": "%7", "path": None}, "tmux pane %7", "tmux: tmux pane %7"),
    ({"kind": "named", "path": "/data/run.log"}, "/data/run.log", "named: /data/run.log"),
    ({"kind": "fd", "path": ""}, "run log (fd)", "fd: run log (fd)"),
    ({"path": None}, "run log", "?: run log"),
    ({"kind": 3}, "run log", "?: run log"),
])
def test_the_logs_source(log, source, shown):
    v = verdict(run(steady(T3, 100), log=log))
    assert {e.source for e in v.evidence} == {source} and ev(v)["log"] == shown


@pytest.mark.parametrize("alive,words", [(True, "4100, 4101 (alive)"), (False, "4100, 4101 (gone)"), (None, "4100, 4101")])
def test_the_runs_processes_and_whether_they_live(alive, words):
    assert ev(verdict(run(steady(T3, 100), alive=alive)))["run processes"] == words


def test_at_most_eight_pids_are_listed_and_none_without_pids():
    v = verdict(run(steady(T3, 100), pids=list(range(100, 112))))
    assert ev(v)["run processes"] == "100, 101, 102, 103, 104, 105, 106, 107 (alive)"
    assert "run processes" not in ev(verdict(run(steady(T3, 100), pids=[])))
    assert "sudo py-spy dump --pid 107" in v.fix and "--pid 108" not in v.fix


def test_the_fix_names_the_runs_pids_else_finds_them():
    v = verdict(run(steady(T3, 100)))
    assert ("```bash\n# the run's processes, as sparktui saw them\npip install py-spy\nsudo py-spy dump --pid 4100\n"
            "sudo py-spy dump --pid 4101\n```\n") in v.fix and "pgrep" not in v.fix
    bare = verdict(run(steady(T3, 100), pids=None))
    assert "pgrep -f" in bare.fix and bare.fix == g14.FIX


def test_progress_lines_of_lines_read_when_counts_are_missing():
    v = verdict(run(steady(T3, 20), points_seen=None, lines_read="x"))
    assert ev(v)["progress lines"] == "3 of ? lines read"


def test_a_printed_rate_needs_its_unit():
    p = steady(T3, 100)
    p[-1].update(rate=2.5, rate_unit=None)
    assert "printed rate" not in ev(verdict(run(p)))
    p[-1].update(rate=None, rate_unit="it/s")
    assert "printed rate" not in ev(verdict(run(p)))


def test_the_rate_unit_is_cut_inert():
    p = steady(T3, 100)
    p[-1].update(rate=2.5, rate_unit="it/s\x1b[31m" + "x" * 40)
    assert ev(verdict(run(p)))["printed rate"] == "2.5 it/s [31mxxxxxx…"


def test_the_last_progress_time_from_the_file_when_no_line_has_one():
    p = [pt(None, 10 * i, 500, step_s=1.0) for i in range(5)]
    v = verdict(run(p, read_at=T3 + 50, last_line_t=None, log={"kind": "named", "path": "/x.log", "mtime": T3 + 10}))
    assert ev(v)["last progress"] == "step 40/500 at 03:00 UTC (the log file's last write)"
    assert ev(v)["age of the last progress"] == "40 s"


def test_no_age_without_read_at():
    v = verdict(run(steady(T3, 100), read_at="later"))
    assert "age of the last progress" not in ev(v) and v.status is Status.UNKNOWN
    assert v.summary == "at step 100/100000: when its last progress was is not known (no time on the lines)"


def test_a_clock_step_back_is_age_zero():
    v = verdict(run(steady(T3, 100), read_at=T3 + 50))
    assert ev(v)["age of the last progress"] == "0 s" and v.status is Status.OK


# --- non-finite, finished, error words ----------------------------------------------------------------

@pytest.mark.parametrize("field,value,words", [("grad_norm", "inf", "grad_norm was inf"), ("loss", "-inf", "loss was -inf"),
                                               ("weird", "NaN!", "loss was not finite"), (None, None, "loss was not finite")])
def test_non_finite_fields_and_values(field, value, words):
    e = {"kind": "nonfinite", "t": T3 + 20, "step": 20, "field": field, "value": value, "text": "x"}
    v = verdict(run(steady(T3, 100), events=[e]))
    assert v.summary == f"{words} at step 20 (03:00 UTC)"
    assert ev(v)["non-finite"] == f"{words.split(' was ')[0]} {words.split(' was ')[1]} at step 20, 03:00 UTC"


def test_a_non_finite_value_without_a_step():
    e = {"kind": "nonfinite", "t": None, "step": None, "field": "loss", "value": "nan"}
    v = verdict(run(steady(T3, 100), events=[e, {"kind": "error"}, "junk"]))
    assert v.summary == "loss was nan at an unknown step"
    assert ev(v)["non-finite"] == "loss nan at step ?, at an unknown time"


def test_finished_without_a_time():
    v = verdict(run(steady(T3, 100), finished={"kind": "finished", "t": None}))
    assert v.summary == "finished at step 100/100000" and ev(v)["finished"] == "at at an unknown time"


@pytest.mark.parametrize("kind,words", [("nccl_error", "NCCL error"), ("segfault", "a segmentation fault"), ("killed", "killed"),
                                        ("assertion", "an assertion failed"), ("", "an error"), (None, "an error")])
def test_error_kinds_in_words(kind, words):
    err = {"kind": "error", "t": T3 + 200, "step": 100, "error": kind, "text": ""}
    v = verdict(run(steady(T3, 100), alive=False, error=err))
    assert v.summary == f"died at step 100/100000 (03:03 UTC): {words} (its processes are gone; the line is in the evidence)"
    assert "error line" not in ev(v) and ev(v)["error"] == f"{words} at 03:03 UTC"


def test_an_error_without_a_step_takes_the_last_progress_step():
    err = {"kind": "error", "t": T3 + 200, "error": "cuda_oom", "text": "OOM"}
    v = verdict(run(steady(T3, 100, total=None), alive=False, error=err))
    assert v.summary.startswith("died at step 100 (03:03 UTC): CUDA out of memory")


@pytest.mark.parametrize("step,status", [(100, Status.FAIL), (99, Status.UNKNOWN)])
def test_liveness_unknown_and_no_error_time_compares_steps(step, status):
    err = {"kind": "error", "t": None, "step": step, "error": "cuda_oom", "text": "OOM"}
    v = verdict(run(steady(T3, 100), alive=None, error=err, read_at="x"))
    assert v.status is status, v.summary


def test_liveness_unknown_with_the_age_from_the_file_compares_steps_not_times():
    p = [pt(None, 10 * i, 500, step_s=1.0) for i in range(5)]
    err = {"kind": "error", "t": T3 + 5, "step": 10, "error": "cuda_oom", "text": "OOM"}
    v = verdict(run(p, alive=None, error=err, last_line_t=T3 + 100, read_at=T3 + 100))
    assert v.status is not Status.FAIL


# --- small texts --------------------------------------------------------------------------------------

@pytest.mark.parametrize("interval,text", [(1.0, "1 s/step"), (12.345, "12.3 s/step"), (0.5, "2 steps/s"),
                                           (0.999, "1 steps/s"), (0.0, "no time per step"), (-1.0, "no time per step")])
def test_pace_words(interval, text):
    assert g14._pace(interval) == text


def test_inert_text_is_one_line_and_cut():
    assert g14._inert("a\nb\tc\x00d", 10) == "a b c d"
    assert g14._inert("x" * 11, 10) == "x" * 9 + "…" and g14._inert("x" * 10, 10) == "x" * 10


def test_step_words():
    assert g14._step_text(None, 5) == "an unknown step" and g14._step_text(3, None) == "3" and g14._step_text(3, 5) == "3/5"


def test_late_with_liveness_unknown_names_no_stall():
    v = verdict(run(steady(T3, 1000), read_at=T3 + 1110, alive=None))
    assert v.summary == ("late: no progress for 110 s (since 03:16 UTC) at step 1000/100000, over 10 x the median gap "
                         "of 10 s; whether the run still lives is not known")


def test_causes_listed_in_order_with_one_source_looked_at():
    r, now = slowed(50)
    v = verdict(r, kernel_log=klog())
    assert "no cause seen in the kernel log (not seen: telemetry:" in v.summary


def test_memory_from_samples_alone_counts_as_looked_at():
    r, now = slowed(50)
    v = verdict(r, telemetry=tele(samples(T3, 1500)))
    assert "no cause seen in the telemetry or memory (not seen: processes:" in v.summary
    no_mem = verdict(r, telemetry=tele([dict(s, mem={}) for s in samples(T3, 1500)]))
    assert "memory: no figures in that stretch (meminfo: probe 'meminfo' was not run)" in no_mem.summary


def test_a_stall_in_review_reaches_back_to_the_first_gap_when_two_are_equal():
    p = steady(T3, 100) + steady(T3 + 800, 100, step0=110) + steady(T3 + 1600, 100, step0=220)
    v = verdict(run(p, read_at=T3 + 1700, alive=False), telemetry=tele(samples(T3, 1700), review=True))
    assert v.summary.startswith("stalled 12 min from 03:01 UTC to 03:13 UTC")


def test_review_open_stall_at_the_end_while_the_processes_live():
    p = steady(T3, 1000)
    v = verdict(run(p, read_at=T3 + 1000 + 1800), telemetry=tele(samples(T3, 2800), review=True),
                **{k: x for k, x in everything(run(p), T3 + 2800).items() if k != "telemetry"})
    assert v.summary.startswith("no progress for 30 min (since 03:16 UTC) at step 1000/100000, the processes alive; "
                                "no cause seen in the telemetry, memory, processes or kernel log")


def test_memory_causes_need_two_swap_figures_and_a_swap():
    r, now = slowed(50)
    one = [dict(s) for s in samples(T3, 1500)]
    for s in one:
        s["mem"] = {"MemAvailable": 100 * GIB} if s["t"] != now else {"SwapTotal": 16 * GIB, "SwapFree": 10 * GIB}
    assert "swap" not in verdict(r, telemetry=tele(one)).summary


# --- found by mutation testing: the pace, the gaps, the baseline's median ----------------------------

def test_history_read_at_one_moment_gives_no_pace_the_followed_lines_do():
    """Lines read at once (one time for all) advance the step in no time: no pace from them."""
    hist = [pt(T3, 10 * i) for i in range(20)]
    live = [pt(T3 + 10 * i, 190 + 10 * i) for i in range(1, 11)]
    v = verdict(run(hist + live, read_at=T3 + 100))
    assert ev(v)["median step interval"] == "1 s/step (from progress times, 10 observations)"


def test_the_median_gap_is_measured_not_derived_from_the_pace():
    """Gaps 10 s (x5), 30 s (x3), 50 s (x5): the median gap is 30 s, while the median pace (1 s/step)
    times the median steps a line (10) would say 10 s."""
    p, t, step = [pt(T3, 0)], T3, 0
    for dt, ds in [(10, 10)] * 5 + [(50, 10)] * 5 + [(30, 100)] * 3:
        t, step = t + dt, step + ds
        p.append(pt(t, step))
    v = verdict(run(p, read_at=t))
    assert ev(v)["median gap between progress lines"] == "30 s; late after 10 x"
    assert ev(v)["median step interval"].startswith("1 s/step")


@pytest.mark.parametrize("age,status", [(100.0, Status.OK), (101.0, Status.WARN)])
def test_untimed_lines_ten_steps_apart_are_late_after_ten_gaps(age, status):
    p = [pt(None, 10 * i, 500, step_s=1.0) for i in range(5)]
    assert verdict(run(p, read_at=T3 + age, last_line_t=T3)).status is status


def test_untimed_lines_without_steps_take_a_line_a_step():
    p = [pt(None, None, None, step_s=2.0) for _ in range(5)]
    v = verdict(run(p, read_at=T3 + 61, last_line_t=T3))  # over the minute late never comes before
    assert ev(v)["median gap between progress lines"] == "2 s; late after 10 x" and v.status is Status.WARN


def test_alive_that_is_not_a_bool_is_unknown():
    v = verdict(run(steady(T3, 1000), read_at=T3 + 1110, alive="yes"))
    assert v.summary.endswith("whether the run still lives is not known")


@pytest.mark.parametrize("total,text", [(1, "1/1"), (0, "1"), (-5, "1")])
def test_a_total_counts_from_one(total, text):
    v = verdict(run([pt(T3, 0, total), pt(T3 + 10, 1, total)], read_at=T3 + 10))
    assert ev(v)["last progress"] == f"step {text} at 03:00 UTC"


def test_negative_counts_are_not_counts():
    v = verdict(run(steady(T3, 20), points_seen=-1, lines_read=-3))
    assert ev(v)["progress lines"] == "3 of ? lines read"
    assert ev(verdict(run(steady(T3, 20), points_seen=5000)))["progress lines"] == "5000 of 6 lines read"


def slow_window(times_steps, window, end):
    p = [pt(T3 + t, s) for t, s in times_steps]
    return verdict(run(p, read_at=T3 + end), Config().with_overrides(run={"slow_window_s": window}))


def test_an_even_baseline_takes_the_mean_of_its_middle_two():
    """Baseline paces 1, 1, 3, 3 s/step: median 2; the window at 2.5 s/step is 80% of the rate."""
    v = slow_window([(0, 0), (5, 5), (10, 10), (25, 15), (40, 20), (45, 22), (50, 24)], 10, 50)
    assert v.status is Status.OK, v.summary
    slow = slow_window([(0, 0), (5, 5), (10, 10), (25, 15), (40, 20), (47, 22), (54, 24)], 14, 54)
    assert slow.status is Status.WARN and "against the run's median 2 s/step" in slow.summary


def test_an_odd_baseline_takes_its_middle():
    """Baseline paces 1, 3, 3 s/step: median 3; the window at 4 s/step is 75%."""
    v = slow_window([(0, 0), (5, 5), (20, 10), (35, 15), (43, 17), (51, 19)], 16, 51)
    assert v.status is Status.OK, v.summary


def test_a_baseline_of_two_paces_is_enough():
    v = slow_window([(0, 0), (300, 300), (600, 600), (750, 675), (900, 750)], 300, 900)
    assert v.status is Status.WARN and "(3 progress lines)" in ev(v)["slowdown"]
    assert ev(v)["slowdown"] == ("2 s/step over the last 5 min (3 progress lines) against the run's median 1 s/step "
                                 "before it: 50% of the rate")


def test_three_lines_in_the_window_but_one_pace_are_not_judged():
    v = slow_window([(0, 0), (300, 300), (600, 600), (700, 600), (900, 700)], 300, 900)
    assert v.status is Status.OK, v.summary


def test_a_slowdown_from_printed_rates():
    p = [pt(T3 + 10 * i, None, None, step_s=0.1) for i in range(89)]
    p += [pt(T3 + 900 + 10 * i, None, None, step_s=0.2) for i in range(1, 31)]
    v = verdict(run(p, read_at=T3 + 1200))
    assert v.status is Status.WARN and v.summary.startswith(
        "slowdown: 5 steps/s over the last 5 min against the run's median 10 steps/s (50% of its rate")


def test_ok_gives_the_recent_pace_beside_the_median():
    base = steady(T3, 1200, per_line=10)
    fast = [pt(T3 + 1200 + 10 * i, 1200 + 20 * i) for i in range(1, 31)]
    v = verdict(run(base + fast, read_at=T3 + 1500))
    assert v.summary.startswith("progressing: step 1800/100000 at 2 steps/s (median 1 s/step)")


def test_an_error_at_the_last_progress_time_ends_the_log():
    err = {"kind": "error", "t": T3 + 100, "step": None, "error": "cuda_oom", "text": "OOM"}
    v = verdict(run(steady(T3, 100), alive=None, error=err, read_at="x"))
    assert v.status is Status.FAIL


def test_one_kernel_death_says_no_more():
    v = verdict(run(steady(T3, 700), alive=False), kernel_log=klog({"kind": "oom_kill", "pid": 4101, "t": T3 + 720}))
    assert ev(v)["kernel log"] == "OOM kill of pid 4101 at 03:12 UTC"


def test_a_long_kernel_process_name_is_cut():
    v = verdict(run(steady(T3, 100), alive=False), kernel_log=klog({"kind": "oom_kill", "pid": 4101, "t": T3 + 200,
                                                                   "name": "n" * 40}))
    assert f"pid 4101 ({'n' * 31}…)" in v.summary


# --- causes found by mutation testing -----------------------------------------------------------------

def test_two_gpus_are_named_each():
    r, now = slowed(50)
    smp = samples(T3, 1500)
    for s in smp:
        s["gpus"] = [dict(s["gpus"][0], index=0), dict(s["gpus"][0], index=1, sm_mhz=1500 if s["t"] >= now - 300 else 2400)]
    v = verdict(r, telemetry=tele(smp))
    assert "while GPU 1 clocks were held by a setting: SM clock under load 2400 → 1500 MHz (-38%)" in v.summary
    assert "GPU 0" not in v.summary


def test_a_counter_unread_in_one_sample_keeps_counting_after_it():
    r, now = slowed(50)
    start = now - 300

    def g(t):
        row = gpu(sw_thermal=int(max(0.0, t - start) * 0.1e9))
        if t == start + 100:
            row["sw_thermal_ns"] = None
        return row

    v = verdict(r, telemetry=tele(samples(T3, 1500, g)))
    assert "SW thermal slowdown +30.0 s (10% of the time)" in v.summary


def test_a_counter_held_the_whole_time_counts_all_of_it():
    r, now = slowed(50)
    v = verdict(r, telemetry=tele(samples(T3, 1500, lambda t: gpu(hw_thermal=int(max(0.0, t - (now - 300)) * 1e9)))))
    assert "HW thermal slowdown +300.0 s (100% of the time)" in v.summary


def test_the_thermal_policy_counter_of_old_recordings():
    r, now = slowed(50)

    def g(t):
        row = gpu()
        del row["sw_thermal_ns"]
        row["thermal_viol_ns"] = int(max(0.0, t - (now - 300)) * 0.1e9)
        return row

    v = verdict(r, telemetry=tele(samples(T3, 1500, g)))
    assert "thermal policy counter +30.0 s (10% of the time)" in v.summary


@pytest.mark.parametrize("util,sm,named", [(100, 1500, True), (101, 1500, False), (97, 4000, True), (97, 4001, False)])
def test_the_clock_is_read_within_what_a_gpu_reports(util, sm, named):
    r, now = slowed(50)
    if sm == 4000:
        fn = lambda t: gpu(sm=4000 if t < now - 300 else 3000, util=util)  # noqa: E731
    elif sm == 4001:
        fn = lambda t: gpu(sm=4001 if t < now - 300 else 3000, util=util)  # noqa: E731
    else:
        fn = lambda t: gpu(sm=2400 if t < now - 300 else sm, util=util)  # noqa: E731
    v = verdict(r, telemetry=tele(samples(T3, 1500, fn)))
    assert ("SM clock under load" in v.summary) is named, v.summary


def test_mem_available_zero_is_a_figure():
    r, now = slowed(50)
    smp = samples(T3, 1500, mem=lambda t: {"MemAvailable": 0 if t == now - 100 else 100 * GIB})
    assert "MemAvailable down to 0.0 GiB at 03:23 UTC" in verdict(r, telemetry=tele(smp)).summary
    series = {"series": [[now - 100, 0], [now - 50, 9 * GIB, None]], "MemAvailable": 50 * GIB}
    v = verdict(r, meminfo={**series})
    assert "MemAvailable down to 0.0 GiB at 03:23 UTC" in v.summary
    assert "MemAvailable down to 0.0 GiB" in verdict(r, meminfo={"MemAvailable": 0}).summary


def test_a_live_meminfo_without_memavailable_is_no_figure():
    r, now = slowed(50)
    v = verdict(r, meminfo={"MemTotal": 100 * GIB})
    assert "memory: no figures in that stretch" in v.summary and "(meminfo:" not in v.summary


@pytest.mark.parametrize("pct", [0.0, 0.5])
def test_psi_read_counts_as_memory_looked_at(pct):
    r, now = slowed(50)
    v = verdict(r, meminfo={"psi": {"some": {"avg10": pct}}})
    assert "no cause seen in the memory (not seen:" in v.summary


def test_a_partial_meminfo_is_not_a_failed_one():
    from sparktui.core.readings import Reading, Readings

    r, now = slowed(50)
    rd = Readings()
    rd.add(Reading("run", r, source="run"))
    rd.add(Reading("meminfo", {"MemTotal": 100 * GIB}, error="no MemAvailable in /proc/meminfo", source="/proc/meminfo"))
    v = g14.judge(rd, Config())
    assert "memory: no figures in that stretch" in v.summary and "(meminfo:" not in v.summary


def test_review_never_takes_psi_whatever_the_meminfo_says():
    r, now = slowed(50)
    v = verdict(r, telemetry=tele(samples(T3, 1500), review=True), meminfo={"psi": {"full": {"avg10": 40.0}}})
    assert "PSI" not in v.summary


def test_processes_seen_twice_are_named_once_and_the_runs_own_never():
    r, now = slowed(50)
    a = procs(proc(5120, 50.0), proc(4101, 60.0, name="python3", kind="training"), t=now - 100)
    b = procs(proc(5120, 150.0), proc(5200, 20.0, name="worker", kind="gpu-process", ppid=4100, group=5200), t=now)
    hist = [a, {"rows": None, "t": now - 50}, b]
    v = verdict(r, processes=dict(b, history=hist, review=True))
    assert v.summary.count("pid 5120") == 1 and "pid 4101" not in v.summary and "pid 5200" not in v.summary


def test_a_process_without_kind_or_name():
    r, now = slowed(50)
    row = {"pid": 5300, "age_s": 10.0, "command": "/opt/bin/serve --port 8000"}
    row2 = {"pid": 5301, "age_s": 10.0}
    v = verdict(r, processes=procs(row, row2, t=now))
    assert "/opt/bin/serve --port 8000 (pid 5300, process) started" in v.summary
    assert "? (pid 5301, process) started" in v.summary


@pytest.mark.parametrize("row", [{"name": "sparktui"}, {"name": "python3", "command": "python3 -m sparktui record"}])
def test_sparktui_is_never_a_cause(row):
    r, now = slowed(50)
    v = verdict(r, processes=procs({"pid": 5400, "age_s": 10.0, "kind": "other", **row}, t=now))
    assert "pid 5400" not in v.summary


def test_the_skip_and_unknown_paths_carry_the_fix_and_their_evidence():
    from sparktui.core.readings import Reading, Readings

    rd = Readings()
    rd.add(Reading("run", {"found": False, "why": "w" * 400}, source=""))
    v = g14.judge(rd, Config())
    assert v.fix == g14.FIX and v.evidence[0].source == "run" and v.evidence[0].value == "w" * 299 + "…"
    assert v.summary == "no training run found: " + "w" * 299 + "…"
    rd.add(Reading("run", {"found": False}, source=""))
    assert g14.judge(rd, Config()).evidence[0].value == "none found"
    rd.add(Reading("run", {"found": 1}, source=""))
    odd = g14.judge(rd, Config())
    assert odd.fix == g14.FIX and (odd.evidence[0].what, odd.evidence[0].source) == ("training run", "run")
    rd.add(Reading("run", {"found": True, "log": {"kind": "fd", "path": "/x.log", "error": "denied"}}, source=""))
    bad = g14.judge(rd, Config())
    assert [(e.what, e.source, e.value) for e in bad.evidence] == [("run log", "/x.log", "unavailable: denied")]
    assert bad.fix == g14.FIX


def test_a_long_log_path_is_cut():
    v = verdict(run(steady(T3, 100), log={"kind": "named", "path": "/" + "p" * 300}))
    assert v.evidence[0].source == "/" + "p" * 198 + "…"


def test_ok_without_a_total_has_no_eta():
    v = verdict(run(steady(T3, 100, total=None), read_at=T3 + 100))
    assert v.summary == "progressing: step 100 at 1 s/step (median 1 s/step), last progress 0 s ago"


def test_an_oom_kill_without_a_pid_as_a_cause():
    r, now = slowed(50)
    v = verdict(r, kernel_log=klog({"kind": "oom_kill", "t": now - 5}))
    assert "while OOM kill of a process at 03:24 UTC" in v.summary


def test_readings_failed_without_a_reason_and_telemetry_without_samples():
    from sparktui.core.readings import Reading, Readings

    r, now = slowed(50)
    rd = Readings()
    rd.add(Reading("run", r, source="run"))
    for name in ("processes", "kernel_log"):
        rd.add(Reading(name, None, source=name))
    rd.add(Reading("telemetry", {"samples": []}, source="live"))
    v = g14.judge(rd, Config())
    assert ("(not seen: telemetry: no samples; memory: no figures in that stretch (meminfo: probe 'meminfo' was not run); "
            "processes: not read; kernel log: not read)") in v.summary
    rd.add(Reading("telemetry", None, source="live"))
    assert "(not seen: telemetry: not read;" in g14.judge(rd, Config()).summary


# --- second round: what the rerun left --------------------------------------------------------------

def test_alive_not_a_bool_with_an_error_before_the_last_progress_is_not_death():
    err = {"kind": "error", "t": T3 + 50, "step": 50, "error": "traceback", "text": "ValueError: x"}
    v = verdict(run(steady(T3, 100), alive="yes", error=err))
    assert v.status is Status.OK


def test_gpus_by_their_index_not_their_place():
    r, now = slowed(50)
    smp = samples(T3, 1500)
    for s in smp:
        g = s["gpus"][0]
        s["gpus"] = [dict(g, index=1, sm_mhz=1500 if s["t"] >= now - 300 else 2400), dict(g, index=0)]
    s = verdict(r, telemetry=tele(smp)).summary
    assert "while GPU 1 clocks were held by a setting: SM clock under load 2400 → 1500 MHz (-38%)" in s


def test_a_run_pid_started_late_under_another_group_is_still_the_runs():
    r, now = slowed(50)
    v = verdict(r, processes=procs(proc(4101, 60.0, name="python3", kind="training", group=9999), t=now))
    assert "pid 4101" not in v.summary


def test_a_kernel_death_after_other_events_is_found():
    v = verdict(run(steady(T3, 100), alive=False),
                kernel_log=klog({"kind": "aer", "t": T3 + 10}, {"kind": "oom_kill", "pid": 1, "t": T3 + 20},
                                {"kind": "oom_kill", "pid": 4100, "t": T3 + 200}))
    assert v.status is Status.FAIL and "pid 4100" in v.summary


def test_a_live_stall_takes_psi_and_says_its_causes_in_the_evidence():
    p = steady(T3, 1000)
    v = verdict(run(p, read_at=T3 + 1700), meminfo={"psi": {"some": {"avg10": 30.0}}})
    assert "while memory pressure: PSI some avg10 30.0%" in v.summary
    assert ev(v)["causes in the stall"].startswith("while memory pressure: PSI some avg10 30.0%")


def test_at_its_total_without_an_end_there_is_no_eta():
    v = verdict(run(steady(T3, 100, total=100), read_at=T3 + 100))
    assert v.summary == "progressing: step 100/100 at 1 s/step (median 1 s/step), last progress 0 s ago"


def test_the_unknown_summaries_word_for_word():
    assert g14.judge(readings_of_run(None), Config()).summary == (
        "cannot tell: the training run reading unavailable (run unavailable (test))")
    assert verdict({"read_at": T3}).summary == "cannot tell: the training run: the run reading has no found field"
    assert verdict(run([], lines_read=None)).summary.startswith("no progress line recognised yet (? lines read)")
    v = verdict(run(steady(T3, 10), log=None, why=None))
    assert v.summary.startswith("cannot tell: the run's log cannot be read (no log found); name it with")


def readings_of_run(data):
    from tests.conftest import readings_of

    return readings_of(run=data)


def test_lines_out_of_time_order_are_put_in_order():
    p = [pt(T3, 0), pt(T3 + 20, 20), pt(T3 + 10, 10), pt(T3 + 30, 30)]
    v = verdict(run(p, read_at=T3 + 30))
    assert ev(v)["median gap between progress lines"] == "10 s; late after 10 x"


def test_two_swap_figures_are_memory_looked_at():
    r, now = slowed(50)
    smp = samples(T3, 1500, mem=lambda t: {"SwapTotal": 16 * GIB, "SwapFree": 16 * GIB} if t in (now - 100, now - 50) else {})
    assert "no cause seen in the telemetry or memory" in verdict(r, telemetry=tele(smp)).summary


def test_lines_without_step_numbers_say_an_unknown_step():
    p = [pt(None, None, None, loss=1.0) for _ in range(4)]
    fin = {"kind": "finished", "t": None}
    assert verdict(run(p, alive=False, finished=fin)).summary == "finished at an unknown step"
    v = verdict(run(p, alive=False, last_line_t=None))
    assert v.summary == "the log stops at an unknown step with no error and no end: the run's processes are gone"
