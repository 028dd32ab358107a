"""G9's judge on hand-written readings: ok / warn / fail / unknown, and the words it chooses."""

from __future__ import annotations

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.verdict import Status
from sparktui.gotchas import g09_container_drift as g9
from sparktui.gotchas._packages import ABSENT, INSTALLED, UNKNOWN, installed_packages
from sparktui.probes import pins as pins_probe
from tests.conftest import readings_of
from tests.gotchas.builders import NGC_TORCH, g9_judge as judge, rows

NGC_PACKAGES = {"torch": NGC_TORCH, "torchvision": "0.25.0a0+7a13ad0f", "flash_attn": "2.7.4.post1+25.11",
                "flash-attn": None, "transformer_engine": "2.9.0+70f53666", "unsloth": None}
NGC_ENV = {"NVIDIA_PYTORCH_VERSION": "25.11"}
CHECKS = [{"check": "/.dockerenv (Docker marker)", "seen": "present", "matched": True}]
# NVML as a GB10 reports it (G9 reads it to know whether a GPU is there to fail on)
GB10 = {"driver_version": {"value": "580.95.05"}, "cuda_driver_version": {"value": "13.0"},
        "devices": [{"index": 0, "name": {"value": "NVIDIA GB10"}, "compute_capability": {"value": [12, 1]}}]}


def target(packages: dict, torch_cuda: str | None = "13.0", torch_ok: bool = True, env: dict | None = None) -> dict:
    return {
        "python": {"version": "3.12.3", "implementation": "CPython", "machine": "aarch64", "system": "Linux",
                   "env": env or {}},
        "packages": packages,
        "torch": {"version": packages.get("torch"), "cuda": torch_cuda} if torch_ok else None,
        "stages": {"packages": {"status": "done"}},
        "interpreter": "/usr/bin/python3",
    }


def docker(ngc_release: str | None = "25.11") -> dict:
    ngc = {"product": "PyTorch", "release": ngc_release, "env": {"NVIDIA_PYTORCH_VERSION": ngc_release}} if ngc_release else None
    return {"in_container": True, "runtime": "docker", "name": None, "image": None, "ngc": ngc, "hints": [], "checks": CHECKS}


def no_container() -> dict:
    return {"in_container": None, "runtime": None, "name": None, "image": None, "ngc": None, "hints": [],
            "checks": [{"check": "/.dockerenv (Docker marker)", "seen": "absent", "matched": False}]}


def shipped(image: str = "ngc-pytorch-25.11") -> dict:
    return pins_probe.read(Config().with_overrides(pins={"image": image})).data


def user_pins(*lines: tuple[str, str, str | None], meta: dict | None = None) -> dict:
    return {"origin": "file", "image": None, "path": "/home/u/pins.txt", "meta": meta or {}, "skipped": [],
            "pins": [{"name": n, "spec": s, "marker": m, "extras": [], "file": "/home/u/pins.txt", "line": i}
                     for i, (n, s, m) in enumerate(lines, 1)],
            "shipped_sets": ["ngc-pytorch-25.09", "ngc-pytorch-25.11"]}


def filled(v) -> bool:
    """The verdict's fix is G9's, filled for the target interpreter (test_fix_blocks pins it exactly)."""
    return v.fix.startswith("Train inside the NGC PyTorch container") and "/usr/bin/python3 -m pip" in v.fix


def test_ngc_container_with_its_own_stack_is_ok():
    v = judge(container=docker(), target=target(NGC_PACKAGES), pins=shipped())
    assert v.status is Status.OK, v
    assert "4 pinned packages match ngc-pytorch-25.11" in v.summary
    assert "inside docker, NGC PyTorch 25.11" in v.summary
    values = {e.what.split(" ")[0]: e.value for e in v.evidence if " installed (pinned " in e.what}
    assert values["torch"] == NGC_TORCH and values["flash-attn"] == "2.7.4.post1+25.11"
    assert any(e.what == "torch CUDA build vs pins" and e.value == "13.0 vs 13.0" for e in v.evidence)


def test_pypi_cuda12_torch_over_the_container_fails():
    pk = dict(NGC_PACKAGES, torch="2.9.0+cu128", torchvision="0.24.0+cu128")
    v = judge(container=docker(), target=target(pk, torch_cuda="12.8"), pins=shipped(), nvml=GB10)
    assert v.status is Status.FAIL
    assert v.summary.startswith("torch is a CUDA 12.8 build per torch.version.cuda; the pins expect CUDA 13.0")
    assert v.details[0].startswith("torch: installed 2.9.0+cu128, pinned 2.10.0a0+b558c986e8.nv25.11")
    assert "every package compiled against torch must match" in v.details[0]
    assert any(d.startswith("torchvision: installed 0.24.0+cu128") and "CUDA 12.8" in d and "undefined symbols" in d
               for d in v.details)
    assert "docker run" in v.fix


