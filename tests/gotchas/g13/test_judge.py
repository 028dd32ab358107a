"""G13 judge, pinned: the facts a user acts on in each verdict path (which evidence, its source and
value, the commands of the fix filled from the reading), the matching rule of every table field,
and how a GB10 is recognised. Readings are given as the probe returns them (plain dicts), no files."""

from __future__ import annotations

import copy

import pytest

from sparktui.core.readings import Reading
from sparktui.core.verdict import Status
from sparktui.gotchas import g13_driver_flavour as g13
from sparktui.probes import driver_flavour as probe
from tests.conftest import readings_of
from tests.gotchas.builders import CFG, GB10_NVML, H100_NVML, g13_verdict as verdict

SHIPPED = probe.load_known_bad()
PROC = "/proc/driver/nvidia/version"


def facts(**kw):
    """A driver_flavour reading of a healthy GB10 (open module 580.95.05), as the probe builds it."""
    d = {"root": "/", "module_loaded": True, "module_taint": "", "flavour": "open", "driver_version": "580.95.05",
         "driver_branch": 580, "nvrm_line": "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05",
         "gpu_name": "NVIDIA GB10", "kernel_release": "6.11.0-1016-nvidia", "kernel_flavour": "nvidia",
         "architecture": "aarch64", "bios_version": "5.36_0ACUM018", "bios_date": "10/24/2025",
         "sources": {"module_loaded": "/sys/module/nvidia", "flavour": PROC, "driver_version": PROC,
                     "gpu_name": "/proc/driver/nvidia/gpus/000f:01:00.0/information",
                     "kernel_release": "/proc/sys/kernel/osrelease", "architecture": "/proc/sys/kernel/arch",
                     "bios_version": "/sys/class/dmi/id/bios_version", "bios_date": "/sys/class/dmi/id/bios_date"},
         "errors": {}, "known_bad": copy.deepcopy(SHIPPED)}
    d.update(kw)
    return d


def no_driver(**kw):
    err = "no NVIDIA kernel module loaded (/proc/driver/nvidia/version and /sys/module/nvidia absent)"
    base = dict(module_loaded=False, module_taint=None, flavour=None, driver_version=None, driver_branch=None,
                nvrm_line=None, gpu_name=None,
                errors={k: err for k in ("flavour", "driver_version", "driver_branch", "gpu_name", "module_taint")},
                sources={"kernel_release": "/proc/sys/kernel/osrelease", "architecture": "/proc/sys/kernel/arch"})
    base.update(kw)
    return facts(**base)


def entry(id_="x", status="warn", fix="", confirmed=None, **match):
    e = {"id": id_, "status": status, "what": f"what {id_}", "source": f"https://example.invalid/{id_}",
         "added": "2026-12-01", "fix": fix, "match": match}
    if confirmed is not None:
        e["confirmed"] = confirmed
    return e


def table(*entries, updated="2026-12-01", path="/etc/sparktui/kb.toml"):
    return {"path": path, "error": None, "updated": updated, "entries": list(entries)}


def lines(fix):
    """The fix's lines, each stripped: a command a user copies is one whole line."""
    return [ln.strip() for ln in fix.splitlines()]


def ev(v, what):
    hits = [e for e in v.evidence if e.what == what]
    assert len(hits) == 1, f"evidence {what!r}: {[e.what for e in v.evidence]}"
    return hits[0]


# ----------------------------------------------------------------------------- recognising a GB10


def test_gb10_by_capability_alone_fails_the_proprietary_module():
    # NVML names the device generically but reports 12.1: that is the GB10
    nv = {"devices": [{"name": {"value": "NVIDIA Graphics Device"}, "compute_capability": {"value": [12, 1]}}]}
    v = verdict(facts(flavour="proprietary", gpu_name=None), nvml=nv)
    assert v.status is Status.FAIL, v.summary
    assert ev(v, "GPU is a GB10").value == "compute capability 12.1 (NVML nvmlDeviceGetCudaComputeCapability)"


@pytest.mark.parametrize("cap", [[12, 0], [12, 2], [11, 1], [13, 1]])
def test_neighbouring_capabilities_are_not_a_gb10(cap):
    nv = {"devices": [{"name": {"value": "NVIDIA Graphics Device"}, "compute_capability": {"value": cap}}]}
    v = verdict(facts(flavour="proprietary", gpu_name=None), nvml=nv)
    assert v.status is Status.OK, v.summary
    assert ev(v, "GPU is a GB10").value == f"no: NVIDIA Graphics Device, capability {cap[0]}.{cap[1]}"


