"""Layer contracts: probes, gotchas and core never import textual; judges never touch the machine."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_linter_contracts_hold():
    # Through this interpreter, not a `lint-imports` script beside it: a `pip install --target`
    # (the GPU machine) puts no script there.
    lint = "import sys; from importlinter.cli import lint_imports_command; sys.argv[0] = 'lint-imports'; lint_imports_command()"
    proc = subprocess.run([sys.executable, "-c", lint, "--config", str(ROOT / "pyproject.toml")],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout


def test_headless_import_does_not_load_textual():
    code = ("import sys, sparktui.runner, sparktui.cli.main, sparktui.probes, sparktui.gotchas;"
            "from sparktui import probes; [probes._registry()];"
            "print('textual' in sys.modules, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]
