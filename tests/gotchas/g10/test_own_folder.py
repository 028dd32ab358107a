"""Issue 24 Seen 12 (G10): a default scan (no --path) said ok having scanned sparktui's own source
folder, the --path hint only under -v. The headline names the folder looked at; sparktui's own
source or install folder is skip, a folder with no tensor-parallel setting at all unknown, each with
the hint in the summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.gotchas import g10_tensor_parallel as g10
from sparktui.probes import tpscan
from tests.conftest import readings_of


def judge(d):
    return g10.judge(readings_of(tpscan=d), Config())


def default_scan(monkeypatch, folder: Path) -> dict:
    """What `sparktui check` scans with no --path: the current folder within the default bounds."""
    monkeypatch.chdir(folder)
    return tpscan.read(Config()).data


def put(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def test_a_default_scan_of_sparktuis_own_package_is_skip_with_the_hint(monkeypatch):
    v = judge(default_scan(monkeypatch, g10.PACKAGE))
    assert v.status is Status.SKIP, v.summary
    assert v.summary.startswith(f"scanned the current folder {g10.PACKAGE}, sparktui's own ")
    assert "not a training job's: name the job's folders with --path DIR" in v.summary
    assert "--path" in v.fix


def test_the_checkout_and_a_folder_in_it_are_sparktuis_own_source():
    pkg = Path("/home/u/sparktui/src/sparktui")
    assert g10.own_folder("/home/u/sparktui", pkg) == "source"
    assert g10.own_folder("/home/u/sparktui/tests/data", pkg) == "source"
    assert g10.own_folder("/home/u/sparktui/src/sparktui/data", pkg) == "source"
    assert g10.own_folder("/home/u/sparktui-jobs", pkg) is None
    assert g10.own_folder("/home/u", pkg) is None
    site = Path("/venv/lib/python3.12/site-packages/sparktui")
    assert g10.own_folder("/venv/lib/python3.12/site-packages", site) == "install"
    assert g10.own_folder("/venv/lib/python3.12/site-packages/sparktui/gotchas", site) == "install"
    assert g10.own_folder("/venv/lib/python3.12/site-packages/torch", site) is None
    assert g10.own_folder(None, site) is None and g10.own_folder("", site) is None


def test_sparktuis_own_test_recipes_never_fail_a_default_scan(monkeypatch):
    """The checkout's tests hold multi-node TP=2 training recipes: scanned by default they would
    fail G10 on the user's machine. Skip, whatever they hold."""
    checkout = g10.PACKAGE.parents[1]
    if g10.PACKAGE.parent.name != "src" or not (checkout / "tests").is_dir():
        pytest.skip("not a source checkout")
    roots = [{"path": ".", "abs": str(checkout / "tests"), "status": "scanned", "max_depth": 4, "max_files": 5000,
              "max_seconds": 10.0}]
    m = {"file": "tests/data/recipes/x.sh", "line": 2, "key": "--tensor-model-parallel-size", "value": "2",
         "degree": 2, "status": "set"}
    files = {"tests/data/recipes/x.sh": {"context": "training", "nodes": "multi"}}
    v = judge({"paths": roots, "files_read": 30, "bytes_read": 9000, "matches": [m], "matches_total": 1,
               "files": files, "at_one": 0})
    assert v.status is Status.SKIP and "sparktui's own source folder" in v.summary


def test_the_same_folder_named_with_path_is_judged(tmp_path):
    """--path pointing at sparktui's folder is the user's choice: judged as any folder."""
    v = judge({"paths": [{"path": str(g10.PACKAGE), "abs": str(g10.PACKAGE), "status": "scanned"}],
               "files_read": 3, "bytes_read": 100, "matches": [], "matches_total": 0, "files": {}, "at_one": 0})
    assert v.status is Status.OK and v.summary == f"no tensor-parallel setting > 1 in 3 files under {g10.PACKAGE}"


def test_a_default_scan_with_no_tp_setting_at_all_is_unknown_naming_the_folder(tmp_path, monkeypatch):
    put(tmp_path, "notes/todo.yaml", "shopping: [milk, eggs]\n")
    put(tmp_path, "run.sh", "#!/bin/sh\necho hello\n")
    v = judge(default_scan(monkeypatch, tmp_path))
    assert v.status is Status.UNKNOWN, v.summary
    assert v.summary == (f"cannot tell: no tensor-parallel setting at all in 2 files under the current folder {tmp_path} "
                         "(no --path named: is a job's config here?); name the job's folders with --path DIR (or [scan] paths)")


def test_a_default_scan_that_saw_tp_1_is_ok_naming_the_folder(tmp_path, monkeypatch):
    put(tmp_path, "launch.sh", "#!/bin/bash\ntorchrun --nnodes=2 train.py --tensor-model-parallel-size 1\n")
    v = judge(default_scan(monkeypatch, tmp_path))
    assert v.status is Status.OK, v.summary
    assert v.summary == f"no tensor-parallel setting > 1 in 1 files under the current folder {tmp_path}"


def test_a_named_folder_with_no_tp_at_all_stays_ok(tmp_path):
    """The user named the job's folder: no TP there is what DDP/FSDP looks like."""
    put(tmp_path, "launch.sh", "#!/bin/bash\ntorchrun --nnodes=2 train.py\n")
    v = judge(tpscan.scan([str(tmp_path)], 4 * 1024 * 1024, deadline_s=10))
    assert v.status is Status.OK and v.summary == f"no tensor-parallel setting > 1 in 1 files under {tmp_path}"