def test_gb10_by_nvml_name_without_capability():
    nv = {"devices": [{"name": {"value": "NVIDIA GB10"}}]}
    v = verdict(facts(flavour="proprietary", gpu_name=None), nvml=nv)
    assert v.status is Status.FAIL, v.summary
    assert ev(v, "GPU is a GB10").value == "NVIDIA GB10 (NVML nvmlDeviceGetName)"


def test_gb10_by_proc_name_in_any_case():
    v = verdict(facts(flavour="proprietary", gpu_name="nvidia gb10"), nvml=None)
    assert v.status is Status.FAIL, v.summary
    assert ev(v, "GPU is a GB10").value == "nvidia gb10 (/proc/driver/nvidia/gpus)"


def test_named_gpu_without_capability_says_capability_unread():
    v = verdict(facts(flavour="proprietary", gpu_name="NVIDIA H200"), nvml=None)
    assert v.status is Status.OK, v.summary
    assert ev(v, "GPU is a GB10").value == "no: NVIDIA H200, capability unread"


def test_other_gpu_names_its_capability():
    v = verdict(facts(flavour="proprietary", gpu_name=None), nvml=H100_NVML)
    assert ev(v, "GPU is a GB10").value == "no: NVIDIA H100 80GB HBM3, capability 9.0"


def test_capability_without_a_name_is_an_unnamed_gpu():
    nv = {"devices": [{"compute_capability": {"value": [9, 0]}}]}
    v = verdict(facts(flavour="proprietary", gpu_name=None), nvml=nv)
    assert v.status is Status.OK, v.summary
    assert ev(v, "GPU is a GB10").value == "no: unnamed, capability 9.0"


def test_x86_host_with_unnamed_gpu_is_not_a_gb10():
    v = verdict(facts(flavour="proprietary", gpu_name=None, architecture="x86_64"), nvml=None)
    assert v.status is Status.OK, v.summary
    assert ev(v, "GPU is a GB10").value.startswith("no: the host is x86_64")


def test_aarch64_unnamed_gpu_with_proprietary_module_warns_with_the_possible_issue():
    v = verdict(facts(flavour="proprietary", gpu_name=None), nvml=None)
    assert v.status is Status.WARN, v.summary
    assert "GPU not named" in ev(v, "GPU is a GB10").value
    e = ev(v, "possible issue gb10-proprietary-module")
    assert e.source == "Start9Labs issues #3465, #3693"
    assert "Xid 169" in e.value and "GPU could not be named" in e.value
    assert "gb10-proprietary-module (if this is a GB10)" in v.summary
    assert "no NVIDIA kernel module" not in v.summary
    assert "sudo apt-get install nvidia-driver-580-open" in v.fix
    assert v.id == "G13"


def test_aarch64_unnamed_gpu_with_a_failing_match_stays_fail():
    # a matched fail entry and the GB10 suspicion together: the fail decides
    kb = table(entry("hard", status="fail", kernel_release="6.11.0-1016-nvidia"),
               dict(copy.deepcopy(SHIPPED["entries"][0])))
    v = verdict(facts(flavour="proprietary", gpu_name=None, known_bad=kb), nvml=None)
    assert v.status is Status.FAIL, v.summary
    assert "hard (fail); gb10-proprietary-module (if this is a GB10)" in v.summary


# ----------------------------------------------------------------------------- the facts as evidence


def test_every_fact_is_evidence_with_its_source():
    v = verdict(facts())
    assert v.status is Status.OK and v.id == "G13"
    want = {"NVIDIA kernel module flavour": ("open", PROC), "driver version": ("580.95.05", PROC),
            "driver branch": (580, "driver_flavour probe"),
            "kernel release": ("6.11.0-1016-nvidia", "/proc/sys/kernel/osrelease"),
            "kernel flavour": ("nvidia", "driver_flavour probe"),
            "architecture": ("aarch64", "/proc/sys/kernel/arch"),
            "firmware (BIOS) version": ("5.36_0ACUM018", "/sys/class/dmi/id/bios_version"),
            "firmware (BIOS) date": ("10/24/2025", "/sys/class/dmi/id/bios_date")}
    for what, (value, source) in want.items():
        e = ev(v, what)
        assert (e.value, e.source) == (value, source), what
    g = ev(v, "GPU is a GB10")
    assert g.source == "NVML / /proc/driver/nvidia/gpus" and g.value.startswith("compute capability 12.1")
    t = ev(v, "known-bad table")
    assert t.source == SHIPPED["path"] and t.value == "4 entries, data of 2026-12-05"


