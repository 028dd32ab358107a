"""G13 (issue 26 item 1): a driver/library mismatch and a pending reboot are failures with the reboot
fix; 7.0.0-1019-nvidia is in the known-bad table; `modinfo nvidia`'s licence tells open from
proprietary where /proc does not. Built on real public text, its source beside it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pynvml
import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.verdict import Status
from sparktui.gotchas import g13_driver_flavour as g13
from sparktui.probes import driver_flavour as probe
from sparktui.probes import nvml
from sparktui.testing import fake_nvml
from tests.conftest import readings_of
from tests.gotchas.builders import CFG, GB10_NVML, g13_verdict as verdict
from tests.gotchas.builders import driver_tree as tree
from tests.gotchas.builders import write_tree_file

# --- real text -------------------------------------------------------------------------------------

# `modinfo nvidia` of an open module, as posted (its first letter lost in the copy, kept as posted):
# https://github.com/NVIDIA/open-gpu-kernel-modules/issues/311 (comment of 2022-06-21)
MODINFO_OPEN_515 = """\
ilename:       /lib/modules/4.9.2-3.0.0.std7b.el7.5.x86_64/kernel/drivers/video/nvidia.ko
firmware:       nvidia/515.48.07/gsp.bin
alias:          char-major-195-*
version:        515.48.07
supported:      external
license:        Dual MIT/GPL
srcversion:     FAF867C627FC8DEDD45D08A
alias:          pci:v000010DEd*sv*sd*bc06sc80i00*
alias:          pci:v000010DEd*sv*sd*bc03sc02i00*
alias:          pci:v000010DEd*sv*sd*bc03sc00i00*
depends:        drm
vermagic:       4.9.2-3.0.0.std7b.el7.5.x86_64 SMP mod_unload 
parm:           NvSwitchRegDwords:NvSwitch regkey (charp)
parm:           NvSwitchBlacklist:NvSwitchBlacklist=uuid[,uuid...] (charp)
parm:           NVreg_ResmanDebugLevel:int
"""
# NVIDIA's README ("kernel_open"), as quoted in https://github.com/NVIDIA/open-gpu-kernel-modules/issues/171:
# "the proprietary flavor will report: # modinfo nvidia | grep license / license:        NVIDIA"
README_LICENSE_PROPRIETARY = "license:        NVIDIA\n"
README_LICENSE_OPEN = "license:        Dual MIT/GPL\n"
# `modinfo gdrdrv`: another module's licence (MIT) is neither flavour:
# https://github.com/NVIDIA/gdrcopy/issues/82
MODINFO_GDRDRV = """\
filename:       /lib/modules/4.15.0-58-generic/updates/dkms/gdrdrv.ko
version:        1.1
description:    GDRCopy kernel-mode driver
license:        MIT
author:         drossetti@nvidia.com
srcversion:     D5FB5F3108420043522DCAC
depends:        nv-p2p-dummy
retpoline:      Y
name:           gdrdrv
vermagic:       4.15.0-58-generic SMP mod_unload 
"""
# modinfo's own error when no module of that name is installed:
# https://github.com/al42and/cuda-smi/pull/2 (comment of 2016-10-29)
MODINFO_NOT_FOUND = "modinfo: ERROR: Module nvidia not found."

# /proc/driver/nvidia/version lines as machines print them
NVRM_X86_PROPRIETARY_535 = ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.06  Wed Jun 26 06:46:07 UTC 2024\n"
                            "GCC version:  gcc version 11.3.0 (Buildroot 2022.11.1)\n")  # bottlerocket-core-kit PR #118
NVRM_X86_OPEN_525 = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  525.60.11  Release Build  "
                     "(archlinux-builder@localhost)  \nGCC version:  gcc version 12.2.0 (GCC) \n")  # nix-community/nixGL #121

# The mismatch in NVML's and its tools' own words
NVIDIA_SMI_MISMATCH = [
    # https://github.com/mozilla/translations/issues/1167
    "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 550.144",
    # https://github.com/Nobara-Project/rpm-sources/issues/525
    "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 595.71",
    # https://github.com/tinygrad/open-gpu-kernel-modules/issues/47
    "nvidia-smi \nFailed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.124",
]
# nvmlErrorString's text for NVML_ERROR_LIB_RM_VERSION_MISMATCH (18), nvidia-ml-py 13.615.71 pynvml.py
PYNVML_MISMATCH = "RM has detected an NVML/RM version mismatch."
NOT_A_MISMATCH = [
    "Failed to initialize NVML: Unknown Error",  # the container/cgroup case, not a driver update
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
    "nvmlInit failed: LIBRARY_NOT_FOUND (NVML Shared Library Not Found)",
    "nvmlInit failed: DRIVER_NOT_LOADED (Driver Not Loaded)",
]


def runner(text=None, why=None):
    return lambda: (text, why)


def facts(tmp_path: Path, modinfo=None, **kw) -> dict:
    return probe.read_tree(tree(tmp_path, **kw), modinfo=modinfo)


def kernels(root: Path, *releases: str, leftover: tuple[str, ...] = ()) -> None:
    for rel in releases:
        (root / "lib/modules" / rel / "kernel").mkdir(parents=True, exist_ok=True)
    for rel in leftover:  # a removed kernel's folder keeps only DKMS leftovers
        (root / "lib/modules" / rel / "updates/dkms").mkdir(parents=True, exist_ok=True)


def reboot_flag(root: Path, pkgs: str | None) -> None:
    write_tree_file(root, "var/run/reboot-required", "*** System restart required ***\n")
    if pkgs is not None:
        write_tree_file(root, "var/run/reboot-required.pkgs", pkgs)


# --- modinfo ----------------------------------------------------------------------------------------


def test_modinfo_of_a_real_open_module_parses_version_and_licence():
    info = probe.parse_modinfo(MODINFO_OPEN_515)
    assert info["version"] == "515.48.07" and info["license"] == "Dual MIT/GPL"
    assert info["srcversion"] == "FAF867C627FC8DEDD45D08A"
    assert info["vermagic"].startswith("4.9.2-3.0.0.std7b.el7.5.x86_64")
    assert "filename" not in info  # the posted text lost its first letter: not guessed
    assert probe.flavour_of_license(info["license"]) == "open"


@pytest.mark.parametrize("text,flavour", [(README_LICENSE_OPEN, "open"), (README_LICENSE_PROPRIETARY, "proprietary"),
                                          (MODINFO_GDRDRV, None)])
def test_readme_licence_lines_tell_the_flavour(text, flavour):
    assert probe.flavour_of_license(probe.parse_modinfo(text).get("license")) == flavour


def test_installed_module_facts_from_modinfo(tmp_path):
    d = facts(tmp_path, runner(MODINFO_OPEN_515))
    assert (d["installed_version"], d["installed_license"], d["installed_flavour"]) == ("515.48.07", "Dual MIT/GPL", "open")
    assert d["sources"]["installed_version"] == "modinfo nvidia"


def test_another_licence_leaves_the_installed_flavour_unknown_with_why(tmp_path):
    d = facts(tmp_path, runner(MODINFO_GDRDRV))
    assert d["installed_flavour"] is None and "'MIT'" in d["errors"]["installed_flavour"]


def test_modinfo_failure_is_unknown_for_those_facts_only(tmp_path):
    d = facts(tmp_path, runner(None, f"modinfo nvidia exited 1: {MODINFO_NOT_FOUND}"))
    assert d["installed_version"] is None and MODINFO_NOT_FOUND in d["errors"]["installed_version"]
    assert d["flavour"] == "open" and d["driver_version"] == "580.95.05"  # /proc still decides
    v = verdict(d)
    assert v.status is Status.OK, v.summary
    e = next(e for e in v.evidence if e.what == "installed NVIDIA module (next boot)")
    assert MODINFO_NOT_FOUND in e.value


def test_a_fake_tree_never_runs_the_machines_modinfo(tmp_path):
    d = probe.read_tree(tree(tmp_path))
    assert d["installed_version"] is None and "reads the running system only" in d["errors"]["installed_version"]


def test_modinfo_licence_tells_the_flavour_where_proc_and_taint_do_not(tmp_path):
    """The NVRM line unrecognised, the taint unreadable: the installed module's licence decides,
    when its version is the loaded one's."""
    root = tree(tmp_path, nvrm="NVRM version: something else\n", sys_version="580.95.05")
    (root / "sys/module/nvidia/taint").mkdir()  # unreadable as a file
    text = MODINFO_OPEN_515.replace("515.48.07", "580.95.05")
    d = probe.read_tree(root, modinfo=runner(README_LICENSE_PROPRIETARY + "version:        580.95.05\n"))
    assert d["flavour"] == "proprietary" and "modinfo nvidia: license NVIDIA" in d["sources"]["flavour"]
    d = probe.read_tree(root, modinfo=runner(text))
    assert d["flavour"] == "open"
    d = probe.read_tree(root, modinfo=runner(MODINFO_OPEN_515))  # installed 515, loaded 580: not the same module
    assert d["flavour"] is None


