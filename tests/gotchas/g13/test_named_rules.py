"""G13's named steps held to their exact words (issue 23: the judge became _table_unusable, _known_issue
and _none_known; the 20% mutation sample of sparktui.gotchas.g13_driver_flavour showed these unpinned).
Every expected text is what the judge said before the split."""

from __future__ import annotations

from sparktui.core.verdict import Status
from sparktui.gotchas import g13_driver_flavour as g13
from tests.gotchas.g13.test_judge import entry, facts, no_driver, table, verdict


def test_an_empty_table_is_named_with_its_path_in_the_evidence():
    v = verdict(facts(known_bad=table()))
    assert v.status is Status.UNKNOWN
    assert [(e.what, e.source, e.value) for e in v.evidence if e.what == "known-bad table"] == \
        [("known-bad table", "/etc/sparktui/kb.toml", "0 entries")]
    v = verdict(facts(known_bad=table(path=None)))
    assert [(e.source, e.value) for e in v.evidence if e.what == "known-bad table"] == [(g13.DATA_FILE, "0 entries")]


def test_entries_that_cannot_be_decided_are_each_named_with_what_they_need():
    v = verdict(facts(gpu_name=None, kernel_release=None, kernel_flavour=None,
                      known_bad=table(entry("a", gpu="H100"), entry("b", kernel_release="6.*"))))
    assert v.status is Status.UNKNOWN
    assert v.summary == "cannot tell whether known issues apply: a needs gpu; b needs kernel_release (unread)"


def test_a_fail_entry_decides_over_a_warn_entry_whatever_their_order():
    for order in (("w", "f"), ("f", "w")):
        es = [entry(i, status="fail" if i == "f" else "warn", module_flavour="open") for i in order]
        assert verdict(facts(known_bad=table(*es))).status is Status.FAIL
    assert verdict(facts(known_bad=table(entry("w", module_flavour="open")))).status is Status.WARN


def test_no_driver_says_how_to_load_one():
    v = verdict(no_driver(known_bad=table(entry("a", module_flavour="proprietary"))))
    assert v.fix == ("Load the driver (`sudo modprobe nvidia`) or install it; on a GB10 install the -open flavour:\n\n"
                     "```bash\nsudo apt-get install nvidia-driver-580-open\nsudo reboot\n```\n")


def test_an_unnamed_gpu_on_aarch64_says_it_was_not_named():
    v = verdict(facts(flavour="proprietary", gpu_name=None), nvml=None)
    assert [e.value for e in v.evidence if e.what == "GPU is a GB10"] == \
        ["GPU not named (NVML and /proc/driver/nvidia/gpus unread)"]


def test_the_fix_texts_word_for_word():
    assert g13.driver_fix(580, "open").startswith(
        "If you see the symptom, compare with the previous driver branch before changing anything else "
        "(a report, not a confirmed bug: measure first):\n\n")
    assert "cat /proc/driver/nvidia/version                 # expect: NVIDIA UNIX Open Kernel Module\n" in \
        g13.open_module_fix(580, "580.95.05")
