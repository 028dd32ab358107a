"""G10's launch-config scanner under hostile input, as a class (issue 15, item 5).

A TP degree written in any spelling a YAML 1.1, TOML, JSON, shell or Python reader accepts (`0x2`,
`+2`, `!!int 2`, `1_0`, `1e10`, an anchor and its alias, a value on the next line) is read as that
number, or the finding says its value was not understood: never a quiet ``ok``. Arbitrary text and
bytes, billion-laughs YAML, megabyte lines, odd files (FIFOs, devices, invalid UTF-8 names, symlink
loops, unreadable folders, files that change while read) end the scan without an exception, within
its deadline, in time linear in the input.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.gotchas import g10_tensor_parallel as g10
from sparktui.probes import tpscan
from tests.conftest import readings_of
from tests.gotchas.builders import best_of as _best_of, scan_as_nobody as _scan_as_nobody

MB = 1024 * 1024
SLACK_S = 1.0  # past a deadline, the work between two looks at the clock, on a loaded machine
NOT_OK = (Status.FAIL, Status.WARN)


def write_tree(base: Path, files: dict[str, str | bytes]) -> Path:
    """``files`` in a fresh folder under ``base`` (one per hypothesis example)."""
    root = Path(tempfile.mkdtemp(prefix="tp-", dir=base))
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape"))
    return root


def scan_dir(base: Path, files: dict[str, str | bytes], **kw) -> tuple[dict, Path]:
    """Write ``files`` and scan them; the data must be plain JSON."""
    root = write_tree(base, files)
    data = tpscan.scan([str(root)], kw.pop("max_bytes", 4 * MB), **kw)
    json.loads(json.dumps(data))
    return data, root


def judged(data: dict):
    return g10.judge(readings_of(tpscan=data), Config())


# --- every spelling of a number ----------------------------------------------------------------


def spellings(n: int, kind: str) -> list[str]:
    """``n`` as each reader would accept it (YAML 1.1 tags only in YAML)."""
    out = [str(n), f"+{n}", f"0x{n:x}", f"0X{n:X}", f"0o{n:o}", f"0b{n:b}", f"{n}.0", f"{n}e0",
           f"{n * 10}e-1", f"{n}.00E+00", f'"{n}"', f"'{n}'"]
    digits = str(n)
    if len(digits) > 1:
        out.append(digits[0] + "_" + digits[1:])
    if n % 10 == 0:
        out.append(f"{n // 10}e1")
    if kind == "yaml":
        out += [f"!!int {n}", f"!!int '{n}'", f"&deg {n}"]
    return out


def training_config(kind: str, tp: str, nodes: str) -> tuple[str, str]:
    """(file name, text): a multi-node training job with TP written ``tp`` and nodes ``nodes``."""
    if kind == "yaml":
        return "job.yaml", (f"trainer:\n  max_steps: 10\n  num_nodes: {nodes}\n"
                            f"model:\n  tensor_model_parallel_size: {tp}\n")
    if kind == "toml":
        return "job.toml", f"[training]\nlearning_rate = 1e-4\nnum_nodes = {nodes}\n\n[parallelism]\ntensor_parallel_degree = {tp}\n"
    if kind == "json":
        return "ds.json", f'{{"train_batch_size": 8, "num_nodes": {nodes},\n "tensor_parallel": {{"autotp_size": {tp}}}}}\n'
    if kind == "shell":
        return "launch.sh", f"#!/bin/bash\ntorchrun --nnodes {nodes} --nproc-per-node 1 train.py --tensor-model-parallel-size {tp}\n"
    return "launch.py", (f'subprocess.run(["torchrun", "--nnodes", "{nodes}", "train.py",\n'
                         f'                "--tensor-model-parallel-size", "{tp}"])\n')


KINDS = ["yaml", "toml", "json", "shell", "python"]


@st.composite
def spelled_configs(draw):
    kind = draw(st.sampled_from(KINDS))
    n = draw(st.integers(2, 4096))
    nodes = draw(st.integers(2, 64))
    tp = draw(st.sampled_from(spellings(n, kind)))
    node_spelling = draw(st.sampled_from([s for s in spellings(nodes, kind) if not s.startswith("&")]))
    if kind == "python":  # inside a Python string: no quotes of its own
        tp, node_spelling = tp.strip("'\""), node_spelling.strip("'\"")
    return kind, n, tp, node_spelling


@settings(max_examples=120)
@given(spelled_configs())
def test_a_tp_degree_in_any_spelling_is_read_as_that_number_and_never_ok(tmp_path, case):
    kind, n, tp, nodes = case
    name, text = training_config(kind, tp, nodes)
    data, _ = scan_dir(tmp_path, {name: text})
    assert [(m["status"], m["degree"]) for m in data["matches"]] == [("set", n)], (text, data["matches"])
    ctx = next(iter(data["files"].values()))
    assert (ctx["context"], ctx["nodes"]) == ("training", "multi"), (text, ctx)
    assert judged(data).status is Status.FAIL


SEEN = {  # issue 15: each was `ok` before
    "hex": ("job.yaml", "trainer:\n  num_nodes: 2\ntensor_parallel_size: 0x@2\n"),
    "plus sign": ("job.yaml", "trainer:\n  num_nodes: 2\ntensor_parallel_size: +@2\n"),
    "yaml tag": ("job.yaml", "trainer:\n  num_nodes: 2\ntensor_parallel_size: !!int @2\n"),
    "digit separator": ("job.toml", "[training]\nnum_nodes = 2\ntensor_parallel_degree = 1_@0\n"),
    "exponent": ("job.toml", "[training]\nnum_nodes = 2\ntensor_parallel_degree = 1e1@0\n"),
    "anchor and alias": ("job.yaml", "trainer:\n  num_nodes: 2\ntp: &n @2\ntensor_parallel_size: *n\n"),
    "yaml value on the next line": ("job.yaml", "trainer:\n  num_nodes: 2\ntensor_parallel_size:\n  @2\n"),
    "yaml value below a comment": ("job.yaml", "trainer:\n  num_nodes: 2\ntensor_parallel_size:  # per node\n\n"
                                               "  # two GPUs\n  @2\n"),
    "shell continuation": ("launch.sh", "torchrun --nnodes 2 train.py \\\n  --tensor-parallel-size \\\n  @2\n"),
    "node count in hex": ("launch.sh", "torchrun --nnodes 0x@2 train.py --tensor-parallel-size 2\n"),
    "node count as an exponent": ("job.yaml", "trainer:\n  num_nodes: 1e@1\ntensor_parallel_size: 2\n"),
    "node count after a continuation": ("launch.sh", "torchrun --nnodes \\\n  @2 train.py --tensor-parallel-size 2\n"),
    # pipeline parallelism is no node count (issue 22): tests/gotchas/g10/test_launchers.py
    "node count with its dotted path": ("job.yaml", "trainer.num_nodes: @2\ntensor_model_parallel_size: 2\n"),
}


@pytest.mark.parametrize("case", list(SEEN), ids=list(SEEN))
def test_seen_spellings_are_read_and_fail_across_nodes(tmp_path, case):
    name, text = SEEN[case]
    data, root = scan_dir(tmp_path, {name: text.replace("@", "")})
    v = judged(data)
    assert v.status is Status.FAIL, (case, v.summary)
    assert v.summary.startswith(f"TP > 1 in a multi-node training config: {root / name}:")


NOT_UNDERSTOOD = {  # written as a setting, not a degree: said, with file:line, never read as none
    "a fraction": ("tensor_parallel_size: 1.5", "1.5"),
    "zero": ("tensor_parallel_size: 0", "0"),
    "negative": ("tensor_parallel_size: -2", "-2"),
    "a word": ("tensor_parallel_size: two", "two"),
    "a suffix": ("tensor_parallel_size: 2-way", "2-way"),
    "overflowing float": ("tensor_parallel_size: 1e400", "1e400"),
    "infinity": ("tensor_parallel_size: .inf", ".inf"),
    "a flow list": ("tensor_parallel_size: [2]", "[2]"),
    "a mapping below": ("tensor_parallel_size:\n  size: 2", "size: 2"),
    "an alias to nothing": ("tensor_parallel_size: *nowhere", "*nowhere"),
}


@pytest.mark.parametrize("case", list(NOT_UNDERSTOOD), ids=list(NOT_UNDERSTOOD))
def test_a_value_not_understood_is_said_with_file_and_line(tmp_path, case):
    line, value = NOT_UNDERSTOOD[case]
    training = "trainer:\n  max_steps: 10\n  num_nodes: 2\n" + line + "\n"
    data, root = scan_dir(tmp_path, {"job.yaml": training, "other/mystery.yaml": "x: 1\n" + line + "\n"})
    assert {(Path(m["file"]).name, m["status"], m["value"], m["line"]) for m in data["matches"]} == {
        ("job.yaml", "unreadable", value, 4), ("mystery.yaml", "unreadable", value, 2)}
    v = judged(data)
    assert v.status is Status.WARN
    assert f"{root / 'job.yaml'}:4: tensor_parallel_size={value} (value not understood" in v.summary
    assert any(d.startswith(f"{root / 'other/mystery.yaml'}:2: ") and "(value not understood" in d
               and d.endswith(": unknown: TP with a value sparktui does not understand in a file it cannot "
                              "class as training or serving") for d in v.details)
    alone, _ = scan_dir(tmp_path, {"mystery.yaml": "x: 1\n" + line + "\n"})
    assert judged(alone).status is Status.UNKNOWN
    assert judged(alone).summary.startswith("cannot tell: TP with a value not understood in a file")


def test_a_node_count_not_understood_never_makes_it_single_node(tmp_path):
    data, _ = scan_dir(tmp_path, {"a.sh": "torchrun --nnodes 1.5 train.py --tensor-parallel-size 2\n",
                        "b.yaml": "trainer:\n  num_nodes: 0\n  max_steps: 1\ntensor_parallel_size: 2\n"})
    for ctx in data["files"].values():
        assert ctx["nodes"] == "unknown" and ctx["node_unresolved"][0].endswith("(value not understood)")
    assert judged(data).status is Status.WARN


def test_a_yaml_key_with_nothing_below_it_is_null_not_a_finding(tmp_path):
    data, _ = scan_dir(tmp_path, {"a.yaml": "tensor_parallel_size:\nmodel: m\n  \n", "b.yaml": "tensor_parallel_size:"})
    assert data["matches"] == [] and data["files_read"] == 2


# --- arbitrary input: no exception, plain data, a verdict ----------------------------------------

FRAGMENTS = ["tensor_parallel_size", "--tensor-parallel-size", "tp_size", "-tp", "NIM_TENSOR_PARALLEL_SIZE",
             "--nnodes", "num_nodes", "torchrun", "vllm serve", ": ", "=", " ", "\t", "\n", "\\\n", "&a", "*a",
             "!!int ", "${", "$(( ", "{{", "}", "\"", "'", "#", "- ", ",", "[", "]", "2", "0x", "1_", "e9",
             "+", "-", ".", "1:2", "\r", "\x00", "\ufeff", "é", "\u2028"]


@settings(max_examples=150)
@given(st.sampled_from(["a.yaml", "a.toml", "a.json", "a.sh", "a.py", ".env", "Dockerfile", "run"]),
       st.one_of(st.lists(st.sampled_from(FRAGMENTS), max_size=80).map("".join),
                 st.text(max_size=400), st.binary(max_size=400).map(lambda b: b.decode("latin-1"))))
def test_any_text_gives_plain_data_and_a_verdict(tmp_path, name, text):
    data, _ = scan_dir(tmp_path, {name: text.encode("utf-8", "surrogatepass")}, deadline_s=5)
    assert data["truncated"] is None
    for m in data["matches"]:
        assert m["status"] in ("set", "unresolved", "unreadable")
        assert m["status"] != "set" or m["degree"] is None or m["degree"] > 1
    assert judged(data).status in tuple(Status)


@settings(max_examples=60)
@given(st.binary(max_size=2000))
def test_any_bytes_give_plain_data_and_a_verdict(tmp_path, blob):
    data, _ = scan_dir(tmp_path, {"a.yaml": blob, "b.sh": b"#!/bin/sh\n" + blob}, deadline_s=5)
    assert data["files_considered"] == 2
    assert judged(data).status in tuple(Status)


def test_billion_laughs_yaml_is_never_expanded(tmp_path):
    levels = ["lol: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    levels += [f"l{i}: &l{i} [{', '.join(['*l' + str(i - 1)] * 9)}]" for i in range(1, 12)]
    text = "\n".join(levels) + "\ntrainer:\n  num_nodes: *l11\ntensor_parallel_size: *l11\n"
    t0 = time.thread_time()
    data, _ = scan_dir(tmp_path, {"laughs.yaml": text})
    assert time.thread_time() - t0 < 0.5
    assert [(m["status"], m["value"]) for m in data["matches"]] == [("unreadable", "*l11")]
    assert judged(data).status in NOT_OK


# --- linear time, bounded: the shapes the new spellings could make slow ---------------------------

PATHOLOGICAL = {
    "tags before a value": ("a.yaml", lambda n: "tp_size: " + "!t " * (n // 3) + "\n"),
    "anchors on one line": ("a.yaml", lambda n: "tp_size: " + "&a 2 " * (n // 5) + "\n"),
    "aliases, one anchor": ("a.yaml", lambda n: "x: &a @2\n" + "tp_size: *a\n" * (n // 12)),
    "many anchors, one alias each": ("a.yaml", lambda n: "".join(f"k{i}: &a{i} 2\ntp_size: *a{i}\n" for i in range(n // 30))),
    "keys with values below": ("a.yaml", lambda n: "tp_size:\n" * (n // 9) + "  2\n"),
    "keys with blank lines below": ("a.yaml", lambda n: "tp_size:\n" + "\n" * n + "  2\n"),
    "continued flags": ("launch.sh", lambda n: "--tp \\\n" * (n // 7) + "2\n"),
    "one number-like run": ("launch.sh", lambda n: "--tp=" + "1" * n + "\n"),
    "tags after --nnodes": ("launch.sh", lambda n: "tp_size=@2\n--nnodes " + "!x " * (n // 3) + "\n"),
    "continued --nnodes": ("launch.sh", lambda n: "tp_size=@2\n" + "--nnodes \\\n" * (n // 11) + "2\n"),
    "settings on one line": ("a.yaml", lambda n: "tp_size: 0x2 " * (n // 13) + "\n"),
    "keyed settings on one line": ("launch.sh", lambda n: "tp_size=two " * (n // 12) + "\n"),
    "one long sweep": ("launch.sh", lambda n: "tp_size=" + "1," * (n // 2) + "2\n"),
    "sweeps on one line": ("launch.sh", lambda n: "tp_size=1,2,3 " * (n // 14) + "\n"),
    "open choices": ("launch.sh", lambda n: "tp_size=choice(" * (n // 15) + "\n"),
    "spaced ENV lines": ("Dockerfile", lambda n: "ENV TENSOR_PARALLEL_SIZE " * (n // 25) + "\n"),
}


@pytest.mark.parametrize("case", list(PATHOLOGICAL), ids=list(PATHOLOGICAL))
def test_hostile_shapes_scan_in_linear_time(tmp_path, case):
    name, build = PATHOLOGICAL[case]
    times = []
    for n in (10_000, 40_000):
        root = write_tree(tmp_path, {name: build(n).replace("@", "")})
        times.append(_best_of(3, lambda r=root: tpscan.scan([str(r)], 4 * MB)))
    assert times[1] < 1.0, f"{case}: {times[1]:.2f} s for 40,000"
    assert times[1] / max(times[0], 1e-3) < 8, f"{case}: 4x the size took {times[1] / times[0]:.1f}x the time"


def test_megabyte_lines_take_time_linear_in_their_size_and_stop_at_the_deadline(tmp_path):
    unit = "--tensor-parallel-size=0x2 tp_size: &a !!int *a ${TP:-2} --nnodes \\ torchrun "
    times = []
    for size in (MB // 16, MB // 4):
        root = write_tree(tmp_path, {"launch.sh": (unit * (size // len(unit) + 1))[:size] + "\n"})
        times.append(_best_of(2, lambda r=root: tpscan.scan([str(r)], 4 * MB)))
    assert times[1] / max(times[0], 1e-3) < 8, f"4x the size took {times[1] / times[0]:.1f}x the time"
    root = write_tree(tmp_path, {"launch.sh": (unit * (MB // len(unit) + 1))[:MB] + "\n"})
    t0 = time.perf_counter()
    data = tpscan.scan([str(root)], 4 * MB, deadline_s=0.3)
    assert time.perf_counter() - t0 < 0.3 + SLACK_S
    # the line is matched on its first tpscan.MAX_MATCH_LINE characters only (issue 22), and says so
    assert data["truncated"] or [c.get("lines_cut") for c in data["files"].values()] == [1]


def test_a_single_long_line_looks_at_the_clock_within_it():
    """A cancel or the deadline is seen inside one megabyte line, not only between lines."""
    looks: list[int] = []
    found = tpscan._find_settings("--tp=2 " * 5000, "shell", lambda: looks.append(1))
    assert len(found) == 5000 and len(looks) >= 5000 // tpscan._CHECK_EVERY_KEYS


# --- odd files and folders --------------------------------------------------------------------------


def test_odd_files_and_folders_end_the_scan_and_are_said(tmp_path):
    root = tmp_path
    job = root / "job"
    job.mkdir()
    (job / "ok.sh").write_text("torchrun --nnodes 2 train.py --tensor-parallel-size 2\n")
    os.mkfifo(job / "fifo.yaml")
    (job / "zero.yaml").symlink_to("/dev/zero")
    (job / "loop").symlink_to(job)
    (job / "self.yaml").symlink_to("self.yaml")
    bad = os.fsencode(str(job)) + b"/caf\xe9-\xff.yaml"
    with open(bad, "wb") as f:
        f.write(b"trainer:\n  num_nodes: 2\ntensor_parallel_size: 0x2\n")
    t0 = time.perf_counter()
    data = tpscan.scan([str(root), "/dev/zero", "/dev/urandom", str(job / "fifo.yaml")], 4 * MB, deadline_s=5)
    assert time.perf_counter() - t0 < 5.0  # within its deadline: nothing blocked it
    json.loads(json.dumps(data))
    assert {(Path(m["file"]).name, m["degree"]) for m in data["matches"]} == {
        ("ok.sh", 2), (os.fsdecode(b"caf\xe9-\xff.yaml"), 2)}
    assert data["skipped"] == {"not a regular file (FIFO)": 2, "symlink into /proc, /sys or /dev": 1,
                               "symlink loop": 1, "not a regular file (character device)": 2,
                               "symlink to a folder already scanned (loop or duplicate)": 1}
    assert judged(data).status is Status.FAIL


def test_an_unreadable_folder_is_said_and_the_rest_still_read():
    """Outside tmp_path: its parents are closed to the unprivileged user the scan runs as."""
    base = Path(tempfile.mkdtemp(prefix="sparktui-tp-perm-"))
    base.chmod(0o755)
    (base / "open").mkdir(mode=0o755)
    (base / "open/a.yaml").write_text("trainer:\n  num_nodes: 2\ntensor_parallel_size: +2\n")
    (base / "open/a.yaml").chmod(0o644)
    (base / "shut").mkdir()
    (base / "shut/b.yaml").write_text("tensor_parallel_size: 2\n")
    (base / "shut").chmod(0o000)
    try:
        data = _scan_as_nobody(base) if os.geteuid() == 0 else tpscan.scan([str(base)], 4 * MB)
    finally:
        (base / "shut").chmod(0o755)
        shutil.rmtree(base)
    assert data["skipped"] == {"permission denied": 1}
    assert [(Path(m["file"]).name, m["degree"]) for m in data["matches"]] == [("a.yaml", 2)]
    assert judged(data).status is Status.FAIL


def test_files_that_change_while_read_end_the_scan_within_its_deadline(tmp_path):
    root = tmp_path
    paths = [root / f"c{i}.yaml" for i in range(20)]
    for p in paths:
        p.write_text("tensor_parallel_size: 2\n")
    stop = threading.Event()

    def churn() -> None:
        i = 0
        while not stop.is_set():
            p = paths[i % len(paths)]
            with open(p, "a") as f:  # grows
                f.write("tensor_parallel_size: 0x2\n" * 5)
            if i % 3 == 0:
                p.write_text("")  # shrinks to nothing
            if i % 7 == 0:
                os.replace(p, root / "moved.yaml")  # vanishes after the listing
                p.write_text("tp_size: 2\n")
            i += 1

    worker = threading.Thread(target=churn, daemon=True)
    worker.start()
    try:
        for _ in range(30):
            t0 = time.perf_counter()
            data = tpscan.scan([str(root)], 16 * 1024, deadline_s=0.5)
            assert time.perf_counter() - t0 < 0.5 + SLACK_S
            json.loads(json.dumps(data))
            judged(data)
    finally:
        stop.set()
        worker.join()


def test_a_big_tree_of_hostile_files_stops_at_the_deadline(tmp_path):
    root = write_tree(tmp_path, {f"d{i}/s{j}.sh": "tp_size=2\n" + "\n" * 20_000 + "--nnodes " + " " * 5000
                                 for i in range(10) for j in range(20)})
    t0 = time.perf_counter()
    data = tpscan.scan([str(root)], 4 * MB, deadline_s=0.2)
    assert time.perf_counter() - t0 < 0.2 + SLACK_S
    assert data["truncated"] and data["truncated"].startswith("stopped at the 0.2-s time bound")
    assert judged(data).status is not Status.OK


# --- issue 22: what reading launchers as people write them opens up -------------------------------

def test_arithmetic_that_fans_out_is_bounded(tmp_path):
    # each variable doubles the work of resolving the next: 2**30 look-ups without a budget
    lines = ["V0=2"] + [f"V{i}=$((V{i - 1}+V{i - 1}+V{i - 1}))" for i in range(1, 31)]
    text = "\n".join(lines) + "\ntorchrun --nnodes 2 train.py --tensor-model-parallel-size $V30\n"
    t0 = time.perf_counter()
    data, _ = scan_dir(tmp_path, {"launch.sh": text})
    assert time.perf_counter() - t0 < 2.0
    (m,) = data["matches"]
    assert m["status"] in ("unresolved", "set")  # resolved within the budget, or said to be unresolved


def test_sourcing_and_defaults_loops_end(tmp_path):
    data, _ = scan_dir(tmp_path, {
        "a.sh": "source b.sh\nTP=@2\ntorchrun --nnodes 2 train.py --tensor-model-parallel-size $TP\n".replace("@", ""),
        "b.sh": "source a.sh\n. ./b.sh\n",
        "x.yaml": 'defaults: "y.yaml"\ntrainer:\n  num_nodes: 2\n',
        "y.yaml": 'defaults: "x.yaml"\ntensor_model_parallel_size: 2\n',
    }, deadline_s=10.0)
    assert not data["truncated"]
    assert {Path(m["file"]).name for m in data["matches"]} >= {"a.sh", "y.yaml"}


def test_hostile_arithmetic_and_templates_are_values_not_understood(tmp_path):
    data, _ = scan_dir(tmp_path, {"launch.sh": "TP=$((1/0))\nN=$(( ((((2)))) ))\n"
                                                "torchrun --nnodes $N train.py --tensor-model-parallel-size $TP\n"
                                                "python serve.py --tp {{ a | default(9e999) }}\n"})
    by_line = {m["line"]: m for m in data["matches"]}
    assert by_line[3]["status"] == "unresolved"  # 1/0: never a degree
    assert by_line[4]["status"] in ("unresolved", "unreadable") and by_line[4]["degree"] is None  # no integer


def test_a_cancel_is_seen_while_many_launchers_read_a_sourced_file_through(tmp_path):
    files = {"CONFIG.sh": 'export P=" --tensor-model-parallel-size ${TP} --train-iters 5"\n'}
    for i in range(1500):
        files[f"run{i}.sh"] = f"#!/bin/bash\nTP={i % 4 + 1}\nNNODES=2\n. ./CONFIG.sh\nsbatch --nodes=${{NNODES}} x.sh\n" + "# x\n" * 300
    root = write_tree(tmp_path, files)
    cancel = threading.Event()
    timer = threading.Timer(0.5, cancel.set)
    timer.start()
    t0 = time.perf_counter()
    data = tpscan.scan([str(root)], 4 * MB, cancel=cancel)
    timer.cancel()
    assert time.perf_counter() - t0 < 0.5 + SLACK_S
    assert str(data["truncated"]).startswith("cancelled")
