"""G10's judge on hand-written 'tpscan' readings, plus one real scan judged end to end.

Values in file contents are written ``@2`` and written out without the ``@`` (see test_scan.py),
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
from tests.gotchas.builders import values as evidence


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
    assert judge(scan_data([m], {"grpo.yaml": ctx("training", "single")})).status is Status.OK
    # issue 22: a node count not found is never ok (on two Sparks an engine's TP group > 1 spans them)
    v = judge(scan_data([m], {"grpo.yaml": ctx("training", "unknown")}))
    assert v.status is Status.WARN and "node count not found" in v.details[0]


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
    v = judge(scan_data(files_read=40, paths=BOUNDED, skipped={"below the depth bound (4)": 12}, at_one=3))
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


# --- the verdict's fix: file:line, the change, the editor line, the rerun (pinned for mutation) -----
# (tools/mutation.py runs every test file of tests/gotchas/g10/ that names the judge's module)

import pytest

from sparktui.core.readings import Reading as _Reading


def fix_blocks(fix: str) -> list[list[str]]:
    """The ```bash blocks of a fix, each as its lines."""
    out, cur = [], None
    for ln in fix.splitlines():
        if ln == "```bash":
            cur = []
        elif ln == "```" and cur is not None:
            out.append(cur)
            cur = None
        elif cur is not None:
            cur.append(ln)
    return out


@pytest.mark.parametrize("text, key, value, change", [
    ("tensor_model_parallel_size: 2", "tensor_model_parallel_size", "2",
     ("tensor_model_parallel_size: 2", "tensor_model_parallel_size: 1")),
    ("torchrun train.py --tp 4 --pp 2", "--tp", "4", ("--tp 4", "--tp 1")),
    ("--tensor-parallel-size=2 --port 2", "--tensor-parallel-size", "2",
     ("--tensor-parallel-size=2", "--tensor-parallel-size=1")),
    ("x=2 tp_size: 4", "tp_size", "4", ("tp_size: 4", "tp_size: 1")),   # the value after the key, not before
    ("tp_size: 2 and 2", "tp_size", "2", ("tp_size: 2", "tp_size: 1")),  # its first occurrence after the key
    ("2 tp_size: x", "tp_size", "2", None),                              # the value only before the key
    ("tp_size: 2", "tp_size", "", None),                                 # no value to replace
    ("tp-size: 2", "tp_size", "2", None),                                # the key not on the line
    ("tp_size2", "tp_size", "2", ("tp_size2", "tp_size1")),
    ("tp_size: 2  # tp_size", "tp_size", "2", ("tp_size: 2", "tp_size: 1")),  # the key's first occurrence
    ("2", "", "2", ("2", "1")),                                          # no key: the value itself
])
def test_setting_change_rewrites_the_value_after_the_key_to_1(text, key, value, change):
    assert g10.setting_change(text, key, value) == change


def test_edit_lines_name_file_line_change_and_open_the_editor_at_the_line():
    m = match(file="configs/a.yaml", line=7, value="4")
    assert g10.edit_lines(m) == ["# configs/a.yaml:7: `tensor_model_parallel_size: 4` -> `tensor_model_parallel_size: 1`",
                                 "${EDITOR:-vi} +7 configs/a.yaml"]


def test_edit_lines_quote_a_path_with_blanks_for_the_shell():
    m = match(file="/home/u/my job/a.yaml", line=2)
    assert g10.edit_lines(m)[1] == "${EDITOR:-vi} +2 '/home/u/my job/a.yaml'"


@pytest.mark.parametrize("line, where, editor", [
    (None, "configs/a.yaml: ", "${EDITOR:-vi} configs/a.yaml"),
    (True, "configs/a.yaml:True: ", "${EDITOR:-vi} configs/a.yaml"),
    ("9", "configs/a.yaml:9: ", "${EDITOR:-vi} configs/a.yaml"),
    (0, "configs/a.yaml:0: ", "${EDITOR:-vi} +0 configs/a.yaml"),
])
def test_edit_lines_jump_to_a_line_only_when_it_is_a_number(line, where, editor):
    said, ed = g10.edit_lines(match(line=line))
    assert said.startswith("# " + where) and ed == editor


