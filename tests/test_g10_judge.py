"""G10's judge on hand-written 'tpscan' readings, plus one real scan judged end to end.

Values in file contents are written ``@2`` and written out without the ``@`` (see test_g10_scan),
so this module carries no TP setting of its own.
"""

from __future__ import annotations

import json
from pathlib import Path

from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings
from sparktui.core.verdict import Status
from sparktui.gotchas import REGISTRY
from sparktui.gotchas import g10_tensor_parallel as g10
from sparktui.probes import tpscan
from tests.conftest import readings_of


def ctx(context="training", nodes="multi", **kw) -> dict:
    return {"context": context, "nodes": nodes, "node_count": 2 if nodes == "multi" else None,
            "training_markers": ["torchrun"] if context == "training" else [],
            "serving_markers": ["vllm serve"] if context == "serving" else [],
            "node_markers": ["--nnodes=2"] if nodes == "multi" else [], "node_unresolved": [], "kind": "yaml", **kw}


def match(file="configs/a.yaml", line=3, key="tensor_model_parallel_size", value="2", status="set", **kw) -> dict:
    degree = int(value) if value.isdigit() else None
    return {"file": file, "line": line, "key": key, "value": value, "status": status, "degree": degree,
            "text": f"{key}: {value}", **kw}


def scan_data(matches=(), files=None, files_read=12, paths=None, skipped=None, truncated=None, at_one=0) -> dict:
    matches = list(matches)
    return {
        "paths": paths if paths is not None else [{"path": ".", "abs": "/job", "kind": "folder", "status": "scanned", "files_read": files_read}],
        "files_read": files_read, "dirs_walked": 3, "bytes_read": 4096,
        "matches": matches, "matches_total": len(matches), "matches_dropped": 0,
        "at_one": at_one, "at_one_sample": [], "files": files or {},
        "skipped": skipped or {}, "skipped_sample": [], "truncated": truncated,
    }


def judge(data) -> "g10.Verdict":
    return g10.judge(readings_of(tpscan=data), Config())


def evidence(v) -> dict:
    return {e.what: e.value for e in v.evidence}


# --- findings ----------------------------------------------------------------------------------


def test_tp_in_multi_node_training_fails_with_file_line_details_and_the_ddp_fix():
    v = judge(scan_data([match()], {"configs/a.yaml": ctx("training", "multi")}))
    assert v.status is Status.FAIL
    assert "configs/a.yaml:3" in v.summary
    assert v.details[0].startswith("configs/a.yaml:3: tensor_model_parallel_size=2 (training, multi-node)")
    assert "torchrun --nnodes=2" in v.fix and "tensor_model_parallel_size: 1" in v.fix
    assert evidence(v)["context of configs/a.yaml"]["node markers"] == ["--nnodes=2"]


def test_training_with_unknown_node_count_warns_about_two_sparks():
    v = judge(scan_data([match(key="tp_size", key_path="distributed.tp_size")], {"configs/a.yaml": ctx("training", "unknown")}))
    assert v.status is Status.WARN
    assert "two Sparks" in v.summary
    assert v.details[0].startswith("configs/a.yaml:3: distributed.tp_size=2 (training, nodes unknown)")
    assert "two Sparks this fails" in v.details[0]


def test_single_node_training_is_ok_with_a_note():
    v = judge(scan_data([match()], {"configs/a.yaml": ctx("training", "single")}))
    assert v.status is Status.OK
    assert v.details[0].startswith("configs/a.yaml:3: tensor_model_parallel_size=2 (training, single node)")
    assert "does not cross the ConnectX-7 link" in v.details[0] and "one GPU" in v.details[0]


def test_serving_with_tp2_across_two_sparks_is_ok_as_nvidia_playbooks_do():
    m = match(file="serve.sh", line=8, key="--tensor-parallel-size")
    v = judge(scan_data([m], {"serve.sh": ctx("serving", "multi")}))
    assert v.status is Status.OK
    assert "NVIDIA's playbooks" in v.summary
    assert v.details[0].startswith("serve.sh:8: --tensor-parallel-size=2 (serving, multi-node): ok:")
    assert v.fix == ""


def test_unknown_context_warns_and_names_what_is_missing():
    v = judge(scan_data([match(file="x.yaml", key="tp_size")], {"x.yaml": ctx("unknown", "unknown")}))
    assert v.status is Status.WARN
    assert "(context unknown, nodes unknown)" in v.details[0]
    assert "cannot tell training from serving" in v.details[0]