def test_bare_pip_drift_is_listed_package_by_package_without_calling_it_bare():
    pk = {"torch": "2.9.1+cu130", "torchvision": "0.24.1+cu130", "flash-attn": None, "flash_attn": None,
          "transformer-engine": None}
    v = judge(container=no_container(), target=target(pk, torch_cuda="13.0"), pins=shipped())
    assert v.status is Status.WARN
    assert "4 of 4 pinned packages drift from ngc-pytorch-25.11" in v.summary
    assert "no container detected (not proof of a bare host)" in v.summary
    assert "pip-installed over the image" not in v.summary
    assert v.details[:4] == (
        "torch: installed 2.9.1+cu130, pinned 2.10.0a0+b558c986e8.nv25.11 "
        "[every package compiled against torch must match this one]",
        "torchvision: installed 0.24.1+cu130, pinned 0.25.0a0+7a13ad0f "
        "[compiled against torch/CUDA: a mismatch shows up as undefined symbols or missing kernels]",
        "flash-attn: missing, pinned 2.7.4.post1",
        "transformer-engine: missing, pinned 2.9.0",
    )


def test_ngc_variables_in_the_target_count_when_sparktui_sees_no_container():
    v = judge(container=no_container(), target=target(NGC_PACKAGES, env=NGC_ENV), pins=shipped())
    assert v.status is Status.OK
    assert "inside a container, NGC PyTorch 25.11" in v.summary
    assert any(e.what == "NVIDIA_PYTORCH_VERSION" and e.value == "25.11" for e in v.evidence)


def test_container_release_other_than_the_pin_set_warns_and_names_the_setting():
    v = judge(container=docker("25.09"), target=target(NGC_PACKAGES), pins=shipped())
    assert v.status is Status.WARN
    assert 'the container is NGC 25.09 but the pins are for 25.11: set [pins] image = "ngc-pytorch-25.09"' in v.summary


def test_25_09_container_against_its_own_set_is_ok():
    pk = {"torch": "2.9.0a0+50eac811a6.nv25.09", "torchvision": "0.24.0a0+98f8b375", "flash-attn": "2.7.4.post1"}
    v = judge(container=docker("25.09"), target=target(pk), pins=shipped("ngc-pytorch-25.09"))
    assert v.status is Status.OK, v


def test_missing_readings_are_unknown_with_the_reason():
    v = judge(container=docker(), target=None, pins=shipped())
    assert v.status is Status.UNKNOWN and "target interpreter reading" in v.summary
    bad = Reading("pins", None, error="pins file unusable: /home/u/pins.txt:3: torch: not a version specifier: '=2.9'")
    v = judge(container=docker(), target=target(NGC_PACKAGES), pins=bad)
    assert v.status is Status.UNKNOWN and "/home/u/pins.txt:3" in v.summary


def test_container_probe_missing_still_compares():
    v = judge(container=None, target=target(NGC_PACKAGES), pins=shipped())
    assert v.status is Status.OK and "no container detected" in v.summary
    assert any(e.what == "container detection" and str(e.value).startswith("unavailable") for e in v.evidence)


def test_package_versions_unavailable_is_unknown():
    t = target({})
    t["packages"] = None
    t["stages"]["packages"] = {"status": "crashed", "error": "process died by SIGSEGV during 'packages'"}
    v = judge(container=docker(), target=t, pins=shipped())
    assert v.status is Status.UNKNOWN and "SIGSEGV" in v.summary


def test_user_pin_with_local_label_catches_the_wrong_cuda_wheel_even_if_torch_cannot_import():
    t = target({"torch": "2.9.0+cu128"}, torch_ok=False)
    v = judge(container=no_container(), target=t, pins=user_pins(("torch", "==2.9.0+cu130", None)), nvml=GB10)
    assert v.status is Status.FAIL
    assert "a CUDA 12.8 build per its wheel tag; the pins expect CUDA 13.0" in v.summary


def test_public_pin_ignores_the_local_label_when_no_cuda_is_known():
    v = judge(container=no_container(), target=target({"torch": "2.9.0+cu128"}, torch_ok=False),
              pins=user_pins(("torch", "==2.9.0", None)))
    assert v.status is Status.OK