def test_edit_lines_without_the_value_on_the_line_say_which_key_to_set_to_1():
    m = match(file="run.sh", line=4, key="--tp", value="$TP", text="torchrun train.py \\")
    assert g10.edit_lines(m) == ["# run.sh:4: `torchrun train.py \\`: set --tp to 1", "${EDITOR:-vi} +4 run.sh"]
    assert g10.edit_lines({}) == ["# ?: ``: set to 1", "${EDITOR:-vi} '?'"]


def test_edit_lines_say_where_a_resolved_or_swept_value_comes_from():
    m = match(file="run.sh", line=3, key="--tp", value="$TP", text="torchrun t.py --tp $TP", via="TP=4 (line 2)")
    assert g10.edit_lines(m)[0] == "# run.sh:3: `--tp $TP` -> `--tp 1` (its value comes from TP=4 (line 2))"
    sweep = "a sweep of 3 value(s): 1, 2, 4; the largest, 4, is judged"
    m = match(file="sweep.sh", line=1, key="model.tensor_model_parallel_size", value="1,2,4",
              text="python train.py -m model.tensor_model_parallel_size=1,2,4", via=sweep)
    said = g10.edit_lines(m)[0]
    assert "`model.tensor_model_parallel_size=1,2,4` -> `model.tensor_model_parallel_size=1`" in said
    assert said.endswith(f"(its value comes from {sweep})")
    m = match(file="x.sh", line=2, key="--tp", value="$TP", text="--tp \\", via="TP=4 (line 1)")
    assert g10.edit_lines(m)[0] == "# x.sh:2: `--tp \\`: set --tp to 1 (its value comes from TP=4 (line 1))"


@pytest.mark.parametrize("key", ["tp_plan", "TP_PLAN", "tp_plan_x"])
def test_a_tp_plan_is_dropped_not_set_to_1(key):
    m = match(file="load.py", line=1, key=key, value="auto", via="ignored",
              text='model = AutoModel.from_pretrained(m, tp_plan="auto")')
    assert g10.edit_lines(m) == [('# load.py:1: `model = AutoModel.from_pretrained(m, tp_plan="auto")`: drop tp_plan and wrap '
                                  "the model with FSDP"), "${EDITOR:-vi} +1 load.py"]


def test_a_newline_in_the_line_text_cannot_start_a_command():
    said, _ = g10.edit_lines(match(text="tensor_model_parallel_size: 2\nrm -rf ~", value="2"))
    assert "\n" not in said and said.startswith("# ")


@pytest.mark.parametrize("roots, line", [
    ([{"path": "/home/u/job", "status": "scanned"}], "sparktui check G10 --path /home/u/job"),
    ([{"path": "/a"}, {"path": None}, {"path": ""}, {"path": "my job"}], "sparktui check G10 --path /a --path 'my job'"),
    ([], "sparktui check G10"),
])
def test_the_rerun_names_every_scanned_path(roots, line):
    assert g10._rerun(roots) == line


@pytest.mark.parametrize("n, more, blocks", [(1, "", 1), (7, "", 7), (8, "", 8), (9, " (1 more in the details)", 8),
                                              (12, " (4 more in the details)", 8)])
def test_the_fix_names_at_most_eight_settings_and_counts_the_rest(n, more, blocks):
    ms = [match(file="configs/a.yaml", line=i) for i in range(1, n + 1)]
    fix = g10.fix_for(ms, [{"path": "/job", "status": "scanned"}])
    assert g10.MAX_EDITS == 8
    assert fix.startswith(f"Set each tensor-parallel setting found to 1{more}; ")
    edits = [b for b in fix_blocks(fix) if b[-1].startswith("${EDITOR:-vi}")]
    assert len(edits) == blocks
    assert [b[-1] for b in edits] == [f"${{EDITOR:-vi}} +{i} configs/a.yaml" for i in range(1, blocks + 1)]


def test_the_fix_finds_the_interface_and_master_address_and_ends_with_the_rerun():
    fix = g10.fix_for([match()], [{"path": "/job", "status": "scanned"}, {"path": "/cfg", "status": "scanned"}])
    bs = fix_blocks(fix)
    assert bs[1] == list(g10.IFACE_LINES)
    assert "IFACE=$(ibdev2netdev | awk '/\\(Up\\)/ {print $5; exit}')" in bs[1]
    assert 'export NCCL_SOCKET_IFNAME="$IFACE" GLOO_SOCKET_IFNAME="$IFACE"' in bs[1]
    assert bs[-1] == ["sparktui check G10 --path /job --path /cfg"]
    assert "```\n\nAcross two Sparks, train with data parallelism" in fix  # the advice after the edits, a line of its own
    assert "torchrun --nnodes=2 --nproc-per-node=1 --node-rank=0" in fix and "--master-port=29500" in fix
    assert "tensor_model_parallel_size: 1" in fix and "tensor_parallel_degree = 1" in fix  # the configs at 1
    assert fix.index("${EDITOR") < fix.index("ibdev2netdev") < fix.index("# NeMo AutoModel") < fix.index("sparktui check G10")


