"""G10 reads Hydra sweeps and the older Dockerfile `ENV KEY value` form.

A sweep (`key=1,2,4`, `choice(1,4)`, `range(1,3)`) launches one run per value, so the run with the
largest degree is the one judged: before, `1,2,4` was read as its first value, 1, and called fine.
Values are written ``@2`` and ``put`` drops the ``@`` (see tests/gotchas/g10/test_scan.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.gotchas import g10_tensor_parallel as g10
from tests.conftest import readings_of
from tests.gotchas.builders import tp_put as put, tp_scan as scan

SWEEPS = [
    # (written, status, degree, words of the finding's "via")
    ("1,@2,4", "set", 4, "a sweep of 3 value(s): 1, 2, 4; the largest, 4, is judged"),
    ("1, @2", "set", 2, "a sweep of 2 value(s): 1, 2; the largest, 2, is judged"),
    ("@2,1", "set", 2, "the largest, 2, is judged"),
    ("1,1", "one", 1, "a sweep of 2 value(s): 1, 1"),
    ("0x1,0x@8", "set", 8, "the largest, 8, is judged"),
    ("choice(1,@4)", "set", 4, "a sweep of 2 value(s): 1, 4; the largest, 4, is judged"),
    ("choice('1', '@2')", "set", 2, "the largest, 2, is judged"),
    ("choice(1)", "one", 1, "a sweep of 1 value(s): 1"),
    ("range(1,@3)", "set", 2, "a Hydra range(1, 3): 2 run(s), 1 to 2; the largest, 2, is judged"),
    ("range(1,@2)", "one", 1, "a Hydra range(1, 2): 1 run(s), 1 to 1"),
    ("range(start=1,stop=@9,step=2)", "set", 7, "a Hydra range(1, 9, 2): 4 run(s), 1 to 7"),
    ("range(stop=@3)", "set", 2, "a Hydra range(0, 3, 1): 3 run(s), 0 to 2; the largest, 2, is judged"),
    ("range(@8,0,-2)", "set", 8, "a Hydra range(8, 0, -2): 4 run(s), 8 to 2; the largest, 8, is judged"),
    ("range(1,@10001)", "set", 10000, "10000 run(s), 1 to 10000"),  # _MAX_SWEEP runs: still read
]
NOT_UNDERSTOOD = [
    # (written, words of the finding's "via", or None where there is no sweep to describe)
    ("range(0,@2)", "a Hydra range(0, 2): 2 run(s), 0 to 1: a degree below 1 is no degree"),
    ("range(1,1)", None),  # empty: no run at all
    ("range(1,@100000)", None),  # 99,999 runs: no degree anyone launches
    ("range(1,@10002)", None),  # 10,001 runs: one past _MAX_SWEEP
    ("range(1,@3,0)", None),
    ("range(start=1,start=@3)", None),
    ("range(begin=1,stop=@3)", None),
    ("range(start=1)", None),
    ("range()", None),
    ("choice()", None),
    ("choice(1,two)", None),
    ("choice(1.5,@2)", None),
    ("1,2.5", None),
    ("0,0", "a sweep of 2 value(s): 0, 0: a degree below 1 is no degree"),
]


def one_match(tmp_path: Path, name: str, text: str) -> dict:
    put(tmp_path, name, text)
    data = scan(tmp_path)
    assert len(data["matches"]) + data["at_one"] == 1, data["matches"]
    return data


@pytest.mark.parametrize("written,status,degree,via", SWEEPS, ids=[s[0] for s in SWEEPS])
def test_a_hydra_sweep_is_judged_by_its_largest_degree(tmp_path, written, status, degree, via):
    data = one_match(tmp_path, "sweep.sh", f"python train.py -m model.tensor_model_parallel_size={written}\n")
    if status == "one":
        assert data["matches"] == [] and data["at_one"] == 1
        assert data["at_one_sample"][0].endswith(f"model.tensor_model_parallel_size={written.replace('@', '')}")
        return
    (m,) = data["matches"]
    assert (m["status"], m["degree"], m["value"]) == (status, degree, written.replace("@", ""))
    assert via in m["via"]


@pytest.mark.parametrize("written,via", NOT_UNDERSTOOD, ids=[s[0] for s in NOT_UNDERSTOOD])
def test_a_sweep_that_cannot_be_read_is_said_never_fine(tmp_path, written, via):
    data = one_match(tmp_path, "sweep.sh", f"python train.py -m trainer.tensor_parallel_size={written}\n")
    (m,) = data["matches"]
    assert (m["status"], m["degree"], m["value"]) == ("unreadable", None, written.replace("@", ""))
    assert m.get("via") == via


def test_a_multi_node_training_sweep_fails_and_names_the_run_that_breaks(tmp_path):
    put(tmp_path, "launch.sh", "#!/bin/bash\ntorchrun --nnodes 2 --nproc-per-node 1 train.py -m "
                               "model.tensor_model_parallel_size=1,@2\n")
    v = g10.judge(readings_of(tpscan=scan(tmp_path)), Config())
    assert v.status is Status.FAIL
    assert v.summary.startswith(f"TP > 1 in a multi-node training config: {tmp_path / 'launch.sh'}:2: "
                                "model.tensor_model_parallel_size=1,2 = 2 (a sweep of 2 value(s): 1, 2; "
                                "the largest, 2, is judged)")


def test_a_hydra_sweeper_config_is_never_fine_for_its_first_value(tmp_path):
    put(tmp_path, "conf/config.yaml", "hydra:\n  sweeper:\n    params:\n      model.tensor_parallel_size: 1,@2,4\n")
    data = scan(tmp_path)
    (m,) = data["matches"]
    assert (m["status"], m["degree"], m["key_path"]) == ("set", 4, "hydra.sweeper.params.model.tensor_parallel_size")
    assert data["at_one"] == 0
    assert g10.judge(readings_of(tpscan=data), Config()).status is not Status.OK


@pytest.mark.parametrize("name,text", [
    ("compact.json", '{"tensor_parallel_size":1,"pipeline_parallel_size":@2}\n'),
    ("spaced.json", '{"tensor_parallel_size": 1, "max_model_len": 4096}\n'),
    ("args.json", '{"args": ["--tensor-parallel-size", "1", "--max-model-len", "4096"]}\n'),
    ("serve.py", "llm = LLM(model=m, tensor_parallel_size=1, max_model_len=4096)\n"),
    ("flow.yaml", "args: [--tensor-parallel-size, 1, --port, 8000]\n"),
    ("vllm.sh", "vllm serve m --tensor-parallel-size 1 --port 8000, --x 2\n"),
])
def test_a_single_value_followed_by_other_settings_is_no_sweep(tmp_path, name, text):
    data = one_match(tmp_path, name, text)
    assert data["matches"] == [] and data["at_one"] == 1, data


@pytest.mark.parametrize("line,status,degree,value", [
    ("ENV TENSOR_PARALLEL_SIZE @2", "set", 2, "2"),
    ("ENV NIM_TENSOR_PARALLEL_SIZE \"@4\"", "set", 4, "4"),
    ("  env   TENSOR_PARALLEL_SIZE\t@8", "set", 8, "8"),  # an instruction in any case, any blanks
    ("ENV TENSOR_PARALLEL_SIZE two", "unreadable", None, "two"),
    ("ENV TENSOR_PARALLEL_SIZE=@2", "set", 2, "2"),
    ("ENV OTHER TENSOR_PARALLEL_SIZE @2", None, None, None),  # OTHER's value, a sentence: not a setting
])
def test_the_older_dockerfile_env_form_is_read(tmp_path, line, status, degree, value):
    put(tmp_path, "Dockerfile", f"FROM nvcr.io/nvidia/pytorch:25.09-py3\n{line}\n")
    data = scan(tmp_path)
    got = [(m["status"], m["degree"], m["value"]) for m in data["matches"]]
    assert got == ([] if status is None else [(status, degree, value)])


def test_the_spaced_env_form_counts_only_in_a_dockerfile(tmp_path):
    put(tmp_path, "notes.sh", "#!/bin/sh\necho ENV TENSOR_PARALLEL_SIZE @2\n")
    assert scan(tmp_path)["matches"] == []


# --- a sweep whose items are not all numbers: read to the word's end, never as its first value ---

@pytest.mark.parametrize("written", ["1,x", "1,@2,x", "1,two", "1,2.5x", "1,a.b", "1,2,4,x", "1,x,@2"])
def test_a_sweep_with_an_item_that_is_no_number_is_not_understood(tmp_path, written):
    """Before, `1,x` was read as its first value, 1, and listed "at 1 (fine)"."""
    data = one_match(tmp_path, "sweep.sh", f"python train.py -m model.tensor_parallel_size={written}\n")
    (m,) = data["matches"]
    assert (m["status"], m["degree"], m["value"]) == ("unreadable", None, written.replace("@", ""))
    assert data["at_one"] == 0


@pytest.mark.parametrize("script,status,degree,value,via", [
    ("TP=@8\npython train.py -m model.tensor_parallel_size=1,$TP\n", "set", 8, "1,$TP",
     "a sweep of 2 value(s): 1, 8 (resolved: TP=8 (line 1)); the largest, 8, is judged"),
    ("TP=@8\npython train.py -m model.tensor_parallel_size=${TP},1\n", "set", 8, "${TP},1",
     "a sweep of 2 value(s): 8, 1 (resolved: TP=8 (line 1)); the largest, 8, is judged"),
    ("TP=@4\npython train.py -m model.tensor_parallel_size=choice(1,$TP)\n", "set", 4, "choice(1,$TP)",
     "a sweep of 2 value(s): 1, 4 (resolved: TP=4 (line 1)); the largest, 4, is judged"),
    ("python train.py -m model.tensor_parallel_size=1,${TP:-@2}\n", "set", 2, "1,${TP:-2}",
     "(resolved: default of ${TP})"),
    ("TP=@2 python train.py -m model.tensor_parallel_size=1,$TP\n", "set", 2, "1,$TP", "(resolved: TP=2 (line 1))"),
    ("python train.py -m model.tensor_parallel_size=1,${TP}\n", "unresolved", None, "1,${TP}",
     "a sweep with ${TP}, which sparktui cannot resolve"),
    ("python train.py -m model.tensor_parallel_size=1,$TP\nTP=@8\n", "unresolved", None, "1,$TP",
     "a sweep with $TP, which sparktui cannot resolve"),  # assigned only below: not yet set
    ("python train.py -m model.tensor_parallel_size=1,{{ tp }}\n", "unresolved", None, "1,{{ tp }}",
     "a sweep with {{ tp }}, which sparktui cannot resolve"),
    ("TP=x\npython train.py -m model.tensor_parallel_size=1,$TP\n", "unreadable", None, "1,$TP", None),
])
def test_a_sweep_with_a_variable_is_resolved_or_said_unresolved(tmp_path, script, status, degree, value, via):
    put(tmp_path, "sweep.sh", script)
    data = scan(tmp_path)
    (m,) = data["matches"]
    assert (m["status"], m["degree"], m["value"]) == (status, degree, value)
    assert data["at_one"] == 0
    assert (via in m["via"]) if via else "via" not in m


def test_a_sweep_at_one_with_a_resolved_variable_is_fine_and_says_so(tmp_path):
    put(tmp_path, "sweep.sh", "TP=1\npython train.py -m model.tensor_parallel_size=1,$TP\n")
    data = scan(tmp_path)
    assert data["matches"] == [] and data["at_one"] == 1


@pytest.mark.parametrize("written,verdict", [("1,x", Status.WARN), ("1,${TP}", Status.WARN), ("1,@2", Status.FAIL)])
def test_a_multi_node_sweep_that_is_not_all_numbers_is_never_ok(tmp_path, written, verdict):
    put(tmp_path, "launch.sh", "#!/bin/bash\ntorchrun --nnodes 2 --nproc-per-node 1 train.py -m "
                               f"model.tensor_model_parallel_size={written}\n")
    assert g10.judge(readings_of(tpscan=scan(tmp_path)), Config()).status is verdict


@pytest.mark.parametrize("name,text", [
    ("serve.py", "llm = LLM(model=m, tensor_parallel_size=1,max_model_len=4096)\n"),
    ("kw.py", "run(tp_size=1,**extra)\n"),
    ("call.py", "run(tp_size=1,pick(2))\n"),
    ("flow.yaml", "engine: {tensor_parallel_size: 1,pipeline_parallel_size: @2}\n"),
    ("inline.toml", "engine = {tensor_parallel_size = 1,pipeline_parallel_size = @2}\n"),
    ("spaced.py", "run(tp_size=1,pp_size =2)\n"),
    ("compact.json", '{"tensor_parallel_size":1,"max_model_len":4096}\n'),
    ("trailing.sh", "python train.py model.tensor_parallel_size=1, other=2\n"),
    ("list.yaml", "args: [--tensor-parallel-size, 1,[2]]\n"),
])
def test_a_comma_before_another_setting_is_no_sweep(tmp_path, name, text):
    data = one_match(tmp_path, name, text)
    assert data["matches"] == [] and data["at_one"] == 1, data