def test_cpu_only_torch_against_cuda_pins_fails_where_a_gpu_is_seen():
    v = judge(container=no_container(), target=target({"torch": "2.9.0"}, torch_cuda=None),
              pins=user_pins(("torch", ">=2.9", None), meta={"cuda": "13.0"}), nvml=GB10)
    assert v.status is Status.FAIL and "a CPU-only build" in v.summary
    assert "GPU: NVIDIA GB10 (NVML)" in v.summary


def test_cpu_only_torch_with_no_gpu_seen_is_drift_not_a_cuda_failure():
    t = target({"torch": "2.9.0+cpu"}, torch_cuda=None)
    t["torch_cuda"] = {"available": False, "arch_list": []}
    v = judge(container=no_container(), target=t, pins=user_pins(("torch", ">=2.9", None), meta={"cuda": "13.0"}),
              nvml=None)
    assert v.status is Status.WARN
    assert v.summary == ("torch is a CPU-only build per torch.version.cuda; the pins expect CUDA 13.0 "
                         "(drift from /home/u/pins.txt); no GPU seen here, so no CUDA failure is claimed; "
                         "no container detected (not proof of a bare host)")
    assert {e.what: e.value for e in v.evidence}["torch CUDA build vs pins"] == "cpu vs 13.0"


def test_no_torch_in_the_target_is_unknown_not_drift():
    pk = {"torch": None, "torchvision": None, "flash-attn": None, "flash_attn": None, "transformer-engine": None}
    t = target(pk, torch_ok=False)
    t["stages"]["import torch"] = {"status": "error", "error_type": "ModuleNotFoundError",
                                   "error": "No module named 'torch'"}
    v = judge(container=no_container(), target=t, pins=shipped(), nvml=GB10)
    assert v.status is Status.UNKNOWN, v
    assert v.summary == "cannot tell: torch not installed in /usr/bin/python3: is --python the training environment?"
    assert "drift" not in v.summary


def test_a_broken_torch_submodule_is_still_compared():
    # No module named 'torch._C' is a broken install (G1 fails it), not an absent torch: G9 compares
    t = target({"torch": "2.9.0+cu130"}, torch_ok=False)
    t["stages"]["import torch"] = {"status": "error", "error_type": "ModuleNotFoundError",
                                   "error": "No module named 'torch._C'"}
    v = judge(container=no_container(), target=t, pins=user_pins(("torch", "==2.9.0+cu130", None)), nvml=GB10)
    assert v.status is Status.OK, v


def test_markers_are_evaluated_against_the_target_interpreter():
    p = user_pins(("flash-attn", "==2.8.3", 'platform_machine == "x86_64"'),
                  ("transformers", ">=4.57,<5", 'python_version >= "3.10"'),
                  ("peft", "==0.18.0", 'platform_release >= "6"'))
    pk = {"flash-attn": None, "transformers": "4.57.1", "peft": "0.18.0"}
    v = judge(container=no_container(), target=target(pk), pins=p)
    assert v.status is Status.OK, v
    assert "2 pinned packages match" in v.summary  # flash-attn's pin is for x86_64 only
    assert any("peft: marker needs platform_release" in d for d in v.details)


def test_prerelease_below_an_upper_bound_is_drift():
    v = judge(container=no_container(), target=target({"torch": "2.10.0a0+b558c986e8.nv25.11"}),
              pins=user_pins(("torch", ">=2.9,<2.10", None)))
    assert v.status is Status.WARN and "torch" in v.summary


def test_nothing_comparable_is_unknown():
    v = judge(container=no_container(), target=target({"numpy": "2.1.0"}), pins=user_pins(("torch", "==2.9.0", None)))
    assert v.status is Status.UNKNOWN and "no pinned version could be compared" in v.summary
    assert "torch: not compared (the target reading did not include it)" in v.details


# --- the one installed-packages helper (gotchas/_packages.py), shared with G2 -----------------------


