"""G13: driver and kernel flavour. Fake /proc and /sys trees in tmp_path (layouts and NVRM lines as
the driver writes them), the known-bad table's loader, and the judge's verdicts and evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.verdict import Status
from sparktui.gotchas import g13_driver_flavour as g13
from sparktui.probes import driver_flavour as probe
from tests.conftest import readings_of
from tests.gotchas.builders import CFG, GB10_NVML, H100_NVML, g13_verdict as verdict
from tests.gotchas.builders import driver_tree as tree

PROP_NVRM = ("NVRM version: NVIDIA UNIX aarch64 Kernel Module  {v}  Tue Sep 23 09:55:41 UTC 2025\n"
             "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04) \n")
X86_PROP_NVRM = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  {v}  Thu Feb 22 01:44:30 UTC 2024\n"


def ev(v, what):
    hits = [e for e in v.evidence if e.what == what]
    assert hits, f"no evidence {what!r} in {[e.what for e in v.evidence]}"
    return hits[0]


# ----------------------------------------------------------------------------- the probe


def test_open_module_tree(tmp_path):
    d = probe.read_tree(tree(tmp_path))
    assert d["module_loaded"] is True
    assert d["flavour"] == "open"
    assert d["sources"]["flavour"].endswith("proc/driver/nvidia/version")
    assert d["driver_version"] == "580.95.05" and d["driver_branch"] == 580
    assert d["nvrm_line"].startswith("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64")
    assert d["kernel_release"] == "6.11.0-1016-nvidia" and d["kernel_flavour"] == "nvidia"
    assert d["architecture"] == "aarch64"
    assert d["gpu_name"] == "NVIDIA GB10"
    assert d["bios_version"] == "5.36_0ACUM018" and d["bios_date"] == "10/24/2025"
    assert d["module_taint"] == ""  # sysfs has no taint file: the module taints nothing
    assert d["known_bad"]["error"] is None and len(d["known_bad"]["entries"]) == 4


def test_proprietary_module_tree(tmp_path):
    d = probe.read_tree(tree(tmp_path, nvrm=PROP_NVRM, taint="PO"))
    assert d["flavour"] == "proprietary"
    assert d["driver_version"] == "580.95.05" and d["driver_branch"] == 580
    assert d["module_taint"] == "PO"


def test_x86_proprietary_line(tmp_path):
    d = probe.read_tree(tree(tmp_path, nvrm=X86_PROP_NVRM, version="550.54.14", arch="x86_64"))
    assert (d["flavour"], d["driver_version"], d["driver_branch"]) == ("proprietary", "550.54.14", 550)


@pytest.mark.parametrize("taint,flavour", [("P", "proprietary"), ("POE", "proprietary"), ("OE", "open"), ("O", "open")])
def test_flavour_from_taint_without_proc_version(tmp_path, taint, flavour):
    d = probe.read_tree(tree(tmp_path, nvrm=None, sys_version="580.95.05", taint=taint))
    assert d["flavour"] == flavour
    assert "taint" in d["sources"]["flavour"]
    assert d["driver_version"] == "580.95.05"
    assert d["sources"]["driver_version"].endswith("sys/module/nvidia/version")


def test_no_driver_at_all(tmp_path):
    d = probe.read_tree(tree(tmp_path, nvrm=None, module_dir=False, gpu_info=None))
    assert d["module_loaded"] is False
    for k in ("flavour", "driver_version", "driver_branch"):
        assert d[k] is None
        assert "no NVIDIA kernel module loaded" in d["errors"][k]
        assert "sys/module/nvidia" in d["errors"][k]
    assert d["kernel_release"] == "6.11.0-1016-nvidia"  # the rest is still read


def test_garbage_version_file_and_unreadable_taint(tmp_path):
    tree(tmp_path, nvrm="garbage\x01 not a driver line\n", module_dir=True)
    (tmp_path / "sys/module/nvidia/taint").mkdir()  # unreadable as a file
    d = probe.read_tree(tmp_path)
    assert d["flavour"] is None
    assert "no recognisable 'NVRM version:' line" in d["errors"]["flavour"]
    assert "is a folder" in d["errors"]["flavour"]
    assert d["driver_version"] is None and "version" in d["errors"]["driver_version"]
    assert d["driver_branch"] is None


def test_binary_file_is_not_text(tmp_path):
    tree(tmp_path, nvrm=None, sys_version=None)
    (tmp_path / "sys/module/nvidia/version").write_bytes(b"\x00\x01\x02")
    d = probe.read_tree(tmp_path)
    assert d["driver_version"] is None
    assert "binary content" in d["errors"]["driver_version"]


@pytest.mark.parametrize("release,flavour", [("6.17.0-1008-nvidia", "nvidia"), ("6.11.0-1016-nvidia-64k", "nvidia-64k"),
                                             ("6.8.0-87-generic", "generic"), ("6.18.44-fc-v1252", None), ("6.8.0", None)])
def test_kernel_flavour(tmp_path, release, flavour):
    d = probe.read_tree(tree(tmp_path, release=release))
    assert d["kernel_release"] == release
    assert d["kernel_flavour"] == flavour
    if flavour is None:
        assert "no Ubuntu-style flavour suffix" in d["errors"]["kernel_flavour"]


def test_missing_kernel_arch_bios_in_a_fake_tree(tmp_path):
    d = probe.read_tree(tree(tmp_path, release=None, arch=None, bios=False))
    for k in ("kernel_release", "architecture", "bios_version", "bios_date"):
        assert d[k] is None and "absent" in d["errors"][k]
    assert d["errors"]["kernel_flavour"] == "kernel release unread"


def test_read_never_raises_and_names_the_probe(tmp_path):
    r = probe.read(CFG, root=str(tmp_path / "nothing-here"))
    assert r.probe == "driver_flavour" and r.data is not None and r.data["module_loaded"] is False


def test_probe_is_registered():
    from sparktui.core.shapes import SHAPES
    from sparktui.probes import names

    assert "driver_flavour" in names() and SHAPES["driver_flavour"].__name__ == "DriverFlavourData"


# ----------------------------------------------------------------------------- the table


def test_shipped_table_is_valid_and_sourced():
    kb = probe.load_known_bad()
    assert kb["error"] is None and kb["updated"] == "2026-12-05"
    by_id = {e["id"]: e for e in kb["entries"]}
    assert by_id["gb10-proprietary-module"]["status"] == "fail"
    assert "#3465" in by_id["gb10-proprietary-module"]["source"] and "#3693" in by_id["gb10-proprietary-module"]["source"]
    assert "366026" in by_id["kernel-6.17.0-1008-nvidia-doe-panic"]["source"]
    assert by_id["driver-590-cuda-graph-regression"]["confirmed"] is False
    assert by_id["driver-590-cuda-graph-regression"]["match"] == {"driver_branch": [590]}


GOOD = """schema = 1
updated = 2026-12-01
[[entry]]
id = "x"
status = "warn"
what = "something"
source = "https://example.invalid/1"
added = 2026-12-01
[entry.match]
driver_min = "580.95"
driver_below = "580.105"
"""


@pytest.mark.parametrize("text,needle", [
    ("schema = 1\nupdated = [", "not valid TOML"),
    (GOOD.replace("schema = 1", "schema = 2"), "schema = 2"),
    (GOOD.replace("updated = 2026-12-01", 'updated = "soon"'), "updated must be a date"),
    (GOOD.replace('status = "warn"', 'status = "bad"'), "status must be"),
    (GOOD.replace('what = "something"\n', ""), "what must be a non-empty string"),
    (GOOD.replace("added = 2026-12-01", "added = 12"), "added must be a date"),
    (GOOD.replace('driver_min = "580.95"', 'driver_min = 580.95'), "quoted dotted version"),
    (GOOD.replace('driver_min = "580.95"', 'driver_min = "580.105"'), "the range is empty"),
    (GOOD.replace('driver_min = "580.95"', 'kernel_release = "6.17("'), "bad regular expression"),
    (GOOD.replace('driver_min = "580.95"', 'gpu_model = "GB10"'), "unknown match field"),
    (GOOD.replace('driver_min = "580.95"', 'module_flavour = "closed"'), 'must be "open" or "proprietary"'),
    (GOOD.replace('driver_min = "580.95"', 'driver_branch = "590"'), "branch number"),
    (GOOD.split("[entry.match]")[0], "[entry.match] is missing"),
    (GOOD + GOOD.split("updated = 2026-12-01\n")[1], "duplicate id"),
    (GOOD.replace('id = "x"', 'idx = "x"'), "id must be"),
])
def test_malformed_table_is_an_error_with_the_reason(tmp_path, text, needle):
    p = tmp_path / "kb.toml"
    p.write_text(text)
    kb = probe.load_known_bad(p)
    assert kb["entries"] == [] and kb["updated"] is None
    assert kb["error"] is not None and needle in kb["error"], kb["error"]
    assert str(p) in kb["error"]


def test_good_custom_table_loads(tmp_path):
    p = tmp_path / "kb.toml"
    p.write_text(GOOD)
    kb = probe.load_known_bad(p)
    assert kb["error"] is None and kb["entries"][0]["match"] == {"driver_min": "580.95", "driver_below": "580.105"}


def test_missing_and_non_utf8_table(tmp_path):
    assert "no such file" in probe.load_known_bad(tmp_path / "none.toml")["error"]
    p = tmp_path / "bad.toml"
    p.write_bytes(b"\xff\xfe\x00")
    assert "not UTF-8" in probe.load_known_bad(p)["error"]


# ----------------------------------------------------------------------------- the judge


def test_gb10_proprietary_fails_with_source_date_and_filled_fix(tmp_path):
    v = verdict(probe.read_tree(tree(tmp_path, nvrm=PROP_NVRM, taint="PO")))
    assert v.status is Status.FAIL
    assert "gb10-proprietary-module" in v.summary
    e = ev(v, "known issue gb10-proprietary-module")
    assert e.source == "Start9Labs issues #3465, #3693"
    assert "Xid 169" in e.value and "added 2026-12-04" in e.value
    assert "sudo apt-get install nvidia-driver-580-open" in v.fix
    assert "linux-modules-nvidia-580-open-$(uname -r)" in v.fix
    assert "580.95.05" in v.fix
    assert ev(v, "NVIDIA kernel module flavour").value == "proprietary"


def test_gb10_open_module_is_ok_with_count_and_date(tmp_path):
    v = verdict(probe.read_tree(tree(tmp_path)))
    assert v.status is Status.OK, v.summary
    assert "no known issue for these versions" in v.summary
    assert "4 entries checked, data of 2026-12-05" in v.summary
    assert ev(v, "driver version").value == "580.95.05"
    assert ev(v, "firmware (BIOS) version").value == "5.36_0ACUM018"
    assert v.fix == ""


def test_gb10_by_proc_name_when_nvml_failed(tmp_path):
    # the proprietary module failed to initialise: NVML has nothing, /proc still names the GPU
    v = verdict(probe.read_tree(tree(tmp_path, nvrm=PROP_NVRM)), nvml=None)
    assert v.status is Status.FAIL
    assert "/proc/driver/nvidia/gpus" in ev(v, "GPU is a GB10").value


def test_aarch64_proprietary_unnamed_gpu_is_a_warning(tmp_path):
    v = verdict(probe.read_tree(tree(tmp_path, nvrm=PROP_NVRM, gpu_info=None)), nvml=None)
    assert v.status is Status.WARN
    assert "if this is a GB10" in v.summary
    assert "nvidia-driver-580-open" in v.fix


def test_proprietary_elsewhere_is_not_the_gb10_rule(tmp_path):
    v = verdict(probe.read_tree(tree(tmp_path, nvrm=X86_PROP_NVRM, arch="x86_64", gpu_info=None,
                                     release="6.8.0-87-generic")), nvml=H100_NVML)
    assert v.status is Status.OK, v.summary
    assert ev(v, "GPU is a GB10").value.startswith("no: NVIDIA H100")


def test_x86_unnamed_gpu_is_known_not_gb10(tmp_path):
    v = verdict(probe.read_tree(tree(tmp_path, nvrm=X86_PROP_NVRM, arch="x86_64", gpu_info=None,
                                     release="6.8.0-87-generic")), nvml=None)
    assert v.status is Status.OK, v.summary


@pytest.mark.parametrize("release,status", [
    ("6.17.0-1008-nvidia", Status.WARN), ("6.17.0-1008-nvidia-64k", Status.WARN),
    ("6.17.0-1007-nvidia", Status.OK), ("6.17.0-1009-nvidia", Status.OK),
    ("6.17.0-10080-nvidia", Status.OK), ("6.17.0-1008-generic", Status.OK), ("16.17.0-1008-nvidia", Status.OK),
])
def test_kernel_pattern(tmp_path, release, status):
    v = verdict(probe.read_tree(tree(tmp_path, release=release)))
    assert v.status is status, v.summary
    if status is Status.WARN:
        e = ev(v, "known issue kernel-6.17.0-1008-nvidia-doe-panic")
        assert "366026" in e.source and "DOE mailbox" in e.value
        assert "linux-image" in v.fix


@pytest.mark.parametrize("version,status", [("589.99.99", Status.OK), ("590.44.01", Status.WARN),
                                            ("590.0", Status.WARN), ("591.0", Status.OK)])
def test_590_branch_unconfirmed(tmp_path, version, status):
    v = verdict(probe.read_tree(tree(tmp_path, version=version)))
    assert v.status is status, v.summary
    if status is Status.WARN:
        assert "unconfirmed" in v.summary
        assert any("unconfirmed report" in d for d in v.details)
        assert "driver branch 590 is loaded" in v.fix


@pytest.mark.parametrize("version,status", [("580.94.99", Status.OK), ("580.95", Status.WARN), ("580.95.05", Status.WARN),
                                            ("580.104.99", Status.WARN), ("580.105", Status.OK), ("580.105.1", Status.OK)])
def test_driver_range_edges(tmp_path, version, status):
    p = tmp_path / "kb.toml"
    p.write_text(GOOD)
    d = probe.read_tree(tree(tmp_path / "root", version=version), known_bad=p)
    v = verdict(d)
    assert v.status is status, v.summary
    if status is Status.OK:
        assert "1 entries checked, data of 2026-12-01" in v.summary
    else:
        assert ev(v, "known issue x").source == "https://example.invalid/1"


def test_no_driver_is_unknown_and_says_so(tmp_path):
    v = verdict(probe.read_tree(tree(tmp_path, nvrm=None, module_dir=False, gpu_info=None)), nvml=None)
    assert v.status is Status.UNKNOWN
    assert v.summary.startswith("no NVIDIA driver loaded")
    assert "modprobe nvidia" in v.fix


def test_no_driver_but_bad_kernel_still_warns(tmp_path):
    v = verdict(probe.read_tree(tree(tmp_path, nvrm=None, module_dir=False, gpu_info=None,
                                     release="6.17.0-1008-nvidia")), nvml=None)
    assert v.status is Status.WARN
    assert "no NVIDIA kernel module is loaded" in v.summary


def test_unreadable_flavour_is_unknown(tmp_path):
    tree(tmp_path, nvrm="garbage\n")
    (tmp_path / "sys/module/nvidia/taint").mkdir()
    v = verdict(probe.read_tree(tmp_path))
    assert v.status is Status.UNKNOWN
    assert "could not be read" in v.summary and "is a folder" in v.summary


def test_unreadable_kernel_needed_by_an_entry_is_unknown(tmp_path):
    v = verdict(probe.read_tree(tree(tmp_path, release=None)))
    assert v.status is Status.UNKNOWN
    assert "kernel-6.17.0-1008-nvidia-doe-panic needs kernel_release" in v.summary


def test_malformed_table_is_unknown_with_the_reason(tmp_path):
    p = tmp_path / "kb.toml"
    p.write_text("schema = 1\nupdated = [")
    v = verdict(probe.read_tree(tree(tmp_path / "root"), known_bad=p))
    assert v.status is Status.UNKNOWN
    assert "not valid TOML" in v.summary
    assert ev(v, "known-bad table").value.startswith("unusable")


def test_missing_reading_is_unknown():
    r = readings_of(nvml=GB10_NVML)
    r.add(Reading("driver_flavour", None, error="probe crashed: boom", started_at=1.0))
    v = g13.judge(r, CFG)
    assert v.status is Status.UNKNOWN and "boom" in v.summary


def test_branch_unknown_fix_reads_it_from_sysfs():
    assert "nvidia-driver-$(cut -d. -f1 /sys/module/nvidia/version)-open" in g13.open_module_fix(None, None)


def test_gotcha_object():
    G = g13.GOTCHA
    assert (G.id, G.title) == ("G13", "Driver and kernel flavour")
    assert G.probes == ("driver_flavour", "nvml") and G.intrusive is False
    assert G.judge.__wrapped__ is g13.judge  # behind the shape check (gotchas/base.py)


@pytest.mark.parametrize("kw", [{}, {"nvrm": PROP_NVRM, "taint": "PO"}, {"nvrm": None, "module_dir": False, "gpu_info": None},
                                {"release": None, "arch": None, "bios": False}])
def test_reading_holds_its_declared_shape(tmp_path, kw):
    from tests.test_types import assert_shape

    assert_shape(probe.read(CFG, root=str(tree(tmp_path, **kw))))


def test_reading_with_a_broken_table_holds_its_shape(tmp_path):
    from tests.test_types import assert_shape

    p = tmp_path / "kb.toml"
    p.write_text("nonsense = ")
    assert_shape(probe.read(CFG, root=str(tree(tmp_path / "root")), known_bad=p))


def test_live_machine_reading_holds_its_shape():
    from tests.test_types import assert_shape

    assert_shape(probe.read(CFG))  # whatever this machine has: never a traceback


# Measured on an NVIDIA H200 host (driver 580.159.04, open module), 2026-12-04: the files verbatim.
H200_NVRM = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)  \n"
             "GCC version:  gcc version 15.3.0 (GCC) \n")
H200_INFO = "Model: \t\t NVIDIA H200\nIRQ:   \t\t 41\nGPU UUID: \t GPU-71d77b8c-ab90-b9b3-2603-3a12a187b7aa\n"


def test_measured_h200_tree(tmp_path):
    root = tree(tmp_path, nvrm=H200_NVRM, sys_version="580.159.04", taint="O", gpu_info=H200_INFO,
                release="6.18.44-fc-v1252-gpu", arch="x86_64", bios=False)
    d = probe.read_tree(root)
    assert (d["flavour"], d["driver_version"], d["driver_branch"]) == ("open", "580.159.04", 580)
    assert d["gpu_name"] == "NVIDIA H200" and d["module_taint"] == "O"
    assert d["kernel_flavour"] is None  # not an Ubuntu release
    # the same host as the taint file alone would show it
    (root / "proc/driver/nvidia/version").unlink()
    assert probe.read_tree(root)["flavour"] == "open"
    v = verdict(probe.read_tree(root), nvml=None)
    assert v.status is Status.OK, v.summary
    assert ev(v, "GPU is a GB10").value.startswith("no: NVIDIA H200")


@pytest.mark.parametrize("entries", [["not a table"], [{"id": "x", "status": "maybe", "what": "w", "source": "s",
                                                          "added": "2026-12-04", "match": {"driver_branch": [590]}}],
                                     [{"id": "x", "status": "warn", "what": "w", "source": "s", "added": "2026-12-04", "match": {}}]])
def test_garbage_entries_in_a_recording_are_unknown_not_a_crash(tmp_path, entries):
    d = probe.read_tree(tree(tmp_path))
    d["known_bad"]["entries"] = entries
    v = verdict(d)
    assert v.status is Status.UNKNOWN and "malformed" in v.summary


def test_garbage_fact_types_in_a_recording_do_not_crash(tmp_path):
    d = probe.read_tree(tree(tmp_path))
    d["kernel_release"], d["driver_branch"] = 6, "590"
    v = verdict(d)
    assert v.status is Status.UNKNOWN and "needs" in v.summary


# ----------------------------------------------------------------------------- [driver] known_bad


USER_ONE = """schema = 1
updated = 2026-12-03
[[entry]]
id = "site-580-95-05"
status = "warn"
what = "580.95.05 hangs our NCCL all-reduce on the two-Spark link"
source = "https://wiki.example.invalid/spark/incident-42"
added = 2026-12-03
[entry.match]
module_flavour = "open"
driver_min = "580.95.05"
driver_below = "580.95.6"
"""


def _cfg_file(tmp_path: Path, table: str) -> Config:
    from sparktui.core.config import load_config
    c = tmp_path / "config.toml"
    c.write_text(f'[driver]\nknown_bad = "{table}"\n')
    return load_config(c)


def test_config_setting_is_declared_and_defaults_to_unset(tmp_path):
    assert Config().driver.known_bad is None
    assert _cfg_file(tmp_path, "/x/kb.toml").driver.known_bad == "/x/kb.toml"
    from sparktui.core.config import ConfigError, load_config
    c = tmp_path / "bad.toml"
    c.write_text("[driver]\nknown_bad = 3\n")
    with pytest.raises(ConfigError, match=r"\[driver\] known_bad: expected a string"):
        load_config(c)


def test_user_table_with_one_matching_entry_warns_with_its_source(tmp_path):
    kb = tmp_path / "my_known_bad.toml"
    kb.write_text(USER_ONE)
    cfg = _cfg_file(tmp_path, str(kb))
    r = probe.read(cfg, root=str(tree(tmp_path / "root", version="580.95.05")))
    d = r.data
    assert d["known_bad"]["path"] == str(kb) and d["known_bad"]["error"] is None
    assert [e["id"] for e in d["known_bad"]["entries"]] == ["site-580-95-05"]  # used instead, not merged
    v = verdict(d)
    assert v.status is Status.WARN, v.summary
    assert "site-580-95-05" in v.summary
    e = ev(v, "known issue site-580-95-05")
    assert e.source == "https://wiki.example.invalid/spark/incident-42" and "NCCL all-reduce" in e.value
    assert ev(v, "known-bad table").source == str(kb)
    # just past the entry's range: the same user table, nothing matches
    v2 = verdict(probe.read(cfg, root=str(tree(tmp_path / "root2", version="580.95.6"))).data)
    assert v2.status is Status.OK and "1 entries checked, data of 2026-12-03" in v2.summary


def test_user_table_replaces_the_shipped_one(tmp_path):
    # a proprietary module on a GB10 fails with the shipped table; the user table has no such entry
    kb = tmp_path / "kb.toml"
    kb.write_text(USER_ONE)
    root = str(tree(tmp_path / "root", nvrm=PROP_NVRM, version="580.95.05"))
    assert verdict(probe.read(CFG, root=root).data).status is Status.FAIL
    v = verdict(probe.read(_cfg_file(tmp_path, str(kb)), root=root).data)
    assert v.status is Status.OK, v.summary


def test_tilde_in_the_setting_is_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "kb.toml").write_text(USER_ONE)
    d = probe.read(_cfg_file(tmp_path, "~/kb.toml"), root=str(tree(tmp_path / "root"))).data
    assert d["known_bad"]["path"] == str(tmp_path / "kb.toml") and d["known_bad"]["error"] is None


@pytest.mark.parametrize("content,needle", [
    (USER_ONE.replace('status = "warn"', 'status = "maybe"'), "status must be"),
    ("schema = 1\nupdated = [", "not valid TOML"),
    (None, "no such file"),
    ("dir", "is a folder"),
])
def test_unusable_user_table_is_unknown_naming_it(tmp_path, content, needle):
    kb = tmp_path / "my_known_bad.toml"
    if content == "dir":
        kb.mkdir()
    elif content is not None:
        kb.write_text(content)
    cfg = _cfg_file(tmp_path, str(kb))
    # a proprietary module on a GB10: the shipped table would say fail; the broken user table must not
    r = probe.read(cfg, root=str(tree(tmp_path / "root", nvrm=PROP_NVRM)))
    d = r.data
    assert d["known_bad"]["entries"] == [] and d["known_bad"]["path"] == str(kb)
    err = d["known_bad"]["error"]
    assert needle in err and str(kb) in err and "[driver] known_bad" in err and str(tmp_path / "config.toml") in err
    v = verdict(d)
    assert v.status is Status.UNKNOWN, v.summary
    assert str(kb) in v.summary and needle in v.summary
    assert str(kb) in v.fix and "known-bad table" in [e.what for e in v.evidence]


def test_unset_setting_reads_the_shipped_table(tmp_path):
    d = probe.read(Config(), root=str(tree(tmp_path))).data
    assert d["known_bad"]["path"] == str(probe.SHIPPED_KNOWN_BAD) and d["known_bad"]["error"] is None
    assert {e["id"] for e in d["known_bad"]["entries"]} >= {"gb10-proprietary-module", "kernel-6.17.0-1008-nvidia-doe-panic"}
    assert probe.known_bad_path(Config()) is None


def test_explicit_argument_wins_over_the_setting(tmp_path):
    good = tmp_path / "good.toml"
    good.write_text(USER_ONE)
    cfg = _cfg_file(tmp_path, str(tmp_path / "absent.toml"))
    d = probe.read(cfg, root=str(tree(tmp_path / "root")), known_bad=good).data
    assert d["known_bad"]["path"] == str(good) and d["known_bad"]["error"] is None