def _fake_modinfo(tmp_path: Path, body: str) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    exe = bindir / "modinfo"
    exe.write_text("#!/bin/sh\n" + body)
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)


def test_run_modinfo_real_subprocess_output_error_and_timeout(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "bin") + os.pathsep + os.environ.get("PATH", ""))
    _fake_modinfo(tmp_path, f"cat <<'EOF'\n{MODINFO_OPEN_515}EOF\n")
    text, why = probe.run_modinfo()
    assert why is None and probe.parse_modinfo(text or "")["version"] == "515.48.07"
    _fake_modinfo(tmp_path, f"echo '{MODINFO_NOT_FOUND}' >&2\nexit 1\n")
    assert probe.run_modinfo() == (None, f"modinfo nvidia exited 1: {MODINFO_NOT_FOUND}")
    _fake_modinfo(tmp_path, "exec sleep 5\n")
    monkeypatch.setattr(probe, "MODINFO_TIMEOUT_S", 0.3)
    text, why = probe.run_modinfo()
    assert text is None and "no answer within 0.3 s" in (why or "")


# --- real NVRM lines ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text,want", [(NVRM_X86_PROPRIETARY_535, ("proprietary", "535.183.06")),
                                       (NVRM_X86_OPEN_525, ("open", "525.60.11"))])
