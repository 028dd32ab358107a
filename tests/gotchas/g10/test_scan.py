"""The G10 scan ('tpscan' probe) on real files and folders in tmp_path.

File contents below write every value as ``@2``; ``put`` drops the ``@``. The scan skips Python
test modules anyway, but this keeps the settings out of this file even if it is read by other
tools (a ``grep`` for TP keys, say).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pytest

from sparktui.core.config import Config, ScanConfig
from sparktui.core.verdict import Status
from sparktui.gotchas import g10_tensor_parallel as g10
from sparktui.probes import tpscan
from tests.conftest import readings_of
from tests.gotchas.builders import (MB, best_of as _best_of, scan_as_nobody as _scan_as_nobody, tp_put as put,
                                    tp_scan as scan)


def found(data: dict) -> set[tuple[str, str, str]]:
    """(file name, key, value) of every reported finding."""
    return {(Path(m["file"]).name, m["key"], m["value"]) for m in data["matches"]}


# --- every key spelling, every form -----------------------------------------------------------

SPELLINGS = [
    # (file, content, key as reported, value)
    ("vllm.sh", "vllm serve m --tensor-parallel-size @2\n", "--tensor-parallel-size", "2"),
    ("vllm_eq.sh", "vllm serve m --tensor-parallel-size=@4\n", "--tensor-parallel-size", "4"),
    ("vllm_short.sh", "vllm serve m -tp @2 --port 8000\n", "-tp", "2"),
    ("vllm.yaml", "model: m\ntensor_parallel_size: @2\n", "tensor_parallel_size", "2"),
    ("sglang.sh", "python -m sglang.launch_server --model m --tp-size @2\n", "--tp-size", "2"),
    ("sglang_tp.sh", "python -m sglang.launch_server --model m --tp @2\n", "--tp", "2"),
    ("sglang.yaml", "tp_size: @2\n", "tp_size", "2"),
    ("trtllm.sh", "trtllm-serve m --tp_size @2 --backend pytorch\n", "--tp_size", "2"),
    ("megatron.yaml", "model:\n  tensor_model_parallel_size: @2\n", "tensor_model_parallel_size", "2"),
    ("megatron.sh", "torchrun pretrain_gpt.py --tensor-model-parallel-size @2\n", "--tensor-model-parallel-size", "2"),
    ("nemo.sh", "python finetune.py trainer.strategy.tensor_model_parallel_size=@2\n",
     "trainer.strategy.tensor_model_parallel_size", "2"),
    ("nemo_rl.yaml", "policy:\n  dtensor_cfg:\n    tensor_parallel_size: @2\n", "tensor_parallel_size", "2"),
    ("automodel.yaml", "distributed:\n  dp_size: none\n  tp_size: @2\n", "tp_size", "2"),
    ("titan.toml", "[parallelism]\ntensor_parallel_degree = @2\n", "tensor_parallel_degree", "2"),
    ("titan.sh", "torchrun -m torchtitan.train --parallelism.tensor_parallel_degree @2\n",
     "--parallelism.tensor_parallel_degree", "2"),
    ("ds.json", '{"train_batch_size": 8, "tensor_parallel": {"autotp_size": @2}}\n', "autotp_size", "2"),
    ("accelerate.yaml", "distributed_type: FSDP\nparallelism_config_tp_size: @2\n", "parallelism_config_tp_size", "2"),
    ("hf.yaml", "tp_plan: @auto\n", "tp_plan", "auto"),
    ("hf.py", 'model = AutoModelForCausalLM.from_pretrained("m", tp_plan=@"auto")\n', "tp_plan", "auto"),
    ("llm.py", 'llm = LLM(model="m", tensor_parallel_size=@2)\n', "tensor_parallel_size", "2"),
    ("nim.sh", "export NIM_TENSOR_PARALLEL_SIZE=@2\ndocker run nvcr.io/nim/meta/llama\n", "NIM_TENSOR_PARALLEL_SIZE", "2"),
    ("nim.env", "NIM_TENSOR_PARALLEL_SIZE=@2\n", "NIM_TENSOR_PARALLEL_SIZE", "2"),
    ("quoted.json", '{"tensor_parallel_size": "@2"}\n', "tensor_parallel_size", "2"),
    ("args.json", '{"args": ["serve", "--tensor-parallel-size", "@2"]}\n', "--tensor-parallel-size", "2"),
    ("Dockerfile", "FROM nvcr.io/nim/x\nENV NIM_TENSOR_PARALLEL_SIZE=@2\n", "NIM_TENSOR_PARALLEL_SIZE", "2"),
    ("run", "#!/usr/bin/env bash\nvllm serve m --tensor-parallel-size @2\n", "--tensor-parallel-size", "2"),
]


@pytest.mark.parametrize("name,content,key,value", SPELLINGS, ids=[s[0] for s in SPELLINGS])
def test_every_key_spelling_and_form_is_found(tmp_path, name, content, key, value):
    put(tmp_path, f"job/{name}", content)
    data = scan(tmp_path)
    assert found(data) == {(name, key, value)}
    m = data["matches"][0]
    assert m["line"] == content.count("\n", 0, content.index(key.lstrip("-").split(".")[-1])) + 1
    assert m["status"] == "set"
    assert key.split(".")[-1] in m["text"]


def test_yaml_and_toml_report_the_nested_key_path(tmp_path):
    put(tmp_path, "automodel.yaml", "step_scheduler:\n  max_steps: 10\ndistributed:\n  dp_size: none\n  tp_size: @2  # two-way\n")
    put(tmp_path, "titan.toml", "[job]\nname = 'x'\n\n[parallelism]\ntensor_parallel_degree = @2\n")
    put(tmp_path, "grpo.yaml", "policy:\n  generation:\n    vllm_cfg:\n      tensor_parallel_size: @2\n")
    by_file = {Path(m["file"]).name: m for m in scan(tmp_path)["matches"]}
    assert by_file["automodel.yaml"]["key_path"] == "distributed.tp_size"
    assert by_file["automodel.yaml"]["line"] == 5
    assert by_file["titan.toml"]["key_path"] == "parallelism.tensor_parallel_degree"
    assert by_file["grpo.yaml"]["key_path"] == "policy.generation.vllm_cfg.tensor_parallel_size"
    assert by_file["grpo.yaml"]["scope"] == "generation"


def test_yaml_list_value_on_the_next_line(tmp_path):
    put(tmp_path, "compose.yaml", "services:\n  llm:\n    command:\n      - --tensor-parallel-size\n      - \"@2\"\n")
    assert found(scan(tmp_path)) == {("compose.yaml", "--tensor-parallel-size", "2")}


def test_tp_of_one_comments_nulls_and_lookalikes_are_not_findings(tmp_path):
    put(tmp_path, "a.yaml", "tensor_parallel_size: @1\n# tensor_parallel_size: @2\ntp_size: null\n"
                            "pipeline_parallel_size: @2\nbase_model_tp_plan: @auto\n")
    put(tmp_path, "b.sh", "vllm serve m --pipeline-parallel-size @2  # --tensor-parallel-size @2\nls -tp /tmp\n")
    put(tmp_path, "c.py", '"""Set tp_size: @2 in the YAML, or pass --tp @2."""\nx = args.tensor_parallel_size\n')
    data = scan(tmp_path)
    assert data["matches"] == []
    assert data["at_one"] == 1
    assert data["at_one_sample"] == [f"{tmp_path / 'a.yaml'}:1: tensor_parallel_size=1"]


# --- variables ----------------------------------------------------------------------------------


def test_variables_resolve_from_the_same_script_or_are_reported_unresolved(tmp_path):
    put(tmp_path, "serve.sh", "#!/bin/bash\nTP=@4\nvllm serve m --tensor-parallel-size $TP\n")
    put(tmp_path, "default.sh", "TP=${TP:-@2}\nvllm serve m -tp \"${TP}\"\n")
    put(tmp_path, "env.sh", "vllm serve m --tensor-parallel-size ${TP_SIZE}\n")
    put(tmp_path, "hydra.yaml", "model:\n  tensor_model_parallel_size: ${oc.env:TP}\n")
    by_file = {Path(m["file"]).name: m for m in scan(tmp_path)["matches"]}
    assert by_file["serve.sh"]["degree"] == 4 and by_file["serve.sh"]["status"] == "set"
    assert "TP=4 (line 2)" in by_file["serve.sh"]["via"]
    assert by_file["default.sh"]["degree"] == 2
    assert by_file["env.sh"]["status"] == "unresolved" and by_file["env.sh"]["value"] == "${TP_SIZE}"
    assert by_file["hydra.yaml"]["status"] == "unresolved" and by_file["hydra.yaml"]["degree"] is None


# --- context: training vs serving, multi-node vs single node ---------------------------------------


def contexts(data: dict) -> dict[str, tuple[str, str]]:
    return {Path(f).name: (c["context"], c["nodes"]) for f, c in data["files"].items()}


def test_training_serving_and_node_count_are_told_apart(tmp_path):
    put(tmp_path, "train_multi.sh", "torchrun --nnodes=2 --nproc-per-node=1 --node-rank=0 --master-addr=192.168.100.10 "
                                    "train.py --tensor-model-parallel-size @2\n")
    put(tmp_path, "train_single.sh", "torchrun --standalone --nproc-per-node=1 train.py --tensor-model-parallel-size @2\n")
    put(tmp_path, "train_one_node.yaml", "trainer:\n  num_nodes: 1\n  max_steps: 100\nmodel:\n  tensor_model_parallel_size: @2\n")
    put(tmp_path, "nemo.yaml", "trainer:\n  num_nodes: @2\noptim:\n  lr: 1e-4\nmodel:\n  tensor_model_parallel_size: @2\n")
    put(tmp_path, "accel.yaml", "distributed_type: FSDP\nnum_machines: @2\nmachine_rank: 0\nparallelism_config_tp_size: @2\n")
    put(tmp_path, "ds.json", '{"zero_optimization": {"stage": 1}, "tensor_parallel": {"autotp_size": @2}}\n')
    put(tmp_path, "vllm_ray.sh", "ray start --address=10.0.0.1:6379\nvllm serve m --tensor-parallel-size @2\n")
    put(tmp_path, "trt.sh", "mpirun --hostfile /etc/openmpi-hostfile trtllm-llmapi-launch trtllm-serve m --tp_size @2\n")
    put(tmp_path, "sglang.sh", "python -m sglang.launch_server --tp @2 --nnodes @2 --dist-init-addr 10.0.0.1:5000\n")
    put(tmp_path, "mystery.yaml", "tp_size: @2\n")
    put(tmp_path, "elastic.sh", "torchrun --nnodes=1:@2 --rdzv-endpoint=spark1:29400 train.py --tp @2\n")
    assert contexts(scan(tmp_path)) == {
        "train_multi.sh": ("training", "multi"),
        "train_single.sh": ("training", "single"),
        "train_one_node.yaml": ("training", "single"),
        "nemo.yaml": ("training", "multi"),
        "accel.yaml": ("training", "multi"),
        "ds.json": ("training", "unknown"),
        "vllm_ray.sh": ("serving", "multi"),
        "trt.sh": ("serving", "multi"),
        "sglang.sh": ("serving", "multi"),
        "mystery.yaml": ("unknown", "unknown"),
        "elastic.sh": ("training", "multi"),
    }


def test_node_counts_in_argument_arrays_and_yaml_lists(tmp_path):
    # Kubernetes / Docker exec forms: the flag and its value are separate list items
    put(tmp_path, "k8s/job.yaml", 'spec:\n  containers:\n    - command: ["torchrun", "--nnodes", "@2", "--node-rank", '
                                  '"$(RANK)", "train.py", "--tensor-model-parallel-size", "@2"]\n')
    put(tmp_path, "k8s/list.yaml", "command:\n  - torchrun\n  - --nnodes\n  - \"@2\"\n  - train.py\n"
                                   "  - --tensor-model-parallel-size\n  - \"@2\"\n")
    put(tmp_path, "k8s/args.json", '{"args": ["--nnodes", @2, "--tensor-model-parallel-size", "@2"], "max_steps": 10}\n')
    put(tmp_path, "k8s/ds.json", '{"cmd": ["torchrun", "--nnodes", "@1", "train.py"], "tensor_parallel": {"autotp_size": @2}}\n')
    data = scan(tmp_path)
    assert contexts(data) == {"job.yaml": ("training", "multi"), "list.yaml": ("training", "multi"),
                              "args.json": ("training", "multi"), "ds.json": ("training", "single")}
    counts = {Path(f).name: c["node_count"] for f, c in data["files"].items()}
    assert counts == {"job.yaml": 2, "list.yaml": 2, "args.json": 2, "ds.json": 1}
    assert found(data) >= {("job.yaml", "--tensor-model-parallel-size", "2"), ("list.yaml", "--tensor-model-parallel-size", "2")}
    v = g10.judge(readings_of(tpscan=data), Config())
    assert v.status is Status.FAIL


def test_a_comma_after_a_key_in_code_is_not_a_node_count():
    # getattr(args, "num_nodes", 1) is a default in code, not this job's node count
    assert tpscan.node_info('n = getattr(args, "num_nodes", 1)\n', "python")["nodes"] == "unknown"
    assert tpscan.node_info("num_nodes:\n  - 1\n", "yaml")["nodes"] == "unknown"


def test_torchrun_without_nnodes_is_one_node_and_says_so(tmp_path):
    put(tmp_path, "train.sh", "#!/bin/bash\ntorchrun --nproc-per-node=1 train.py \\\n  --tensor-model-parallel-size @2\n")
    put(tmp_path, "pod.yaml", 'command: ["torchrun", "--nproc-per-node", "1", "train.py", "--tp-size", "@2"]\n')
    put(tmp_path, "vars.sh", "torchrun $DIST_ARGS train.py --tensor-model-parallel-size @2\n")
    put(tmp_path, "pet.sh", "export PET_NNODES=@2\ntorchrun train.py --tensor-model-parallel-size @2\n")
    put(tmp_path, "launch.py", 'subprocess.run(["torchrun", "train.py", "--tensor-model-parallel-size", "@2"] + extra)\n')
    data = scan(tmp_path)
    ctx = {Path(f).name: c for f, c in data["files"].items()}
    assert {n: (c["nodes"], c["node_count"]) for n, c in ctx.items()} == {
        "train.sh": ("single", 1), "pod.yaml": ("single", 1),
        "vars.sh": ("unknown", None),  # --nnodes may hide in $DIST_ARGS
        "pet.sh": ("unknown", None),  # PET_NNODES sets it; not resolved here
        "launch.py": ("unknown", None),  # Python composes the command: no default assumed
    }
    assert ctx["train.sh"]["node_markers"] == ["torchrun without --nnodes: one node (torchrun's default)"]
    assert ctx["vars.sh"]["node_unresolved"] == ["torchrun options from a variable: $DIST_ARGS"]
    v = g10.judge(readings_of(tpscan=data), Config())
    by_file = {d.split(":")[0].rsplit("/", 1)[-1]: d for d in v.details}
    assert "single node" in by_file["train.sh"] and by_file["train.sh"].split(": ")[2].startswith("ok")
    assert any(e.what.endswith("train.sh") and "torchrun without --nnodes" in str(e.value) for e in v.evidence)


def test_served_fine_tuned_model_is_still_serving(tmp_path):
    # "sft"/"finetuned" in a model name is a weak hint; `vllm serve` decides.
    put(tmp_path, "serve.sh", "vllm serve org/llama-sft-finetuned --tensor-parallel-size @2 --served-model-name sft\n")
    assert contexts(scan(tmp_path)) == {"serve.sh": ("serving", "unknown")}


def test_a_launch_script_lends_its_node_count_to_the_config_it_names(tmp_path):
    put(tmp_path, "configs/tp.yaml", "distributed:\n  tp_size: @2\n")
    put(tmp_path, "configs/other.yaml", "distributed:\n  tp_size: @2\n")
    put(tmp_path, "scripts/launch.sh", "#!/bin/bash\ntorchrun --nnodes=2 --node-rank=$RANK train.py --config ../configs/tp.yaml\n")
    data = scan(tmp_path)
    ctx = {Path(f).name: c for f, c in data["files"].items()}
    assert (ctx["tp.yaml"]["context"], ctx["tp.yaml"]["nodes"]) == ("training", "multi")
    assert ctx["tp.yaml"]["launched_by"] == [str(tmp_path / "scripts/launch.sh")]
    assert any("--nnodes=2" in m for m in ctx["tp.yaml"]["node_markers"])
    # named by path, not by bare file name: the other config stays unknown
    assert (ctx["other.yaml"]["context"], ctx["other.yaml"]["nodes"]) == ("unknown", "unknown")


# --- what is skipped, and why -------------------------------------------------------------------


def test_vcs_virtualenvs_node_modules_site_packages_and_caches_are_skipped(tmp_path):
    tp = "tensor_parallel_size: @2\n"
    put(tmp_path, "real.yaml", tp)
    put(tmp_path, ".git/config.yaml", tp)
    put(tmp_path, ".venv/pyvenv.cfg", "home = /usr/bin\n")
    put(tmp_path, ".venv/cfg.yaml", tp)
    put(tmp_path, "venv/bin/activate", "# This file must be used with source\n")  # an old virtualenv: no pyvenv.cfg
    put(tmp_path, "venv/cfg.yaml", tp)
    put(tmp_path, "env/conda-meta/history", "==> 2025-01-01 <==\n")  # a conda env
    put(tmp_path, "env/cfg.yaml", tp)
    put(tmp_path, "myenv/pyvenv.cfg", "home = /usr/bin\n")
    put(tmp_path, "myenv/lib/cfg.yaml", tp)
    put(tmp_path, "web/node_modules/pkg/cfg.yaml", tp)
    put(tmp_path, "opt/lib/python3.12/site-packages/vllm/cfg.yaml", tp)
    put(tmp_path, "src/__pycache__/cfg.yaml", tp)
    put(tmp_path, "notes.txt", tp)  # not a launch-config type: not read
    data = scan(tmp_path)
    assert found(data) == {("real.yaml", "tensor_parallel_size", "2")}
    assert data["skipped"] == {"__pycache__": 1, "node_modules": 1, "site-packages": 1, "vcs folder": 1, "virtualenv": 4}
    assert {Path(s["path"]).name for s in data["skipped_sample"]} >= {".git", "myenv", "node_modules", "site-packages"}
    assert data["files_read"] == 1 and data["other_files"] == 1


def test_folders_named_like_environments_are_scanned_unless_they_are_one(tmp_path):
    # configs/env/ is a config folder, not a virtualenv: it has no pyvenv.cfg, conda-meta/ or bin/activate
    put(tmp_path, "configs/env/two-spark.yaml", "trainer:\n  num_nodes: @2\nmodel:\n  tensor_model_parallel_size: @2\n")
    put(tmp_path, "venv/serve.sh", "vllm serve m --tensor-parallel-size @2\n")
    put(tmp_path, ".venv/bin/python3", "")  # a bin/ without activate is not enough
    put(tmp_path, ".venv/tp.yaml", "tp_size: @2\n")
    data = scan(tmp_path)
    assert found(data) == {("two-spark.yaml", "tensor_model_parallel_size", "2"),
                           ("serve.sh", "--tensor-parallel-size", "2"), ("tp.yaml", "tp_size", "2")}
    assert data["skipped"] == {}
    assert contexts(data)["two-spark.yaml"] == ("training", "multi")
    v = g10.judge(readings_of(tpscan=data), Config())
    assert v.status is Status.FAIL and "two-spark.yaml" in v.summary


def test_python_test_modules_are_skipped_but_launchers_are_read(tmp_path):
    put(tmp_path, "tools/launch.py", 'llm = LLM(model="m", tensor_parallel_size=@2)\n')
    for name in ("tests/test_cfg.py", "tests/cfg_test.py", "tests/conftest.py"):
        put(tmp_path, name, 'CASES = [("--tensor-parallel-size", "@2")]\nkw = dict(tp_size=@2)\n')
    data = scan(tmp_path)
    assert found(data) == {("launch.py", "tensor_parallel_size", "2")}
    assert data["skipped"] == {"python test module": 3}


def test_kernel_and_device_trees_under_root_are_not_entered():
    data = scan("/", deadline_s=0.3)  # the listing of / is all this needs; stop soon after
    system = {s["path"] for s in data["skipped_sample"] if s["reason"] == "system folder"}
    assert system == {p for p in ("/proc", "/sys", "/dev") if os.path.isdir(p)}


def test_binary_and_huge_files_are_skipped_with_a_reason(tmp_path):
    put(tmp_path, "model.json", b'{"tensor_parallel_size": @2}\x00\x01\x02' + b"x" * 100)
    put(tmp_path, "big.yaml", "tensor_parallel_size: @2\n" + "# padding\n" * 20_000)
    put(tmp_path, "small.yaml", "tensor_parallel_size: @2\n")
    data = scan(tmp_path, max_bytes=64 * 1024)
    assert found(data) == {("small.yaml", "tensor_parallel_size", "2")}
    assert data["skipped"] == {"binary": 1, "too large": 1}
    reasons = {Path(s["path"]).name: s["reason"] for s in data["skipped_sample"]}
    assert reasons == {"model.json": "binary", "big.yaml": "too large"}


def test_files_just_over_the_first_read_block_are_read_whole(tmp_path):
    body = "# pad\n" * 12_000 + "tensor_parallel_size: @2\n"  # ~72 KB: past the first 64 KB block
    put(tmp_path, "long.yaml", body)
    data = scan(tmp_path)
    assert [m["line"] for m in data["matches"]] == [12_001]


def test_malformed_yaml_json_and_bad_utf8_survive(tmp_path):
    put(tmp_path, "broken.yaml", "model: [unclosed\n  tensor_parallel_size: @2\n\t- : :\n")
    put(tmp_path, "broken.json", '{"tensor_parallel_size": @2,, "x": }\n')
    put(tmp_path, "latin1.sh", b"# caf\xe9 \xff\xfe\nvllm serve m --tensor-parallel-size @2\n")
    put(tmp_path, "empty.toml", "")
    put(tmp_path, "crlf.yaml", "# page\x0c break\r\nmodel:\r\n  tensor_parallel_size: @2\r\n")
    data = scan(tmp_path)
    assert {n for n, _, _ in found(data)} == {"broken.yaml", "broken.json", "latin1.sh", "crlf.yaml"}
    assert [(m["line"], m.get("key_path")) for m in data["matches"] if m["file"].endswith("crlf.yaml")] == [
        (3, "model.tensor_parallel_size")]
    assert data["skipped"] == {}


def test_unreadable_folders_and_files_are_recorded_not_fatal():
    base = Path(tempfile.mkdtemp(prefix="sparktui-g10-perm-"))
    try:
        base.chmod(0o755)
        put(base, "ok/serve.sh", "vllm serve m --tensor-parallel-size @2\n", mode=0o644)
        (base / "ok").chmod(0o755)
        put(base, "locked/secret.yaml", "tensor_parallel_size: @2\n", mode=0o644)
        put(base, "closed.yaml", "tensor_parallel_size: @2\n", mode=0o000)
        (base / "locked").chmod(0o000)
        data = _scan_as_nobody(base) if os.geteuid() == 0 else scan(base)
        assert found(data) == {("serve.sh", "--tensor-parallel-size", "2")}
        assert data["skipped"] == {"permission denied": 2}
        assert {Path(s["path"]).name for s in data["skipped_sample"]} == {"locked", "closed.yaml"}
        assert data["paths"][0]["status"] == "scanned"
    finally:
        (base / "locked").chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)


def test_symlink_loops_end_and_are_recorded(tmp_path):
    put(tmp_path, "job/a/train.yaml", "tensor_parallel_size: @2\n")
    (tmp_path / "job/a/loop").symlink_to(tmp_path / "job")  # a/loop -> job -> a -> loop ...
    (tmp_path / "job/self").symlink_to("self")  # a symlink to itself
    (tmp_path / "job/dangling.yaml").symlink_to(tmp_path / "job/nowhere.yaml")
    data = scan(tmp_path / "job")
    assert sorted(n for n, _, _ in found(data)) == ["train.yaml"]
    assert data["skipped"] == {"broken symlink": 1, "symlink loop": 1,
                               "symlink to a folder already scanned (loop or duplicate)": 1}


def test_symlinks_out_of_the_named_folders_are_not_followed_unless_named_too(tmp_path):
    put(tmp_path, "job/train.yaml", "tensor_parallel_size: @2\n")
    put(tmp_path, "outside/serve.sh", "vllm serve m --tp @2\n")
    (tmp_path / "job/linked").symlink_to(tmp_path / "outside")
    (tmp_path / "job/linked.sh").symlink_to(tmp_path / "outside/serve.sh")
    alone = scan(tmp_path / "job")
    assert sorted(n for n, _, _ in found(alone)) == ["train.yaml"]
    assert alone["skipped"] == {"symlink out of the scanned folders": 2}
    both = scan(tmp_path / "job", tmp_path / "outside")  # a link into another named folder is fine
    assert sorted(n for n, _, _ in found(both)) == ["linked.sh", "serve.sh", "train.yaml"]


def test_a_symlink_into_proc_is_never_followed(tmp_path):
    """~/link -> /proc/1/root would walk another process's whole file system."""
    put(tmp_path, "job/train.yaml", "tensor_parallel_size: @2\n")
    for name, target in (("proc_root", "/proc/self/root"), ("proc", "/proc"), ("sys", "/sys/kernel"),
                         ("dev", "/dev"), ("environ.env", "/proc/self/environ")):
        (tmp_path / "job" / name).symlink_to(target)
    data = scan(tmp_path / "job", deadline_s=5)
    assert data["skipped"] == {"symlink into /proc, /sys or /dev": 5}
    assert data["dirs_walked"] == 1 and data["files_read"] == 1 and not data["truncated"]
    link_root = scan(tmp_path / "job" / "proc")  # named itself, it is still not entered
    assert link_root["paths"][0]["status"].startswith("skipped: system folder") and link_root["dirs_walked"] == 0


