"""G1: CUDA 12/13 ABI mismatch: a PyPI torch built for CUDA 12 on a machine that ships CUDA 13."""

from __future__ import annotations

import re

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.verdict import EvidenceList, Status, Verdict, worst
from sparktui.gotchas._facts import GpuFacts, major
from sparktui.gotchas.base import Gotcha, unknown_from

ID = "G1"

FIX = """\
Install a torch built for CUDA 13, from PyTorch's cu130 index (never a plain `pip install torch`,
which resolves to a CUDA 12 wheel):

```bash
pip uninstall -y torch torchvision torchaudio
pip install torch torchvision --index-url https://download.pytorch.org/whl/cu130
python -c "import torch; print(torch.__version__, torch.version.cuda)"   # expect 13.x
```

Or train inside a matched NGC container, whose torch is built against CUDA 13 (it carries no
`+cu130` tag, and needs none):

```bash
docker run --gpus all -it --rm nvcr.io/nvidia/pytorch:25.11-py3
```

A `libcudart.so.12` still registered beside `libcudart.so.13` is usually left over from an older
install; find what owns it before removing anything:

```bash
ldconfig -p | grep libcudart
dpkg -S "$(ldconfig -p | awk '/libcudart.so.12 /{print $NF; exit}')"
```
"""

FIX_NO_GPU = """\
torch is built for the right CUDA but cannot see the GPU, so nothing ran on it. Check that the
driver sees the GB10, that a container was started with the GPUs passed through, and that the
training environment does not hide them:

```bash
nvidia-smi                                          # the driver must list the GPU first
docker run --gpus all -it --rm nvcr.io/nvidia/pytorch:25.11-py3    # containers: --gpus all
env | grep -E 'CUDA_VISIBLE_DEVICES|NVIDIA_VISIBLE_DEVICES'          # empty or -1 hides every GPU
unset CUDA_VISIBLE_DEVICES
python -c "import torch; print(torch.cuda.is_available(), torch.cuda.device_count())"
```
"""

# glibc: "undefined symbol: cudaGetDriverEntryPointByVersion, version libcudart.so.12"
_UNDEF = re.compile(r"undefined symbol:?\s*([^\s,;]+)(?:[,;]?\s*version\s+([^\s,;]+))?")
_NO_MODULE = re.compile(r"No module named '([^']+)'")
_CUDA_VERSION = re.compile(r"^\s*(\d+)(?:\.\d+)*\s*$")
_VISIBILITY_ENV = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")


def undefined_symbol(err: str) -> tuple[str, str | None] | None:
    """(symbol, symbol version) named by an undefined-symbol ImportError, trailing punctuation dropped."""
    m = _UNDEF.search(err or "")
    if not m:
        return None
    sym = m.group(1).rstrip(".,;:)'\"")
    ver = m.group(2).rstrip(".,;:)'\"") if m.group(2) else None
    return (sym, ver) if sym else None


def missing_module(stage: dict) -> str | None:
    """The module a ModuleNotFoundError names ('torch', 'torch._C', 'numpy' ...), else None."""
    if stage.get("status") != "error" or stage.get("error_type") != "ModuleNotFoundError":
        return None
    m = _NO_MODULE.search(stage.get("error") or "")
    return m.group(1) if m else None


def torch_not_installed(t: dict) -> bool:
    """True when ``import torch`` in the target failed because there is no module 'torch' at all."""
    return missing_module(_stage(t, "import torch")) == "torch"


def _cuda_major(cuda: object) -> int | None:
    """Major of a torch.version.cuda string ("13.0" -> 13); None when it is not a version."""
    m = _CUDA_VERSION.match(str(cuda))
    return int(m.group(1)) if m else None