def test_generation_engine_tp_inside_training_warns_across_nodes_only():
    m = match(file="grpo.yaml", key="tensor_parallel_size", key_path="policy.generation.vllm_cfg.tensor_parallel_size",
              scope="generation")
    assert judge(scan_data([m], {"grpo.yaml": ctx("training", "multi")})).status is Status.WARN
    assert judge(scan_data([m], {"grpo.yaml": ctx("training", "unknown")})).status is Status.OK


def test_unresolved_values_warn_in_training_and_are_unknown_without_context():
    m = match(file="run.sh", key="--tp", value="${TP}", status="unresolved")
    v = judge(scan_data([m], {"run.sh": ctx("training", "multi")}))
    assert v.status is Status.WARN
    assert v.details[0].startswith("run.sh:3: --tp=${TP} (unresolved) (training, multi-node)")
    v = judge(scan_data([m], {"run.sh": ctx("unknown", "unknown")}))
    assert v.status is Status.UNKNOWN and "variable" in v.summary
    assert judge(scan_data([m], {"run.sh": ctx("serving", "multi")})).status is Status.OK


def test_resolved_variable_shows_where_the_value_came_from():
    m = match(file="run.sh", key="-tp", value="$TP", via="TP=4 (line 2)")
    m["degree"] = 4
    v = judge(scan_data([m], {"run.sh": ctx("training", "multi")}))
    assert v.status is Status.FAIL
    assert v.details[0].startswith("run.sh:3: -tp=$TP = 4 (TP=4 (line 2)) (training, multi-node)")


def test_worst_finding_decides_and_details_list_worst_first():
    ms = [match(file="serve.sh", line=1), match(file="train.yaml", line=7)]
    files = {"serve.sh": ctx("serving", "multi"), "train.yaml": ctx("training", "multi")}
    v = judge(scan_data(ms, files))
    assert v.status is Status.FAIL
    assert v.details[0].startswith("train.yaml:7:") and v.details[1].startswith("serve.sh:1:")


def test_details_are_bounded():
    ms = [match(line=i) for i in range(1, g10.MAX_DETAILS + 11)]
    v = judge(scan_data(ms, {"configs/a.yaml": ctx()}))
    assert len(v.details) == g10.MAX_DETAILS + 1
    assert v.details[-1] == "... and 10 more"


# --- nothing found: ok only when files were read --------------------------------------------------


def test_no_findings_after_reading_files_is_ok_with_evidence():
    v = judge(scan_data(files_read=40, skipped={"vcs folder": 1, "binary": 2}, at_one=1))
    assert v.status is Status.OK
    assert "40 files" in v.summary
    ev = evidence(v)
    assert ev["scan paths"] == [". (scanned)"]
    assert ev["files read (YAML/JSON/TOML/shell/.env/Dockerfile/Python)"]["files"] == 40
    assert ev["skipped (by reason)"] == {"vcs folder": 1, "binary": 2}
    assert ev["tensor-parallel settings at 1 (fine)"]["count"] == 1


def test_unreadable_parts_are_named_in_an_ok_summary():
    v = judge(scan_data(files_read=5, skipped={"permission denied": 3}))
    assert v.status is Status.OK and "3 unreadable" in v.summary


def test_missing_path_is_unknown_never_ok():
    paths = [{"path": "nope", "abs": "/nope", "status": "missing"}]
    v = judge(scan_data(files_read=0, paths=paths))
    assert v.status is Status.UNKNOWN
    assert "nope: missing" in v.summary
    assert "--path" in v.fix


def test_nothing_readable_is_unknown():
    v = judge(scan_data(files_read=0))
    assert v.status is Status.UNKNOWN
    assert "wrong directory" in v.summary


def test_one_missing_path_among_good_ones_is_unknown():
    paths = [{"path": ".", "status": "scanned"}, {"path": "configs", "status": "missing"}]
    v = judge(scan_data(files_read=9, paths=paths))
    assert v.status is Status.UNKNOWN and "configs: missing" in v.summary
    # ... but a real failure still shows as a failure
    v = judge(scan_data([match()], {"configs/a.yaml": ctx()}, paths=paths))
    assert v.status is Status.FAIL


def test_truncated_scan_is_unknown():
    v = judge(scan_data(files_read=100, truncated="stopped after 60 s; 4 folders not scanned"))
    assert v.status is Status.UNKNOWN and "cut short" in v.summary


def test_failed_probe_is_unknown_with_its_reason():
    r = Readings()
    r.add(Reading("tpscan", None, error="probe crashed: boom", source="scan of ."))
    v = g10.judge(r, Config())
    assert v.status is Status.UNKNOWN and "boom" in v.summary
    assert g10.judge(Readings(), Config()).status is Status.UNKNOWN


