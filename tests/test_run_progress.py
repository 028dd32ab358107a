"""probes/run_progress.py: the G14 log parser (issue 25, item 2), on real public log excerpts and on
edge cases.

The corpus (tests/data/run_logs/): every ``manifest*.toml`` there names excerpt files copied from
public threads (``source``) and what the parser must find in each: the last step and its total, the
last finite loss, the error the run ended with, whether it finished, whether a non-finite value was
printed, and G14's status on it as the saved log of a run whose processes are gone. Every excerpt of
every manifest is checked; a file without an entry, or an entry without a file, fails.

Edge cases use lines copied from those excerpts, changed only as the case says (a rank prefix put
before, ANSI colours around, rejoined with "\\r" as tqdm writes them to a terminal: no public thread
keeps the carriage returns, a paste turns them into line breaks).
"""

from __future__ import annotations

import json
import math
import random
import re
import time
import tomllib
from pathlib import Path

import pytest

from sparktui.core import shapes
from sparktui.probes import run_progress as rp
from sparktui.probes.run_progress import MAX_PARSE, ProgressParser, RunLog, parse_text
from tests.test_linear_patterns import PATTERNS

DATA = Path(__file__).parent / "data" / "run_logs"
MANIFESTS = sorted(DATA.glob("manifest*.toml"))


def _entries() -> list[tuple[str, str, dict]]:
    out = []
    for manifest in MANIFESTS:
        with manifest.open("rb") as f:
            for name, entry in tomllib.load(f).items():
                out.append((manifest.name, name, entry))
    return out


ENTRIES = _entries()


def _read(name: str) -> str:
    return (DATA / f"{name}.log").read_text(encoding="utf-8")


POINT_KEYS = tuple(shapes.RunPoint.__annotations__)  # the contract's RunPoint: every key, None where not printed
EVENT_KEYS = set(shapes.RunEvent.__annotations__)


def _summary(data: dict) -> dict:
    """What a manifest entry states, from a RunLog's data()."""
    stepped = [p for p in data["progress"] if p.get("step") is not None]
    losses = [p["loss"] for p in data["progress"] if p.get("loss") is not None]
    error = data["error"]
    nonfinite = any(e["kind"] == "nonfinite" for e in data["events"])
    finished = data["finished"] is not None
    status = "fail" if (error is not None or nonfinite) else ("ok" if finished else "warn")
    return {"last_step": stepped[-1]["step"] if stepped else None,
            "total": stepped[-1].get("total") if stepped else None,
            "loss": losses[-1] if losses else None,
            "error": error["error"] if error else "",
            "finished": finished, "nonfinite": nonfinite, "status": status}


# --------------------------------------------------------------------------- the corpus


def test_the_corpus_is_whole():
    """Every manifest entry has its file and its source; every excerpt file has an entry, once."""
    assert MANIFESTS and any(m.name == "manifest.toml" for m in MANIFESTS)
    names = [name for _, name, _ in ENTRIES]
    assert len(names) == len(set(names)), "an excerpt is named in two manifests"
    files = {p.stem for p in DATA.glob("*.log")}
    assert set(names) == files, {"no entry": sorted(files - set(names)), "no file": sorted(set(names) - files)}
    for manifest, name, entry in ENTRIES:
        assert str(entry.get("source", "")).startswith("https://"), (manifest, name)
        assert entry.get("retrieved") and entry.get("format"), (manifest, name)
        assert entry.get("status") in ("ok", "warn", "fail"), (manifest, name)
    mine = [e for m, _, e in ENTRIES if m == "manifest.toml"]
    assert len(mine) >= 12


@pytest.mark.parametrize("manifest, name, entry", ENTRIES, ids=[f"{m}:{n}" for m, n, _ in ENTRIES])
def test_excerpt(manifest, name, entry):
    data = parse_text(_read(name)).data()
    got = _summary(data)
    want = {"last_step": entry.get("last_step"), "total": entry.get("total"), "loss": entry.get("loss"),
            "error": entry.get("error", ""), "finished": entry.get("finished", False),
            "nonfinite": entry.get("nonfinite", False), "status": entry["status"]}
    # the same loss may be printed twice at two precisions (DeepSpeed's 12.8004, Megatron's 1.280042E+01)
    if want["loss"] is not None and got["loss"] is not None and math.isclose(got["loss"], want["loss"], rel_tol=1e-4,
                                                                             abs_tol=1e-12):
        got["loss"] = want["loss"]
    assert got == want, f"{name} ({entry.get('source')}): {data['formats']}"
    json.dumps(data, allow_nan=False)  # finite numbers only: the reading goes to JSON
    assert {e["error"] for e in data["events"] if e["kind"] == "error"} <= set(rp.ERROR_KINDS)
    assert all(set(p) == set(POINT_KEYS) for p in data["progress"])
    assert all(set(e) <= EVENT_KEYS for e in data["events"])
    if got["last_step"] is not None or got["loss"] is not None:
        assert data["formats"], name