def test_unread_facts_say_why():
    d = no_driver(kernel_release=None, kernel_flavour=None)
    d["errors"]["kernel_release"] = "/proc/sys/kernel/osrelease: absent"
    v = verdict(d, nvml=None)
    assert ev(v, "driver branch").value.startswith("unavailable: no NVIDIA kernel module loaded")
    assert ev(v, "kernel release").value == "unavailable: /proc/sys/kernel/osrelease: absent"
    assert ev(v, "kernel flavour").value == "unavailable: not read"  # no error recorded for it
    assert ev(v, "kernel flavour").source == "driver_flavour probe"


def test_no_sources_at_all_names_the_probe():
    v = verdict(facts(sources=None, errors=None))
    assert ev(v, "driver version").source == "driver_flavour probe"
    assert v.status is Status.OK


# ----------------------------------------------------------------------------- no reading, unusable table


@pytest.mark.parametrize("reading,needle,value", [
    (Reading("driver_flavour", None, error="probe crashed: boom", started_at=1.0), "(probe crashed: boom)",
     "unavailable: probe crashed: boom"),
    (Reading("driver_flavour", {}, started_at=1.0), "(no reading)", "unavailable: not read"),
])
def test_missing_reading_is_unknown_with_evidence(reading, needle, value):
    r = readings_of(nvml=GB10_NVML)
    r.add(reading)
    v = g13.judge(r, CFG)
    assert (v.id, v.status) == ("G13", Status.UNKNOWN)
    assert v.summary.startswith("cannot tell: driver facts unread") and needle in v.summary
    e = ev(v, "driver flavour")
    assert (e.source, e.value) == ("driver_flavour probe", value)


def test_table_error_without_a_path_names_the_shipped_file():
    v = verdict(facts(known_bad={"path": None, "error": "gone", "updated": None, "entries": []}))
    assert (v.id, v.status) == ("G13", Status.UNKNOWN)
    assert v.summary == "cannot check: gone"
    e = ev(v, "known-bad table")
    assert (e.source, e.value) == (g13.DATA_FILE, "unusable: gone")
    assert g13.DATA_FILE in v.fix
    assert ev(v, "driver version").value == "580.95.05"  # the facts are still shown


def test_table_absent_from_the_reading_is_unknown():
    v = verdict(facts(known_bad=None))
    assert (v.id, v.status) == ("G13", Status.UNKNOWN)
    assert v.summary == "cannot check: known-bad table missing"
    e = ev(v, "known-bad table")
    assert (e.source, e.value) == (g13.DATA_FILE, "unusable: no entries list")


def test_table_error_with_a_path_names_that_path():
    v = verdict(facts(known_bad={"path": "/etc/kb.toml", "error": "/etc/kb.toml: not valid TOML", "entries": []}))
    assert ev(v, "known-bad table").source == "/etc/kb.toml"
    assert "/etc/kb.toml" in v.fix


@pytest.mark.parametrize("path,source", [("/etc/kb.toml", "/etc/kb.toml"), (None, g13.DATA_FILE)])
def test_malformed_entry_is_named_by_its_position(path, source):
    kb = table(entry("good", driver_branch=[590]), {"id": "bad"}, path=path)
    v = verdict(facts(known_bad=kb))
    assert (v.id, v.status) == ("G13", Status.UNKNOWN)
    assert "entries [2] are malformed" in v.summary
    e = ev(v, "known-bad table")
    assert (e.source, e.value) == (source, "malformed entries [2] in the reading")
    assert ev(v, "driver version").value == "580.95.05"


def test_table_without_a_date_says_unknown_date():
    v = verdict(facts(known_bad=table(entry(driver_branch=[590]), updated=None)))
    assert v.status is Status.OK
    assert ev(v, "known-bad table").value == "1 entries, data of unknown date"
    assert "1 entries checked, data of unknown date" in v.summary


