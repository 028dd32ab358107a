"""G1's named rules, each at and around its boundary, and each unknown guard.

Inputs are shaped like the target probe's reading on a real GB10 (docs/reference/FACTS.md: DGX OS ships CUDA 13,
driver 580.95.05; a pip cu128 wheel links libcudart.so.12 and dies with an undefined symbol or at
the first .cuda(); an NGC build says torch.version.cuda 13.0 without a +cu130 tag). A test fails
when a threshold moves (CUDA 12 vs 13 from torch.version.cuda, torch vs driver major), when an
unknown guard is deleted, or when a rule returns another status.
"""

from __future__ import annotations

import pytest

from sparktui.core.config import Config
from sparktui.core.verdict import EvidenceList, Status
from sparktui.gotchas import g01_cuda_abi as g1
from sparktui.gotchas._facts import GpuFacts
from tests.conftest import readings_of
from tests.gotchas.builders import BLIND, CUDA12, CUDA13, INTERP, rows, values as ev_of
from tests.gotchas.builders import g1_nvml as nvml, g1_target as target

UNDEF = ("/home/spark/venvs/train/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
         "cudaGetDriverEntryPointByVersion, version libcudart.so.12")


GB10 = nvml("NVIDIA GB10", [12, 1])
H200 = nvml("NVIDIA H200", [9, 0], "12.8")


def g1_of(t: dict | None, nv: dict | None = GB10, libs: dict | None = None) -> "g1.Verdict":
    return g1.judge(readings_of(target=t, nvml=nv, cudalibs=libs if libs is not None else {"libcudart": [CUDA13]}),
                    Config())


# --- helpers -------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, major", [
    ("13.0", 13), ("13", 13), ("12.8", 12), (" 12.9 ", 12), ("13.0.2", 13), ("130", 130),
    ("abc", None), ("13.x", None), ("", None), ("v13.0", None), ("13.", None),
])
def test_cuda_major_reads_only_a_version(text, major):
    assert g1._cuda_major(text) == major


@pytest.mark.parametrize("err, expected", [
    (UNDEF, ("cudaGetDriverEntryPointByVersion", "libcudart.so.12")),
    ("undefined symbol: cublasLtGetVersion.", ("cublasLtGetVersion", None)),
    ("libc10_cuda.so: undefined symbol _ZN3c104cuda9SetDeviceEi; version libcudart.so.13)", ("_ZN3c104cuda9SetDeviceEi", "libcudart.so.13")),
    ("cannot open shared object file", None), ("", None), (None, None),
])
def test_undefined_symbol_names_the_symbol_and_its_version(err, expected):
    assert g1.undefined_symbol(err) == expected


@pytest.mark.parametrize("stage, module", [
    ({"status": "error", "error_type": "ModuleNotFoundError", "error": "No module named 'torch'"}, "torch"),
    ({"status": "error", "error_type": "ModuleNotFoundError", "error": "No module named 'torch._C'"}, "torch._C"),
    ({"status": "error", "error_type": "ImportError", "error": "No module named 'torch'"}, None),
    ({"status": "crashed", "error_type": "ModuleNotFoundError", "error": "No module named 'torch'"}, None),
    ({"status": "error", "error_type": "ModuleNotFoundError", "error": "no such thing"}, None),
    ({}, None),
])
def test_missing_module_needs_an_error_a_module_not_found_and_a_name(stage, module):
    assert g1.missing_module(stage) == module
    assert g1.torch_not_installed({"stages": {"import torch": stage}}) is (module == "torch")


# --- wheel_rule ----------------------------------------------------------------------------------

