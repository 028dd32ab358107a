"""G1: CUDA 12/13 ABI mismatch: a PyPI torch built for CUDA 12 on a machine that ships CUDA 13."""

from __future__ import annotations

import re
from typing import Any, Mapping

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.shapes import CUDALIBS, TARGET
from sparktui.core.verdict import EvidenceList, Status, Verdict, worst
from sparktui.gotchas._facts import GpuFacts, major
from sparktui.gotchas._fix import block, python_of, sh
from sparktui.gotchas.base import Gotcha, unknown_from
from sparktui.gotchas.g07_nvfp4_arch import capability_problem

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

# PyTorch's wheel indexes by CUDA version (download.pytorch.org/whl/cuNNN), newest last.
TORCH_INDEXES = (118, 121, 124, 126, 128, 129, 130)
NGC_RUN = "docker run --gpus all -it --rm nvcr.io/nvidia/pytorch:25.11-py3"


def torch_index(gpu: GpuFacts) -> int:
    """The wheel index to reinstall from: cu130 on a GB10 (or with no GPU to go by), else the
    newest index the driver's CUDA can run."""
    if gpu.is_gb10 or not gpu.seen:
        return TORCH_INDEXES[-1]
    m = re.match(r"^\s*(\d+)\.(\d+)", str(gpu.driver_cuda or ""))
    if not m:
        return TORCH_INDEXES[-1]
    driver = int(m.group(1)) * 10 + int(m.group(2))
    fitting = [i for i in TORCH_INDEXES if i <= driver]
    return fitting[-1] if fitting else TORCH_INDEXES[0]


def reinstall_fix(t: Mapping[str, Any], gpu: GpuFacts, cudart12: list[str] | None) -> str:
    """FIX, filled: the target interpreter's pip, the index the GPU needs, and the registered
    libcudart.so.12 paths (``None``: ldconfig unread, so the block finds them)."""
    py, finder = python_of(t)
    index = torch_index(gpu)
    cuda = f"{index // 10}.{index % 10}"
    parts = [
        f"Install a torch built for CUDA {cuda} into this interpreter, from PyTorch's cu{index} index (never a "
        "plain `pip install torch`, which resolves to PyPI's default build):\n",
        block([*finder,
               f"{py} -m pip uninstall -y torch torchvision torchaudio",
               f"{py} -m pip install torch torchvision --index-url https://download.pytorch.org/whl/cu{index}",
               f"{py} -c \"import torch; print(torch.__version__, torch.version.cuda)\"   # expect {index // 10}.x"]),
        "Or train inside a matched NGC container, whose torch is built against CUDA 13 (it carries no "
        "`+cu130` tag, and needs none):\n",
        block([NGC_RUN]),
    ]
    if cudart12 is None or cudart12:
        owners = [sh("dpkg", "-S", path) for path in cudart12] if cudart12 else [
            "dpkg -S \"$(ldconfig -p | awk '/libcudart.so.12 /{print $NF; exit}')\""]
        parts += ["A `libcudart.so.12` still registered beside `libcudart.so.13` is usually left over from an older "
                  "install; find what owns it before removing anything:\n",
                  block(["ldconfig -p | grep libcudart", *owners])]
    return "\n".join(parts)


def no_gpu_fix(t: Mapping[str, Any]) -> str:
    """FIX_NO_GPU, filled: the interpreter, and an ``unset`` only for a variable the target has."""
    py, finder = python_of(t)
    env = (t.get("python") or {}).get("env") or {}
    unset = [f"unset {k}" for k in _VISIBILITY_ENV if k in env]
    return ("torch is built for the right CUDA but cannot see the GPU, so nothing ran on it. Check that the driver "
            "sees the GPU, that a container was started with the GPUs passed through, and that the training "
            "environment does not hide them:\n\n"
            + block([*finder,
                     "nvidia-smi                                          # the driver must list the GPU first",
                     "env | grep -E 'CUDA_VISIBLE_DEVICES|NVIDIA_VISIBLE_DEVICES'          # empty or -1 hides every GPU",
                     *unset,
                     f"{py} -c \"import torch; print(torch.cuda.is_available(), torch.cuda.device_count())\""])
            + "\nA container must be started with the GPUs passed through (`--gpus all`):\n\n" + block([NGC_RUN]))