def test_overlapping_paths_are_scanned_once(tmp_path):
    put(tmp_path, "job/cfg/a.yaml", "tp_size: @2\n")
    data = scan(tmp_path / "job", tmp_path / "job")
    assert len(data["matches"]) == 1
    assert [p["status"] for p in data["paths"]] == ["scanned", "already scanned"]


def test_missing_paths_and_explicit_files(tmp_path):
    put(tmp_path, "launch.cmd", "vllm serve m --tensor-parallel-size @2\n")  # unknown type, named explicitly
    data = scan(tmp_path / "nope", tmp_path / "launch.cmd")
    assert [p["status"] for p in data["paths"]] == ["missing", "scanned"]
    assert found(data) == {("launch.cmd", "--tensor-parallel-size", "2")}


def test_results_are_bounded(tmp_path):
    put(tmp_path, "many.sh", "vllm serve m --tensor-parallel-size @2\n" * (tpscan.MAX_MATCHES + 40))
    data = scan(tmp_path)
    assert len(data["matches"]) == tpscan.MAX_MATCHES
    assert data["matches_total"] == tpscan.MAX_MATCHES + 40
    assert data["matches_dropped"] == 40


def test_deadline_marks_the_scan_truncated(tmp_path):
    put(tmp_path, "a/b.yaml", "tp_size: @2\n")
    data = scan(tmp_path, deadline_s=-1)
    assert data["truncated"] and data["files_read"] == 0