def test_real_nvrm_lines(text, want):
    assert probe.parse_nvrm(text) == want


# --- the driver/library mismatch -----------------------------------------------------------------------


@pytest.mark.parametrize("text", NVIDIA_SMI_MISMATCH + [PYNVML_MISMATCH])
def test_mismatch_words_are_recognised(text):
    assert g13.nvml_mismatch(text)


@pytest.mark.parametrize("text", NOT_A_MISMATCH)
def test_other_nvml_failures_are_not_a_mismatch(text):
    assert not g13.nvml_mismatch(text)


def _mismatch_backend() -> fake_nvml.FakeNvml:
    fake = fake_nvml.gb10()

    def refuse() -> None:
        raise pynvml.NVMLError(pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH)

    fake.nvmlInit = refuse  # type: ignore[method-assign]
    return fake


def test_nvml_refusing_with_the_mismatch_fails_with_the_reboot_fix(tmp_path):
    """nvmlInit raising NVML_ERROR_LIB_RM_VERSION_MISMATCH (the real pynvml exception) through the
    NVML probe, then G13: fail, the reboot fix, the loaded module named."""
    with fake_nvml.installed(_mismatch_backend()):
        reading = nvml.read_static(Config())
    assert reading.data is None and "LIB_RM_VERSION_MISMATCH" in (reading.error or "")
    v = g13.judge(readings_of(driver_flavour=facts(tmp_path), nvml=reading), CFG)
    assert v.status is Status.FAIL, v.summary
    assert v.summary.startswith("NVML refuses: driver/library version mismatch")
    assert "loaded module 580.95.05 is the old one" in v.summary
    assert "no known-bad entry matches" in v.summary
    assert "sudo reboot" in v.fix and "modinfo -F version nvidia" in v.fix
    assert any(e.what == "NVML" and "LIB_RM_VERSION_MISMATCH" in str(e.value) for e in v.evidence)