def test_the_corpus_covers_the_formats():
    """The issue's formats each have real excerpts the parser reads as that format."""
    seen: dict[str, int] = {}
    for _, name, _ in ENTRIES:
        for fmt in parse_text(_read(name)).data()["formats"]:
            seen[fmt] = seen.get(fmt, 0) + 1
    for fmt in ("tqdm", "hf", "lightning", "keras", "megatron", "mmengine", "nanogpt", "llmc", "torchtitan",
                "deepspeed", "plain"):
        assert seen.get(fmt, 0) >= 1, (fmt, seen)
    errors = {parse_text(_read(n)).data()["error"]["error"] for _, n, e in ENTRIES if e.get("error")}
    assert {"cuda_oom", "nccl_timeout"} <= errors


# --------------------------------------------------------------------------- lines from the corpus

NANOGPT = "iter 1631: loss 4.0863, time 561.94ms"  # karpathy/nanoGPT#110
HF_DICT = "{'loss': 1.7414, 'grad_norm': 0.7967870831489563, 'learning_rate': 1.8611664616633675e-05, 'epoch': 1.74}"
TRL_BARS = ["0%|          | 0/160 [00:00<?, ?it/s]", " 1%|          | 1/160 [00:08<21:09,  7.98s/it]",
            "1%|\u258f         | 2/160 [04:33<7:00:02, 159.51s/it]"]  # huggingface/trl#940
LIGHTNING = ("Epoch 9: 100%|\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588| 195/195 [01:58<00:00,  1.64it/s, "
             "train/loss_step=3.860, train/entropy=0.591, train/loss_epoch=3.950]")  # prism-oncology/novae#27
MEGATRON = _read("megatron-llm-iterations").splitlines()[0]
WATCHDOG = _read("nccl-llamafactory-pid-rank-watchdog").splitlines()[0]
OOM = _read("traceback-generateu-cuda-oom-tail").splitlines()[-1]


def _progress(events: list[dict]) -> list[dict]:
    return [e for e in events if e["kind"] == "progress"]


def test_tqdm_updates_on_one_line_the_last_counts():
    events = ProgressParser().feed("\r".join(TRL_BARS) + "\n")
    (p,) = _progress(events)
    assert (p["step"], p["total"], p["rate"], p["rate_unit"], p["step_s"]) == (2, 160, 159.51, "s/it", 159.51)
    assert p["elapsed_s"] == 4 * 60 + 33 and p["format"] == "tqdm"


def test_tqdm_a_trailing_partial_update_is_skipped_for_the_last_that_parses():
    (p,) = _progress(ProgressParser().feed("\r".join(TRL_BARS) + "\r  1%|\u258f   | 2/1"))
    assert p["step"] == 2 and p["total"] == 160


def test_tqdm_rates_convert_to_seconds_per_step_only_where_they_can():
    p = _progress(ProgressParser().feed(LIGHTNING))[0]
    assert p["rate_unit"] == "it/s" and p["step_s"] == pytest.approx(1 / 1.64)
    assert p["loss"] == 3.86 and p["epoch"] == 9 and p["format"] == "lightning"
    samples = _progress(ProgressParser().feed(" 50%|#####     | 50/100 [00:10<00:10, 45.6samples/s, loss=2.3]"))[0]
    assert samples["rate"] == 45.6 and samples["rate_unit"] == "samples/s" and samples["step_s"] is None
    llmc = _progress(ProgressParser().feed(_read("b-llmc-blackwell-steps").splitlines()[-1]))
    assert llmc and llmc[0]["rate_unit"] == "ms/step" and llmc[0]["step_s"] == pytest.approx(llmc[0]["rate"] / 1000)
    titan = [p for p in parse_text(_read("b-torchtitan-grad-norm")).data()["progress"]]
    assert titan and all(p["rate_unit"] == "tokens/s" and p["step_s"] is None for p in titan if p["rate"])
    nano = _progress(ProgressParser().feed(NANOGPT))[0]
    assert (nano["step"], nano["loss"], nano["rate"], nano["step_s"]) == (1631, 4.0863, 561.94, pytest.approx(0.56194))
    meg = _progress(ProgressParser().feed(MEGATRON))[0]
    assert (meg["step"], meg["total"], meg["loss"], meg["grad_norm"]) == (201, 250000, 2.373574, 0.811)
    assert meg["step_s"] == pytest.approx(139.1134)