@pytest.mark.parametrize("t,name,state,described", [
    ({"packages": {"torch": "2.9.0+cu130"}}, "torch", INSTALLED, "2.9.0+cu130"),
    ({"packages": {"unsloth": None}}, "unsloth", ABSENT, "not installed"),
    ({"packages": {"torch": "2.9.0"}}, "unsloth", UNKNOWN, "unknown (the target reading did not include it)"),
    ({"packages": {"flash_attn": "2.7.4.post1", "flash-attn": None}}, "Flash-Attn", INSTALLED, "2.7.4.post1"),
    ({"packages": {"flash-attn": None, "flash_attn": "2.7.4.post1"}}, "flash_attn", INSTALLED, "2.7.4.post1"),
    ({"packages": {"flash-attn": None}, "packages_unread": {"flash_attn": "KeyError: 'Version'"}}, "flash-attn", UNKNOWN,
     "unknown (its metadata could not be read: KeyError: 'Version')"),
    ({"packages": {"flash-attn": "2.7.4.post1"}, "packages_unread": {"flash_attn": "KeyError"}}, "flash-attn", INSTALLED,
     "2.7.4.post1"),
    ({"packages": {"torch": 2.9}}, "torch", UNKNOWN, "unknown (its metadata could not be read: version reported as 2.9, not a string)"),
    ({"packages": None, "packages_error": "packages stage hung: no answer after 30.0 s during 'packages'; killed"}, "torch",
     UNKNOWN, "unknown (packages not read: packages stage hung: no answer after 30.0 s during 'packages'; killed)"),
    ({"packages": {"error": "importlib.metadata unavailable"}}, "torch", UNKNOWN,
     "unknown (packages not read: importlib.metadata unavailable)"),
    ({"packages": None, "stages": {"packages": {"status": "error", "error_type": "RuntimeError", "error": "boom"}}}, "torch",
     UNKNOWN, "unknown (packages not read: packages stage error: RuntimeError: boom)"),
    ({"packages": None, "stages": {"packages": {"status": "skipped"}}}, "torch", UNKNOWN,
     "unknown (packages not read: packages stage skipped)"),
    ({"stages": {"packages": {"status": "done"}}}, "torch", UNKNOWN,
     "unknown (packages not read: the target reading has no packages field)"),
    ({"packages": ["torch"]}, "torch", UNKNOWN, "unknown (packages not read: packages reported as list, not a list of versions)"),
])
def test_installed_packages_three_answers(t, name, state, described):
    pk = installed_packages(t)
    assert pk.state(name) == state
    assert pk.describe(name) == described
    assert pk.version(name) == (described if state == INSTALLED else None)


def test_installed_packages_of_no_reading_and_known_flag():
    assert installed_packages(None).error == "no target reading" and not installed_packages(None).known
    assert installed_packages({"packages": {}}).known
    assert installed_packages({"packages": {"error": 5}}).known  # a package called "error", oddly


def test_a_pin_whose_package_could_not_be_read_is_not_compared_and_says_why():
    t = target({"torch": "2.9.0+cu130"})
    t["packages_unread"] = {"transformers": "KeyError: 'Version'"}
    v = judge(container=no_container(), target=t, pins=user_pins(("torch", "==2.9.0+cu130", None),
                                                                   ("transformers", "==4.57.1", None)), nvml=GB10)
    assert v.status is Status.OK and "1 pinned packages match" in v.summary
    assert "transformers: not compared (its metadata could not be read: KeyError: 'Version')" in v.details
    assert {e.what: e.value for e in v.evidence}["transformers installed (pinned 4.57.1)"] == "not reported"


def test_a_pin_whose_package_was_not_asked_is_not_compared():
    v = judge(container=no_container(), target=target({"torch": "2.9.0+cu130"}),
              pins=user_pins(("torch", "==2.9.0+cu130", None), ("peft", "==0.17.0", None)), nvml=GB10)
    assert "peft: not compared (the target reading did not include it)" in v.details


def test_packages_error_field_is_the_reason_g9_gives():
    t = target({})
    t["packages"] = None
    t["packages_error"] = "packages stage hung: no answer after 30.0 s during 'packages'; killed"
    v = judge(container=docker(), target=t, pins=shipped())
    assert v.status is Status.UNKNOWN
    assert v.summary == ("cannot tell: installed package versions unavailable (packages stage hung: no answer after "
                         "30.0 s during 'packages'; killed)")


def test_torch_seen_absent_with_the_import_not_done_is_not_judged():
    t = target({"torch": None, "transformers": "4.57.1"}, torch_ok=False)
    t["stages"]["import torch"] = {"status": "crashed", "error": "process died by SIGSEGV during 'import torch'"}
    v = judge(container=no_container(), target=t, pins=user_pins(("torch", "==2.9.0", None)), nvml=GB10)
    assert v.status is Status.UNKNOWN and "torch not installed in /usr/bin/python3" in v.summary
    t["packages_unread"] = {"torch": "KeyError"}  # unread is not absent: judged on
    t["packages"] = {"transformers": "4.57.1"}
    v = judge(container=no_container(), target=t, pins=user_pins(("torch", "==2.9.0", None)), nvml=GB10)
    assert v.status is Status.UNKNOWN and "no pinned version could be compared" in v.summary
    assert "torch not installed" not in v.summary


# --- whole verdicts ----------------------------------------------------------------------------------