@pytest.mark.parametrize("wheel, shown", [
    ("2.9.0+cu130", "2.9.0+cu130"), ("2.9.0+cpu", "2.9.0+cpu"), ("2.9.0+rocm6.4", "2.9.0+rocm6.4"),
    ("2.10.0a0+b558c986e8.nv25.11", "2.10.0a0+b558c986e8.nv25.11 (no +cuNNN tag: normal for NGC builds)"),
    ("2.9.0", "2.9.0 (no +cuNNN tag: normal for NGC builds)"),
])
def test_the_wheel_tag_is_reported_never_decisive(wheel, shown):
    ev = EvidenceList()
    assert g1.wheel_rule({"packages": {"torch": wheel}}, ev) == wheel
    assert [(e.what, e.source, e.value) for e in ev] == [("torch wheel version (reported, not decisive)", "importlib.metadata", shown)]
    assert g1_of(target(wheel=wheel)).status is Status.OK  # torch.version.cuda 13.0 decides, whatever the tag


@pytest.mark.parametrize("packages", [{}, {"torch": None}, None])
def test_no_wheel_adds_no_evidence(packages):
    ev = EvidenceList()
    assert not g1.wheel_rule({"packages": packages}, ev) and list(ev) == []


# --- import_rule ---------------------------------------------------------------------------------

def _import(status: str | None, **kw) -> dict:
    return {"status": status, **kw} if status else kw


@pytest.mark.parametrize("imp, wheel, status, summary", [
    (_import("error", error_type="ModuleNotFoundError", error="No module named 'torch'"), None, Status.UNKNOWN,
     f"torch is not installed in {INTERP}; point --python at the training environment"),
    (_import("error", error_type="ModuleNotFoundError", error="No module named 'torch'"), "2.9.0+cu130", Status.FAIL,
     "torch 2.9.0+cu130 is registered (importlib.metadata) but `import torch` finds no module 'torch': a half-removed or broken install"),
    (_import("error", error_type="ModuleNotFoundError", error="No module named 'torch._C'"), "2.9.0+cu130", Status.FAIL,
     "torch is installed but broken: No module named 'torch._C' (an incomplete or mixed install; reinstall torch)"),
    (_import("error", error_type="ModuleNotFoundError", error="No module named 'numpy'"), "2.9.0+cu130", Status.FAIL,
     "import torch fails: ModuleNotFoundError: No module named 'numpy'"),
    (_import("error", error_type="ImportError", error=UNDEF), "2.9.0+cu128", Status.FAIL,
     "import torch fails: undefined symbol cudaGetDriverEntryPointByVersion (version libcudart.so.12) (CUDA ABI mismatch)"),
    (_import("error", error_type="ImportError", error="libtorch_cuda.so: undefined symbol: cudaLaunchKernelExC"), "2.9.0", Status.FAIL,
     "import torch fails: undefined symbol cudaLaunchKernelExC (CUDA ABI mismatch)"),
    (_import("error", error_type="OSError", error="libcudnn.so.9: cannot open shared object file\nsecond line"), "2.9.0", Status.FAIL,
     "import torch fails: OSError: libcudnn.so.9: cannot open shared object file"),
    (_import("error", error_type="RuntimeError", error=""), "2.9.0", Status.FAIL, "import torch fails: RuntimeError: "),
    (_import("crashed", error="process died by SIGSEGV during 'import torch'"), "2.9.0", Status.FAIL,
     "import torch crashed: process died by SIGSEGV during 'import torch'"),
    (_import("hung", error="no answer after 90.0 s during 'import torch'; killed"), "2.9.0", Status.UNKNOWN,
     "import torch did not finish: no answer after 90.0 s during 'import torch'; killed"),
    (_import("not reached", error="the interpreter never started its stages"), "2.9.0", Status.UNKNOWN,
     "import torch was not reached: the interpreter never started its stages"),
    (_import("skipped"), "2.9.0", Status.UNKNOWN, "import torch was skipped"),
    (_import(None), "2.9.0", Status.UNKNOWN, "import torch was not run"),
])
def test_import_rule_each_outcome(imp, wheel, status, summary):
    t = target(wheel=wheel or "")
    t["stages"]["import torch"] = imp
    if wheel is None:
        t["packages"] = {}
    findings = g1.import_rule(t, wheel, EvidenceList())
    assert findings == [(status, summary)]
    v = g1_of(t)
    assert v.status is status and v.summary == summary
    assert "torch.version.cuda (authoritative)" not in ev_of(v)  # no build judged without an import