@pytest.mark.parametrize("prefix", ["[rank0]:", "[rank0]: ", "[default0]:", "0: ", "[1,0]<stdout>:", "rank 3: ",
                                    "[80746] [rank0]:", "node-12: "])
def test_rank_prefixes_are_cut(prefix):
    (p,) = _progress(ProgressParser().feed(prefix + NANOGPT))
    assert (p["step"], p["loss"]) == (1631, 4.0863)
    events = ProgressParser().feed(prefix + OOM)
    assert [e["error"] for e in events if e["kind"] == "error"] == ["cuda_oom"]


def test_a_bare_number_before_a_colon_is_srun_s_label_or_the_step():
    assert _progress(ProgressParser().feed("3: " + NANOGPT))[0]["step"] == 1631  # srun -l: rank 3
    (p,) = _progress(ProgressParser().feed("1500: loss 2.31"))
    assert (p["step"], p["loss"]) == (1500, 2.31)


def test_ansi_colours_and_control_characters_are_stripped():
    line = "\x1b[36mstep:  1  \x1b[32mloss: 12.2\x1b[0m  \x1b[33mmemory: 30.1GiB(38.1%)  \x1b[34mtps: 1,234\x1b[0m"
    (p,) = _progress(ProgressParser().feed(line))
    assert (p["step"], p["loss"], p["rate"], p["format"]) == (1, 12.2, 1234.0, "torchtitan")
    (k,) = _progress(ProgressParser().feed("\b" * 40 + _read("keras-yolo3-eta-lines").splitlines()[3]))
    assert (k["step"], k["total"], k["loss"]) == (4, 110, 6795.0779)
    assert ProgressParser().feed("\x1b]0;title\x07\x1b[2K\x1b[1A") == []


def test_a_long_line_is_cut_and_counted():
    log = RunLog()
    log.line(NANOGPT + " " + "x" * (2 * MAX_PARSE))
    log.line(NANOGPT)
    d = log.data()
    assert d["cut_lines"] == 1 and d["lines_read"] == 2 and d["points_seen"] == 2
    log.line("y" * MAX_PARSE + NANOGPT)  # past the cut: not read
    assert log.data()["points_seen"] == 2 and log.data()["cut_lines"] == 2


def test_numbers_are_finite_only():
    d = parse_text(_read("nanogpt-loss-nan-fp16")).data()
    nan_points = [p for p in d["progress"] if p["step"] and p["step"] >= 3010]
    assert nan_points and all(p["loss"] is None for p in nan_points)
    nf = [e for e in d["events"] if e["kind"] == "nonfinite"]
    assert nf[0] == {**nf[0], "field": "loss", "value": "nan", "step": 3010}
    json.dumps(d, allow_nan=False)
    events = ProgressParser().feed("step 5/100 loss=inf grad_norm=-inf")
    (p,) = _progress(events)
    assert p["loss"] is None and p["grad_norm"] is None
    assert sorted((e["field"], e["value"]) for e in events if e["kind"] == "nonfinite") == [("grad_norm", "-inf"),
                                                                                           ("loss", "inf")]
    grad = ProgressParser().feed("{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 0.04999871292419044, 'epoch': 0.01}")
    assert [(e["field"], e["value"]) for e in grad if e["kind"] == "nonfinite"] == [("grad_norm", "nan")]
    assert _progress(grad)[0]["loss"] == 0.0


def test_a_word_that_starts_like_inf_is_no_number():
    assert _progress(ProgressParser().feed("step 3 loss: info")) == []


