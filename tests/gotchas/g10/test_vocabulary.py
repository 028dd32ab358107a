"""G10's tensor-parallel vocabulary from real frameworks (issue 22, "Seen" 9 and "What to build" 4).

Each spelling is tested on the real config that uses it: a recipe of tests/data/recipes/ (its source
is in MANIFEST.toml), or a short public excerpt quoted below with its repository, path and commit.
Then the spellings the issue names as read ok at 788276f, each in a multi-node training launch.

Contents written here put ``@`` before every number (``put`` drops it), so this module itself holds no
setting a scan of the repository would report.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.gotchas import g10_tensor_parallel as g10
from sparktui.probes import tpscan
from tests.conftest import readings_of
from tests.gotchas.builders import RECIPES, tp_put_hydra as put


def recipe(prefix: str) -> Path:
    found = sorted(p for p in RECIPES.iterdir() if p.name.startswith(prefix + "-"))
    assert found, f"no recipe {prefix}-* in {RECIPES}"
    return found[0]


def scan_judge(*paths: Path) -> tuple[dict, g10.Verdict]:
    data = tpscan.scan([str(p) for p in paths], 4 * 1024 * 1024)
    return data, g10.judge(readings_of(tpscan=data), Config())


# (recipe, file name, key as reported, degree, verdict of the recipe): one row per framework spelling
CORPUS_SPELLINGS = [
    ("014", "maverick_17B_128E_full.yaml", "tensor_parallel_dim", 8, Status.WARN),  # torchtune, config alone
    ("010", "70B_full_multinode.yaml", "tensor_parallel_dim", 8, Status.FAIL),  # torchtune + its .slurm
    ("023", "config_qwen.yaml", "tp", 2, Status.WARN),  # nanotron parallelism.tp
    ("020", "config_tiny_llama.yaml", "tp", 2, Status.FAIL),  # nanotron + ${CONFIG_FILE:=...} launcher
    ("032", "32b.sh", "ici_tensor_parallelism", 4, Status.WARN),  # MaxText on TPU slices: hosts not written
    ("031", "test_collective_matmul_llama2_7b.sh", "ici_tensor_parallelism", 8, Status.OK),  # hardware=gpu: one node
    ("050", "train_ppo_ray_slurm.sh", "--vllm_tensor_parallel_size", 2, Status.WARN),  # OpenRLHF engine
    ("051", "train_ppo_ray_slurm.sh", "--vllm.tensor_parallel_size", 2, Status.WARN),  # OpenRLHF dotted flags
    ("042", "run_qwen2.5-32b.sh", "actor_rollout_ref.rollout.tensor_model_parallel_size", 4, Status.WARN),  # verl engine
    ("041", "run_moonlight16b_math_megatron.sh", "actor_rollout_ref.actor.megatron.tensor_model_parallel_size", 4,
     Status.FAIL),  # verl Megatron actor
    ("061", "dpo-llama3.1-8b-instruct-4n8g-fsdp2tp2-quick.v2.yaml", "tensor_parallel_size", 2, Status.FAIL),  # NeMo-RL
    ("064", "grpo-deepseek-v3-32n8g.yaml", "tensor_parallel_size", 32, Status.WARN),  # NeMo-RL vllm_cfg via defaults
    ("001", "CONFIG.sh", "--tensor-model-parallel-size", 32, Status.FAIL),  # Megatron, sourced, TP=$((64/PP))
    ("073", "175b.yaml", "tensor_model_parallel_size", 4, Status.FAIL),  # NeMo launcher
    ("121", "llama3_70b.toml", "tensor_parallel_degree", 8, Status.WARN),  # torchtitan
    ("094", "20B.yml", "model_parallel_size", 2, Status.WARN),  # GPT-NeoX's name for TP
    ("088", "ds_config_model.json", "tensor_parallel.size", 2, Status.FAIL),  # DeepSpeed tensor_parallel block
    ("081", "run_66b.sh", "--inference_tp_size", 8, Status.WARN),  # DeepSpeed-Chat hybrid engine
    ("087", "ds_config.json", "autotp_size", 4, Status.OK),  # DeepSpeed AutoTP, deepspeed --num_gpus: one node
    ("110", "run_dbrx_pretrain_ptl.sh", "--tensor_parallel_size", 32, Status.FAIL),  # neuronx, : ${TP_DEGREE:=32}
    ("140", "llm_mgmn_trtllm_serve.sh", "--tp_size", 16, Status.OK),  # TensorRT-LLM serving
]


@pytest.mark.parametrize("prefix,name,key,degree,status", CORPUS_SPELLINGS, ids=[f"{r[0]}:{r[2]}" for r in CORPUS_SPELLINGS])
def test_each_framework_spelling_is_read_in_the_real_config_that_uses_it(prefix, name, key, degree, status):
    data, v = scan_judge(recipe(prefix))
    got = [(Path(m["file"]).name, m["key"], m["degree"]) for m in data["matches"]]
    assert (name, key, degree) in got, got
    assert v.status is status, (v.summary, v.details)


# Public excerpts for spellings no corpus recipe uses (quoted whole, with their source).
# hpcaitech/ColossalAI examples/language/gpt/run.sh @ a25f755331309405fbed0520a706bec3f7099fcb
COLOSSALAI_RUN = ("env OMP_NUM_THREADS=16 torchrun --standalone --nproc_per_node=4 train_gpt_demo.py --tp_degree=@2 "
                  "--placement='cpu' 2>&1 | tee run.log\n")
# dacorvo/neuronx-distributed-inference non-reg-spec.sh @ 511346d2b71c933006384dd775129c579aaacd44 (first lines)
NXDI_SPEC = ("#!/bin/bash\ninference_demo  --model-type llama --task-type causal-lm run \\\n"
             "                --model-path ./Llama-3.1-8B-Instruct/ \\\n"
             "                --compiled-model-path Llama-3.1-8B-Instruct-traced \\\n"
             "                --torch-dtype bfloat16 \\\n"
             "                --tp-degree @8 \\\n"
             "                --batch-size 1 \\\n")


def test_colossalai_tp_degree_flag_is_read_and_one_node_by_torchrun_standalone(tmp_path):
    put(tmp_path, "run.sh", COLOSSALAI_RUN)
    data, v = scan_judge(tmp_path)
    assert [(m["key"], m["degree"]) for m in data["matches"]] == [("--tp_degree", 2)]
    assert v.status is Status.OK and "single node" in v.details[0]


def test_neuronx_tp_degree_flag_is_read(tmp_path):
    put(tmp_path, "non-reg-spec.sh", NXDI_SPEC)
    data, v = scan_judge(tmp_path)
    assert [(m["key"], m["degree"], m["line"]) for m in data["matches"]] == [("--tp-degree", 8, 6)]
    assert v.status is Status.WARN  # neither clearly training nor serving, node count unknown: never ok


# The spellings "Seen" 9 names, each in a two-node torchrun training launch: fail, with file:line.
SEEN = {
    "torchtune tensor_parallel_dim": ("cfg.yaml", "tensor_parallel_dim: @2\n"),
    "nanotron tp": ("cfg.yaml", "parallelism:\n  dp: 1\n  pp: 1\n  tp: @2\n"),
    "MaxText ici_tensor_parallelism": ("cfg.yaml", "hardware: gpu_multiprocess\nici_tensor_parallelism: @2\n"),
    "--tp-degree 2": ("args.sh", "python train.py --tp-degree @2\n"),
    "--tp_degree=2": ("args.sh", "python train.py --tp_degree=@2\n"),
    "--tensor-parallel 2": ("args.sh", "python train.py --tensor-parallel @2\n"),
    "--model.tp 2": ("args.sh", "python train.py --model.tp @2\n"),
}


@pytest.mark.parametrize("case", list(SEEN), ids=list(SEEN))
def test_seen_spellings_fail_in_a_two_node_training_launch(tmp_path, case):
    name, text = SEEN[case]
    if name.endswith(".sh"):
        put(tmp_path, "launch.sh", "#!/bin/bash\ntorchrun --nnodes=2 --nproc-per-node=1 " + text.split("python ", 1)[1])
    else:
        put(tmp_path, name, text)
        put(tmp_path, "launch.sh", f"#!/bin/bash\ntorchrun --nnodes=2 --nproc-per-node=1 train.py --config {name}\n")
    data, v = scan_judge(tmp_path)
    assert v.status is Status.FAIL, (case, v.summary, v.details)
    assert [m["degree"] for m in data["matches"]] == [2]
    assert ":2: " in v.details[0] or ":4: " in v.details[0] or ":1: " in v.details[0]


def test_maxtext_dcn_tensor_parallelism_is_across_nodes_by_definition(tmp_path):
    # MaxText: dcn_* axes span slices over the data-centre network; no node count needs to be written
    put(tmp_path, "run.sh", "python3 MaxText/train.py MaxText/configs/base.yml dcn_tensor_parallelism=@2 ici_fsdp_parallelism=-1\n")
    data, v = scan_judge(tmp_path)
    assert [(m["key"], m["degree"], m.get("scope")) for m in data["matches"]] == [("dcn_tensor_parallelism", 2, "dcn")]
    assert v.status is Status.FAIL and "data-centre network" in v.details[0]


def test_a_bare_tp_word_is_no_setting(tmp_path):
    put(tmp_path, "a.yaml", "tp: true\nhttp_port: 8080\nftp: x\n")
    put(tmp_path, "b.sh", "tp=@2\necho $tp\n")  # a variable: read where a TP flag uses it
    data, _ = scan_judge(tmp_path)
    assert data["matches"] == []


def test_nemo_model_parallel_size_beside_tensor_model_parallel_is_tp_times_pp_not_tp(tmp_path):
    put(tmp_path, "5b.yaml", "run:\n  model_parallel_size: @8\ntrainer:\n  num_nodes: 2\nmodel:\n"
                             "  tensor_model_parallel_size: @1\n  pipeline_model_parallel_size: @8\n")
    data, v = scan_judge(tmp_path)
    assert data["matches"] == [] and v.status is Status.OK


def test_a_lone_tp_key_without_parallel_axes_is_not_a_tp_degree(tmp_path):
    put(tmp_path, "bot.yaml", "strategy:\n  sl: 1\n  tp: @2\n")  # a trading bot's take-profit
    put(tmp_path, "args.py", "cfg = ParallelismArgs(dp=@2, pp=@1, tp=@2)\n")  # nanotron's Python config
    data, _ = scan_judge(tmp_path)
    assert [(Path(m["file"]).name, m["key"], m["degree"]) for m in data["matches"]] == [("args.py", "tp", 2)]


def test_a_bare_tp_with_no_degree_is_prose_not_a_setting(tmp_path):
    # NVIDIA/Megatron-LM examples/mimo/training/grad_sync.py: a docstring naming rank coordinates
    put(tmp_path, "grad_sync.py", 'def f():\n    """Global rank of the coordinate (tp=0, cp=0, dp=0, pp=last)."""\n')
    data, v = scan_judge(tmp_path)
    assert data["matches"] == [] and v.status is Status.OK