def test_the_verdicts_fix_lists_the_worst_settings_first():
    ms = [match(file="serve.sh", line=1), match(file="w.yaml", line=2), match(file="f.yaml", line=3)]
    files = {"serve.sh": ctx("serving", "multi"), "w.yaml": ctx("training", "unknown"), "f.yaml": ctx("training", "multi")}
    v = judge(scan_data(ms, files))
    edits = [b[-1] for b in fix_blocks(v.fix) if b[-1].startswith("${EDITOR")]
    assert edits == ["${EDITOR:-vi} +3 f.yaml", "${EDITOR:-vi} +2 w.yaml"]  # fail, warn; the serving one is fine


def test_the_unknown_fix_names_the_paths_it_could_not_scan_and_a_search():
    roots = [{"path": "/job", "status": "scanned"}, {"path": "/jbo", "status": "missing"},
             {"path": "/root/x", "status": "permission denied"}, {"path": "/job", "status": "already scanned"}]
    fix = g10.unknown_fix(roots)
    assert "(/jbo (missing); /root/x (permission denied) could not be scanned)" in fix
    assert "/job (" not in fix
    assert fix_blocks(fix) == [list(g10.FIND_CONFIGS)]
    assert "tensor_parallel|tp_size' ~ 2>/dev/null | head -20" in g10.FIND_CONFIGS[1]
    fix = g10.unknown_fix([{"path": "/job", "status": "scanned"}])
    assert "could not be scanned" not in fix and "configs: find them" in fix and "--path" in fix


# --- summaries and details of findings whose value was not understood, or swept -------------------


def test_a_value_not_understood_is_said_in_the_details_with_why():
    m = match(file="sweep.sh", key="trainer.tensor_parallel_size", value="0,0", status="unreadable",
              via="a sweep of 2 value(s): 0, 0: a degree below 1 is no degree")
    v = judge(scan_data([m], {"sweep.sh": ctx("unknown", "unknown")}))
    assert v.status is Status.UNKNOWN
    assert v.summary.startswith("cannot tell: TP with a value not understood in a file that is neither clearly training "
                                "nor serving: sweep.sh:3: trainer.tensor_parallel_size=0,0 (value not understood: a sweep "
                                "of 2 value(s): 0, 0: a degree below 1 is no degree) (context unknown, nodes unknown)")
    assert v.details[0].endswith(": unknown: TP with a value sparktui does not understand in a file it cannot class as "
                                 "training or serving")
    m = match(file="a.yaml", key="tp_size", value="two", status="unreadable")
    v = judge(scan_data([m], {"a.yaml": ctx("training", "multi")}))
    assert v.status is Status.WARN
    assert v.details[0] == ("a.yaml:3: tp_size=two (value not understood) (training, multi-node): warn: "
                            "TP has a value sparktui does not understand: a value > 1 fails across two Sparks")
    assert "a.yaml:3: `tp_size: two` -> `tp_size: 1`" in v.fix


def test_a_swept_degree_is_judged_and_shown_with_the_sweep():
    via = "a sweep of 3 value(s): 1, 2, 4; the largest, 4, is judged"
    m = match(file="sweep.sh", line=1, key="model.tensor_model_parallel_size", value="1,2,4", via=via,
              text="python train.py -m model.tensor_model_parallel_size=1,2,4")
    m["degree"] = 4
    v = judge(scan_data([m], {"sweep.sh": ctx("training", "multi")}))
    assert v.status is Status.FAIL
    assert f"sweep.sh:1: model.tensor_model_parallel_size=1,2,4 = 4 ({via}) (training, multi-node)" in v.summary
    v = judge(scan_data([m], {"sweep.sh": ctx("serving", "multi")}))
    assert v.status is Status.OK and v.fix == ""


def test_the_unknown_summary_counts_what_the_scan_did_not_list():
    m = match(file="x.yaml", value="$TP", status="unresolved")
    d = scan_data([m], {"x.yaml": ctx("unknown", "unknown")})
    d["matches_total"] = 3
    v = judge(d)
    assert v.status is Status.UNKNOWN and v.summary.endswith(" (+2 not listed)")
    assert v.details[-1] == "... and 2 more"


