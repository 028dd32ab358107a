"""Build stand-in interpreters under a folder: a shell wrapper around this Python whose PYTHONPATH
puts a fake torch (and optionally flash_attn) first. Each fake fails the way real broken installs do."""

from __future__ import annotations

import stat
import sys
import textwrap
from pathlib import Path

TORCH_OK_GB10 = '''
import os, sys, types
__version__ = "2.9.0+cu130"
version = types.SimpleNamespace(cuda="13.0", hip=None, git_version="fake")
class _Backends: pass
backends = types.SimpleNamespace(cudnn=types.SimpleNamespace(version=lambda: 91000))
class _Cuda:
    def is_available(self): return True
    def device_count(self): return 1
    def get_device_name(self, i=0): return "NVIDIA GB10"
    def get_device_capability(self, i=0): return (12, 1)
    def get_arch_list(self): return ARCH
    def synchronize(self): pass
cuda = _Cuda()
ARCH = ["sm_80", "sm_90", "sm_100", "sm_120", "compute_120"]
class _T:
    def cuda(self):
        if os.environ.get("FAKE_CUDA_SEGV"):
            os.kill(os.getpid(), 11)
        return self
    def item(self): return 0.0
def zeros(*a): return _T()
'''

FAKES = {
    # ImportError naming an undefined CUDA symbol, as a cu12 wheel on a CUDA 13 system gives.
    "undefined_symbol": "raise ImportError('/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so: "
                        "undefined symbol: cudaGetDriverEntryPointByVersion, version libcudart.so.12')\n",
    # Death by SIGSEGV while importing.
    "segv_import": "import os\nos.kill(os.getpid(), 11)\n",
    # A hang in import (a stuck driver, a lock): the probe must kill it.
    "hang_import": "import time\ntime.sleep(600)\n",
    # Imports fine, looks like a GB10 build, and segfaults on the first .cuda().
    "segv_first_cuda": TORCH_OK_GB10,
    # A healthy-looking cu130 torch on a GB10.
    "ok_gb10": TORCH_OK_GB10,
    # An environment without torch, whatever the machine's own interpreter has: run with -S (no
    # site-packages, so neither torch nor its registered metadata), and no fake on the path.
    "no_torch": None,
}

# Hangs in import like hang_import, after starting a grandchild that sleeps too (in the same process
# group, as torch's compile workers are). Writes "<own pid> <grandchild pid>" to $STANDIN_PIDFILE
# first, so a test can check both are gone after a cancel or Ctrl-C.
HANG_WITH_GRANDCHILD = '''
import os, subprocess, sys, time
kid = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
path = os.environ["STANDIN_PIDFILE"]
with open(path + ".tmp", "w") as f:
    f.write("%d %d" % (os.getpid(), kid.pid))
os.replace(path + ".tmp", path)
time.sleep(600)
'''

# Imports as a CUDA torch, then makes bandwidth_script's measurement report whatever JSON object
# $FAKE_BANDWIDTH_RESULT holds (a target interpreter can print anything on its event channel).
BANDWIDTH_RESULT = '''
import json, os, types, __main__
__version__ = "2.9.0+cu130"
version = types.SimpleNamespace(cuda="13.0", hip=None, git_version="fake")
backends = types.SimpleNamespace(cudnn=types.SimpleNamespace(version=lambda: 91000))
__main__.measure = lambda *a, **k: json.loads(os.environ["FAKE_BANDWIDTH_RESULT"])
'''

FAKES.update({"hang_grandchild": HANG_WITH_GRANDCHILD, "bandwidth_result": BANDWIDTH_RESULT})

FLASH_ATTN_SEGV = "import os\nos.kill(os.getpid(), 11)\n"


def make_standin(root: Path, kind: str, flash_attn: str | None = None, extra_env: dict | None = None) -> str:
    """Returns the path of an executable that behaves like a broken training interpreter."""
    site = root / f"site-{kind}"
    pkg = site / "torch"
    pkg.mkdir(parents=True, exist_ok=True)
    if FAKES[kind] is not None:
        (pkg / "__init__.py").write_text(FAKES[kind])
    else:
        pkg.rmdir()
    if flash_attn is not None:
        fa = site / "flash_attn"
        fa.mkdir(exist_ok=True)
        (fa / "__init__.py").write_text(flash_attn)
    env = {"PYTHONPATH": str(site), **(extra_env or {})}
    if kind == "segv_first_cuda":
        env["FAKE_CUDA_SEGV"] = "1"
    exports = "".join(f"export {k}='{v}'\n" for k, v in env.items())
    wrapper = root / f"python-{kind}"
    no_site = " -S" if FAKES[kind] is None else ""
    wrapper.write_text(f"#!/bin/sh\n{exports}exec '{sys.executable}'{no_site} \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(wrapper)


def make_script(root: Path, name: str, body: str) -> str:
    """An 'interpreter' that is really a shell script (prints garbage, exits oddly)."""
    p = root / name
    p.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    p.chmod(0o755)
    return str(p)