def test_drift_inside_ngc_whole_verdict():
    v = judge(container=docker(), target=target(NGC_PACKAGES, env=NGC_ENV),
              pins=user_pins(("torch", "==" + NGC_TORCH, None), ("flash-attn", "==2.7.4.post1+25.11", None),
                             ("unsloth", ">=2026.1", None)), nvml=GB10)
    assert v.id == "G9" and v.status is Status.WARN and filled(v)
    assert v.summary == ("pip-installed over the image? 1 of 3 pinned packages drift from /home/u/pins.txt: unsloth; "
                         "inside docker, NGC PyTorch 25.11")
    assert rows(v) == [
        ("/.dockerenv (Docker marker)", "container probe", "present"),
        ("pin set", "/home/u/pins.txt", "/home/u/pins.txt (3 pins)"),
        ("unsloth installed (pinned >=2026.1)", "target importlib.metadata", "not installed"),
        ("flash-attn installed (pinned 2.7.4.post1+25.11)", "target importlib.metadata", "2.7.4.post1+25.11"),
        (f"torch installed (pinned {NGC_TORCH})", "target importlib.metadata", NGC_TORCH),
    ]
    assert v.details == ("unsloth: missing, pinned >=2026.1",)


def test_cuda_12_wheel_on_a_gb10_whole_verdict():
    v = judge(container=no_container(),
              target=target({"torch": "2.9.0+cu128", "torchvision": "0.24.0+cu128", "transformers": "4.57.1"},
                            torch_cuda="12.8"),
              pins=user_pins(("torch", "==2.9.0+cu130", None), ("torchvision", "==0.24.0+cu130", None),
                             ("transformers", "==4.56.0", None)), nvml=GB10)
    assert v.status is Status.FAIL and filled(v)
    assert v.summary == ("torch is a CUDA 12.8 build per torch.version.cuda; the pins expect CUDA 13.0; GPU: NVIDIA GB10 "
                         "(NVML); no container detected (not proof of a bare host)")
    assert rows(v)[2:] == [
        ("torch installed (pinned 2.9.0+cu130)", "target importlib.metadata", "2.9.0+cu128"),
        ("torchvision installed (pinned 0.24.0+cu130)", "target importlib.metadata", "0.24.0+cu128"),
        ("transformers installed (pinned 4.56.0)", "target importlib.metadata", "4.57.1"),
        ("torch CUDA build vs pins", "target torch / pins", "12.8 vs 13.0"),
        ("GPU seen", "NVML / target torch.cuda", "NVIDIA GB10 (NVML)"),
    ]
    assert v.details == (
        "torch: installed 2.9.0+cu128, pinned 2.9.0+cu130 (a CUDA 12.8 build per torch.version.cuda; the pins expect "
        "CUDA 13.0) [every package compiled against torch must match this one]",
        "torchvision: installed 0.24.0+cu128, pinned 0.24.0+cu130 (a CUDA 12.8 build; the pins expect CUDA 13.0) "
        "[compiled against torch/CUDA: a mismatch shows up as undefined symbols or missing kernels]",
        "transformers: installed 4.57.1, pinned 4.56.0",
    )


def test_packages_unavailable_whole_verdict():
    t = target({})
    t["packages"] = None
    t["packages_error"] = "packages stage crashed: process died by SIGSEGV during 'packages'"
    from sparktui.core.readings import Reading
    v = g9.judge(readings_of(container=no_container(), target=Reading("target", t, source="/usr/bin/python3 (subprocess)"),
                             pins=user_pins(("torch", "==2.9.0", None))), Config())
    assert v.status is Status.UNKNOWN and v.fix == "" and v.details == ()
    assert rows(v)[-1] == ("installed packages", "/usr/bin/python3 (subprocess)",
                           "unavailable: packages stage crashed: process died by SIGSEGV during 'packages'")


def test_no_torch_whole_verdict():
    t = target({"torch": None, "transformers": "4.57.1"}, torch_ok=False)
    t["stages"]["import torch"] = {"status": "error", "error_type": "ModuleNotFoundError", "error": "No module named 'torch'"}
    v = judge(container=no_container(), target=t, pins=user_pins(("torch", "==2.9.0", None), ("transformers", "==4.57.1", None)))
    assert v.status is Status.UNKNOWN and v.fix == ""
    assert v.summary == "cannot tell: torch not installed in /usr/bin/python3: is --python the training environment?"
    assert rows(v)[-1] == ("import torch", "target interpreter", "ModuleNotFoundError: No module named 'torch'")
    assert v.details == ("2 pins not compared: the drift of an interpreter without torch says nothing about the "
                         "training stack",)