@pytest.mark.parametrize("text", NVIDIA_SMI_MISMATCH)
def test_a_recorded_nvml_error_in_nvidia_smis_words_fails_too(tmp_path, text):
    r = Reading("nvml", None, error=text, source="NVML", started_at=1.0)
    assert g13.judge(readings_of(driver_flavour=facts(tmp_path), nvml=r), CFG).status is Status.FAIL


def test_mismatch_fails_even_when_the_driver_facts_are_unread():
    r = Reading("nvml", None, error="nvmlInit failed: LIB_RM_VERSION_MISMATCH (RM has detected an NVML/RM version "
                "mismatch.)", source="NVML", started_at=1.0)
    v = g13.judge(readings_of(driver_flavour=None, nvml=r), CFG)
    assert v.status is Status.FAIL and "sudo reboot" in v.fix and "cannot tell: driver facts unread" in v.summary


@pytest.mark.parametrize("text", NOT_A_MISMATCH)
def test_other_nvml_failures_leave_g13_as_it_was(tmp_path, text):
    r = Reading("nvml", None, error=text, source="NVML", started_at=1.0)
    v = g13.judge(readings_of(driver_flavour=facts(tmp_path), nvml=r), CFG)
    assert v.status is Status.OK and "sudo reboot" not in v.fix


# --- a pending reboot ----------------------------------------------------------------------------------


def test_installed_driver_newer_than_loaded_fails(tmp_path):
    """Driver 580.126.09 (the DGX OS 7.4.0 driver, NVIDIA forum thread 366026) installed while 580.95.05 runs."""
    d = facts(tmp_path, runner(MODINFO_OPEN_515.replace("515.48.07", "580.126.09")))
    v = verdict(d)
    assert v.status is Status.FAIL
    assert v.summary.startswith("driver 580.126.09 is installed but 580.95.05 is loaded: a reboot is pending")
    assert "# loaded module 580.95.05, installed 580.126.09" in v.fix and "sudo reboot" in v.fix


def test_installed_proprietary_module_is_named_in_the_pending_reboot(tmp_path):
    text = README_LICENSE_PROPRIETARY + "version:        580.126.09\n"
    v = verdict(facts(tmp_path, runner(text)))
    assert v.status is Status.FAIL and "(and the installed module is proprietary)" in v.summary


def test_same_driver_installed_and_loaded_is_ok(tmp_path):
    v = verdict(facts(tmp_path, runner(MODINFO_OPEN_515.replace("515.48.07", "580.95.05"))))
    assert v.status is Status.OK and "reboot" not in v.summary


def test_newer_kernel_with_the_reboot_flag_fails(tmp_path):
    root = tree(tmp_path)
    kernels(root, "6.11.0-1016-nvidia", "6.17.0-1031-nvidia", leftover=("6.17.0-1099-nvidia",))
    reboot_flag(root, "linux-image-6.17.0-1031-nvidia\nlinux-base\n")
    d = probe.read_tree(root)
    assert d["kernels_installed"] == ["6.11.0-1016-nvidia", "6.17.0-1031-nvidia"]  # the leftover has no kernel/
    assert d["reboot_required"] is True and d["reboot_required_pkgs"] == ["linux-image-6.17.0-1031-nvidia", "linux-base"]
    v = verdict(d)
    assert v.status is Status.FAIL
    assert v.summary.startswith("kernel 6.17.0-1031-nvidia is installed but 6.11.0-1016-nvidia runs")
    flag = next(e for e in v.evidence if e.what == "reboot required (Ubuntu's flag)")
    assert flag.value == "yes: linux-image-6.17.0-1031-nvidia, linux-base"