def test_hf_dict_line_takes_the_step_of_the_bar_before_it():
    parser = ProgressParser()
    parser.feed(TRL_BARS[1])
    (p,) = _progress(parser.feed("{'loss': 2.0412, 'learning_rate': 4e-05, 'epoch': 0.01}"))
    assert (p["step"], p["total"], p["loss"], p["epoch"], p["format"]) == (1, 160, 2.0412, 0.01, "hf")
    (alone,) = _progress(ProgressParser().feed(HF_DICT))
    assert alone["step"] is None and alone["grad_norm"] == pytest.approx(0.7967870831489563)


def test_hf_dict_after_the_bar_on_the_same_physical_line():
    """tqdm.write in a file: the bar's updates, the clearing "\r   \r", then the dict, one physical line."""
    (p,) = _progress(ProgressParser().feed("\r".join(TRL_BARS) + "\r" + " " * 40 + "\r" +
                                           "{'loss': 0.0, 'learning_rate': 8e-05, 'epoch': 0.03}"))
    assert (p["step"], p["total"], p["loss"], p["format"]) == (2, 160, 0.0, "hf")
    assert (p["rate"], p["rate_unit"], p["elapsed_s"]) == (159.51, "s/it", 273.0)  # the bar's, same step


def test_an_error_in_an_early_segment_of_a_long_carriage_return_line_is_found():
    bars = [TRL_BARS[1]] * 300
    bars[40] = OOM
    events = ProgressParser().feed("\r".join(bars))
    assert [e["error"] for e in events if e["kind"] == "error"] == ["cuda_oom"]
    assert _progress(events)[0]["step"] == 1


def test_nemo_and_rich_bars():
    nemo = ("Training epoch 0, iteration 10/99 | lr: 1.499e-06 | global_batch_size: 8 | global_step: 10 | "
            "reduced_train_loss: 9.856 | train_step_timing in s: 3.441 | consumed_samples: 88")  # NeMo 2's print
    (p,) = _progress(ProgressParser().feed(nemo))
    assert (p["step"], p["total"], p["loss"], p["step_s"], p["format"]) == (10, 99, 9.856, 3.441, "nemo")
    rich = _read("lightning-anomalib-rich-bar-fit-stopped").strip()
    (r,) = _progress(ProgressParser().feed(rich))
    assert (r["step"], r["total"], r["epoch"], r["rate"], r["elapsed_s"]) == (2, 2, 0.0, 6.37, 15.0)


def test_a_cpp_terminate_report_is_one_error():
    lines = ["terminate called after throwing an instance of 'c10::Error'", "  what():  CUDA error: an illegal memory access",
             "Exception raised from c10_cuda_check_implementation at /pytorch/c10/cuda/CUDAException.cpp:43",
             "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f in /lib/libc10.so)"]
    d = parse_text("\n".join(lines)).data()
    assert [(e["error"], e["text"]) for e in d["events"]] == [("abort", "CUDA error: an illegal memory access")]
    nccl = lines[:3] + ["frame #1: c10d::ProcessGroupNCCL::WorkNCCL::finishedGPUExecutionInternal() const + 0x11a"]
    assert parse_text("\n".join(nccl)).data()["error"]["error"] == "nccl_error"


def test_the_end_said_in_words_but_not_an_epochs_end():
    assert parse_text("Training completed. Do not forget to share your model on huggingface.co/models =)\n").data()["finished"]
    assert parse_text("Epoch 3 training completed in 12.3 s\n").data()["finished"] is None


def test_hf_summary_dict_means_finished_and_is_no_step():
    """The Trainer's end summary: finished; its train_loss (the run's mean) is the last loss printed, at no step."""
    parser = ProgressParser()
    parser.feed(TRL_BARS[2])
    events = parser.feed("{'train_runtime': 2436.3, 'train_samples_per_second': 3.2, 'train_steps_per_second': 0.2, "
                         "'train_loss': 1.52, 'epoch': 3.0}")
    assert [e["kind"] for e in events] == ["finished", "progress"]
    assert events[0]["step"] == 2 and (events[1]["step"], events[1]["loss"], events[1]["epoch"]) == (None, 1.52, 3.0)


def test_an_evaluation_bar_inside_training_is_not_the_runs_progress():
    log = RunLog()
    for line in (" 50%|#####     | 500/1000 [10:00<10:00,  1.20s/it]", "  0%|          | 0/50 [00:00<?, ?it/s]",
                 " 40%|####      | 20/50 [00:04<00:06,  5.00it/s]", " 50%|#####     | 501/1000 [10:09<10:00,  1.20s/it]"):
        log.line(line)
    assert [p["step"] for p in log.data()["progress"]] == [500, 501]