def _no_gpu_finding(t: dict, version: str | None, cuda: str, ev: EvidenceList) -> str:
    """The words for a CUDA build of torch that cannot see the GPU (and the env that may hide it)."""
    env = (t.get("python") or {}).get("env") or {}
    seen = []
    for k in _VISIBILITY_ENV:
        if k in env:
            ev.add(k, "target environment", repr(env[k]))
            seen.append(f"{k}={env[k]!r}")
    where = f" ({', '.join(seen)} in the target's environment)" if seen else ""
    return (f"torch {version} is built for CUDA {cuda} but cannot see the GPU: torch.cuda.is_available() is False, "
            f"so the first .cuda() never ran{where}; a container started without --gpus, or "
            f"CUDA_VISIBLE_DEVICES empty?")


def _stage(t: dict, name: str) -> dict:
    return (t.get("stages") or {}).get(name) or {}


def judge(r: Readings, cfg: Config) -> Verdict:
    """fail: torch cannot load or run CUDA here (undefined symbol, signal, a torch submodule missing,
    CUDA 12 or CPU build on GB10); warn: leftovers that cause it later (libcudart.so.12 beside .13,
    system .so.13 missing), or a right build that cannot see the GPU (is_available() False, so the
    first .cuda() never ran); unknown: no torch in the target, no GPU to judge against, a
    torch.version.cuda that is not a version, or the probe hung."""
    tr = r.get_reading("target")
    if tr.data is None:
        return unknown_from(ID, tr, "target interpreter")
    t = tr.data
    gpu = GpuFacts(r, cfg)
    ev = EvidenceList()
    ev.add("target interpreter", t.get("selected_by", "target"), t.get("interpreter"))
    if gpu.seen:
        ev.add("GPU", gpu.name_source or gpu.cap_source, gpu.label())
    findings: list[tuple[Status, str]] = []

    imp = _stage(t, "import torch")
    torch = t.get("torch") or {}
    wheel = (t.get("packages") or {}).get("torch")
    if wheel:
        note = "" if re.search(r"\+(cu\d+|cpu|rocm)", wheel) else " (no +cuNNN tag: normal for NGC builds)"
        ev.add("torch wheel version (reported, not decisive)", "importlib.metadata", wheel + note)

    status = imp.get("status")
    if status == "error":
        err = imp.get("error") or ""
        ev.add("import torch", "target interpreter", f"{imp.get('error_type')}: {err[:300]}")
        undef = undefined_symbol(err)
        missing = missing_module(imp)
        if missing == "torch" and not wheel:
            findings.append((Status.UNKNOWN, f"torch is not installed in {t.get('interpreter')}; point --python at the training environment"))
        elif missing == "torch":
            findings.append((Status.FAIL, f"torch {wheel} is registered (importlib.metadata) but `import torch` finds "
                                          "no module 'torch': a half-removed or broken install"))
        elif missing and missing.startswith("torch."):
            findings.append((Status.FAIL, f"torch is installed but broken: No module named '{missing}' "
                                          "(an incomplete or mixed install; reinstall torch)"))
        elif undef:
            sym, ver = undef
            findings.append((Status.FAIL, f"import torch fails: undefined symbol {sym}"
                                          + (f" (version {ver})" if ver else "") + " (CUDA ABI mismatch)"))
        else:
            findings.append((Status.FAIL, f"import torch fails: {imp.get('error_type')}: {err.splitlines()[0][:120] if err else ''}"))
    elif status == "crashed":
        ev.add("import torch", "target interpreter", imp.get("error"))
        findings.append((Status.FAIL, f"import torch crashed: {imp.get('error')}"))
    elif status == "hung":
        ev.add("import torch", "target interpreter", imp.get("error"))
        findings.append((Status.UNKNOWN, f"import torch did not finish: {imp.get('error')}"))
    elif status != "done":
        ev.add("import torch", "target interpreter", imp.get("error") or status or "not run")
        findings.append((Status.UNKNOWN, f"import torch was {status or 'not run'}"
                                         + (f": {imp['error']}" if imp.get("error") else "")))

    cuda = torch.get("cuda") if status == "done" else None
    no_gpu = None  # the finding for a CUDA torch that cannot see the GPU (it has its own fix)
    if status == "done":
        version = torch.get("version")
        ev.add("torch.__version__", "target interpreter", version)
        ev.add("torch.version.cuda (authoritative)", "target interpreter", cuda)
        cmaj = _cuda_major(cuda) if cuda is not None else None
        tc = t.get("torch_cuda")
        blind = isinstance(tc, dict) and tc.get("available") is False  # seen False, not merely unread
        if blind:  # the evidence the ok would otherwise lack (when True, the first .cuda() shows it)
            ev.add("torch.cuda.is_available()", "target interpreter", False)
        if gpu.seen and cuda is not None and cmaj is None:
            findings.append((Status.UNKNOWN, f"torch.version.cuda is {cuda!r}, not a CUDA version: torch {version} "
                                             "cannot be judged against the GPU"))
        elif gpu.is_gb10:
            if cuda is None:
                findings.append((Status.FAIL, f"torch {version} is a CPU-only build on a GB10"))
            elif cmaj < 13:
                findings.append((Status.FAIL, f"torch {version} is built for CUDA {cuda}; GB10 needs CUDA 13.x"))
            elif blind:
                no_gpu = _no_gpu_finding(t, version, cuda, ev)
                findings.append((Status.WARN, no_gpu))
            else:
                findings.append((Status.OK, f"torch {version} is built for CUDA {cuda}, as GB10 needs"))
        elif gpu.seen:
            dmaj = major(gpu.driver_cuda)
            ev.add("driver's CUDA version", "NVML nvmlSystemGetCudaDriverVersion_v2", gpu.driver_cuda)
            if cuda is None:
                findings.append((Status.WARN, f"torch {version} is a CPU-only build on {gpu.label()}"))
            elif dmaj is None:
                findings.append((Status.UNKNOWN, f"torch built for CUDA {cuda}; driver's CUDA version unreadable ({gpu.label()})"))
            elif cmaj > dmaj:
                findings.append((Status.FAIL, f"torch built for CUDA {cuda} but the driver supports only CUDA {gpu.driver_cuda}"))
            elif blind:
                no_gpu = _no_gpu_finding(t, version, cuda, ev)
                findings.append((Status.WARN, no_gpu))
            else:
                findings.append((Status.OK, f"torch built for CUDA {cuda}; driver supports CUDA {gpu.driver_cuda} (not a GB10: judged by the driver)"))
        else:
            findings.append((Status.UNKNOWN, f"no NVIDIA GPU or driver seen: torch {torch.get('version')} (CUDA {cuda}) cannot be judged against one"))

    smoke = _stage(t, "first .cuda()")
    if smoke.get("status") == "crashed":
        ev.add("first .cuda()", "target interpreter", smoke.get("error"))
        findings.append((Status.FAIL, f"first .cuda() crashed: {smoke.get('error')}"))
    elif smoke.get("status") == "error":
        ev.add("first .cuda()", "target interpreter", f"{smoke.get('error_type')}: {(smoke.get('error') or '')[:300]}")
        findings.append((Status.FAIL, f"first .cuda() raised {smoke.get('error_type')}: {(smoke.get('error') or '').splitlines()[0][:100] if smoke.get('error') else ''}"))
    elif smoke.get("status") == "hung":
        ev.add("first .cuda()", "target interpreter", smoke.get("error"))
        findings.append((Status.UNKNOWN, f"first .cuda() did not finish: {smoke.get('error')}"))
    elif smoke.get("status") == "done" and (t.get("cuda_smoke") or {}).get("ran"):
        ev.add("first .cuda()", "target interpreter", f"ok in {(t.get('cuda_smoke') or {}).get('seconds', 0):.2f} s")
    elif smoke.get("status") == "done" and (t.get("cuda_smoke") or {}).get("ran") is False:
        ev.add("first .cuda()", "target interpreter", f"not run: {(t.get('cuda_smoke') or {}).get('reason') or 'no reason given'}")

    cudart = t.get("cudart") or {}
    c13 = cudart.get("libcudart.so.13")
    if c13 is not None:
        ev.add("ctypes load libcudart.so.13", "target interpreter", (c13.get("paths") or ["loaded"])[0] if c13.get("loaded") else f"OSError: {c13.get('error')}")
        if not c13.get("loaded") and gpu.is_gb10:
            findings.append((Status.WARN, "the system's libcudart.so.13 cannot be loaded: the CUDA 13 runtime install is the problem, not the wheel"))

    libs = r.data("cudalibs")
    if libs is not None:
        entries = libs.get("libcudart") or []
        majors = sorted({e["major"] for e in entries if e.get("major")})
        ev.add("ldconfig -p libcudart", r.get_reading("cudalibs").source, [f"{e['soname']} => {e['path']}" for e in entries] or "none registered")
        if "12" in majors and "13" in majors:
            findings.append((Status.WARN, "libcudart.so.12 is registered beside libcudart.so.13: a leftover that invites ABI mismatches"))
    else:
        ev.add("ldconfig -p libcudart", "ldconfig", f"unavailable: {r.get_reading('cudalibs').error}")

    status_all = worst([s for s, _ in findings]) if findings else Status.UNKNOWN
    if status_all is Status.OK and libs is None:  # the ok covers what was seen, and says what was not
        findings[0] = (Status.OK, findings[0][1] + "; ldconfig unreadable: a leftover libcudart.so.12 not checked")
    if not findings:
        summary = "no torch facts to judge"
    else:
        # Lead with the most severe finding; mention how many others.
        ordered = sorted(findings, key=lambda f: -f[0].severity)
        summary = ordered[0][1]
        others = [m for s, m in ordered[1:] if s.severity > 0]
        if others:
            summary += f" (+{len(others)} more)"
    details = tuple(f"{s.value}: {m}" for s, m in sorted(findings, key=lambda f: -f[0].severity))
    fix = ""
    if status_all in (Status.FAIL, Status.WARN):
        others = [m for s, m in findings if s in (Status.FAIL, Status.WARN) and m != no_gpu]
        fix = FIX if others else ""
        if no_gpu:
            fix = f"{fix}\n{FIX_NO_GPU}" if fix else FIX_NO_GPU
    return Verdict(ID, status_all, summary, evidence=ev.tuple(), fix=fix, details=details)


