"""G2's remove-flash-attn block and the evidence of a crashed import, pinned (a mutation run on
2026-12-05 found them unpinned: the block could name `None` as the interpreter, and a crash verdict
could lose its evidence, and every test still passed)."""

from __future__ import annotations

from sparktui.gotchas import g02_flash_attn as g2
from tests.gotchas.builders import g2_judge as judge, g2_target as target

CHECK = "-c \"import torch; print(torch.__version__, torch.version.cuda)\""


def test_the_generic_fix_says_plain_pip_and_python():
    assert g2.FIX.endswith(f"```bash\npip uninstall -y flash-attn\npython {CHECK}\n```\n")


def test_the_filled_fix_runs_pip_and_the_check_with_the_target_interpreter():
    fix = g2.fix_for(target({}, {}))
    assert fix.startswith(g2.SDPA_WAYS + g2.BROKEN)
    assert f"/usr/bin/python3 -m pip uninstall -y flash-attn\n/usr/bin/python3 {CHECK}" in fix
    assert "None" not in fix


def test_a_crashed_import_keeps_every_evidence_row():
    crashed = {"status": "crashed", "error": "process died by SIGSEGV during 'import flash_attn'", "signal": "SIGSEGV"}
    v = judge(target(crashed, {"flash-attn": "2.7.4.post1", "unsloth": "2026.7.3"}))
    rows = {e.what: e.value for e in v.evidence}
    assert rows["flash-attn package"] == "2.7.4.post1" and rows["unsloth package"] == "2026.7.3"
    assert rows["import flash_attn"] == "crashed: process died by SIGSEGV during 'import flash_attn'"
    assert rows["training interpreter"] == "/usr/bin/python3"