def test_bars_that_are_not_training_are_skipped():
    for line in ("Loading checkpoint shards: 100%|\u2588\u2588\u2588\u2588| 4/4 [00:05<00:00,  1.31s/it]",
                 "Map: 100%|\u2588\u2588\u2588\u2588\u2588| 1000/1000 [00:00<00:00, 9000.00 examples/s]",
                 "100%|\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588| 97.8M/97.8M [00:09<00:00, 10.3MB/s]",
                 "Validation DataLoader 0: 100%|\u2588\u2588\u2588\u2588| 10/10 [00:01<00:00,  9.10it/s]"):
        assert _progress(ProgressParser().feed(line)) == [], line


def test_tqdm_at_its_total_with_the_log_ended_is_finished():
    log = parse_text(" 99%|#########9| 99/100 [01:39<00:01,  1.00it/s]\r100%|##########| 100/100 [01:40<00:00,  1.00it/s]\n")
    assert log.data()["finished"] is not None
    assert parse_text(LIGHTNING).data()["finished"] is None  # Lightning's bar is an epoch's
    assert parse_text("100%|##########| 100/100 [01:40<00:00,  1.00it/s]\n" + OOM).data()["finished"] is None


def test_a_traceback_gives_one_event_its_last_line():
    text = _read("a-traceback-cuda-oom") if (DATA / "a-traceback-cuda-oom.log").exists() else "\n".join(
        ["Traceback (most recent call last):", '  File "train.py", line 1, in <module>', OOM])
    errors = [e for e in parse_text(text).data()["events"] if e["kind"] == "error"]
    assert [e["error"] for e in errors] == ["cuda_oom"]
    log = parse_text("Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n    main()\n"
                     "    ^^^^^^\nValueError: bad shape (3, 4)\n")
    assert log.data()["error"]["error"] == "traceback" and log.data()["error"]["text"] == "ValueError: bad shape (3, 4)"


def test_a_traceback_whose_last_line_never_came_is_not_awaited_forever():
    lines = ["Traceback (most recent call last):", '  File "train.py", line 3, in <module>']
    lines += [f"iter {i}: loss 2.5, time 500.00ms" for i in range(rp.TB_GAP_LINES + 5)]
    lines += ["ValueError: printed by something else, much later"]
    d = parse_text("\n".join(lines)).data()
    assert d["error"] is None and d["points_seen"] == rp.TB_GAP_LINES + 5
    near = parse_text("\n".join(lines[:2] + lines[2:5] + lines[-1:])).data()  # other ranks' lines between
    assert near["error"]["error"] == "traceback"


def test_nonfinite_in_words_in_an_early_carriage_return_segment():
    bars = [TRL_BARS[1]] * 300
    bars[10] = "ERROR:tensorflow:Model diverged with loss = NaN."
    events = ProgressParser().feed("\r".join(bars))
    assert [(e["kind"], e.get("field")) for e in events] == [("progress", None), ("nonfinite", "loss")]


def test_the_root_cause_is_kept_over_the_launchers_summary():
    text = "\n".join(["[rank1]: " + OOM, "E1206 18:44:20.000 1234 torch/distributed/elastic/multiprocessing/api.py:869] "
                      "failed (exitcode: 1) local_rank: 1 (pid: 2) of binary: /usr/bin/python",
                      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
                      "  exitcode  : 1 (pid: 2)"])
    assert parse_text(text).data()["error"]["error"] == "cuda_oom"
    assert parse_text("  exitcode  : -9 (pid: 2)\n").data()["error"]["error"] == "killed"
    assert parse_text("  exitcode  : -11 (pid: 2)\n").data()["error"]["error"] == "segfault"
    assert parse_text(WATCHDOG).data()["error"]["error"] == "nccl_timeout"


def test_an_error_carries_the_last_step():
    log = RunLog()
    log.line(NANOGPT)
    log.line(OOM)
    assert log.data()["error"]["step"] == 1631 and log.data()["error"]["text"].startswith("torch.cuda.OutOfMemoryError")