GOTCHA = Gotcha(
    id=ID,
    slug="cuda-abi",
    title="CUDA 12/13 ABI mismatch",
    symptom="A training script dies at start-up: `ImportError: ... undefined symbol` naming a CUDA "
            "function, or a segmentation fault on the first `.cuda()` call.",
    cause="Most PyPI wheels (torch included, when pip resolves it) link libcudart.so.12, while DGX "
          "OS on a Spark ships CUDA 13. pip never checks the CUDA ABI, so the mismatch only shows at "
          "import or at the first kernel launch.",
    check="In the training interpreter (--python), as a short-lived subprocess: `torch.version.cuda` "
          "is the authoritative signal and must be 13.x on a GB10 (a CPU-only or 12.x build fails; on "
          "other GPUs it is judged against the driver's CUDA version). It records an undefined-symbol "
          "ImportError, a death by signal or a hang in `import torch` or the first `.cuda()` as "
          "evidence; loads libcudart.so.13 with ctypes; lists every libcudart in `ldconfig -p` "
          "(a .12 beside the .13 is a warning). The `+cu130` wheel tag is reported but never decides: "
          "NGC builds carry none.",
    fix=FIX,
    intrusive=False,
    cadence_s=1800.0,
    probes=("target", "nvml", "cudalibs"),
    judge=judge,
    references=("shared/reference/gotcha-checks.txt (G1)", "FACTS.md: pip torch warns about capability 12.1 on GB10"),
)