def _cudart12_paths(r: Readings) -> list[str] | None:
    """Paths of the libcudart.so.12 that ldconfig lists; None when ldconfig was not read."""
    libs = r.data(CUDALIBS)
    if libs is None:
        return None
    return [str(e["path"]) for e in libs.get("libcudart") or []
            if isinstance(e, dict) and e.get("major") == "12" and e.get("path")]


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


def torch_not_installed(t: Mapping[str, Any]) -> bool:
    """True when ``import torch`` in the target failed because there is no module 'torch' at all."""
    return missing_module(_stage(t, "import torch")) == "torch"


def _cuda_major(cuda: object) -> int | None:
    """Major of a torch.version.cuda string ("13.0" -> 13); None when it is not a version."""
    m = _CUDA_VERSION.match(str(cuda))
    return int(m.group(1)) if m else None


def _no_gpu_finding(t: Mapping[str, Any], version: str | None, cuda: str, ev: EvidenceList) -> str:
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


def _stage(t: Mapping[str, Any], name: str) -> dict:
    return (t.get("stages") or {}).get(name) or {}


Finding = tuple[Status, str]
GB10_CUDA_MAJOR = 13  # GB10 (sm_121) needs a torch built for CUDA 13.x (docs/gotchas.md, G1)


# -- the rules: each reads one piece of the target's reading, adds its evidence, returns findings --

def wheel_rule(t: Mapping[str, Any], ev: EvidenceList) -> str | None:
    """The wheel version is evidence only (an NGC build carries no +cuNNN tag, and needs none)."""
    wheel = (t.get("packages") or {}).get("torch")
    if wheel:
        note = "" if re.search(r"\+(cu\d+|cpu|rocm)", wheel) else " (no +cuNNN tag: normal for NGC builds)"
        ev.add("torch wheel version (reported, not decisive)", "importlib.metadata", wheel + note)
    return wheel


def import_rule(t: Mapping[str, Any], wheel: str | None, ev: EvidenceList) -> list[Finding]:
    """`import torch`: an error or a crash fails (the ABI mismatch shows here), a hang or a stage
    never run is unknown, no torch at all is unknown (the wrong --python, not a broken machine)."""
    imp = _stage(t, "import torch")
    status = imp.get("status")
    if status == "done":
        return []
    if status == "error":
        return [_import_error(t, imp, wheel, ev)]
    if status == "crashed":
        ev.add("import torch", "target interpreter", imp.get("error"))
        return [(Status.FAIL, f"import torch crashed: {imp.get('error')}")]
    if status == "hung":
        ev.add("import torch", "target interpreter", imp.get("error"))
        return [(Status.UNKNOWN, f"import torch did not finish: {imp.get('error')}")]
    ev.add("import torch", "target interpreter", imp.get("error") or status or "not run")
    return [(Status.UNKNOWN, f"import torch was {status or 'not run'}" + (f": {imp['error']}" if imp.get("error") else ""))]


def _import_error(t: Mapping[str, Any], imp: dict, wheel: str | None, ev: EvidenceList) -> Finding:
    err = imp.get("error") or ""
    ev.add("import torch", "target interpreter", f"{imp.get('error_type')}: {err[:300]}")
    missing = missing_module(imp)
    if missing == "torch" and not wheel:
        return Status.UNKNOWN, f"torch is not installed in {t.get('interpreter')}; point --python at the training environment"
    if missing == "torch":
        return Status.FAIL, (f"torch {wheel} is registered (importlib.metadata) but `import torch` finds "
                             "no module 'torch': a half-removed or broken install")
    if missing and missing.startswith("torch."):
        return Status.FAIL, (f"torch is installed but broken: No module named '{missing}' "
                             "(an incomplete or mixed install; reinstall torch)")
    undef = undefined_symbol(err)
    if undef:
        sym, ver = undef
        return Status.FAIL, (f"import torch fails: undefined symbol {sym}" + (f" (version {ver})" if ver else "")
                             + " (CUDA ABI mismatch)")
    return Status.FAIL, f"import torch fails: {imp.get('error_type')}: {err.splitlines()[0][:120] if err else ''}"