def test_time_given_or_printed():
    (p,) = _progress(ProgressParser().feed(NANOGPT, t=1234.5))
    assert p["t"] == 1234.5
    line = _read("nanogpt-loss-nan-fp16").splitlines()[0]
    (q,) = _progress(ProgressParser().feed(line))
    assert q["t"] == time.mktime((2023, 3, 22, 9, 30, 39, 0, 0, -1))
    log = RunLog()
    log.line(NANOGPT, t=99.0)
    assert log.data()["last_line_t"] == 99.0


# --------------------------------------------------------------------------- RunLog is bounded


def test_runlog_keeps_the_newest_points_and_the_first():
    log = RunLog()
    n = RunLog.MAX_POINTS + 500
    for i in range(1, n + 1):
        log.line(f"iter {i}: loss 2.5, time 500.00ms")
    d = log.data()
    assert len(d["progress"]) == RunLog.MAX_POINTS and d["points_seen"] == n
    assert d["first"]["step"] == 1 and d["progress"][0]["step"] == 501 and d["progress"][-1]["step"] == n
    assert d["formats"] == {"nanogpt": n} and d["lines_read"] == n


def test_runlog_keeps_the_first_events_and_the_last():
    log = RunLog()
    n = RunLog.MAX_EVENTS + 50
    for i in range(n):
        log.line(f"step {i} loss=nan")
    d = log.data()
    assert len(d["events"]) == RunLog.MAX_EVENTS
    assert d["events"][0]["step"] == 0 and d["events"][-1]["step"] == n - 1
    assert log.events_seen == n


def test_runlog_add_ignores_what_is_no_event():
    log = RunLog()
    log.add({"kind": "whatever"})
    log.add({})
    log.add(None)  # type: ignore[arg-type]
    assert log.data()["events"] == [] and log.data()["points_seen"] == 0


# --------------------------------------------------------------------------- never raises, linear time


def test_never_raises_on_random_text_and_bytes():
    rnd = random.Random(25)
    alphabet = "\r\n\t\x1b[]{}()|%/:=,.'\" -_0123456789eEnaNinfINFlossstepiter\u2588\u2501\x00\x08\ud800"
    parser = ProgressParser()
    log = RunLog()
    for _ in range(3000):
        n = rnd.randrange(0, 300)
        if rnd.random() < 0.5:
            text = "".join(rnd.choice(alphabet) for _ in range(n))
        else:
            text = bytes(rnd.randrange(256) for _ in range(n)).decode("utf-8", "surrogateescape")
        assert isinstance(parser.feed(text), list)
        log.line(text)
    log.flush()
    json.dumps(log.data(), allow_nan=False)


try:
    from hypothesis import given, settings
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover
    given = None

if given is not None:
    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.text(max_size=200), max_size=20))
    def test_never_raises_hypothesis(lines):
        log = RunLog()
        for line in lines:
            log.line(line)
        log.flush()
        json.dumps(log.data(), allow_nan=False)


def test_not_a_string_is_no_line():
    assert ProgressParser().feed(None) == [] and ProgressParser().feed(b"iter 1: loss 2.0, time 5ms") == []  # type: ignore[arg-type]


def test_the_package_wide_linearity_check_covers_every_pattern_here():
    """tests/test_linear_patterns.py runs each module-level pattern of the package on adversarial
    input (anchored where the module only ever calls ``match``): this module's are all in that walk."""
    mine = {name for name, v in vars(rp).items() if isinstance(v, re.Pattern)}
    walked = {name.rsplit(".", 1)[1] for name, _, _ in PATTERNS if name.startswith("sparktui.probes.run_progress.")}
    assert mine and mine <= walked, mine - walked


def _feed_time(line: str, runs: int = 3) -> float:
    best = math.inf
    for _ in range(runs):
        parser = ProgressParser()
        t0 = time.perf_counter()
        parser.feed(line)
        best = min(best, time.perf_counter() - t0)
    return best


def _scan_time(line: str, runs: int = 3) -> float:
    best = math.inf
    for _ in range(runs):
        t0 = time.perf_counter()
        line.split("\r")
        line.count("\n")
        best = min(best, time.perf_counter() - t0)
    return best


@pytest.mark.parametrize("unit", ["\r", "a\r", "nan\r", "Error\r", "x", " 10%|#   | 10/100 [00:01<00:09, 9.00it/s, loss=nan]\r",
                                  "{'loss': ", "iter 1: loss ", "%|", "1/2 [", "\x1b[", "[rank0]:", "Traceback (most recent call last):\r"])