def test_read_scans_the_configured_paths_relative_to_cwd(tmp_path, monkeypatch):
    put(tmp_path, "proj/configs/a.yaml", "trainer:\n  num_nodes: @2\nmodel:\n  tensor_model_parallel_size: @2\n")
    monkeypatch.chdir(tmp_path / "proj")
    reading = tpscan.read(Config())
    assert reading.error is None and reading.probe == "tpscan"
    assert reading.data["paths"][0]["path"] == "."
    assert [m["file"] for m in reading.data["matches"]] == ["configs/a.yaml"]
    reading = tpscan.read(Config(scan=ScanConfig(paths=["configs", "missing"])))
    assert [p["status"] for p in reading.data["paths"]] == ["scanned", "missing"]
    monkeypatch.setenv("HOME", str(tmp_path))
    reading = tpscan.read(Config(scan=ScanConfig(paths=["~/proj"])))
    assert reading.data["paths"][0]["path"] == "~/proj" and len(reading.data["matches"]) == 1


# --- nothing read is never "scanned": FIFOs, devices, pseudo-files, oversized files --------------


def test_fifos_devices_and_pseudo_files_are_skipped_unopened_and_said(tmp_path):
    os.mkfifo(tmp_path / "x.yaml")  # opening it for reading would block without O_NONBLOCK
    data = scan(tmp_path / "x.yaml", "/dev/null", "/proc/self/status", deadline_s=5)
    assert [p["status"] for p in data["paths"]] == [
        "skipped: not a regular file (FIFO)", "skipped: not a regular file (character device)",
        "skipped: kernel pseudo-file (/proc, /sys)"]
    assert data["files_read"] == 0 and data["bytes_read"] == 0


