"""G10's pieces held to their exact words (issue 23: the judge became named rules; the 20% mutation
sample of sparktui.gotchas.g10_tensor_parallel showed these unpinned). Every expected text is what the
judge said before the split."""

from __future__ import annotations

from sparktui.core.verdict import Status
from sparktui.gotchas import g10_tensor_parallel as g10


def test_a_setting_read_through_another_file_says_which_runs_it():
    m = {"file": "CONFIG.sh", "line": 1, "key": "TP", "value": "2", "judged_in": "run.sh"}
    assert g10.describe(m, {"context": "training", "nodes": "multi"}) == \
        "CONFIG.sh:1: TP=2 (training, multi-node, as run.sh runs it)"
    assert g10.describe({**m, "judged_in": None}, {}) == "CONFIG.sh:1: TP=2 (context unknown, nodes unknown)"
    assert g10.describe(m, {"context": "", "nodes": None}) == \
        "CONFIG.sh:1: TP=2 (context unknown, nodes unknown, as run.sh runs it)"


def test_a_context_that_is_neither_training_nor_serving_is_judged_as_unknown():
    m = {"file": "a.yaml", "line": 2, "key": "tp", "value": "2", "status": "set"}
    for ctx in ({}, {"context": None}, {"context": "unknown"}, {"context": "UNKNOWN"}):
        assert g10.classify(m, {**ctx, "nodes": "multi"})[0] is Status.WARN


def test_gpus_per_node_is_evidence_with_the_line_that_says_it():
    assert g10._context_value({"gpus_per_node": 8, "gpus_per_node_marker": "gpus_per_node: 8"})["GPUs per node"] == \
        "8 (gpus_per_node: 8)"
    assert g10._context_value({"gpus_per_node": 8})["GPUs per node"] == "8 ()"
    assert "GPUs per node" not in g10._context_value({"gpus_per_node": 0})


def test_a_setting_without_a_value_is_set_to_one_by_name():
    assert g10.edit_lines({"file": "a.yaml", "line": 3, "key": "tp", "text": "tp: None"}) == \
        ["# a.yaml:3: `tp: None`: set tp to 1", "${EDITOR:-vi} +3 a.yaml"]


def test_the_fix_names_each_block_then_the_ddp_way_and_the_rerun():
    fix = g10.fix_for([{"file": "a.yaml", "line": 3, "key": "tp", "value": "2", "text": "tp: 2"}],
                      [{"path": "./configs", "status": "scanned"}])
    assert fix.startswith("Set each tensor-parallel setting found to 1; every block names the file, the line and "
                          "the change, and opens your editor there:\n\n")
    assert "\n" + g10.DDP_TEXT in fix and g10.block(g10.IFACE_LINES) + "\n" + g10.CONFIGS in fix
    assert fix.endswith("sparktui check G10 --path ./configs\n```\n")