# ----------------------------------------------------------------------------- matches


def test_entry_without_confirmed_is_confirmed():
    v = verdict(facts(known_bad=table(entry("site", kernel_release="6\\.11\\..*"))))
    assert v.status is Status.WARN
    assert v.summary == "known issue for this driver/kernel: site (warn)"
    assert v.details == ()
    assert ev(v, "known issue site").value == "warn: what site (added 2026-12-01)"
    assert ev(v, "known issue site").source == "https://example.invalid/site"
    assert v.fix == "See https://example.invalid/site."
    assert v.id == "G13"


def test_unconfirmed_entry_is_marked_everywhere():
    v = verdict(facts(known_bad=table(entry("rumour", confirmed=False, driver_branch=[580]))))
    assert v.status is Status.WARN
    assert "rumour (warn, unconfirmed report)" in v.summary
    assert ev(v, "known issue rumour").value == "warn: what rumour (added 2026-12-01, unconfirmed report)"
    assert v.details == ("rumour: a single unconfirmed report (https://example.invalid/rumour): measure before changing drivers",)


def test_two_matches_are_both_named_and_both_fixes_given():
    kb = table(entry("k", fix="kernel", kernel_release="6\\.11\\..*"),
               entry("d", status="fail", fix="driver", driver_branch=[580]))
    v = verdict(facts(known_bad=kb))
    assert v.status is Status.FAIL
    assert v.summary == "known issue for this driver/kernel: k (warn); d (fail)"
    assert v.fix == g13.KERNEL_FIX + "\n" + g13.driver_fix(580, "open")


def test_fail_then_warn_stays_fail():
    kb = table(entry("d", status="fail", driver_branch=[580]), entry("k", kernel_release="6\\.11\\..*"))
    assert verdict(facts(known_bad=kb)).status is Status.FAIL


def test_kernel_fix_commands():
    v = verdict(facts(kernel_release="6.17.0-1008-nvidia"))
    assert v.status is Status.WARN
    assert "kernel-6.17.0-1008-nvidia-doe-panic (warn)" in v.summary
    assert v.fix == g13.KERNEL_FIX
    for cmd in ("sudo apt-get update && sudo apt-get upgrade", "dpkg -l 'linux-image-*' | grep '^ii'", "uname -r"):
        assert cmd in v.fix


def test_590_on_the_proprietary_module_of_another_gpu_advises_the_proprietary_580():
    v = verdict(facts(flavour="proprietary", driver_version="590.44.01", driver_branch=590, gpu_name=None,
                      architecture="x86_64", kernel_release="6.8.0-87-generic", kernel_flavour="generic"),
                nvml=H100_NVML)
    assert v.status is Status.WARN, v.summary
    assert "driver-590-cuda-graph-regression (warn, unconfirmed report)" in v.summary
    assert "gb10-proprietary-module" not in v.summary
    assert "sudo apt-get install nvidia-driver-580      # the DGX OS release branch" in v.fix
    assert "580-open" not in v.fix
    assert "driver branch 590 is loaded" in v.fix and "sudo reboot" in v.fix


def test_590_on_the_open_module_advises_the_open_580():
    v = verdict(facts(driver_version="590.44.01", driver_branch=590))
    assert v.status is Status.WARN
    assert "sudo apt-get install nvidia-driver-580-open      #" in v.fix


def test_proprietary_gb10_fix_is_filled_from_the_reading():
    v = verdict(facts(flavour="proprietary", driver_version="580.82.09", driver_branch=580))
    assert v.status is Status.FAIL
    assert v.summary == "known issue for this driver/kernel: gb10-proprietary-module (fail)"
    assert "# the proprietary module 580.82.09 is loaded; a GB10 needs the open flavour of the same branch" in v.fix
    assert "sudo apt-get install nvidia-driver-580-open     # replaces nvidia-driver-580 (proprietary)" in v.fix
    assert "sudo apt-get install linux-modules-nvidia-580-open-$(uname -r)" in v.fix
    assert "cat /proc/driver/nvidia/version" in v.fix


def test_match_without_a_loaded_module_says_so():
    v = verdict(no_driver(kernel_release="6.17.0-1008-nvidia-64k"), nvml=None)
    assert v.status is Status.WARN
    assert v.summary == ("known issue for this driver/kernel: kernel-6.17.0-1008-nvidia-doe-panic (warn); "
                         "and no NVIDIA kernel module is loaded")