def test_a_fifo_with_a_config_name_inside_a_folder_is_counted_as_skipped(tmp_path):
    os.mkfifo(tmp_path / "x.yaml")
    put(tmp_path, "a.yaml", "model: m\n")
    data = scan(tmp_path, deadline_s=5)
    assert data["files_read"] == 1
    assert data["skipped"] == {"not a regular file (FIFO)": 1}


def test_an_explicit_file_skipped_as_too_large_is_not_reported_scanned(tmp_path):
    put(tmp_path, "big.yaml", "tensor_parallel_size: @2\n" + "# padding\n" * 20_000)
    put(tmp_path, "empty.yaml", "")
    data = scan(tmp_path / "empty.yaml", tmp_path / "big.yaml", max_bytes=64 * 1024)
    assert [p["status"] for p in data["paths"]] == ["scanned", "skipped: too large"]
    assert data["skipped"] == {"too large": 1} and data["bytes_read"] == 0


# --- bounded, linear, cancellable (issue 13 item 7, issue 15) --------------------------------------

# Files that took seconds to minutes while the regexes backtracked over runs of blanks: each is
# built at n and at 4n; a linear scan takes about 4 times as long, a quadratic one 16 times.
PATHOLOGICAL = {
    "blank lines after a setting": ("launch.sh", lambda n: "tensor_parallel_size=@2\n" + "\n" * n + "x\n"),
    "spaces after --nnodes": ("launch.sh", lambda n: "tensor_parallel_size=@2\n--nnodes" + " " * n + "x\n"),
    "spaces after a key at a line end": ("a.yaml", lambda n: "tensor_parallel_size:" + " " * n + "x\n"),
    "an open TOML table header": ("a.toml", lambda n: "tp_size = @2\n[" + " " * n + "x\n"),
    "unclosed ${ after each flag": ("launch.sh", lambda n: "--tp=${" * (n // 8) + "\n"),
    "one long dashed word": ("launch.sh", lambda n: "tp_size=@2\n" + "-a" * (n // 2) + "\n"),
    "continued torchrun lines": ("launch.sh", lambda n: "torchrun \\\n" * (n // 10) + "tp_size=@2\n"),
    "variables assigned after use": ("launch.sh", lambda n: "tp_size=$A\n" * (n // 20) + "A=1\n" * (n // 20)),
}


@pytest.mark.parametrize("case", list(PATHOLOGICAL), ids=list(PATHOLOGICAL))
def test_pathological_files_scan_in_linear_time_well_within_a_second(tmp_path, case):
    name, build = PATHOLOGICAL[case]
    times = []
    for n in (10_000, 40_000):
        path = put(tmp_path / str(n), name, build(n))
        times.append(_best_of(3, lambda p=path: scan(p)))
        assert scan(path)["files_read"] == 1  # read, not skipped
    assert times[1] < 1.0, f"{case}: {times[1]:.2f} s for 40,000"
    assert times[1] / max(times[0], 1e-3) < 8, f"{case}: 4x the size took {times[1] / times[0]:.1f}x the time"


def test_the_blank_line_launch_script_still_finds_its_setting(tmp_path):
    path = put(tmp_path, "launch.sh", "TP=@2\n" + "\n" * 40_000 + "torchrun --nnodes 2 train.py --tensor-parallel-size $TP\n")
    data = scan(path)
    assert [(m["line"], m["degree"]) for m in data["matches"]] == [(40_002, 2)]
    assert data["files"][str(path)]["nodes"] == "multi"


def _tree(root: Path, folders: int, per_folder: int, depth: int = 1) -> None:
    for i in range(folders):
        d = root.joinpath(*[f"l{k}" for k in range(depth - 1)], f"d{i}")
        d.mkdir(parents=True, exist_ok=True)
        for j in range(per_folder):
            (d / f"c{j}.yaml").write_text("model: m\n")


def test_the_default_scan_of_the_current_folder_is_bounded_and_says_so(tmp_path, monkeypatch):
    put(tmp_path, "a/b/c/d/in.yaml", "tensor_parallel_size: @2\n")  # depth 4: read
    put(tmp_path, "a/b/c/d/e/deep.yaml", "tensor_parallel_size: @4\n")  # depth 5: not entered
    monkeypatch.chdir(tmp_path)
    data = tpscan.read(Config()).data
    root = data["paths"][0]
    assert (root["max_depth"], root["max_files"], root["max_seconds"]) == (
        tpscan.DEFAULT_MAX_DEPTH, tpscan.DEFAULT_MAX_FILES, tpscan.DEFAULT_DEADLINE_S)
    assert found(data) == {("in.yaml", "tensor_parallel_size", "2")}
    assert data["skipped"] == {"below the depth bound (4)": 1} and data["truncated"] is None
    named = tpscan.read(Config(scan=ScanConfig(paths=[str(tmp_path)]))).data  # named: read whole
    assert {n for n, _, _ in found(named)} == {"in.yaml", "deep.yaml"} and "max_depth" not in named["paths"][0]


def test_the_file_bound_stops_the_walk_and_says_where(tmp_path):
    _tree(tmp_path, folders=6, per_folder=10)
    data = scan(tmp_path, max_files=25)
    assert data["files_considered"] == 25
    assert data["truncated"].startswith("stopped at the 25-file bound (in ") and "folders not scanned" in data["truncated"]
    assert data["paths"][0]["max_files"] == 25
    assert scan(tmp_path, max_files=60)["truncated"] is None  # exactly at the bound: nothing was left


def test_the_time_bound_stops_a_scan_within_a_large_file(tmp_path):
    # settings on every line: each is read (context patterns alone read the first 512 KiB, issue 22)
    put(tmp_path, "big.yaml", "tp_size: @2\n" + "tensor_parallel_size: @1\n" * 150_000)
    t0 = time.perf_counter()
    data = scan(tmp_path, deadline_s=0.2)
    assert time.perf_counter() - t0 < 1.0
    assert data["truncated"].startswith("stopped at the 0.2-s time bound") and data["paths"][0]["status"] == "scanned"


def test_cancel_stops_a_scan_of_a_big_tree_within_a_second(tmp_path):
    """Real files: a 10,000-file tree and big configs whose settings take seconds to read (a setting on
    every line: context patterns alone read only a file's first 512 KiB since issue 22)."""
    _tree(tmp_path / "many", folders=100, per_folder=100)
    for i in range(20):
        put(tmp_path, f"big/b{i}.yaml", "tp_size: @2\n" + "tensor_parallel_size: @1\n" * 30_000)
    for when in (0.3, 1.2):  # in the walk of small files, and within a big file
        cancel = threading.Event()
        timer = threading.Timer(when, cancel.set)
        timer.start()
        t0 = time.perf_counter()
        data = tpscan.scan([str(tmp_path / "many"), str(tmp_path / "big")], 4 * MB, cancel=cancel)
        late = time.perf_counter() - t0 - when
        timer.cancel()
        assert cancel.is_set(), "the scan ended before the cancel"
        assert late < 1.0, f"ran {late:.2f} s after the cancel"
        assert data["truncated"].startswith("cancelled")
        assert g10.judge(readings_of(tpscan=data), Config()).status is not Status.OK


def test_a_file_swapped_for_a_fifo_after_the_listing_is_not_read(tmp_path, monkeypatch):
    put(tmp_path, "a.yaml", "tp_size: @2\n")
    real_sort = tpscan._sort_entries

    def swap_after_listing(st, entries, *rest):
        out = real_sort(st, entries, *rest)
        (tmp_path / "a.yaml").unlink()
        os.mkfifo(tmp_path / "a.yaml")
        return out

    monkeypatch.setattr(tpscan, "_sort_entries", swap_after_listing)
    t0 = time.perf_counter()
    data = scan(tmp_path, deadline_s=5)
    assert time.perf_counter() - t0 < 1.0
    assert data["files_read"] == 0 and data["skipped"] == {"not a regular file (FIFO)": 1}