# --- the gotcha entry, and a real scan judged end to end ------------------------------------------


def test_gotcha_entry():
    g = REGISTRY["G10"]
    assert g is g10.GOTCHA
    assert g.probes == ("tpscan",) and g.intrusive is False and g.cadence_s == 300
    assert "DDP/FSDP" in g.title
    assert "```bash" in g.fix and "--nnodes=2" in g.fix
    for spelling in ("--tensor-parallel-size", "-tp", "--tp-size", "--tp_size", "tensor_model_parallel_size",
                     "distributed.tp_size", "tensor_parallel_degree", "autotp_size", "parallelism_config_tp_size",
                     "tp_plan", "NIM_TENSOR_PARALLEL_SIZE"):
        assert spelling in g.check


def put(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text.replace("@", ""))


def test_real_tree_scanned_and_judged_survives_a_snapshot_round_trip(tmp_path):
    put(tmp_path, "configs/automodel.yaml", "step_scheduler:\n  max_steps: 100\ndistributed:\n  tp_size: @2\n")
    put(tmp_path, "scripts/launch.sh", "#!/bin/bash\ntorchrun --nnodes=2 --node-rank=$NODE_RANK "
                                       "--master-addr=192.168.100.10 train.py --config ../configs/automodel.yaml\n")
    put(tmp_path, "serve/vllm.sh", "vllm serve meta-llama/Llama-3.3-70B-Instruct --tensor-parallel-size @2\n")
    data = tpscan.scan([str(tmp_path)], 4 * 1024 * 1024)
    live = judge(data)
    assert live.status is Status.FAIL
    assert live.details[0].startswith(f"{tmp_path}/configs/automodel.yaml:4: distributed.tp_size=2 (training, multi-node)")
    assert any("serve/vllm.sh:1: --tensor-parallel-size=2 (serving, nodes unknown): ok" in d for d in live.details)
    # judged from a recording, the verdict is the same
    recorded = Reading.from_dict(json.loads(json.dumps(Reading("tpscan", data, source="scan").to_dict())))
    again = g10.judge(Readings({"tpscan": recorded}), Config())
    assert (again.status, again.summary, again.details) == (live.status, live.summary, live.details)


# --- audit fixes: scanned for real, then judged -------------------------------------------------


def test_a_config_folder_named_env_is_not_mistaken_for_a_virtualenv(tmp_path):
    put(tmp_path, "configs/env/two-spark.yaml", "trainer:\n  num_nodes: @2\nmodel:\n  tensor_model_parallel_size: @2\n")
    v = judge(tpscan.scan([str(tmp_path)], 4 * 1024 * 1024))
    assert v.status is Status.FAIL
    assert "configs/env/two-spark.yaml:4: model.tensor_model_parallel_size=2 (training, multi-node)" in v.summary


def test_kubernetes_exec_form_with_two_nodes_fails_not_warns(tmp_path):
    put(tmp_path, "k8s/job.yaml", 'containers:\n  - name: trainer\n    command: ["torchrun", "--nnodes", "@2", '
                                     '"--nproc-per-node", "1", "train.py", "--tensor-model-parallel-size", "@2"]\n')
    v = judge(tpscan.scan([str(tmp_path)], 4 * 1024 * 1024))
    assert v.status is Status.FAIL, v.summary
    assert "(training, multi-node)" in v.summary
    assert evidence(v)[f"context of {tmp_path / 'k8s/job.yaml'}"]["node markers"] == ["--nnodes 2"]


def test_torchrun_without_nnodes_is_judged_as_one_node_with_the_reason_in_evidence(tmp_path):
    put(tmp_path, "run.sh", "#!/bin/bash\ntorchrun --nproc-per-node=1 train.py --tensor-model-parallel-size @2\n")
    v = judge(tpscan.scan([str(tmp_path)], 4 * 1024 * 1024))
    assert v.status is Status.OK
    assert "single node" in v.details[0]
    assert evidence(v)[f"context of {tmp_path / 'run.sh'}"]["node markers"] == [
        "torchrun without --nnodes: one node (torchrun's default)"]


# --- nothing seen is never ok (audit: /dev/null, FIFO, empty file, oversized file) ----------------


def _judge_scan(*paths, max_bytes=64 * 1024):
    return judge(tpscan.scan([str(p) for p in paths], max_bytes, deadline_s=5))


