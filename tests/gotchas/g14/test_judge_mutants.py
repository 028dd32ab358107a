"""G14's judge pinned where mutation testing would find it loosely held: the words of each kernel
incident, the evidence of every path (the log's source, the run's pids and liveness, the printed
rate, where the last progress time came from), the fix naming the run's pids, non-finite fields and
values as the parser writes them, and the small texts (pace, duration, cut). Readings are built as in
test_judge.py."""

from __future__ import annotations

import pytest

from sparktui.core.verdict import Status
from sparktui.gotchas import g14_run_progress as g14
from tests.gotchas.g14.test_judge import (GIB, T3, ev, everything, klog, pt, run, samples, slowed, steady, tele,
                                          verdict)


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
    assert "sudo py-spy dump --pid 4100\nsudo py-spy dump --pid 4101" in v.fix and "pgrep" not in v.fix
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
    assert v.summary == "loss was nan at an unknown step (at an unknown time)"


def test_finished_without_a_time():
    v = verdict(run(steady(T3, 100), finished={"kind": "finished", "t": None}))
    assert v.summary == "finished at step 100/100000 (at an unknown time)" and ev(v)["finished"] == "at at an unknown time"


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
