"""G10 at each boundary: TP 1 vs 2, one node vs two, training vs serving (real scans of launch
files as NVIDIA's two-Spark playbooks and torchrun write them), every branch of `classify`, and
every "nothing seen" guard of the judge (files read 0 vs 1, bytes 0 vs 1, a path missing, a scan
cut short, MAX_DETAILS and the evidence limit).

Values in file contents are written ``@2`` and written out without the ``@`` (see test_scan.py),
so this module carries no TP setting of its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.gotchas import g10_tensor_parallel as g10
from sparktui.probes import tpscan
from tests.conftest import readings_of
from tests.gotchas.builders import rows


def put(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text.replace("@", ""))
    return p


def scanned(root: Path):
    return g10.judge(readings_of(tpscan=tpscan.scan([str(root)], 4 * 1024 * 1024, deadline_s=10)), Config())


# --- real launch files: TP 1 vs 2, nnodes 1 vs 2, training vs serving ------------------------------------

TRAIN = ("#!/bin/bash\ntorchrun --nnodes={nodes} --nproc-per-node=1 --node-rank=$NODE_RANK "
         "--master-addr=192.168.100.10 --master-port=29500 pretrain_gpt.py --tensor-model-parallel-size {tp} "
         "--pipeline-model-parallel-size 1 --micro-batch-size 1\n")
SERVE = "#!/bin/bash\nvllm serve meta-llama/Llama-3.3-70B-Instruct --tensor-parallel-size {tp} --port 8000{nodes}\n"


@pytest.mark.parametrize("tp, nodes, status", [
    ("@1", "@1", Status.OK), ("@1", "@2", Status.OK), ("@2", "@1", Status.OK), ("@2", "@2", Status.FAIL),
])
def test_torchrun_training_fails_only_with_tp_2_across_2_nodes(tmp_path, tp, nodes, status):
    put(tmp_path, "launch.sh", TRAIN.format(tp=tp, nodes=nodes))
    v = scanned(tmp_path)
    assert v.status is status, v.summary
    if tp == "@1":
        assert v.summary == f"no tensor-parallel setting > 1 in 1 files under {tmp_path}"
        assert v.details == () and v.fix == ""
    elif nodes == "@1":
        assert v.details[0].startswith(f"{tmp_path}/launch.sh:2: --tensor-model-parallel-size=2 (training, single node): ok: single node")
    else:
        assert v.summary.startswith(f"TP > 1 in a multi-node training config: {tmp_path}/launch.sh:2: "
                                    "--tensor-model-parallel-size=2 (training, multi-node); across two Sparks use DDP/FSDP with TP=1")
        assert f"# {tmp_path}/launch.sh:2: `--tensor-model-parallel-size 2` -> `--tensor-model-parallel-size 1`\n" \
               f"${{EDITOR:-vi}} +2 {tmp_path}/launch.sh\n" in v.fix and f"sparktui check G10 --path {tmp_path}\n" in v.fix


@pytest.mark.parametrize("nodes", ["", " --pipeline-parallel-size 1 --distributed-executor-backend ray"])
def test_serving_with_tp_2_is_ok_on_one_spark_or_two(tmp_path, nodes):
    put(tmp_path, "serve.sh", SERVE.format(tp="@2", nodes=nodes))
    v = scanned(tmp_path)
    assert v.status is Status.OK
    assert v.summary == "TP > 1 only where it is fine: 1 in serving configs (TP=2 serving across two Sparks is what NVIDIA's playbooks do)"


def test_serving_and_multi_node_training_side_by_side_fail_on_the_training(tmp_path):
    put(tmp_path, "serve.sh", SERVE.format(tp="@2", nodes=""))
    put(tmp_path, "train.sh", TRAIN.format(tp="@2", nodes="@2"))
    v = scanned(tmp_path)
    assert v.status is Status.FAIL and "train.sh:2" in v.summary and "serve.sh" not in v.summary
    assert "train.sh:2: --tensor-model-parallel-size=2 (training, multi-node): fail: " in v.details[0]
    assert "serve.sh:2: --tensor-parallel-size=2 (serving, nodes unknown): ok: " in v.details[1] and len(v.details) == 2


def test_training_with_no_node_count_warns(tmp_path):
    put(tmp_path, "configs/megatron.yaml", "model:\n  tensor_model_parallel_size: @2\noptimizer:\n  lr: 3.0e-4\n")
    v = scanned(tmp_path)
    assert v.status is Status.WARN
    assert v.summary.startswith(f"TP > 1 that may be training across two Sparks: {tmp_path}/configs/megatron.yaml:2: "
                                "model.tensor_model_parallel_size=2 (training, nodes unknown)")


# --- classify: every branch -------------------------------------------------------------------------

SERVING_NOTE = ("serving with TP across two Sparks is what NVIDIA's vLLM and TensorRT-LLM playbooks do; "
                "it is not the training error")
SINGLE_NOTE = ("single node: TP does not cross the ConnectX-7 link, so not this gotcha "
               "(but a Spark has one GPU: TP > 1 on one node needs a machine with more GPUs)")
GEN_NOTE = ("TP of a generation engine inside a training job: inference-style TP over two Sparks "
            "can work, but make sure the trained model itself uses DDP/FSDP")


@pytest.mark.parametrize("context, nodes, scope, unresolved, status, why", [
    ("serving", "multi", None, False, Status.OK, SERVING_NOTE),
    ("serving", "multi", None, True, Status.OK, SERVING_NOTE),
    ("serving", "unknown", "generation", False, Status.OK, SERVING_NOTE),
    ("training", "single", None, False, Status.OK, SINGLE_NOTE),
    ("training", "single", None, True, Status.OK, SINGLE_NOTE),
    ("unknown", "single", None, True, Status.OK, SINGLE_NOTE),
    (None, "single", None, False, Status.OK, SINGLE_NOTE),
    ("training", "multi", "generation", False, Status.WARN, GEN_NOTE),
    ("training", "unknown", "generation", False, Status.WARN, "node count not found: " + GEN_NOTE),  # issue 22
    ("training", "single", "generation", False, Status.OK, SINGLE_NOTE),
    ("training", "multi", "generation", True, Status.WARN, GEN_NOTE),
    ("training", "multi", None, True, Status.WARN, "TP comes from a variable sparktui cannot resolve: a value > 1 fails across two Sparks"),
    ("training", "unknown", None, True, Status.WARN, "TP comes from a variable sparktui cannot resolve: a value > 1 fails across two Sparks"),
    ("training", "multi", None, False, Status.FAIL, "TP > 1 in training across nodes: not viable over the ConnectX-7 link"),
    ("training", "multi", "model", False, Status.FAIL, "TP > 1 in training across nodes: not viable over the ConnectX-7 link"),
    ("training", "unknown", None, False, Status.WARN, "training with TP > 1; node count not found: launched on two Sparks this fails"),
    ("training", None, None, False, Status.WARN, "training with TP > 1; node count not found: launched on two Sparks this fails"),
    ("unknown", "multi", None, True, Status.UNKNOWN, "TP from an unresolved variable in a file sparktui cannot class as training or serving"),
    (None, None, None, True, Status.UNKNOWN, "TP from an unresolved variable in a file sparktui cannot class as training or serving"),
    ("unknown", "multi", None, False, Status.WARN, "cannot tell training from serving here: if this trains across two Sparks, it fails"),
    ("unknown", "unknown", None, False, Status.WARN,
     "cannot tell training from serving or the node count: if this trains on two Sparks, it fails"),
    ("unknown", "multi", "generation", False, Status.WARN, "cannot tell training from serving here: if this trains across two Sparks, it fails"),
])
def test_classify(context, nodes, scope, unresolved, status, why):
    m = {"file": "f", "line": 1, "key": "tp_size", "value": "x" if unresolved else "2",
         "status": "unresolved" if unresolved else "set"}
    if scope:
        m["scope"] = scope
    c = {k: v for k, v in (("context", context), ("nodes", nodes)) if v is not None}
    assert g10.classify(m, c) == (status, why)


# --- describe and the evidence of a file's context ----------------------------------------------------

@pytest.mark.parametrize("m, c, text", [
    ({"file": "a.yaml", "line": 4, "key": "tp_size", "key_path": "distributed.tp_size", "value": "2"},
     {"context": "training", "nodes": "multi"}, "a.yaml:4: distributed.tp_size=2 (training, multi-node)"),
    ({"file": "r.sh", "line": 2, "key": "--tp", "value": "$TP", "status": "unresolved"},
     {"context": "serving", "nodes": "single"}, "r.sh:2: --tp=$TP (unresolved) (serving, single node)"),
    ({"file": "r.sh", "line": 2, "key": "--tp", "value": "$TP", "via": "TP=4 (line 1)", "degree": 4},
     {}, "r.sh:2: --tp=$TP = 4 (TP=4 (line 1)) (context unknown, nodes unknown)"),
    ({}, {"context": "odd", "nodes": "odd"}, "?:?: ?=? (context unknown, nodes unknown)"),
])
def test_describe(m, c, text):
    assert g10.describe(m, c) == text


def test_context_evidence_names_unresolved_node_counts_and_the_launcher_only_when_there():
    full = g10._context_value({"context": "training", "nodes": "multi", "training_markers": ["torchrun"],
                               "node_markers": ["--nnodes=2"], "node_unresolved": ["--nnodes=$N"], "launched_by": ["run.sh"]})
    assert full == {"context": "training", "training markers": ["torchrun"], "serving markers": [], "nodes": "multi",
                    "node markers": ["--nnodes=2"], "unresolved node counts": ["--nnodes=$N"], "launched by": ["run.sh"]}
    assert g10._context_value({}) == {"context": "unknown", "training markers": [], "serving markers": [],
                                      "nodes": "unknown", "node markers": []}


# --- the judge with nothing found: files and bytes read 0 vs 1 ------------------------------------------

def data(matches=(), files=None, files_read=12, bytes_read=4096, paths=None, skipped=None, truncated=None, **kw) -> dict:
    d = {"paths": paths if paths is not None else [{"path": "/home/spark/job", "status": "scanned"}],
         "files_read": files_read, "dirs_walked": 3, "bytes_read": bytes_read, "matches": list(matches),
         "matches_total": len(matches), "files": files or {}, "skipped": skipped or {}, "truncated": truncated,
         "at_one": 0, **kw}
    if bytes_read is None:
        del d["bytes_read"]
    return d


def judge(d):
    return g10.judge(readings_of(tpscan=d), Config())


@pytest.mark.parametrize("files_read, bytes_read, status, summary", [
    (1, 1, Status.OK, "no tensor-parallel setting > 1 in 1 files under /home/spark/job"),
    (1, 0, Status.UNKNOWN, "cannot tell: the 1 files read under /home/spark/job were empty (0 bytes)"),
    (1, None, Status.OK, "no tensor-parallel setting > 1 in 1 files under /home/spark/job"),
    (0, 0, Status.UNKNOWN, "cannot tell: no launch config or script could be read under /home/spark/job (wrong directory? pass --path)"),
    (0, 5, Status.UNKNOWN, "cannot tell: no launch config or script could be read under /home/spark/job (wrong directory? pass --path)"),
    ("x", 5, Status.UNKNOWN, "cannot tell: no launch config or script could be read under /home/spark/job (wrong directory? pass --path)"),
])
def test_ok_needs_a_file_read_and_a_byte_in_it(files_read, bytes_read, status, summary):
    v = judge(data(files_read=files_read, bytes_read=bytes_read))
    assert (v.status, v.summary) == (status, summary)
    assert v.fix == ("" if status is Status.OK else g10.unknown_fix([{"path": "/home/spark/job", "status": "scanned"}]))


@pytest.mark.parametrize("skipped, status, tail", [
    ({"too large": 1}, Status.OK, "; 1 skipped (1 too large): not checked"),
    ({"permission denied: /job/x": 2}, Status.OK, "; 2 skipped (2 unreadable): not checked"),
    ({"unreadable: Input/output error": 1}, Status.OK, "; 1 skipped (1 unreadable): not checked"),
    ({"symlink loop": 1}, Status.OK, "; 1 skipped (1 symlink loop): not checked"),
    ({"binary": 4, "virtualenv": 1, "vcs folder": 1, "fifo or device": 1}, Status.OK, None),
])
def test_only_skips_that_could_hide_a_setting_are_named_not_checked(skipped, status, tail):
    v = judge(data(files_read=3, skipped=skipped))
    assert v.status is status
    if tail:
        assert v.summary == f"ok for 3 files read under /home/spark/job: no tensor-parallel setting > 1{tail} (see evidence)"
    else:
        assert v.summary == "no tensor-parallel setting > 1 in 3 files under /home/spark/job"


def test_with_no_file_read_the_skips_are_the_reason():
    v = judge(data(files_read=0, skipped={"too large": 2, "binary": 1}))
    assert (v.status, v.summary) == (Status.UNKNOWN, "cannot tell: no file under /home/spark/job could be read; "
                                                     "2 skipped (2 too large): not checked")
    v = judge(data(files_read=2, bytes_read=0, skipped={"too large": 1}))
    assert v.summary == "cannot tell: the 2 files read under /home/spark/job were empty (0 bytes); 1 skipped (1 too large): not checked"


def test_paths_missing_all_some_or_none():
    gone = {"path": "/home/spark/jbo", "status": "missing"}
    here = {"path": "/home/spark/job", "status": "scanned"}
    v = judge(data(files_read=0, paths=[gone]))
    assert (v.status, v.summary) == (Status.UNKNOWN, "cannot tell: nothing to scan (/home/spark/jbo: missing)")
    v = judge(data(files_read=4, paths=[here, gone]))
    assert (v.status, v.summary) == (Status.UNKNOWN, "no TP > 1 in 4 files read, but not every path could be scanned "
                                                     "(/home/spark/jbo: missing)")
    v = judge(data(files_read=4, paths=[here, {"path": "/home/spark/job", "status": "already scanned"}]))
    assert v.status is Status.OK
    assert judge(data(files_read=0, paths=[])).summary.endswith("under (no paths) (wrong directory? pass --path)")


def test_a_scan_cut_short_is_unknown_unless_a_finding_is_worse():
    v = judge(data(files_read=50, truncated="stopped after 60 s"))
    assert (v.status, v.summary) == (Status.UNKNOWN, "no TP > 1 in 50 files read, but the scan was cut short (stopped after 60 s)")
    ok = data([_m("serve.sh")], {"serve.sh": {"context": "serving", "nodes": "multi"}}, truncated="stopped after 60 s")
    v = judge(ok)
    assert v.status is Status.UNKNOWN and v.summary.endswith("; scan cut short (stopped after 60 s)") and v.fix == g10.unknown_fix(data()["paths"])
    warn = data([_m("a.yaml")], {"a.yaml": {"context": "training", "nodes": "unknown"}}, truncated="stopped after 60 s")
    assert judge(warn).status is Status.WARN and "cut short" not in judge(warn).summary


# --- the judge with findings ------------------------------------------------------------------------

def _m(file: str, line: int = 3, **kw) -> dict:
    return {"file": file, "line": line, "key": "tensor_model_parallel_size", "value": "2", "status": "set", "degree": 2, **kw}


TRAIN2 = {"context": "training", "nodes": "multi"}


@pytest.mark.parametrize("n, more", [(1, ""), (2, " and 1 more"), (3, " and 2 more")])
def test_a_failure_counts_the_others(n, more):
    d = data([_m("a.yaml", i) for i in range(1, n + 1)], {"a.yaml": TRAIN2})
    v = judge(d)
    assert v.id == "G10" and v.fix == g10.fix_for(d["matches"], d["paths"])
    assert v.summary == (f"TP > 1 in a multi-node training config: a.yaml:1: tensor_model_parallel_size=2 (training, multi-node){more}"
                         "; across two Sparks use DDP/FSDP with TP=1")


@pytest.mark.parametrize("n, more", [(1, ""), (2, " and 1 more")])
def test_a_warning_counts_the_others(n, more):
    d = data([_m("a.yaml", i) for i in range(1, n + 1)], {"a.yaml": {"context": "training"}})
    v = judge(d)
    assert v.status is Status.WARN and v.fix == g10.fix_for(d["matches"], d["paths"])
    assert v.summary == f"TP > 1 that may be training across two Sparks: a.yaml:1: tensor_model_parallel_size=2 (training, nodes unknown){more}"


def test_an_unknown_finding_is_summarised_and_gets_the_fix():
    m = _m("x.yaml", value="$TP", status="unresolved")
    v = judge(data([m], {"x.yaml": {}}))
    assert (v.status, v.summary) == (Status.UNKNOWN, "cannot tell: TP set from a variable in a file that is neither clearly "
                                                     "training nor serving: x.yaml:3: tensor_model_parallel_size=$TP (unresolved) "
                                                     "(context unknown, nodes unknown)")
    assert v.fix == g10.fix_for([m], data()["paths"]) and "${EDITOR:-vi} +3 x.yaml" in v.fix


@pytest.mark.parametrize("total, extra", [(1, ""), (0, ""), (2, " (+1 not listed)"), (5, " (+4 not listed)")])
def test_findings_not_listed_are_counted(total, extra):
    d = data([_m("a.yaml")], {"a.yaml": TRAIN2})
    d["matches_total"] = total
    v = judge(d)
    assert v.summary.endswith("; across two Sparks use DDP/FSDP with TP=1" + extra)
    # the scan kept one finding of `total`: the others are counted under the details too
    assert v.details[-1] == (f"... and {total - 1} more" if total > 1 else v.details[0])
    assert len(v.details) == (2 if total > 1 else 1)
    assert {e.what: e.value for e in v.evidence}["tensor-parallel settings > 1 or unresolved"] == max(total, 1)


def test_ok_findings_are_counted_by_kind():
    files = {"serve.sh": {"context": "serving", "nodes": "multi"}, "one.sh": {"context": "training", "nodes": "single"}}
    v = judge(data([_m("serve.sh"), _m("one.sh"), _m("one.sh", 4)], files))
    assert (v.status, v.summary) == (Status.OK, "TP > 1 only where it is fine: 1 in serving configs (TP=2 serving across "
                                                "two Sparks is what NVIDIA's playbooks do); 2 single-node or inference-engine settings")
    v = judge(data([_m("one.sh")], files, skipped={"too large": 1}))
    assert v.summary == "TP > 1 only where it is fine: 1 single-node or inference-engine settings; 1 skipped (1 too large): not checked"
    v = judge(data([_m("one.sh")], files, paths=[{"path": "/job", "status": "scanned"}, {"path": "/jbo", "status": "missing"}]))
    assert (v.status, v.summary) == (Status.UNKNOWN, "TP > 1 only where it is fine: 1 single-node or inference-engine settings; "
                                                     "not every path could be scanned")


def test_a_warning_is_not_softened_by_a_missing_path():
    v = judge(data([_m("a.yaml")], {"a.yaml": {"context": "training"}},
                   paths=[{"path": "/job", "status": "scanned"}, {"path": "/jbo", "status": "missing"}]))
    assert v.status is Status.WARN and "not every path" not in v.summary


@pytest.mark.parametrize("n, last", [(60, None), (61, "... and 1 more"), (59, None)])
def test_details_stop_at_max_details(n, last):
    v = judge(data([_m("a.yaml", i) for i in range(1, n + 1)], {"a.yaml": TRAIN2}))
    assert g10.MAX_DETAILS == 60
    assert len(v.details) == min(n, 60) + (1 if last else 0)
    if last:
        assert v.details[-1] == last
    else:
        assert not v.details[-1].startswith("...")


@pytest.mark.parametrize("n_files, shown", [(10, 10), (11, 10), (1, 1)])
def test_at_most_ten_files_have_their_context_in_the_evidence(n_files, shown):
    files = {f"c{i}.yaml": TRAIN2 for i in range(n_files)}
    v = judge(data([_m(f) for f in files], files))
    assert sum(1 for e in v.evidence if e.what.startswith("context of ")) == shown


def test_the_worst_files_context_is_shown_first():
    files = {"serve.sh": {"context": "serving", "nodes": "multi"}, "train.sh": TRAIN2}
    v = judge(data([_m("serve.sh"), _m("train.sh")], files))
    assert [e.what for e in v.evidence if e.what.startswith("context of ")] == ["context of train.sh", "context of serve.sh"]


def test_a_match_in_a_file_without_context_is_judged_as_unknown_context():
    v = judge(data([_m("lost.yaml")], {}))
    assert v.status is Status.WARN and "(context unknown, nodes unknown)" in v.summary
    assert not [e for e in v.evidence if e.what.startswith("context of ")]


def test_non_dict_matches_are_dropped_not_judged():
    d = data([_m("a.yaml"), "a.yaml:3", 7], {"a.yaml": TRAIN2})
    d["matches_total"] = 1
    v = judge(d)
    assert v.status is Status.FAIL and len(v.details) == 1


@pytest.mark.parametrize("value, n", [(None, 0), ("3", 3), ("x", 0), ([1], 0), (4.0, 4), (0, 0)])
def test_counts_that_are_not_numbers_read_as_zero(value, n):
    assert g10._int(value) == n


@pytest.mark.parametrize("reason, unchecked, short", [
    ("too large", True, "too large"), ("permission denied: /x", True, "unreadable"), ("unreadable: EIO", True, "unreadable"),
    ("symlink loop", True, "symlink loop"), ("binary", False, "binary"), ("virtualenv", False, "virtualenv"),
    ("fifo or device", False, "fifo or device"),
])
def test_skip_reasons(reason, unchecked, short):
    assert g10._unchecked(reason) is unchecked and g10._short(reason) == short


# --- the evidence: every row, its source and value; the verdict's id and fix on each path -------------

from sparktui.core.readings import Reading, Readings  # noqa: E402

SRC = "scan of /home/spark/job"


def judged_from(d: dict | None, error: str | None = None, source: str = SRC):
    r = Readings()
    r.add(Reading("tpscan", d, error=error, source=source))
    return g10.judge(r, Config())


def test_every_evidence_row_of_a_clean_scan():
    d = data(files_read=7, bytes_read=2100, skipped={"binary": 1}, at_one=2, at_one_sample=["a.yaml:3"])
    v = judged_from(d)
    assert (v.id, v.status, v.fix) == ("G10", Status.OK, "")
    assert rows(v) == [
        ("scan paths", SRC, ["/home/spark/job (scanned)"]),
        ("files read (YAML/JSON/TOML/shell/.env/Dockerfile/Python)", SRC, {"files": 7, "folders": 3, "bytes": 2100}),
        ("skipped (by reason)", SRC, {"binary": 1}),
        ("tensor-parallel settings > 1 or unresolved", SRC, 0),
        ("tensor-parallel settings at 1 (fine)", SRC, {"count": 2, "sample": ["a.yaml:3"]}),
    ]
    d = data(files_read=7, paths=[{"path": "/home/spark/job"}])
    del d["dirs_walked"], d["bytes_read"]
    v = judged_from(d, source="")
    assert rows(v)[:2] == [("scan paths", "tpscan", ["/home/spark/job (?)"]),
                           ("files read (YAML/JSON/TOML/shell/.env/Dockerfile/Python)", "tpscan", {"files": 7, "folders": 0, "bytes": 0})]
    assert ("tensor-parallel settings at 1 (fine)" not in [r[0] for r in rows(v)])
    d = data(files_read=7, at_one=1)
    assert rows(judged_from(d))[-1] == ("tensor-parallel settings at 1 (fine)", SRC, {"count": 1, "sample": []})


def test_the_context_rows_name_the_source():
    v = judged_from(data([_m("a.yaml")], {"a.yaml": {"context": "training", "nodes": "multi", "serving_markers": ["x"]}}))
    assert rows(v)[-1] == ("context of a.yaml", SRC, {"context": "training", "training markers": [], "serving markers": ["x"],
                                                       "nodes": "multi", "node markers": []})


@pytest.mark.parametrize("d, fix", [
    (data(files_read=0, paths=[{"path": "/x", "status": "missing"}]), "unknown"),
    (data(files_read=0, skipped={"too large": 1}), "unknown"),
    (data(files_read=0), "unknown"),
    (data(files_read=2, bytes_read=0), "unknown"),
    (data(files_read=2, paths=[{"path": "/a", "status": "scanned"}, {"path": "/x", "status": "missing"}]), "unknown"),
    (data(files_read=2, truncated="stopped"), "unknown"),
    (data(files_read=2, skipped={"too large": 1}), ""),
    (data(files_read=2), ""),
])
def test_each_nothing_found_path_has_the_id_its_evidence_and_its_fix(d, fix):
    v = judged_from(d)
    assert v.id == "G10" and v.fix == (g10.unknown_fix(d["paths"]) if fix == "unknown" else fix) and v.details == ()
    assert [r[0] for r in rows(v)] == ["scan paths", "files read (YAML/JSON/TOML/shell/.env/Dockerfile/Python)",
                                       "skipped (by reason)", "tensor-parallel settings > 1 or unresolved"]


def test_a_failed_or_lacking_or_odd_reading_is_unknown_with_its_evidence():
    v = judged_from(None, error="scan crashed: boom")
    assert (v.id, v.status, v.summary) == ("G10", Status.UNKNOWN, "cannot tell: the tensor-parallel scan unavailable (scan crashed: boom)")
    assert rows(v) == [("the tensor-parallel scan", SRC, "unavailable: scan crashed: boom")]
    d = data()
    del d["files_read"]
    v = judged_from(d)
    assert (v.id, v.status) == ("G10", Status.UNKNOWN)
    assert v.summary == "cannot tell: the tensor-parallel scan: the tpscan reading has no files_read field"
    v = judged_from({**data(), "matches": "a.yaml:3"}, source="")
    assert (v.id, v.status) == ("G10", Status.UNKNOWN)
    assert v.summary == "cannot tell: the tensor-parallel scan: the tpscan reading's matches is a str, not a list"
    assert rows(v) == [("the tensor-parallel scan", "tpscan", "unavailable: the tpscan reading's matches is a str, not a list")]


def test_several_missing_paths_are_joined():
    gone = [{"path": "/a", "status": "missing"}, {"path": "/b", "status": "permission denied"}]
    assert judged_from(data(files_read=0, paths=gone)).summary == "cannot tell: nothing to scan (/a: missing; /b: permission denied)"
    v = judged_from(data(files_read=3, paths=[{"path": "/job", "status": "scanned"}, *gone]))
    assert v.summary == "no TP > 1 in 3 files read, but not every path could be scanned (/a: missing; /b: permission denied)"
    assert judged_from(data(files_read=0, paths=[{"path": "/a", "status": "scanned"}, {"path": "/b", "status": "scanned"}])
                       ).summary.endswith("under /a, /b (wrong directory? pass --path)")
    v = judged_from(data(files_read=3, skipped={"too large": 1, "permission denied: /x": 2}))
    assert v.summary.endswith("; 3 skipped (1 too large, 2 unreadable): not checked (see evidence)")


def test_a_warning_with_unchecked_files_does_not_claim_them_and_findings_sort_by_severity():
    files = {"w.yaml": {"context": "training"}, "u.yaml": {}, "s.sh": {"context": "serving"}}
    ms = [_m("s.sh"), _m("u.yaml", value="$TP", status="unresolved"), _m("w.yaml")]
    v = judged_from(data(ms, files, skipped={"too large": 1}))
    assert v.status is Status.WARN and "skipped" not in v.summary
    assert [d.split(": ")[0].split(":")[0] for d in v.details] == ["w.yaml", "u.yaml", "s.sh"]  # warn, unknown, ok
    assert [r[0] for r in rows(v) if r[0].startswith("context of")] == ["context of w.yaml", "context of u.yaml", "context of s.sh"]