def build_rule(t: Mapping[str, Any], gpu: GpuFacts, ev: EvidenceList) -> tuple[Finding, str | None]:
    """torch.version.cuda (authoritative) against the GPU: (the finding, the no-GPU words when the
    build is right but torch cannot see the GPU, which has its own fix)."""
    torch = t.get("torch") or {}
    version, cuda = torch.get("version"), torch.get("cuda")
    ev.add("torch.__version__", "target interpreter", version)
    ev.add("torch.version.cuda (authoritative)", "target interpreter", cuda)
    tc = t.get("torch_cuda")
    blind = isinstance(tc, dict) and tc.get("available") is False  # seen False, not merely unread
    if blind:  # the evidence the ok would otherwise lack (when True, the first .cuda() shows it)
        ev.add("torch.cuda.is_available()", "target interpreter", False)
    cmaj = _cuda_major(cuda) if cuda is not None else None
    if gpu.seen and cuda is not None and cmaj is None:
        return (Status.UNKNOWN, f"torch.version.cuda is {cuda!r}, not a CUDA version: torch {version} "
                                "cannot be judged against the GPU"), None
    unreal = unreal_gpu(gpu)
    if unreal:
        return (Status.UNKNOWN, f"{unreal}: torch {version} (CUDA {cuda}) cannot be judged against it"), None
    if gpu.is_gb10:
        return _on_gb10(t, version, cuda, cmaj, blind, ev)
    if gpu.seen:
        return _on_other_gpu(t, gpu, version, cuda, cmaj, blind, ev)
    return (Status.UNKNOWN, f"no NVIDIA GPU or driver seen: torch {version} (CUDA {cuda}) cannot be judged against one"), None


def unreal_gpu(gpu: GpuFacts) -> str | None:
    """A compute capability no GPU has, with no name to say which GPU it is: a measurement error,
    so GB10 or not cannot be told (a name that says GB10 still decides)."""
    if gpu.capability is None or gpu.is_gb10 or gpu.name:
        return None
    problem = capability_problem(gpu.capability)
    return f"{problem}; no GPU name read, so GB10 or not cannot be told" if problem else None


def _on_gb10(t: Mapping[str, Any], version, cuda, cmaj: int | None, blind: bool, ev: EvidenceList) -> tuple[Finding, str | None]:
    if cmaj is None:  # build_rule answered an unreadable version already: only a CPU-only build here
        return (Status.FAIL, f"torch {version} is a CPU-only build on a GB10"), None
    if cmaj < GB10_CUDA_MAJOR:
        return (Status.FAIL, f"torch {version} is built for CUDA {cuda}; GB10 needs CUDA 13.x"), None
    if blind:
        no_gpu = _no_gpu_finding(t, version, cuda, ev)
        return (Status.WARN, no_gpu), no_gpu
    return (Status.OK, f"torch {version} is built for CUDA {cuda}, as GB10 needs"), None


def _on_other_gpu(t: Mapping[str, Any], gpu: GpuFacts, version, cuda, cmaj: int | None, blind: bool,
                  ev: EvidenceList) -> tuple[Finding, str | None]:
    """Not a GB10: a torch newer than the driver's CUDA cannot run; judged by the driver."""
    dmaj = major(gpu.driver_cuda)
    ev.add("driver's CUDA version", "NVML nvmlSystemGetCudaDriverVersion_v2", gpu.driver_cuda)
    if cmaj is None:  # as in _on_gb10: only a CPU-only build reaches here without cmaj
        return (Status.WARN, f"torch {version} is a CPU-only build on {gpu.label()}"), None
    if dmaj is None:
        return (Status.UNKNOWN, f"torch built for CUDA {cuda}; driver's CUDA version unreadable ({gpu.label()})"), None
    if cmaj > dmaj:
        return (Status.FAIL, f"torch built for CUDA {cuda} but the driver supports only CUDA {gpu.driver_cuda}"), None
    if blind:
        no_gpu = _no_gpu_finding(t, version, cuda, ev)
        return (Status.WARN, no_gpu), no_gpu
    return (Status.OK, f"torch built for CUDA {cuda}; driver supports CUDA {gpu.driver_cuda} (not a GB10: judged by the driver)"), None