def test_odd_container_checks_and_nameless_pins_are_said_not_a_crash():
    c = {**docker(), "checks": [{"seen": "present"}, {"check": "/run/.containerenv"}, "odd"]}
    pins = user_pins(("torch", "==" + NGC_TORCH, None))
    pins["pins"].append({"spec": "==1.0", "line": 7})
    v = judge(container=c, target=target(NGC_PACKAGES), pins=pins)
    assert v.status is Status.OK
    assert ("container check (unnamed)", "container probe", "present") in rows(v)
    assert ("/run/.containerenv", "container probe", "not reported") in rows(v)
    assert "a pin without a package name was skipped (line 7)" in v.details


# --- the pieces, each output pinned ------------------------------------------------------------------


def test_marker_env_from_the_target_interpreter():
    t = {"python": {"version": "3.12.3", "implementation": "CPython", "machine": "aarch64", "system": "Linux"}}
    assert g9._marker_env(t) == {
        "extra": "", "python_full_version": "3.12.3", "python_version": "3.12",
        "platform_python_implementation": "CPython", "implementation_name": "cpython",
        "platform_system": "Linux", "sys_platform": "linux", "os_name": "posix", "platform_machine": "aarch64"}
    assert g9._marker_env({"python": {"system": "Windows"}}) == {
        "extra": "", "platform_system": "Windows", "sys_platform": "win32", "os_name": "nt"}
    assert g9._marker_env({"python": {"system": "Darwin"}})["sys_platform"] == "darwin"
    assert g9._marker_env({"python": {"system": "FreeBSD"}})["sys_platform"] == "freebsd"
    assert g9._marker_env({"python": None}) == {"extra": ""}


@pytest.mark.parametrize("version,cuda", [("2.9.0+cu130", "13.0"), ("2.9.0+cu128", "12.8"), ("2.9.0+cpu", "cpu"),
                                          ("2.9.0+cu13", "1.3"), ("2.9.0", None), ("2.9.0+rocm6.2", None),
                                          ("not a version", None), (None, None), ("0.24.0+git.cu130", "13.0")])
def test_cuda_of_label(version, cuda):
    assert g9._cuda_of_label(version) == cuda


@pytest.mark.parametrize("cuda,major", [("13.0", "13"), ("12.8", "12"), ("cpu", "cpu"), ("", None), (None, None), ("13", "13")])
def test_cuda_major(cuda, major):
    assert g9._cuda_major(cuda) == major


@pytest.mark.parametrize("specs,text", [(["==2.9.0"], "2.9.0"), (["===2.9.0"], "===2.9.0"), ([">=2.8", "<3"], ">=2.8,<3"),
                                        ([], "any version"), (["==2.9.0", "<3"], "==2.9.0,<3")])
def test_pinned_text(specs, text):
    assert g9._pinned_text(specs) == text


@pytest.mark.parametrize("group,pin", [(None, None), ({"specs": [">=2", "==2.9.0"]}, "2.9.0"),
                                       ({"specs": ["===2.9.0"]}, None), ({"specs": []}, None)])
def test_exact_pin(group, pin):
    assert g9._exact_pin(group) == pin


@pytest.mark.parametrize("c,t,expected", [
    (None, {}, (None, "no container detected (not proof of a bare host)", None)),
    ({"in_container": True, "runtime": "docker", "name": "train", "ngc": None}, {},
     (True, "inside docker 'train'", None)),
    ({"in_container": True, "runtime": "unknown (cgroup)", "ngc": {"product": None, "release": "25.11"}}, {},
     (True, "inside a container, NGC image 25.11", {"product": None, "release": "25.11"})),
    ({"in_container": None}, {"python": {"env": {"NVIDIA_PYTORCH_VERSION": "25.09"}}},
     (True, "inside a container, NGC PyTorch 25.09",
      {"product": "PyTorch", "release": "25.09", "from": "target interpreter's environment"})),
    ({"in_container": False, "runtime": "docker", "ngc": {"product": "PyTorch", "release": None}}, {},
     (True, "inside a container", {"product": "PyTorch", "release": None})),
])
def test_where(c, t, expected):
    assert g9._where(c, t) == expected