# ----------------------------------------------------------------------------- nothing matched


def test_no_driver_names_the_reason_kernel_and_count():
    v = verdict(no_driver(), nvml=None)
    assert (v.id, v.status) == ("G13", Status.UNKNOWN)
    assert "no NVIDIA kernel module loaded (/proc/driver/nvidia/version" in v.summary
    assert "kernel 6.11.0-1016-nvidia matches none of 4 entries" in v.summary
    assert "sudo modprobe nvidia" in v.fix
    assert lines(v.fix)[-4:] == ["```bash", "sudo apt-get install nvidia-driver-580-open", "sudo reboot", "```"]
    assert ev(v, "NVIDIA kernel module flavour").value.startswith("unavailable: no NVIDIA kernel module loaded")


def test_no_driver_without_errors_or_kernel():
    d = no_driver(errors={}, kernel_release=None, kernel_flavour=None,
                  known_bad=table(entry(driver_branch=[590])))
    v = verdict(d, nvml=None)
    assert v.status is Status.UNKNOWN
    assert "no NVIDIA driver loaded: module absent;" in v.summary
    assert "kernel unread matches none of 1 entries" in v.summary


@pytest.mark.parametrize("unread,named", [(("flavour",), "flavour"), (("driver_version",), "driver_version"),
                                          (("flavour", "driver_version"), "flavour and driver_version")])
def test_loaded_module_with_unread_facts_is_unknown(unread, named):
    d = facts(errors={"flavour": "no recognisable 'NVRM version:' line"}, **{k: None for k in unread})
    if "driver_version" in unread:
        d["driver_branch"] = None
    v = verdict(d)
    assert (v.id, v.status) == ("G13", Status.UNKNOWN)
    assert f"the driver's {named} could not be read" in v.summary
    if "flavour" in unread:
        assert "flavour: no recognisable 'NVRM version:' line" in v.summary
    if "driver_version" in unread:
        assert "driver_version: not read" in v.summary
    if len(unread) == 2:
        assert "(flavour: no recognisable 'NVRM version:' line; driver_version: not read)" in v.summary
    assert lines(v.fix)[-3:-1] == ["cat /proc/driver/nvidia/version", "cat /sys/module/nvidia/version"]
    assert ev(v, "kernel release").value == "6.11.0-1016-nvidia"


def test_entry_needing_two_unread_facts_names_both():
    kb = table(entry("two", architecture="aarch64", kernel_release="6\\.11\\..*"))
    v = verdict(facts(known_bad=kb, architecture=None, kernel_release=None))
    assert (v.id, v.status) == ("G13", Status.UNKNOWN)
    assert "two needs architecture, kernel_release (unread)" in v.summary
    assert ev(v, "architecture").value == "unavailable: not read"


def test_ok_names_flavour_version_kernel_and_table():
    v = verdict(facts())
    assert v.summary == ("no known issue for these versions (open module 580.95.05, kernel 6.11.0-1016-nvidia; "
                         "4 entries checked, data of 2026-12-05)")
    assert v.fix == "" and v.details == ()


def test_ok_with_an_unread_kernel_says_unread():
    v = verdict(facts(kernel_release=None, kernel_flavour=None, known_bad=table(entry(driver_branch=[590]))))
    assert v.status is Status.OK
    assert "(open module 580.95.05, kernel unread; 1 entries checked" in v.summary


# ----------------------------------------------------------------------------- the table's fields


def m(f=None, gb10=None, **match):
    return g13.match_entry({"match": match}, f if f is not None else facts(), gb10)


@pytest.mark.parametrize("field,want,have,res", [
    ("module_flavour", "proprietary", "proprietary", g13.MATCH),
    ("module_flavour", "proprietary", "open", g13.NO_MATCH),
    ("architecture", "aarch64", "aarch64", g13.MATCH),
    ("architecture", "aarch64", "x86_64", g13.NO_MATCH),
    ("kernel_flavour", "nvidia-64k", "nvidia-64k", g13.MATCH),
    ("kernel_flavour", "nvidia-64k", "nvidia", g13.NO_MATCH),
])
def test_exact_fields(field, want, have, res):
    key = {"module_flavour": "flavour"}.get(field, field)
    assert m(facts(**{key: have}), **{field: want}) == (res, [])