def smoke_rule(t: Mapping[str, Any], ev: EvidenceList) -> list[Finding]:
    """The first .cuda(): a crash or an error there is the other face of the ABI mismatch."""
    smoke = _stage(t, "first .cuda()")
    status = smoke.get("status")
    err = smoke.get("error")
    if status == "crashed":
        ev.add("first .cuda()", "target interpreter", err)
        return [(Status.FAIL, f"first .cuda() crashed: {err}")]
    if status == "error":
        ev.add("first .cuda()", "target interpreter", f"{smoke.get('error_type')}: {(err or '')[:300]}")
        return [(Status.FAIL, f"first .cuda() raised {smoke.get('error_type')}: {err.splitlines()[0][:100] if err else ''}")]
    if status == "hung":
        ev.add("first .cuda()", "target interpreter", err)
        return [(Status.UNKNOWN, f"first .cuda() did not finish: {err}")]
    cs = t.get("cuda_smoke") or {}
    ran = cs.get("ran")
    if ran is False and cs.get("gated") is True and _stage(t, "import torch").get("status") == "done":
        return [_gated(cs, ev)]
    if status == "done" and ran:
        took = cs.get("seconds", 0)
        ev.add("first .cuda()", "target interpreter",
               f"ok in {took:.2f} s" if isinstance(took, (int, float)) else "ok (time not reported)")
    elif status == "done" and ran is False:
        ev.add("first .cuda()", "target interpreter", f"not run: {cs.get('reason') or 'no reason given'}")
    return []


def _gated(cs: Mapping[str, Any], ev: EvidenceList) -> Finding:
    """Not run because MemAvailable was under G3's floor (probes/target.py smoke_gate): unknown,
    with the figure: whether the first .cuda() works was not seen."""
    avail, floor = cs.get("mem_available_bytes"), cs.get("floor_gib")
    figure = (f"MemAvailable {avail / 2**30:.1f} GiB under the {floor:g} GiB floor (memory.available_floor_gib)"
              if isinstance(avail, int) and isinstance(floor, (int, float)) else str(cs.get("reason") or "memory low"))
    ev.add("first .cuda()", "target interpreter (not started: memory gate)", f"not run: {figure}")
    return (Status.UNKNOWN, f"first .cuda() not run: {figure}; a CUDA context would take memory from a run near "
                            "the edge (it runs once MemAvailable is above the floor)")


def cudart13_rule(t: Mapping[str, Any], gpu: GpuFacts, ev: EvidenceList) -> list[Finding]:
    """The system's libcudart.so.13, loaded with ctypes in the target: on a GB10 it must load."""
    c13 = (t.get("cudart") or {}).get("libcudart.so.13")
    if c13 is None:
        return []
    ev.add("ctypes load libcudart.so.13", "target interpreter",
           (c13.get("paths") or ["loaded"])[0] if c13.get("loaded") else f"OSError: {c13.get('error')}")
    if not c13.get("loaded") and gpu.is_gb10:
        return [(Status.WARN, "the system's libcudart.so.13 cannot be loaded: the CUDA 13 runtime install is the problem, not the wheel")]
    return []


def ldconfig_rule(r: Readings, ev: EvidenceList) -> list[Finding]:
    """`ldconfig -p`: a libcudart.so.12 registered beside the .so.13 is a leftover that warns."""
    libs = r.data(CUDALIBS)
    if libs is None:
        ev.add("ldconfig -p libcudart", "ldconfig", f"unavailable: {r.get_reading(CUDALIBS).error}")
        return []
    entries = [e for e in libs.get("libcudart") or [] if isinstance(e, dict)]
    majors = {e.get("major") for e in entries}
    ev.add("ldconfig -p libcudart", r.get_reading(CUDALIBS).source,
           [f"{e.get('soname') or '?'} => {e.get('path') or '?'}" for e in entries] or "none registered")
    if "12" in majors and "13" in majors:
        return [(Status.WARN, "libcudart.so.12 is registered beside libcudart.so.13: a leftover that invites ABI mismatches")]
    return []


