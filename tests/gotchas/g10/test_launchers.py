"""G10 reads launchers as people write them (issue 22, "Seen" 9 and the G10 half of "Seen" 6).

`.slurm`/`.sbatch` scripts, templated YAML, variables from sourced files and `${VAR:=N}`/`${VAR:-N}`,
YAML/Hydra `defaults:` chains, the same rule for every RL framework's generation engine, pipeline
parallelism that is no node count, `deepspeed --num_gpus N` without a hostfile as one node; the
node-count pattern linear on dotted chains; and every verdict with the file:line of its TP setting
and of its node count.

Contents put ``@`` before numbers (``put`` drops it), so this module holds no setting a scan would report.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.gotchas import g10_tensor_parallel as g10
from sparktui.probes import tpscan
from tests.conftest import readings_of
from tests.gotchas.builders import tp_put_hydra as put, values as evidence


def scan_judge(root: Path, **kw) -> tuple[dict, g10.Verdict]:
    data = tpscan.scan([str(root)], 4 * 1024 * 1024, **kw)
    return data, g10.judge(readings_of(tpscan=data), Config())


# --- launchers as written ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["train.slurm", "train.sbatch"])
def test_slurm_and_sbatch_launchers_are_read(tmp_path, name):
    put(tmp_path, name, "#!/bin/bash\n#SBATCH --nodes=@2\n#SBATCH --gpus-per-node=1\n"
                        "srun torchrun --nnodes 2 --nproc-per-node 1 pretrain_gpt.py --tensor-model-parallel-size @2\n")
    data, v = scan_judge(tmp_path)
    assert v.status is Status.FAIL, v.summary
    assert v.details[0].startswith(f"{tmp_path / name}:4: --tensor-model-parallel-size=2 (training, multi-node)")
    ctx = evidence(v)[f"context of {tmp_path / name}"]
    assert ctx["node markers at"][0] == "line 2: --nodes=2"  # the node count's line, beside the TP's


def test_templated_yaml_is_read_and_an_unrendered_value_is_never_ok(tmp_path):
    put(tmp_path, "job.yaml.j2", "trainer:\n  num_nodes: {{ nodes }}\n  max_steps: 100\n"
                                 "model:\n  tensor_model_parallel_size: {{ tp }}\n")
    data, v = scan_judge(tmp_path)
    assert v.status is Status.WARN, v.summary  # training, TP from a template variable: cannot tell, never ok
    assert "job.yaml.j2:5: model.tensor_model_parallel_size={{ tp }} (unresolved)" in v.details[0]
    (ctx,) = data["files"].values()
    assert ctx["node_unresolved"] == ["line 2: num_nodes: {{ nodes }}"]


def test_a_template_default_renders_when_nothing_sets_it(tmp_path):
    put(tmp_path, "values.yaml.tmpl", "trainer:\n  num_nodes: {{ nodes | default(@2) }}\n  max_steps: 1\n"
                                      "tensor_model_parallel_size: {{ tp | default(@2) }}\n")
    _, v = scan_judge(tmp_path)
    assert v.status is Status.FAIL, v.summary


@pytest.mark.parametrize("how", ["source env.sh", ". ./vars.sh", 'source "$(dirname "$0")/env.sh"'])
def test_variables_set_in_a_sourced_file_are_resolved(tmp_path, how):
    name = "vars.sh" if "vars" in how else "env.sh"
    put(tmp_path, name, "export NNODES=@2\nTP=@2\n")
    put(tmp_path, "launch.sh", f"#!/bin/bash\n{how}\n"
                               "torchrun --nnodes $NNODES train.py --tensor-model-parallel-size $TP\n")
    data, v = scan_judge(tmp_path)
    assert v.status is Status.FAIL, (how, v.summary)
    (m,) = [m for m in data["matches"] if m["file"].endswith("launch.sh")]
    assert m["degree"] == 2 and m["via"] == "TP=2 (line 2)"


def test_a_sourced_file_is_read_as_the_launcher_runs_it(tmp_path):
    # Megatron sc21 style: the launcher sets TP and NNODES, then sources the file that uses them
    put(tmp_path, "CONFIG.sh", "export PARAMS=\" --tensor-model-parallel-size ${TP} --pipeline-model-parallel-size ${PP} "
                               "--train-iters 500 --lr 0.0001\"\n")
    put(tmp_path, "SBATCH.sh", "sbatch --nodes=${NNODES} SRUN.sh\n")
    put(tmp_path, "run.sh", "#!/bin/bash\nPP=@2\nTP=$((64/PP))\nNNODES=@8\n. `pwd`/CONFIG.sh\n. `pwd`/SBATCH.sh\n")
    data, v = scan_judge(tmp_path)
    assert v.status is Status.FAIL, v.summary
    (m,) = data["matches"]
    assert (Path(m["file"]).name, m["line"], m["degree"], m["judged_in"]) == ("CONFIG.sh", 1, 32, str(tmp_path / "run.sh"))
    assert "$((64/PP)) = 32" in m["via"]


@pytest.mark.parametrize("form", ["${TP:=@4}", "${TP:-@4}"])
def test_shell_defaults_are_resolved(tmp_path, form):
    put(tmp_path, "launch.sh", f"#!/bin/bash\n: ${{NNODES:=@2}}\nTP={form}\n"
                               "torchrun --nnodes $NNODES train.py --tensor-model-parallel-size $TP\n")
    data, v = scan_judge(tmp_path)
    assert v.status is Status.FAIL, v.summary
    assert [m["degree"] for m in data["matches"]] == [4]


def test_a_count_set_differently_in_branches_is_judged_by_its_largest_or_not_at_all(tmp_path):
    put(tmp_path, "a.sh", "#!/bin/bash\n: ${WORLD_SIZE:=@16}\nif [ -v SLURM_NTASKS ]; then\n    WORLD_SIZE=$SLURM_NTASKS\nfi\n"
                          "torchrun --nnodes $WORLD_SIZE train.py --tensor_parallel_size @8\n")
    put(tmp_path, "b.sh", "#!/bin/bash\nif [ -v SLURM_NTASKS ]; then\n    N=$SLURM_NTASKS\nelse\n    N=1\nfi\n"
                          "torchrun --nnodes $N --node_rank $RANK train.py --tensor_parallel_size @8\n")
    data, _ = scan_judge(tmp_path)
    nodes = {Path(f).name: c["nodes"] for f, c in data["files"].items()}
    assert nodes == {"a.sh": "multi", "b.sh": "unknown"}  # 16 by default; 1 or whatever Slurm says


def test_hydra_and_nemo_rl_defaults_chains_are_followed(tmp_path):
    # Hydra: the group member's rollout TP is judged in the composing config's context
    put(tmp_path, "hydra/config/rollout/vllm.yaml", "name: vllm\ntensor_model_parallel_size: @2\n")
    put(tmp_path, "hydra/config/trainer.yaml", "defaults:\n  - rollout@actor_rollout_ref.rollout: vllm\n  - _self_\n"
                                                "trainer:\n  nnodes: @2\n  n_gpus_per_node: 8\n  total_epochs: 1\n")
    # NeMo-RL: the recipe sets TP, its base file the node count
    put(tmp_path, "nemo/base.yaml", "policy:\n  train_global_batch_size: 512\ncluster:\n  gpus_per_node: 1\n  num_nodes: @2\n")
    put(tmp_path, "nemo/recipe.yaml", 'defaults: "base.yaml"\npolicy:\n  dtensor_cfg:\n    tensor_parallel_size: @2\n')
    data, v = scan_judge(tmp_path)
    by = {Path(m["file"]).name: m for m in data["matches"]}
    assert set(by) == {"vllm.yaml", "recipe.yaml"}
    assert by["vllm.yaml"]["key_path"] == "actor_rollout_ref.rollout.tensor_model_parallel_size"
    assert by["vllm.yaml"]["scope"] == "generation" and by["vllm.yaml"]["judged_in"].endswith("trainer.yaml")
    assert data["files"][str(tmp_path / "nemo/recipe.yaml")]["nodes"] == "multi"
    assert data["files"][str(tmp_path / "hydra/config/trainer.yaml")]["defaults_from"] == [
        str(tmp_path / "hydra/config/rollout/vllm.yaml")]
    statuses = {d.split(":")[0].rsplit("/", 1)[-1]: d.split(": ")[2].split(":")[0] for d in v.details}
    assert statuses == {"recipe.yaml": "fail", "vllm.yaml": "warn"}


def test_a_composing_file_that_sets_the_key_itself_overrides_its_defaults(tmp_path):
    put(tmp_path, "base.yaml", "cluster:\n  num_nodes: @2\npolicy:\n  max_steps: 1\n  dtensor_cfg:\n    tensor_parallel_size: @4\n")
    put(tmp_path, "recipe.yaml", 'defaults: "base.yaml"\npolicy:\n  dtensor_cfg:\n    tensor_parallel_size: @1\n')
    data, _ = scan_judge(tmp_path)
    assert [Path(m["file"]).name for m in data["matches"]] == ["base.yaml"]  # base's own reading, not the recipe's


ENGINES = {  # one generation engine's TP in each RL framework, its trained model FSDP/ZeRO only
    "verl": ("run.sh", "python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.strategy=fsdp "
                       "actor_rollout_ref.rollout.tensor_model_parallel_size=@2 trainer.nnodes={n} trainer.n_gpus_per_node=8\n"),
    "OpenRLHF": ("run.sh", "ray job submit -- python3 -m openrlhf.cli.train_ppo_ray --actor_num_nodes {n} "
                           "--actor_num_gpus_per_node 8 --vllm_num_engines 2 --vllm_tensor_parallel_size @2 --zero_stage 3\n"),
    "NeMo-RL": ("grpo.yaml", "policy:\n  train_global_batch_size: 512\n  generation:\n    vllm_cfg:\n"
                             "      tensor_parallel_size: @2\ncluster:\n  gpus_per_node: 8\n  num_nodes: {n}\n"),
}


@pytest.mark.parametrize("framework", list(ENGINES))
@pytest.mark.parametrize("n,status", [(2, Status.WARN), (1, Status.OK)])
def test_every_rl_framework_engine_tp_gets_the_same_rule(tmp_path, framework, n, status):
    name, text = ENGINES[framework]
    put(tmp_path, name, text.format(n=n))
    data, v = scan_judge(tmp_path)
    assert [(m["degree"], m.get("scope")) for m in data["matches"]] == [(2, "generation")], framework
    assert v.status is status, (framework, n, v.details)


def test_pipeline_parallelism_alone_is_no_node_count_and_no_tp(tmp_path):
    put(tmp_path, "pp.sh", "#!/bin/bash\npython pretrain_gpt.py --pipeline-model-parallel-size @4 --tensor-model-parallel-size @2 "
                           "--micro-batch-size 1\n")
    put(tmp_path, "pp_only.sh", "#!/bin/bash\ntorchrun --nnodes 2 pretrain_gpt.py --pipeline-model-parallel-size @8\n")
    data, v = scan_judge(tmp_path)
    assert [Path(m["file"]).name for m in data["matches"]] == ["pp.sh"]  # PP is never a TP finding
    assert data["files"][str(tmp_path / "pp.sh")]["nodes"] == "unknown"
    assert v.status is Status.WARN and "node count not found" in v.details[0]


def test_deepspeed_num_gpus_without_a_hostfile_is_one_node(tmp_path):
    put(tmp_path, "one/run.sh", "#!/bin/bash\ndeepspeed --num_gpus 8 train.py --deepspeed ds.json --tp_size @2\n")
    put(tmp_path, "bare/run.sh", "#!/bin/bash\ndeepspeed train.py --deepspeed ds.json --tp_size @2\n")
    put(tmp_path, "hosts/run.sh", "#!/bin/bash\ndeepspeed --hostfile hostfile --num_gpus 1 train.py --tp_size @2\n")
    data, _ = scan_judge(tmp_path)
    nodes = {Path(f).parent.name: c["nodes"] for f, c in data["files"].items()}
    assert nodes == {"one": "single", "bare": "unknown", "hosts": "multi"}  # bare deepspeed reads /job/hostfile


# --- linear matching, bounded lines ---------------------------------------------------------------

def test_the_node_count_pattern_is_linear_on_dotted_chains(tmp_path):
    # `a.` x 20,000 took 21 s at 788276f (the pattern took a dotted prefix before nnodes)
    put(tmp_path, "q.sh", "tensor_parallel_size=@2\n" + "a." * 20_000 + "\n")
    t0 = time.perf_counter()
    data, _ = scan_judge(tmp_path, deadline_s=5.0)
    assert time.perf_counter() - t0 < 2.0 and not data["truncated"]


def test_a_4_mb_one_line_file_is_matched_on_its_first_64_kib_and_says_so(tmp_path):
    put(tmp_path, "big.sh", "trainer.num_nodes=@2\ntensor_parallel_size=@2\n" + "a." * (2 * 1024 * 1024 - 64) + "\n")
    t0 = time.perf_counter()
    data, v = scan_judge(tmp_path, deadline_s=20.0)
    assert time.perf_counter() - t0 < 5.0 and not data["truncated"]  # 128 s at 788276f, past its own bound
    (ctx,) = data["files"].values()
    assert ctx["lines_cut"] == 1 and ctx["node_markers"] == ["trainer.num_nodes=2"]
    assert "1 line(s) longer than 65536 characters" in evidence(v)[f"context of {tmp_path / 'big.sh'}"]["lines cut"]


@pytest.mark.parametrize("job,roles,nodes", [
    ("PyTorchJob", "    Master:\n      replicas: @1\n    Worker:\n      replicas: @1\n", 2),
    ("MPIJob", "    Launcher:\n      replicas: @1\n    Worker:\n      replicas: @4\n", 4),
    ("PyTorchJob", "    Master:\n      replicas: @1\n", 1),
])
def test_a_kubeflow_job_counts_its_replicas_as_nodes(tmp_path, job, roles, nodes):
    put(tmp_path, "job.yaml", f"apiVersion: kubeflow.org/v1\nkind: {job}\nspec:\n  replicaSpecs:\n{roles}"
                              "      template:\n        spec:\n          containers:\n          - args: [\"--tensor-model-parallel-size\", "
                              "\"@2\", \"--train-iters\", \"100\"]\n")
    data, v = scan_judge(tmp_path)
    (ctx,) = data["files"].values()
    assert ctx["node_count"] == nodes and ctx["node_markers"][0].startswith(job)
    assert v.status is (Status.FAIL if nodes > 1 else Status.OK)


def test_context_is_read_on_the_first_512_kib_and_says_so(tmp_path):
    filler = "# " + "x" * 1000 + "\n"
    put(tmp_path, "big.sh", "torchrun train.py --tensor-model-parallel-size @2\n" + filler * 600 + "#SBATCH --nodes=@2\n")
    data, v = scan_judge(tmp_path)
    (ctx,) = data["files"].values()
    # no node count in what was read is no proof of one node (torchrun's default is not applied): warn, not ok
    assert ctx["context_chars"] == tpscan.MAX_CONTEXT_CHARS and ctx["nodes"] == "unknown" and v.status is Status.WARN
    assert "the rest was not read" in ctx["node_unresolved"][0]
    assert "first 524288 characters" in evidence(v)[f"context of {tmp_path / 'big.sh'}"]["context read on"]


def test_a_defaults_target_not_found_is_named_in_the_evidence(tmp_path):
    put(tmp_path, "conf/exp.yaml", "defaults:\n  - model: big\n  - /hydra/launcher: submitit\n  - _self_\n"
                                  "trainer:\n  num_nodes: @2\n  max_steps: 1\nmodel:\n  tensor_model_parallel_size: @2\n")
    data, v = scan_judge(tmp_path)
    assert v.status is Status.FAIL
    ctx = evidence(v)[f"context of {tmp_path / 'conf/exp.yaml'}"]
    assert ctx["defaults from"] == ["model/big.yaml (not found)", "hydra/launcher/submitit.yaml (not found)"]
