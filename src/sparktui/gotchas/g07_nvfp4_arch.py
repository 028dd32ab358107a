"""G7: NVFP4 slower than FP8 on SM121, which is a packaging problem: kernels not built for sm_121a/sm_120f."""

from __future__ import annotations

import re
from typing import Any, Mapping

from sparktui.core.config import Config
from sparktui.core.readings import UNUSABLE, Readings
from sparktui.core.shapes import NVML, TARGET
from sparktui.core.verdict import EvidenceList, Status, Verdict
from sparktui.gotchas._facts import GpuFacts
from sparktui.gotchas._fix import block, comment, python_of
from sparktui.gotchas.base import Gotcha

ID = "G7"

CHECK_TEXT = """\
NVFP4 on a GB10 is only as fast as the kernels your stack was compiled with. Before choosing NVFP4
over FP8, check the build's targets and measure both formats on your own model:

"""
BUILD_TEXT = """
When you build kernels yourself (extensions, vLLM, TensorRT-LLM from source), target the GB10's
architecture-specific or family variant so the FP4 paths are compiled in:

"""
BUILD_LINES = ('export TORCH_CUDA_ARCH_LIST="12.1a"        # or "12.0f" for the sm_120 family',
               'export CUDAARCHS="121a"                    # CMake-based builds')
CLOSING = """
A matched NGC container (or a wheel whose arch list includes sm_121a / sm_120f) avoids the
fallback (e.g. a Marlin kernel) that made one hybrid model about 32% slower in NVFP4 than in FP8;
the same author later measured NVFP4 about 1.5x faster than FP8 on a dense model.
"""


def _arch_check(py: str) -> str:
    return f"{py} -c \"import torch; print(torch.cuda.get_device_capability(), torch.cuda.get_arch_list())\""


def fix_for(t: Mapping[str, Any], env_list: str | None) -> str:
    """FIX with the target interpreter's check, and the TORCH_CUDA_ARCH_LIST it has now said."""
    py, finder = python_of(t)
    now = () if env_list is None else (comment(f"TORCH_CUDA_ARCH_LIST is {env_list!r} in the training environment now"),)
    return (CHECK_TEXT + block([*finder, _arch_check(py)]) + BUILD_TEXT + block([*now, *BUILD_LINES])
            + CLOSING)


FIX = CHECK_TEXT + block([_arch_check("python")]) + BUILD_TEXT + block(BUILD_LINES) + CLOSING

_NATIVE = re.compile(r"^(sm|compute)_(121a|120f|121f)$")
# Machine code runs on the same major and a minor at least its own; an arch-specific "a" target
# (sm_120a) runs only on exactly that chip, so it is no code for SM121 at all.
_RUNS_ON_121 = re.compile(r"^sm_12[01]$")
_ENV_NATIVE = re.compile(r"(^|[;\s,])(12\.1a|12\.0f|12\.1f)(\+PTX)?($|[;\s,])", re.I)


SM121 = (12, 1)  # GB10
# No GPU reports a major outside 1..15 (Blackwell is 10 and 12; three generations of headroom), and
# a minor is one digit (sm_XY names major X, minor Y): anything else is a misread, not a chip.
MIN_MAJOR, MAX_MAJOR, MAX_MINOR = 1, 15, 9


def capability_problem(cap: tuple[int, int]) -> str | None:
    """Why a compute capability cannot be a real GPU's (a measurement error), or None."""
    major, minor = cap
    if MIN_MAJOR <= major <= MAX_MAJOR and 0 <= minor <= MAX_MINOR:
        return None
    return (f"measurement error: compute capability {major}.{minor} is outside what any NVIDIA GPU can produce "
            f"(major {MIN_MAJOR}..{MAX_MAJOR}, minor 0..{MAX_MINOR})")


def _arch_num(a: str) -> int | None:
    m = re.match(r"^(?:sm|compute)_(\d+)", a)
    return int(m.group(1)) if m else None