def test_import_rule_evidence_carries_the_error():
    ev = EvidenceList()
    g1.import_rule(target(imp=_import("error", error_type="ImportError", error=UNDEF)), "2.9.0+cu128", ev)
    assert [(e.what, e.value) for e in ev] == [("import torch", f"ImportError: {UNDEF}")]
    for status in ("crashed", "hung"):
        ev = EvidenceList()
        g1.import_rule(target(imp=_import(status, error="why")), "x", ev)
        assert [(e.what, e.source, e.value) for e in ev] == [("import torch", "target interpreter", "why")]
    ev = EvidenceList()
    g1.import_rule(target(imp=_import("skipped")), "x", ev)
    assert [e.value for e in ev] == ["skipped"]
    assert g1.import_rule(target(), "x", EvidenceList()) == []


# --- build_rule: CUDA major from torch.version.cuda ----------------------------------------------

@pytest.mark.parametrize("cuda, status", [
    ("12.8", Status.FAIL), ("12.9", Status.FAIL), ("12", Status.FAIL), ("11.8", Status.FAIL),
    ("13.0", Status.OK), ("13", Status.OK), ("13.1", Status.OK), ("14.0", Status.OK),
])
def test_gb10_needs_cuda_13_from_torch_version_cuda(cuda, status):
    v = g1_of(target(cuda=cuda, version=f"2.9.0+cu{cuda.replace('.', '')}"))
    assert v.status is status
    if status is Status.FAIL:
        assert v.summary == f"torch 2.9.0+cu{cuda.replace('.', '')} is built for CUDA {cuda}; GB10 needs CUDA 13.x"
        assert "--index-url https://download.pytorch.org/whl/cu130" in v.fix
    else:
        assert v.summary == f"torch 2.9.0+cu{cuda.replace('.', '')} is built for CUDA {cuda}, as GB10 needs" and v.fix == ""
    assert g1.GB10_CUDA_MAJOR == 13


def test_gb10_is_known_by_capability_or_by_name():
    for nv in (nvml(None, [12, 1]), nvml("NVIDIA GB10", None), nvml("nvidia gb10", [12, 0])):
        v = g1_of(target(cuda="12.8", version="2.9.0+cu128"), nv)
        assert v.status is Status.FAIL and v.summary.endswith("GB10 needs CUDA 13.x")
    # sm_120 without the name is another Blackwell (an RTX PRO 6000): judged by its driver
    v = g1_of(target(cuda="12.8", version="2.9.0+cu128"), nvml(None, [12, 0], "12.8"))
    assert v.status is Status.OK and v.summary.endswith("(not a GB10: judged by the driver)")


def test_a_cpu_only_build_fails_on_a_gb10_and_warns_elsewhere():
    v = g1_of(target(cuda=None, version="2.9.0+cpu"))
    assert (v.status, v.summary) == (Status.FAIL, "torch 2.9.0+cpu is a CPU-only build on a GB10")
    v = g1_of(target(cuda=None, version="2.9.0+cpu"), H200)
    assert (v.status, v.summary) == (Status.WARN, "torch 2.9.0+cpu is a CPU-only build on NVIDIA H200 (sm_90)")


@pytest.mark.parametrize("torch_cuda, driver, status", [
    ("12.8", "12.8", Status.OK), ("12.8", "12.9", Status.OK), ("12.8", "13.0", Status.OK), ("11.8", "12.8", Status.OK),
    ("13.0", "12.8", Status.FAIL), ("13.0", "13.0", Status.OK), ("13.0", "13", Status.OK),
])
def test_another_gpu_is_judged_by_torch_major_against_the_drivers(torch_cuda, driver, status):
    v = g1_of(target(cuda=torch_cuda), nvml("NVIDIA H200", [9, 0], driver))
    assert v.status is status
    if status is Status.FAIL:
        assert v.summary == f"torch built for CUDA {torch_cuda} but the driver supports only CUDA {driver}"
    else:
        assert v.summary == f"torch built for CUDA {torch_cuda}; driver supports CUDA {driver} (not a GB10: judged by the driver)"
    assert ev_of(v)["driver's CUDA version"] == driver