@pytest.mark.parametrize("nvml,tc,seen", [
    (GB10, None, "NVIDIA GB10 (NVML)"),
    ({"devices": [{"index": 0}]}, None, "a GPU (NVML)"),
    ({"devices": []}, {"available": True, "devices": [{"name": "NVIDIA GB10"}]}, "NVIDIA GB10 (the target's torch)"),
    (None, {"available": True, "devices": [], "name": "NVIDIA H200"}, "NVIDIA H200 (the target's torch)"),
    (None, {"available": True}, "a GPU (the target's torch)"),
    (None, {"available": "yes", "devices": [{"name": "X"}]}, None),
    (None, {"available": False}, None),
    ({"devices": ["odd"]}, None, None),
])
def test_gpu_seen(nvml, tc, seen):
    from sparktui.core.readings import Readings

    r = readings_of(nvml=nvml) if nvml is not None else Readings()
    assert g9._gpu_seen(r, {"torch_cuda": tc}) == seen


def test_drift_line_words():
    e = {"name": "flash-attn", "installed": "2.8.0", "pinned": "2.7.4.post1", "note": "", "abi": True, "status": "mismatch"}
    assert g9._drift_line(e) == ("flash-attn: installed 2.8.0, pinned 2.7.4.post1 [compiled against torch/CUDA: a "
                                 "mismatch shows up as undefined symbols or missing kernels]")
    assert g9._drift_line({**e, "abi": False}) == "flash-attn: installed 2.8.0, pinned 2.7.4.post1"
    assert g9._drift_line({**e, "status": "missing", "note": "x"}) == "flash-attn: missing, pinned 2.7.4.post1 (x)"


# --- more whole verdicts -------------------------------------------------------------------------------


def test_ok_whole_verdict_with_hints_and_the_ngc_variable_from_the_target():
    c = {**no_container(), "hints": ["NVIDIA_BUILD_ID set"]}
    t = target({"torch": "2.9.0+cu130"}, env={"NVIDIA_PYTORCH_VERSION": "25.11"})
    v = judge(container=c, target=t, pins=user_pins(("torch", "==2.9.0+cu130", None)), nvml=GB10)
    assert v.id == "G9" and v.status is Status.OK and v.fix == "" and v.details == ()
    assert v.summary == "1 pinned packages match /home/u/pins.txt; inside a container, NGC PyTorch 25.11"
    assert rows(v) == [
        ("/.dockerenv (Docker marker)", "container probe", "absent"),
        ("hint", "container probe", "NVIDIA_BUILD_ID set"),
        ("NVIDIA_PYTORCH_VERSION", "target interpreter's environment", "25.11"),
        ("pin set", "/home/u/pins.txt", "/home/u/pins.txt (1 pins)"),
        ("torch installed (pinned 2.9.0+cu130)", "target importlib.metadata", "2.9.0+cu130"),
        ("torch CUDA build vs pins", "target torch / pins", "13.0 vs 13.0"),
    ]


def test_container_unavailable_and_a_shipped_image_label():
    from sparktui.core.readings import Reading

    pins = {**user_pins(("torch", "==2.9.0+cu130", None)), "image": "ngc-pytorch-25.11", "path": None}
    v = g9.judge(readings_of(container=Reading("container", None, error="denied", source="/proc/1/cgroup"),
                             target=target({"torch": "2.9.0+cu130"}), pins=pins), Config())
    assert rows(v)[:2] == [("container detection", "/proc/1/cgroup", "unavailable: denied"),
                           ("pin set", "pins", "ngc-pytorch-25.11 (1 pins)")]
    assert v.summary.startswith("1 pinned packages match ngc-pytorch-25.11;")
    v = g9.judge(readings_of(container=Reading("container", None, error=None, source=""),
                             target=target({"torch": "2.9.0+cu130"}), pins=pins), Config())
    assert rows(v)[0] == ("container detection", "container", "unavailable: no data")


def test_nothing_comparable_whole_verdicts():
    v = judge(container=no_container(), target=target({"torch": "2.9.0+cu130"}), pins=user_pins())
    assert v.status is Status.UNKNOWN and filled(v)
    assert v.summary == "cannot tell: no pin applies to this interpreter (no container detected (not proof of a bare host))"
    t = target({"torch": "2.9.0+cu130"})
    v = judge(container=no_container(), target=t, pins=user_pins(("peft", "==0.17.0", None)))
    assert v.summary == ("cannot tell: no pinned version could be compared (no container detected (not proof of a "
                         "bare host))")
    assert v.details == ("peft: not compared (the target reading did not include it)",)