@pytest.mark.parametrize("field,key", [("module_flavour", "flavour"), ("architecture", "architecture")])
def test_unread_exact_field_is_maybe(field, key):
    assert m(facts(**{key: None}), **{field: "x"}) == (g13.MAYBE, [field])


def test_kernel_flavour_of_a_release_without_one_is_no_match():
    # 6.18.44-fc-v1252-gpu (the measured H200 host) has no Ubuntu flavour suffix: known not to be -nvidia
    assert m(facts(kernel_release="6.18.44-fc-v1252-gpu", kernel_flavour=None), kernel_flavour="nvidia") == (g13.NO_MATCH, [])
    assert m(facts(kernel_release=None, kernel_flavour=None), kernel_flavour="nvidia") == (g13.MAYBE, ["kernel_flavour"])


def test_kernel_flavour_entry_through_the_judge():
    kb = table(entry("k64", kernel_flavour="nvidia-64k"))
    assert verdict(facts(known_bad=kb, kernel_release="6.11.0-1016-nvidia-64k", kernel_flavour="nvidia-64k")).status is Status.WARN
    assert verdict(facts(known_bad=kb)).status is Status.OK
    assert verdict(facts(known_bad=kb, kernel_release="6.18.44-fc-v1252", kernel_flavour=None)).status is Status.OK


@pytest.mark.parametrize("name,res", [("NVIDIA H100 80GB HBM3", g13.MATCH), ("nvidia h100", g13.MATCH),
                                      ("NVIDIA GB10", g13.NO_MATCH)])
def test_gpu_name_field(name, res):
    assert m(facts(gpu_name=name), gpu="H100") == (res, [])


def test_gpu_name_field_unread_is_maybe():
    assert m(facts(gpu_name=None), gpu="H100") == (g13.MAYBE, ["gpu"])


@pytest.mark.parametrize("gb10,res", [(True, (g13.MATCH, [])), (False, (g13.NO_MATCH, [])), (None, (g13.MAYBE, ["gpu"]))])
def test_gpu_gb10_field_follows_the_recognition(gb10, res):
    assert m(facts(gpu_name="NVIDIA H100"), gb10=gb10, gpu="gb10") == res


def test_gpu_name_entry_through_the_judge():
    kb = table(entry("h", gpu="H100"))
    v = verdict(facts(known_bad=kb, gpu_name="NVIDIA H100 80GB HBM3", architecture="x86_64"), nvml=H100_NVML)
    assert v.status is Status.WARN and "h (warn)" in v.summary
    assert verdict(facts(known_bad=kb)).status is Status.OK


def test_driver_range_and_branch_fields():
    f = facts()
    assert m(f, driver_min="580.95.05") == (g13.MATCH, [])
    assert m(f, driver_below="580.95.05") == (g13.NO_MATCH, [])
    assert m(f, driver_branch=580) == (g13.MATCH, [])
    assert m(f, driver_branch=[570, 590]) == (g13.NO_MATCH, [])
    assert m(facts(driver_version="580.95.05-beta"), driver_min="580") == (g13.MAYBE, ["driver_min"])


def test_unknown_field_from_a_newer_table_is_maybe():
    assert m(facts(), bios_min="5.36") == (g13.MAYBE, ["bios_min"])
    v = verdict(facts(known_bad=table(entry("new", bios_min="5.36"))))
    assert v.status is Status.UNKNOWN and "new needs bios_min" in v.summary


# ----------------------------------------------------------------------------- the fix texts


def test_open_module_fix_without_a_version_does_not_print_none():
    fix = g13.open_module_fix(None, None)
    assert "# the proprietary module is loaded; a GB10 needs the open flavour" in fix
    assert "None" not in fix


def test_driver_fix_by_flavour_and_branch():
    assert "sudo apt-get install nvidia-driver-580-open" in g13.driver_fix(590, "open")
    assert "sudo apt-get install nvidia-driver-580-open" in g13.driver_fix(590, None)
    prop = g13.driver_fix(590, "proprietary")
    assert "sudo apt-get install nvidia-driver-580 " in prop and "-open" not in prop
    assert "# driver branch unread" in g13.driver_fix(None, "open")
    assert "# driver branch 590 is loaded" in g13.driver_fix(590, "open")