@pytest.mark.parametrize("driver", [None, "", "unknown"])
def test_an_unreadable_driver_cuda_is_unknown_off_gb10(driver):
    v = g1_of(target(cuda="12.8"), nvml("NVIDIA H200", [9, 0], driver))
    assert (v.status, v.summary) == (Status.UNKNOWN, "torch built for CUDA 12.8; driver's CUDA version unreadable (NVIDIA H200 (sm_90))")


def test_a_gb10_needs_no_driver_version():
    """On a GB10 torch.version.cuda alone decides; the driver's CUDA is not even consulted."""
    v = g1_of(target(), nvml("NVIDIA GB10", [12, 1], None))
    assert v.status is Status.OK and "driver's CUDA version" not in ev_of(v)


@pytest.mark.parametrize("nv", [GB10, H200], ids=["gb10", "h200"])
def test_a_torch_version_cuda_that_is_not_a_version_is_unknown(nv):
    v = g1_of(target(cuda="13.x", version="2.9.0+weird"), nv)
    assert (v.status, v.summary) == (Status.UNKNOWN, "torch.version.cuda is '13.x', not a CUDA version: torch 2.9.0+weird "
                                                     "cannot be judged against the GPU")


def test_no_gpu_seen_is_unknown_and_says_so():
    v = g1_of(target(), None)
    assert (v.status, v.summary) == (Status.UNKNOWN, "no NVIDIA GPU or driver seen: torch 2.9.0+cu130 (CUDA 13.0) cannot be judged against one")
    assert "GPU" not in ev_of(v)
    v = g1_of(target(cuda="abc"), None)  # nothing to judge a non-version against either: same words
    assert v.summary.startswith("no NVIDIA GPU or driver seen")


def test_the_gpu_is_judged_from_torch_when_nvml_is_unreadable():
    tc = {"available": True, "arch_list": ["sm_120"], "devices": [{"index": 0, "name": "NVIDIA GB10", "capability": [12, 1]}]}
    v = g1_of(target(cuda="12.8", version="2.9.0+cu128", torch_cuda=tc), None)
    assert v.status is Status.FAIL and ev_of(v)["GPU"] == "NVIDIA GB10 (sm_121)"


# --- a capability no GPU has (a measurement error) -------------------------------------------------

@pytest.mark.parametrize("cap", [[99, 0], [-1, 0], [0, 0], [12, 10], [16, 0], [12, -1]])
def test_an_impossible_capability_without_a_name_is_unknown(cap):
    v = g1_of(target(cuda="12.8"), nvml(None, cap, "13.0"))
    assert v.status is Status.UNKNOWN
    assert v.summary.startswith(f"measurement error: compute capability {cap[0]}.{cap[1]} is outside what any NVIDIA GPU can produce")
    assert v.summary.endswith("no GPU name read, so GB10 or not cannot be told: torch 2.9.0+cu130 (CUDA 12.8) cannot be judged against it")


@pytest.mark.parametrize("cap", [[1, 0], [15, 9], [9, 0], [12, 0]])
def test_a_possible_capability_without_a_name_is_judged(cap):
    v = g1_of(target(cuda="12.8"), nvml(None, cap, "12.8"))
    assert v.status is Status.OK and v.summary.endswith("(not a GB10: judged by the driver)")


def test_a_name_still_decides_beside_an_impossible_capability():
    assert g1_of(target(cuda="12.8"), nvml("NVIDIA GB10", [99, 0])).status is Status.FAIL
    assert g1_of(target(cuda="12.8"), nvml("NVIDIA H200", [99, 0], "12.8")).status is Status.OK
    assert g1.unreal_gpu(GpuFacts(readings_of(nvml=nvml(None, None)), Config())) is None


# --- a right build that cannot see the GPU -------------------------------------------------------