def judge(r: Readings, cfg: Config) -> Verdict:
    """skip off SM121; on SM121: ok when the torch build has sm_121a/sm_120f kernels (warn instead
    when TORCH_CUDA_ARCH_LIST would build new kernels without them), warn when it only has generic
    sm_120/sm_121 (or only PTX) kernels, fail when it has nothing SM121 can run (a CPU-only build,
    or only other chips' code: sm_120a runs on sm_120 alone); unknown when the capability or the
    arch list cannot be read (get_arch_list() is [] whenever torch cannot see the GPU), or the
    capability is one no GPU has (a measurement error)."""
    gpu = GpuFacts(r, cfg)
    ev = EvidenceList()
    nvml_error = r.get_reading(NVML).error or ""
    if nvml_error.startswith(UNUSABLE):  # NVML answered garbage ("12.1" as a string): a measurement error, no fallback
        ev.add("compute capability", "NVML", nvml_error)
        return Verdict(ID, Status.UNKNOWN, f"cannot tell: measurement error: NVML's reading is {nvml_error}",
                       evidence=ev.tuple())
    if gpu.capability is None:
        ev.add("compute capability", "NVML", f"unavailable: {r.get_reading(NVML).error or 'NVML named no device'}")
        tc = (r.data(TARGET) or {}).get("torch_cuda") or {}
        ev.add("torch.cuda.is_available()", "target interpreter",
               tc.get("available") if tc else f"unavailable: {r.get_reading(TARGET).error or 'torch.cuda not reached'}")
        return Verdict(ID, Status.UNKNOWN, "cannot tell: compute capability unreadable (no GPU seen by NVML or the target torch)",
                       evidence=ev.tuple())
    ev.add("compute capability", gpu.cap_source, f"{gpu.capability[0]}.{gpu.capability[1]} ({gpu.name or 'unnamed'})")
    problem = capability_problem(gpu.capability)
    if problem:
        return Verdict(ID, Status.UNKNOWN, f"cannot tell: {problem}", evidence=ev.tuple())
    if gpu.capability != SM121:
        return Verdict(ID, Status.SKIP, f"not SM121: {gpu.label()}; the NVFP4 packaging gotcha is GB10-specific", evidence=ev.tuple())

    t = r.data(TARGET) or {}
    tc = t.get("torch_cuda") or {}
    arch = tc.get("arch_list")
    env_list = ((t.get("python") or {}).get("env") or {}).get("TORCH_CUDA_ARCH_LIST")
    ev.add("TORCH_CUDA_ARCH_LIST (extension builds)", "target environment", env_list if env_list is not None else "not set")
    details = []
    if env_list is not None and not _ENV_NATIVE.search(env_list):
        details.append(f"TORCH_CUDA_ARCH_LIST={env_list!r} has no 12.1a/12.0f: kernels you build now lack NVFP4 paths for SM121")
    torch_info = t.get("torch") or {}
    if not arch and torch_info.get("version") and torch_info.get("cuda") is None and "cuda" in torch_info:
        ev.add("torch.version.cuda", "target interpreter", None)
        return Verdict(ID, Status.FAIL, f"SM121, but torch {torch_info['version']} is a CPU-only build: no GPU kernels at all",
                       evidence=ev.tuple(), details=tuple(details), fix=fix_for(t, env_list))
    if not arch:
        if isinstance(arch, list) and tc.get("available") is False:  # read, and empty for that reason
            why = "torch.cuda.is_available() is False (torch cannot see the GPU), and get_arch_list() is then []"
        else:
            why = tc.get("arch_list_error") or ((t.get("stages") or {}).get("torch.cuda") or {}).get("error") or r.get_reading(TARGET).error or "torch.cuda facts unavailable"
        ev.add("torch.cuda.get_arch_list()", "target interpreter", f"unavailable: {why}")
        return Verdict(ID, Status.UNKNOWN, "SM121 confirmed, but the build's arch list could not be read", evidence=ev.tuple(),
                       details=tuple(details), fix=fix_for(t, env_list))
    ev.add("torch.cuda.get_arch_list()", "target interpreter", arch)
    native = [a for a in arch if _NATIVE.match(a)]
    sass12 = [a for a in arch if _RUNS_ON_121.match(a)]
    ptx_ok = [a for a in arch if re.match(r"^compute_\d+$", a) and (_arch_num(a) or 0) <= 121]
    if native:
        status, summary = Status.OK, f"SM121 and the torch build has {', '.join(native)} kernels: NVFP4 can use native paths; still measure against FP8"
    elif sass12:
        status, summary = Status.WARN, f"SM121, torch built for {', '.join(sass12)} but not sm_121a/sm_120f: NVFP4 kernels may fall back; benchmark FP8 first"
    elif ptx_ok:
        status, summary = Status.WARN, f"SM121 with no machine code it can run (only PTX {', '.join(ptx_ok)}): JIT at start-up and no native NVFP4"
    else:
        status, summary = Status.FAIL, f"SM121, but the torch build targets only {', '.join(arch)}: no kernels for this GPU"
    if details and status is Status.OK:
        status = Status.WARN
        summary += "; but TORCH_CUDA_ARCH_LIST lacks 12.1a/12.0f"
    return Verdict(ID, status, summary, evidence=ev.tuple(), details=tuple(details),
                   fix=fix_for(t, env_list) if status is not Status.OK else "")


GOTCHA = Gotcha(
    id=ID,
    slug="nvfp4-arch",
    title="NVFP4 slower than FP8 on SM121",
    symptom="An NVFP4-quantized model runs slower than the same model in FP8 on a Spark, against "
            "the expectation that 4-bit is faster.",
    cause="Packaging, not the format: SM121 has no native e2m1 conversion path for kernels that "
          "were not compiled for sm_121a (or the sm_120f family), so such builds fall back to "
          "slower kernels. The widely quoted '~32% slower' came from one hybrid model where vLLM "
          "fell back to a Marlin kernel; the same author later measured NVFP4 ~1.5x faster on a "
          "dense model with proper kernels.",
    check="Reads the compute capability from NVML (else the training interpreter's torch); on "
          "anything but 12.1 the check is skipped, and a capability no GPU has (major outside 1..15, "
          "minor outside 0..9) is a measurement error: unknown. On SM121 it reads `torch.cuda.get_arch_list()` "
          "and TORCH_CUDA_ARCH_LIST in the training environment and looks for sm_121a / sm_120f "
          "targets. Other engines (vLLM, TensorRT-LLM) carry their own kernels: check their build "
          "notes too.",
    fix=FIX,
    intrusive=False,
    cadence_s=3600.0,
    probes=("nvml", "target"),
    judge=judge,
    references=("NVFP4 ~32% behind FP8 was one hybrid model on a Marlin fallback; the same author later measured "
                "NVFP4 ~1.5x faster on a dense model: kernels built for sm_121a decide (public GB10 reports)",
                "docs/gotchas.md, G7: the arch-list rules"),
)