def test_cuda_drift_without_a_gpu_whole_summary():
    t = target({"torch": "2.9.0+cu128", "transformers": "4.57.1"}, torch_cuda="12.8")
    v = judge(container=no_container(), target=t,
              pins=user_pins(("torch", "==2.9.0+cu130", None), ("transformers", "==4.56.0", None)))
    assert v.status is Status.WARN and filled(v)
    assert v.summary == ("torch is a CUDA 12.8 build per torch.version.cuda; the pins expect CUDA 13.0 (drift from "
                         "/home/u/pins.txt, +1 more drifting); no GPU seen here, so no CUDA failure is claimed; no "
                         "container detected (not proof of a bare host)")
    assert rows(v)[-1] == ("GPU seen", "NVML / target torch.cuda",
                           "none (NVML named no device; torch.cuda.is_available() not True)")
    v = judge(container=no_container(), target=target({"torch": "2.9.0+cu128"}, torch_cuda="12.8"),
              pins=user_pins(("torch", "==2.9.0+cu130", None)))
    assert "(drift from /home/u/pins.txt); no GPU seen" in v.summary


@pytest.mark.parametrize("n,tail", [(4, "a, b, c, d; "), (5, "a, b, c, d, ...; ")])
def test_drift_names_are_cut_after_four(n, tail):
    names = "abcde"[:n]
    t = target({"torch": "2.9.0+cu130", **{x: "1.0" for x in names}})
    pins = user_pins(("torch", "==2.9.0+cu130", None), *[(x, "==2.0", None) for x in names])
    v = judge(container=no_container(), target=t, pins=pins)
    assert v.summary == f"{n} of {n + 1} pinned packages drift from /home/u/pins.txt: {tail}no container detected (not proof of a bare host)"
    assert filled(v) and len(v.details) == n


def test_torch_missing_while_importable_elsewhere_is_named_in_the_details():
    t = target({"torch": None})
    t["torch"] = {"version": "2.9.0", "cuda": "13.0"}
    t["stages"]["import torch"] = {"status": "done"}
    v = judge(container=no_container(), target=t, pins=user_pins(("torch", "==2.9.0", None)))
    assert v.status is Status.WARN
    assert v.details[-1] == "torch is not installed in /usr/bin/python3: is it the training interpreter? (--python)"


def test_no_torch_after_a_crash_names_the_stage_status():
    t = target({"torch": None}, torch_ok=False)
    t["stages"]["import torch"] = {"status": "hung"}
    del t["interpreter"]
    v = judge(container=no_container(), target=t, pins=user_pins(("torch", "==2.9.0", None)))
    assert v.summary == ("cannot tell: torch not installed in the target interpreter: is --python the training "
                         "environment?")
    assert rows(v)[-1] == ("import torch", "target interpreter", "hung")
    t["stages"]["import torch"] = {}
    v = judge(container=no_container(), target=t, pins=user_pins(("torch", "==2.9.0", None)))
    assert rows(v)[-1] == ("import torch", "target interpreter", "not reported")


def test_release_mismatch_whole_verdicts():
    t = target(NGC_PACKAGES, env=NGC_ENV)
    v = judge(container=docker("25.09"), target=t, pins=shipped())
    note = 'the container is NGC 25.09 but the pins are for 25.11: set [pins] image = "ngc-pytorch-25.09"'
    assert v.status is Status.WARN and filled(v) and v.details == (note,)
    assert v.summary == f"inside docker, NGC PyTorch 25.09; {note}"
    v = judge(container=docker("25.11"), target=t, pins=shipped())
    assert v.status is Status.OK  # the same release: no note
    v = judge(container=docker("25.09"), target=t, pins={**shipped(), "origin": "file"})
    assert v.status is Status.OK  # the user's own pins: no shipped release to compare
    pins = {**shipped(), "shipped_sets": []}
    v = judge(container=docker("25.09"), target=t, pins=pins)
    assert "use --pins /etc/pip/constraint.txt (the image's own list)" in v.details[0]


def test_packages_helper_odd_cases():
    pk = installed_packages({"packages": {"flash-attn": "2.7.4.post1", "flash_attn": 5}})
    assert pk.state("flash-attn") == INSTALLED and pk.version("flash_attn") == "2.7.4.post1"
    pk = installed_packages({"packages": {"torch": 2.9, "transformers": "4.57.1"}})
    assert pk.state("transformers") == INSTALLED and pk.state("torch") == UNKNOWN
    pk = installed_packages({"packages": {"flash-attn": "2.7.4.post1"}, "packages_unread": {"flash_attn": "KeyError"}})
    assert pk.unread == {} and pk.state("flash-attn") == INSTALLED
    pk = installed_packages({"packages": None, "stages": {"packages": {"status": "error", "error": "boom"}}})
    assert pk.error == "packages stage error: boom"
    pk = installed_packages({"packages": None, "packages_error": ""})
    assert pk.error == "packages reported as NoneType, not a list of versions"
    assert installed_packages({"packages": {"torch": "2.9.0"}, "packages_unread": ["odd"]}).unread == {}