@pytest.mark.parametrize("torch_cuda, status", [
    (BLIND, Status.WARN), ({"available": True}, Status.OK), ({"available": None}, Status.OK), ({}, Status.OK),
    (None, Status.OK), ({"available": 0}, Status.OK),
])
def test_only_a_seen_false_is_available_counts_as_blind(torch_cuda, status):
    t = target(torch_cuda=torch_cuda) if torch_cuda is not None else target()
    v = g1_of(t)
    assert v.status is status
    assert ("torch.cuda.is_available()" in ev_of(v)) is (status is Status.WARN)


def test_a_blind_torch_names_no_env_when_none_is_set_and_gets_only_the_no_gpu_fix():
    v = g1_of(target(torch_cuda=BLIND))
    assert v.summary == ("torch 2.9.0+cu130 is built for CUDA 13.0 but cannot see the GPU: torch.cuda.is_available() is "
                         "False, so the first .cuda() never ran; a container started without --gpus, or CUDA_VISIBLE_DEVICES empty?")
    assert v.fix == g1.no_gpu_fix(target(torch_cuda=BLIND)) and INTERP in v.fix
    v = g1_of(target(torch_cuda=BLIND, python={"env": {"CUDA_VISIBLE_DEVICES": "-1", "NVIDIA_VISIBLE_DEVICES": "none"}}))
    assert "(CUDA_VISIBLE_DEVICES='-1', NVIDIA_VISIBLE_DEVICES='none' in the target's environment)" in v.summary
    assert ev_of(v)["CUDA_VISIBLE_DEVICES"] == "'-1'" and ev_of(v)["NVIDIA_VISIBLE_DEVICES"] == "'none'"


def test_a_blind_torch_beside_a_leftover_gets_both_fixes():
    v = g1_of(target(torch_cuda=BLIND), libs={"libcudart": [CUDA13, CUDA12]})
    reinstall = g1.reinstall_fix(target(), GpuFacts(readings_of(nvml=GB10), Config()), [CUDA12["path"]])
    assert v.status is Status.WARN and v.fix == f"{reinstall}\n{g1.no_gpu_fix(target())}"
    assert v.summary.endswith("(+1 more)")


def test_a_blind_torch_newer_than_the_driver_fails_on_the_driver_first():
    v = g1_of(target(cuda="13.0", torch_cuda=BLIND), nvml("NVIDIA H200", [9, 0], "12.8"))
    assert v.status is Status.FAIL and "whl/cu128" in v.fix and "cannot see the GPU" not in v.fix


# --- smoke_rule: the first .cuda() -----------------------------------------------------------------

@pytest.mark.parametrize("smoke, status, summary, shown", [
    ({"status": "crashed", "error": "process died by SIGSEGV during 'first .cuda()'"}, Status.FAIL,
     "first .cuda() crashed: process died by SIGSEGV during 'first .cuda()'", "process died by SIGSEGV during 'first .cuda()'"),
    ({"status": "error", "error_type": "RuntimeError", "error": "CUDA error: no kernel image is available\nmore"}, Status.FAIL,
     "first .cuda() raised RuntimeError: CUDA error: no kernel image is available",
     "RuntimeError: CUDA error: no kernel image is available\nmore"),
    ({"status": "error", "error_type": "RuntimeError"}, Status.FAIL, "first .cuda() raised RuntimeError: ", "RuntimeError: "),
    ({"status": "hung", "error": "no answer after 90.0 s"}, Status.UNKNOWN, "first .cuda() did not finish: no answer after 90.0 s",
     "no answer after 90.0 s"),
])
def test_the_first_cuda_call_that_dies_fails_and_one_that_hangs_is_unknown(smoke, status, summary, shown):
    assert g1.smoke_rule(target(smoke=smoke), EvidenceList()) == [(status, summary)]
    v = g1_of(target(smoke=smoke))
    assert v.status is status and v.summary == summary and ev_of(v)["first .cuda()"] == shown