def verdict_of(findings: list[Finding], ldconfig_read: bool, no_gpu: str | None, ev: EvidenceList,
               fixes: tuple[str, str] = (FIX, FIX_NO_GPU)) -> Verdict:
    """The worst finding leads the summary (+N more that are not ok); an ok names what it could not
    check; the fix is the reinstall, the no-GPU steps, or both (``fixes``: those two, filled)."""
    reinstall, blind_fix = fixes
    status_all = worst([s for s, _ in findings]) if findings else Status.UNKNOWN
    if status_all is Status.OK and not ldconfig_read:  # the ok covers what was seen, and says what was not
        findings[0] = (Status.OK, findings[0][1] + "; ldconfig unreadable: a leftover libcudart.so.12 not checked")
    ordered = sorted(findings, key=lambda f: -f[0].severity)
    if not ordered:
        summary = "no torch facts to judge"
    else:
        others = [m for s, m in ordered[1:] if s.severity > 0]
        summary = ordered[0][1] + (f" (+{len(others)} more)" if others else "")
    details = tuple(f"{s.value}: {m}" for s, m in ordered)
    fix = ""
    if status_all in (Status.FAIL, Status.WARN):
        fix = reinstall if [m for s, m in findings if s in (Status.FAIL, Status.WARN) and m != no_gpu] else ""
        if no_gpu:
            fix = f"{fix}\n{blind_fix}" if fix else blind_fix
    return Verdict(ID, status_all, summary, evidence=ev.tuple(), fix=fix, details=details)


def judge(r: Readings, cfg: Config) -> Verdict:
    """fail: torch cannot load or run CUDA here (undefined symbol, signal, a torch submodule missing,
    CUDA 12 or CPU build on GB10); warn: leftovers that cause it later (libcudart.so.12 beside .13,
    system .so.13 missing), or a right build that cannot see the GPU (is_available() False, so the
    first .cuda() never ran); unknown: no torch in the target, no GPU to judge against (or one with
    a capability no GPU has), a torch.version.cuda that is not a version, or the probe hung."""
    tr = r.get_reading(TARGET)
    if tr.data is None:
        return unknown_from(ID, tr, "target interpreter")
    t = tr.data
    gpu = GpuFacts(r, cfg)
    ev = EvidenceList()
    ev.add("target interpreter", t.get("selected_by", "target"), t.get("interpreter"))
    if gpu.seen:
        ev.add("GPU", gpu.name_source or gpu.cap_source, gpu.label())
    findings = import_rule(t, wheel_rule(t, ev), ev)
    no_gpu = None
    if _stage(t, "import torch").get("status") == "done":
        build, no_gpu = build_rule(t, gpu, ev)
        findings.append(build)
    findings += smoke_rule(t, ev) + cudart13_rule(t, gpu, ev) + ldconfig_rule(r, ev)
    fixes = (reinstall_fix(t, gpu, _cudart12_paths(r)), no_gpu_fix(t))
    return verdict_of(findings, r.data(CUDALIBS) is not None, no_gpu, ev, fixes)


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
          "evidence (the first `.cuda()` is not run while MemAvailable is under G3's floor, "
          "memory.available_floor_gib: a CUDA context would take memory from a run near the edge; G1 "
          "then says so, unknown, with the figure); loads libcudart.so.13 with ctypes; lists every libcudart in `ldconfig -p` "
          "(a .12 beside the .13 is a warning). The `+cu130` wheel tag is reported but never decides: "
          "NGC builds carry none.",
    fix=FIX,
    intrusive=False,
    cadence_s=1800.0,
    probes=("target", "nvml", "cudalibs"),
    judge=judge,
    references=("torch.version.cuda is the signal: NGC builds of torch for CUDA 13 carry no +cu130 tag",
                "pip torch on GB10 warns: cuda capability 12.1, supported (8.0) - (12.0) (public GB10 reports)"),
)