def test_a_whole_line_costs_linear_time(unit):
    """1 MB and 4 MB lines of one unit: time grows at most ~linearly, and stays within a small
    multiple of splitting the line on "\\r" (a plain scan)."""
    small = unit * (2**20 // len(unit))
    big = unit * (2**22 // len(unit))
    t_small, t_big = _feed_time(small), _feed_time(big)
    assert t_big <= max(8 * t_small, 0.005), (unit, t_small, t_big)
    assert t_big <= 10 * _scan_time(big) + 0.005, (unit, t_big, _scan_time(big))


def test_a_200_mb_line_fed_in_pieces_costs_linear_time():
    """The follower hands a huge line over in pieces, each a line to the parser: each piece costs the
    same however much came before (bounded state), so 200 MB costs 200 MB / piece x that."""
    piece = ("x" * 1000 + "\r") * 64  # 64 KB
    log = RunLog()

    def batch(n: int = 25) -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            log.line(piece)
        return (time.perf_counter() - t0) / n

    first = min(batch() for _ in range(4))  # the first 6.4 MB
    for _ in range(8):
        batch()  # 12.8 MB more
    last = min(batch() for _ in range(4))
    assert last <= 3 * first + 1e-4, (first, last)  # (absolute speed: benchmarks/run_log_follow.py, not a timed test)
    assert log.data()["lines_read"] == 400 and log.data()["points_seen"] == 0


def test_the_description_cache_is_bounded_and_answers_as_the_analysis_does():
    """A bar's description is analysed once (epoch, Lightning's bar, another loop's bar) and kept, at
    most DESC_CACHE_MAX of them, none longer than DESC_CACHE_LEN: a run printing a new description
    at every update costs no memory."""
    rp._DESC_CACHE.clear()
    for i in range(3 * rp.DESC_CACHE_MAX):
        desc = f"Epoch {i}" if i % 3 else f"Map (num_proc={i})"
        assert rp._desc_info(desc) == rp._desc_info(desc)
        assert len(rp._DESC_CACHE) <= rp.DESC_CACHE_MAX
    long_desc = "Epoch 1 " + "x" * rp.DESC_CACHE_LEN
    rp._desc_info(long_desc)
    assert long_desc not in rp._DESC_CACHE
    assert rp._desc_info("Epoch 3") == (True, 3.0, None, False)
    assert rp._desc_info("Map (num_proc=4)")[3] is True  # another loop's bar
    assert rp._desc_info("Evaluating epoch 2/5")[3] is False  # names an epoch: training's


def test_the_quick_word_checks_cover_every_word_they_stand_for():
    """The one search that spares a progress line the error/end/run-total checks looks for a part of
    each word those checks need; a bar's earlier updates skip the early-word search only when they hold
    none of EARLY_LETTERS, which every early word holds."""
    for word in rp._NOTABLE_WORDS:
        assert any(part in word for part in rp._NOTABLE_PARTS), word
    for word in rp.EARLY_WORDS:
        assert any(c in word for c in rp.EARLY_LETTERS), word
        assert rp._early_hits(f" 5%|#  | 1/20 [00:01<00:19, 1.00it/s]\r\r {word} here\r 10%|#") == [f" {word} here"]
    assert rp._early_hits(" 5%|#  | 1/20 [00:01<00:19, 1.00it/s, loss=2.3]\r 10%|#") == []


def test_points_carry_no_private_key():
    """RunLog.line keeps the parser's points as they come: none carries a key of the parser's own
    ("_text", "_nf_loss", "_epochs" ...) by then."""
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(DATA.glob("*.log"))]
    texts.append("".join(f"\r{i // 2:3d}%|###   | {i}/200 [00:{i % 60:02d}<01:00, 3.1it/s, loss={'nan' if i == 7 else 2.5}]"
                         + ("\n{'loss': inf, 'grad_norm': nan, 'epoch': 0.1}\n" if i % 10 == 9 else "") for i in range(40)))
    seen = 0
    for text in texts:
        parser = ProgressParser()
        for line in rp.lines(text):
            for ev in parser.feed(line):
                assert not any(k.startswith("_") for k in ev), ev
                seen += ev["kind"] == "progress"
    assert seen > 500