@pytest.mark.parametrize("cuda_smoke, shown", [
    ({"ran": True, "seconds": 0.4321}, "ok in 0.43 s"), ({"ran": True}, "ok in 0.00 s"),
    ({"ran": True, "seconds": None}, "ok (time not reported)"), ({"ran": True, "seconds": "N/A"}, "ok (time not reported)"),
    ({"ran": False, "reason": "--no-cuda-smoke"}, "not run: --no-cuda-smoke"), ({"ran": False}, "not run: no reason given"),
    ({}, None), (None, None),
])
def test_a_finished_first_cuda_call_is_evidence_not_a_finding(cuda_smoke, shown):
    t = target(smoke={"status": "done"}, cuda_smoke=cuda_smoke)
    ev = EvidenceList()
    assert g1.smoke_rule(t, ev) == []
    assert [(e.what, e.source, e.value) for e in ev] == ([("first .cuda()", "target interpreter", shown)] if shown else [])
    assert g1_of(t).status is Status.OK
    assert g1.smoke_rule(target(smoke={"status": "skipped"}, cuda_smoke={"ran": True}), EvidenceList()) == []


# --- cudart13_rule -------------------------------------------------------------------------------

@pytest.mark.parametrize("c13, nv, status, shown", [
    ({"loaded": True, "paths": ["/usr/local/cuda-13.0/targets/sbsa-linux/lib/libcudart.so.13"]}, GB10, Status.OK,
     "/usr/local/cuda-13.0/targets/sbsa-linux/lib/libcudart.so.13"),
    ({"loaded": True}, GB10, Status.OK, "loaded"),
    ({"loaded": False, "error": "libcudart.so.13: cannot open shared object file"}, GB10, Status.WARN,
     "OSError: libcudart.so.13: cannot open shared object file"),
    ({"loaded": False, "error": "libcudart.so.13: cannot open shared object file"}, nvml("NVIDIA H200", [9, 0], "13.0"), Status.OK,
     "OSError: libcudart.so.13: cannot open shared object file"),
])
def test_the_system_cudart13_must_load_on_a_gb10(c13, nv, status, shown):
    v = g1_of(target(cudart={"libcudart.so.13": c13}), nv)
    assert v.status is status and ev_of(v)["ctypes load libcudart.so.13"] == shown
    if status is Status.WARN:
        assert v.summary == ("the system's libcudart.so.13 cannot be loaded: the CUDA 13 runtime install is the problem, "
                             "not the wheel")
        assert v.fix == g1.reinstall_fix(target(), GpuFacts(readings_of(nvml=GB10), Config()), [])


def test_no_cudart13_entry_adds_nothing():
    ev = EvidenceList()
    assert g1.cudart13_rule({"cudart": {"libcudart.so.12": {"loaded": True}}}, GpuFacts(readings_of(nvml=GB10), Config()), ev) == []
    assert list(ev) == []


# --- ldconfig_rule: libcudart.so.12 beside .so.13 --------------------------------------------------

@pytest.mark.parametrize("entries, status", [
    ([CUDA13], Status.OK), ([CUDA13, CUDA12], Status.WARN), ([CUDA12, CUDA13], Status.WARN), ([CUDA12], Status.OK),
    ([], Status.OK), ([CUDA13, {**CUDA12, "major": None}], Status.OK), ([CUDA13, {**CUDA12, "major": "11"}], Status.OK),
])
def test_a_cudart12_registered_beside_13_warns(entries, status):
    v = g1_of(target(), libs={"libcudart": entries})
    assert v.status is status
    assert ev_of(v)["ldconfig -p libcudart"] == ([f"{e['soname']} => {e['path']}" for e in entries] or "none registered")
    if status is Status.WARN:
        assert v.summary == "libcudart.so.12 is registered beside libcudart.so.13: a leftover that invites ABI mismatches"
        assert "dpkg -S" in v.fix and v.details == (
            "warn: libcudart.so.12 is registered beside libcudart.so.13: a leftover that invites ABI mismatches",
            "ok: torch 2.9.0+cu130 is built for CUDA 13.0, as GB10 needs")