def test_a_warning_names_the_first_warning_not_an_ok_finding():
    ms = [match(file="serve.sh", line=1), match(file="w.yaml", line=5), match(file="w2.yaml", line=6)]
    files = {"serve.sh": ctx("serving", "multi"), "w.yaml": ctx("training", "unknown"), "w2.yaml": ctx("training", "unknown")}
    v = judge(scan_data(ms, files))
    assert v.summary == ("TP > 1 that may be training across two Sparks: w.yaml:5: tensor_model_parallel_size=2 "
                         "(training, nodes unknown) and 1 more")


def test_a_failure_names_the_first_failure_and_counts_only_failures():
    ms = [match(file="w.yaml", line=5), match(file="f.yaml", line=9), match(file="serve.sh", line=1)]
    files = {"serve.sh": ctx("serving", "multi"), "w.yaml": ctx("training", "unknown"), "f.yaml": ctx("training", "multi")}
    v = judge(scan_data(ms, files))
    assert v.summary == ("TP > 1 in a multi-node training config: f.yaml:9: tensor_model_parallel_size=2 "
                         "(training, multi-node); across two Sparks use DDP/FSDP with TP=1")


def test_an_ok_with_findings_and_skips_is_scoped_and_an_unknown_keeps_its_fix():
    files = {"serve.sh": ctx("serving", "multi")}
    v = judge(scan_data([match(file="serve.sh")], files, skipped={"too large": 2}))
    assert v.status is Status.OK and v.summary.endswith("; 2 skipped (2 too large): not checked") and v.fix == ""
    m = match(file="x.yaml", value="$TP", status="unresolved")
    v = judge(scan_data([m], {"x.yaml": ctx("unknown", "unknown")}, truncated="stopped after 10 s"))
    assert v.status is Status.UNKNOWN and v.summary.endswith("; scan cut short (stopped after 10 s)")
    assert "${EDITOR:-vi} +3 x.yaml" in v.fix  # the finding's fix, not the search for paths


def test_the_bounds_line_is_per_bounded_root_with_its_own_numbers():
    roots = [{"path": "/home/u", "status": "scanned", "max_depth": 3},
             {"path": "/job", "status": "scanned"},
             {"path": "/opt", "status": "scanned", "max_files": 100}]
    v = judge(scan_data(files_read=9, paths=roots, skipped={"below the depth bound (3)": 2, "too large": 5}))
    assert evidence(v)["scan bounds (no --path named)"] == [
        ("scanned 9 files to depth 3 in /home/u (bounds: depth 3, ? files seen, ? s), 2 deeper folders not entered"
         "; name the job's folders with --path to scan them whole"),
        ("scanned 9 files to depth ? in /opt (bounds: depth ?, 100 files seen, ? s), 2 deeper folders not entered"
         "; name the job's folders with --path to scan them whole")]
    v = judge(scan_data(files_read=9, paths=roots[:1]))
    assert evidence(v)["scan bounds (no --path named)"] == [
        ("scanned 9 files to depth 3 in /home/u (bounds: depth 3, ? files seen, ? s)"
         "; name the job's folders with --path to scan them whole")]


@pytest.mark.parametrize("reason, unchecked", [
    ("below the depth bound (4)", True), ("too large", True), ("too large (9 MB)", False), ("unreadable", True),
    ("permission denied", True), ("symlink loop: /a", True), ("a symlink loop", False), ("vcs folder", False),
])
def test_which_skips_count_as_not_checked(reason, unchecked):
    assert g10._unchecked(reason) is unchecked


def test_the_evidence_counts_every_finding_and_the_files_context_with_its_source():
    ms = [match(file="a.yaml", line=1), match(file="a.yaml", line=2)]
    r = Readings()
    r.add(_Reading("tpscan", scan_data(ms, {"a.yaml": ctx(launched_by=["run.sh"])}), source="scan of /job"))
    v = g10.judge(r, Config())
    by = {e.what: e for e in v.evidence}
    assert by["tensor-parallel settings > 1 or unresolved"].value == 2
    assert by["context of a.yaml"].source == "scan of /job"
    assert by["context of a.yaml"].value["launched by"] == ["run.sh"]
    assert [e.what for e in v.evidence].count("context of a.yaml") == 1