def test_dev_null_fifo_and_pseudo_files_are_unknown_not_ok(tmp_path):
    import os
    os.mkfifo(tmp_path / "x.yaml")
    for p in ("/dev/null", tmp_path / "x.yaml", "/proc/self/status"):
        v = _judge_scan(p)
        assert v.status is Status.UNKNOWN, (p, v.summary)
        assert "nothing to scan" in v.summary


def test_an_empty_config_is_unknown_not_ok(tmp_path):
    (tmp_path / "empty.yaml").write_text("")
    v = _judge_scan(tmp_path / "empty.yaml")
    assert v.status is Status.UNKNOWN and "empty" in v.summary


def test_an_oversized_file_is_never_hidden_behind_an_ok(tmp_path):
    (tmp_path / "empty.yaml").write_text("")
    (tmp_path / "big.yaml").write_text("tensor_parallel_size: 2\n" + "# pad\n" * 20_000)
    v = _judge_scan(tmp_path / "empty.yaml", tmp_path / "big.yaml")
    assert v.status is Status.UNKNOWN and "1 too large" in v.summary
    v = _judge_scan(tmp_path / "big.yaml")
    assert v.status is Status.UNKNOWN and "too large" in v.summary and "wrong directory" not in v.summary


def test_skipped_files_inside_a_folder_are_named_in_a_scoped_ok(tmp_path):
    (tmp_path / "a.yaml").write_text("model: m\n")
    (tmp_path / "big.yaml").write_text("tensor_parallel_size: 2\n" + "# pad\n" * 20_000)
    v = _judge_scan(tmp_path)
    assert v.status is Status.OK
    assert "ok for 1 files read" in v.summary and "1 skipped (1 too large): not checked" in v.summary


def test_a_folder_of_only_oversized_files_is_unknown_and_says_why(tmp_path):
    v = judge(scan_data(files_read=0, skipped={"too large": 2}))
    assert v.status is Status.UNKNOWN and "2 too large" in v.summary and "wrong directory" not in v.summary


def test_a_reading_without_matches_or_with_a_non_list_is_unknown():
    data = scan_data([match()], {"configs/a.yaml": ctx()})
    del data["matches"]
    v = judge(data)
    assert v.status is Status.UNKNOWN and "has no matches field" in v.summary
    for bad in ({"configs/a.yaml": 1}, "configs/a.yaml:3", 7):
        v = judge({**scan_data(), "matches": bad})
        assert v.status is Status.UNKNOWN and "not a list" in v.summary


# --- the default scan's bounds (no --path named) -------------------------------------------------

BOUNDED = [{"path": ".", "abs": "/home/u", "kind": "folder", "status": "scanned", "files_read": 812,
            "max_depth": 4, "max_files": 5000, "max_seconds": 10.0}]


def test_a_bounded_scan_stopped_at_its_file_bound_is_unknown_and_says_what_it_read():
    stop = "stopped at the 5000-file bound (in ./data); 37 folders not scanned"
    v = judge(scan_data(files_read=812, paths=BOUNDED, truncated=stop))
    assert v.status is Status.UNKNOWN and "cut short" in v.summary and "5000-file bound" in v.summary
    assert evidence(v)["scan bounds (no --path named)"] == [
        "scanned 812 files to depth 4 in . (bounds: depth 4, 5000 files seen, 10.0 s), " + stop
        + "; name the job's folders with --path to scan them whole"]
    assert "--path" in v.fix


def test_folders_below_the_depth_bound_are_named_in_an_ok_never_a_plain_ok():
    v = judge(scan_data(files_read=40, paths=BOUNDED, skipped={"below the depth bound (4)": 12}))
    assert v.status is Status.OK
    assert "12 below the depth bound (4)" in v.summary and "not checked" in v.summary
    assert "12 deeper folders not entered" in evidence(v)["scan bounds (no --path named)"][0]


def test_a_finding_in_a_bounded_scan_still_fails():
    v = judge(scan_data([match()], {"configs/a.yaml": ctx()}, paths=BOUNDED, truncated="stopped at the 10-s time bound"))
    assert v.status is Status.FAIL


def test_named_paths_carry_no_bounds_line():
    v = judge(scan_data(files_read=40))
    assert "scan bounds (no --path named)" not in evidence(v)


def test_the_card_states_the_default_bounds_the_probe_uses():
    assert (f"{tpscan.DEFAULT_MAX_DEPTH} folders deep, {tpscan.DEFAULT_MAX_FILES} files, "
            f"{tpscan.DEFAULT_DEADLINE_S:g} s") in g10.CHECK