def test_ldconfig_unreadable_leaves_the_ok_saying_what_was_not_checked_and_never_warns():
    r = readings_of(target=target(), nvml=GB10, cudalibs=None)
    v = g1.judge(r, Config())
    assert v.status is Status.OK and v.summary == ("torch 2.9.0+cu130 is built for CUDA 13.0, as GB10 needs; "
                                                   "ldconfig unreadable: a leftover libcudart.so.12 not checked")
    assert ev_of(v)["ldconfig -p libcudart"] == "unavailable: cudalibs unavailable (test)"
    v = g1.judge(readings_of(target=target(cuda="12.8"), nvml=GB10, cudalibs=None), Config())
    assert v.status is Status.FAIL and "ldconfig unreadable" not in v.summary


# --- verdict_of: the whole ------------------------------------------------------------------------

def test_the_worst_finding_leads_and_the_rest_are_counted():
    t = target(cuda="12.8", version="2.9.0+cu128", smoke={"status": "crashed", "error": "SIGSEGV"})
    v = g1_of(t, libs={"libcudart": [CUDA13, CUDA12]})
    assert v.status is Status.FAIL
    assert v.summary == "torch 2.9.0+cu128 is built for CUDA 12.8; GB10 needs CUDA 13.x (+2 more)"
    assert [d.split(":")[0] for d in v.details] == ["fail", "fail", "warn"]


def test_an_ok_beside_an_unknown_is_unknown_and_not_counted_as_more():
    v = g1_of(target(smoke={"status": "hung", "error": "no answer"}))
    assert v.status is Status.UNKNOWN and v.summary == "first .cuda() did not finish: no answer"
    assert v.fix == "" and v.details == ("unknown: first .cuda() did not finish: no answer",
                                         "ok: torch 2.9.0+cu130 is built for CUDA 13.0, as GB10 needs")


def test_no_findings_is_unknown():
    v = g1.verdict_of([], True, None, EvidenceList())
    assert (v.status, v.summary, v.details, v.fix) == (Status.UNKNOWN, "no torch facts to judge", (), "")


def test_a_target_reading_that_failed_is_unknown_with_the_probes_reason():
    v = g1_of(None)
    assert v.id == "G1" and v.status is Status.UNKNOWN and v.summary == "cannot tell: target interpreter unavailable (target unavailable (test))"


def test_the_interpreter_and_gpu_are_always_evidence():
    ev = ev_of(g1_of(target()))
    assert ev["target interpreter"] == INTERP and ev["GPU"] == "NVIDIA GB10 (sm_121)"
    assert ev["torch.__version__"] == "2.9.0+cu130" and ev["torch.version.cuda (authoritative)"] == "13.0"


def test_ldconfig_entries_missing_a_field_are_shown_with_a_question_mark_and_still_judged():
    v = g1_of(target(), libs={"libcudart": [{"major": "13", "soname": "libcudart.so.13"}, {"major": "12", "path": "/opt/x"}, "junk"]})
    assert v.status is Status.WARN
    assert ev_of(v)["ldconfig -p libcudart"] == ["libcudart.so.13 => ?", "? => /opt/x"]


# --- the evidence: every row, its source and value (a verdict carries its evidence) ------------------


def test_every_evidence_row_of_a_blind_cu128_torch_on_an_h200():
    path13 = "/usr/local/cuda-13.0/targets/sbsa-linux/lib/libcudart.so.13"
    t = target(cuda="12.8", version="2.9.0+cu128", torch_cuda=BLIND, python={"env": {"CUDA_VISIBLE_DEVICES": ""}},
               smoke={"status": "done"}, cuda_smoke={"ran": False, "reason": "torch.cuda.is_available() is False"},
               cudart={"libcudart.so.13": {"loaded": True, "paths": [path13]}})
    v = g1_of(t, nvml("NVIDIA H200", [9, 0], "12.8"), {"libcudart": [CUDA13]})
    assert v.id == "G1" and v.status is Status.WARN
    assert v.summary == ("torch 2.9.0+cu128 is built for CUDA 12.8 but cannot see the GPU: torch.cuda.is_available() is False, "
                         "so the first .cuda() never ran (CUDA_VISIBLE_DEVICES='' in the target's environment); a container "
                         "started without --gpus, or CUDA_VISIBLE_DEVICES empty?")
    assert rows(v) == [
        ("target interpreter", "configured (--python or [target] python)", INTERP),
        ("GPU", "NVML nvmlDeviceGetName", "NVIDIA H200 (sm_90)"),
        ("torch wheel version (reported, not decisive)", "importlib.metadata", "2.9.0+cu128"),
        ("torch.__version__", "target interpreter", "2.9.0+cu128"),
        ("torch.version.cuda (authoritative)", "target interpreter", "12.8"),
        ("torch.cuda.is_available()", "target interpreter", False),
        ("driver's CUDA version", "NVML nvmlSystemGetCudaDriverVersion_v2", "12.8"),
        ("CUDA_VISIBLE_DEVICES", "target environment", "''"),
        ("first .cuda()", "target interpreter", "not run: torch.cuda.is_available() is False"),
        ("ctypes load libcudart.so.13", "target interpreter", path13),
        ("ldconfig -p libcudart", "cudalibs", [f"libcudart.so.13 => {CUDA13['path']}"]),
    ]