def test_newer_kernel_without_the_flag_is_evidence_not_a_failure(tmp_path):
    """Booted before and not chosen (pinned in GRUB?): no reboot is pending."""
    root = tree(tmp_path)
    kernels(root, "6.11.0-1016-nvidia", "6.17.0-1031-nvidia")
    (root / "var/run").mkdir(parents=True)
    v = verdict(probe.read_tree(root))
    assert v.status is Status.OK, v.summary
    assert next(e for e in v.evidence if e.what == "reboot required (Ubuntu's flag)").value == "no"


def test_flag_naming_a_driver_package_fails_without_versions_to_compare(tmp_path):
    root = tree(tmp_path)
    reboot_flag(root, "nvidia-dkms-580-open\nlibnvidia-compute-580\n")
    v = verdict(probe.read_tree(root))
    assert v.status is Status.FAIL and v.summary.startswith("a reboot is pending for nvidia-dkms-580-open")


def test_flag_for_other_packages_only_is_not_g13s_failure(tmp_path):
    root = tree(tmp_path)
    reboot_flag(root, "libc6\ndbus\n")
    v = verdict(probe.read_tree(root))
    assert v.status is Status.OK, v.summary


def test_a_hostile_pkgs_file_keeps_only_package_names(tmp_path):
    root = tree(tmp_path)
    reboot_flag(root, "linux-image-7.0.0-1019-nvidia\n\x1b[2J$(reboot)\n" + "x" * 500 + "\n")
    d = probe.read_tree(root)
    assert d["reboot_required_pkgs"] == ["linux-image-7.0.0-1019-nvidia"]


# --- 7.0.0-1019-nvidia -------------------------------------------------------------------------------------


def test_kernel_7_0_0_1019_nvidia_is_known_bad_with_its_sources(tmp_path):
    v = verdict(facts(tmp_path, release="7.0.0-1019-nvidia"))
    assert v.status is Status.WARN
    assert "kernel-7.0.0-1019-nvidia-no-cma" in v.summary
    e = next(e for e in v.evidence if e.what == "known issue kernel-7.0.0-1019-nvidia-no-cma")
    assert "luxingcom/aicad-nccl-optimization issue #1" in e.source and "CmaTotal: 0 kB" in e.value
    assert "Boot another kernel" in v.fix


@pytest.mark.parametrize("release", ["6.17.0-1031-nvidia", "7.0.0-1018-nvidia", "7.0.0-10190-nvidia"])
def test_neighbouring_kernels_are_not_that_entry(tmp_path, release):
    v = verdict(facts(tmp_path, release=release), nvml=GB10_NVML)
    assert "no-cma" not in v.summary and v.status is Status.OK, v.summary


def test_no_driver_loaded_names_the_installed_module(tmp_path):
    root = tree(tmp_path, nvrm=None, module_dir=False, gpu_info=None)
    d = probe.read_tree(root, modinfo=runner(README_LICENSE_PROPRIETARY + "version:        580.95.05\n"))
    v = verdict(d, nvml=None)
    assert v.status is Status.UNKNOWN and v.summary.startswith("no NVIDIA driver loaded")
    assert v.summary.endswith("; installed for this kernel: the proprietary module 580.95.05 (modinfo)")


def test_the_cards_fix_includes_the_reboot():
    assert "modinfo -F version nvidia" in g13.FIX and "sudo reboot" in g13.FIX


def test_newer_kernel_with_a_flag_raised_by_other_packages_only_is_not_pending(tmp_path):
    """The flag is up for libc6; the newer kernel was installed before an earlier reboot and not
    chosen: no kernel waits for this reboot."""
    root = tree(tmp_path)
    kernels(root, "6.11.0-1016-nvidia", "6.17.0-1031-nvidia")
    reboot_flag(root, "libc6\n")
    assert verdict(probe.read_tree(root)).status is Status.OK
    reboot_flag(root, None)  # the flag with no package list: the newer kernel is the likely cause
    (root / "var/run/reboot-required.pkgs").unlink()
    assert verdict(probe.read_tree(root)).status is Status.FAIL