def test_evidence_sources_of_the_gpu_and_the_interpreter_when_less_is_known():
    t = target()
    del t["selected_by"]
    v = g1.judge(readings_of(target=t, nvml=nvml(None, [12, 1]), cudalibs=None), Config())
    assert rows(v)[:2] == [("target interpreter", "target", INTERP),
                           ("GPU", "NVML nvmlDeviceGetCudaComputeCapability", "unnamed GPU (sm_121)")]
    assert rows(v)[-1] == ("ldconfig -p libcudart", "ldconfig", "unavailable: cudalibs unavailable (test)")


@pytest.mark.parametrize("imp, value", [
    ({"status": "error", "error_type": "ImportError", "error": UNDEF}, f"ImportError: {UNDEF}"),
    ({"status": "crashed", "error": "process died by SIGSEGV"}, "process died by SIGSEGV"),
    ({"status": "hung", "error": "no answer after 90.0 s"}, "no answer after 90.0 s"),
    ({"status": "not reached", "error": "never started"}, "never started"),
    ({"status": "skipped"}, "skipped"),
    ({"other": 1}, "not run"),
])
def test_the_import_row_says_what_happened(imp, value):
    t = target()
    t["stages"]["import torch"] = imp
    assert ("import torch", "target interpreter", value) in rows(g1_of(t))


@pytest.mark.parametrize("smoke, value", [
    ({"status": "crashed", "error": "SIGSEGV"}, "SIGSEGV"),
    ({"status": "error", "error_type": "RuntimeError", "error": "no kernel image"}, "RuntimeError: no kernel image"),
    ({"status": "hung", "error": "no answer"}, "no answer"),
])
def test_the_first_cuda_row_names_its_source(smoke, value):
    assert rows(g1_of(target(smoke=smoke)))[-2] == ("first .cuda()", "target interpreter", value)


def test_a_long_import_error_is_cut_for_the_evidence_and_the_summary():
    err = "x" * 400 + "\nsecond"
    t = target()
    t["stages"]["import torch"] = {"status": "error", "error_type": "OSError", "error": err}
    v = g1_of(t)
    assert ev_of(v)["import torch"] == "OSError: " + "x" * 300
    assert v.summary == "import torch fails: OSError: " + "x" * 120
    smoke = {"status": "error", "error_type": "RuntimeError", "error": "y" * 400}
    v = g1_of(target(smoke=smoke))
    assert ev_of(v)["first .cuda()"] == "RuntimeError: " + "y" * 300
    assert v.summary == "first .cuda() raised RuntimeError: " + "y" * 100


def test_an_undefined_symbol_that_is_only_punctuation_names_nothing():
    assert g1.undefined_symbol("undefined symbol: ),") is None


def test_an_unknown_beside_a_failure_is_counted_as_more():
    v = g1_of(target(cuda="12.8", version="2.9.0+cu128", smoke={"status": "hung", "error": "no answer"}))
    assert v.status is Status.FAIL and v.summary.endswith("GB10 needs CUDA 13.x (+1 more)")
