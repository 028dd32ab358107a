"""docs/gotchas.md must stay true to the judges: every gotcha has its section, every threshold
constant and every config key a judge reads is there with its current value, every probe a gotcha
needs is named in its section. A failure says which value drifted and where to fix it."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from sparktui.core.config import Config
from sparktui.gotchas import REGISTRY
from sparktui.gotchas import (_facts, _packages, _when, base, g01_cuda_abi, g02_flash_attn, g03_unified_memory,
                              g04_throttling, g05_bandwidth, g06_contention, g07_nvfp4_arch, g08_stale_playbooks,
                              g09_container_drift, g10_tensor_parallel, g11_kernel_log, g12_two_spark_link,
                              g13_driver_flavour, g14_run_progress)

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "gotchas.md"
FIX = "update docs/gotchas.md (the gotcha's Thresholds table) to match the code"

# The threshold constants of each judge, by module: each must appear in its gotcha's section as
# "| `NAME` | `value` |" with the value the module has now.
THRESHOLDS: dict[str, tuple[str, ...]] = {
    "G1": ("GB10_CUDA_MAJOR",),
    "G2": (),
    "G3": ("RECOVER_MARGIN_GIB", "RECOVER_HOLD_S", "HOLDER_SHARE", "MAX_MEMTOTAL_BYTES", "PSI_FULL_AVG10_WARN",
           "PSI_SOME_AVG60_WARN", "SWAP_USED_MIN_GIB", "SWAP_LOW_AVAIL_SHARE", "TMPFS_SIZE_SHARE"),
    "G4": ("SLOWDOWN_SHARE", "REASON_MIN_SAMPLES", "REASONS_SEEN", "HW_FAIL_S", "FAULT_MIN_SAMPLES", "FAULT_SHARE",
           "LOCK_CLOCK_SHARE", "LOCK_MIN_SAMPLES", "LOCK_SHARE",
           "LOAD_POWER_SHARE", "CLIMB_C", "NEAR_PEAK", "PLATEAU_C", "TEMP_RANGE_C", "POWER_MAX_W", "SM_MAX_MHZ",
           "UTIL_MAX_PCT", "COUNTER_SLACK_S", "SAMPLE_TIME_SLACK_S", "COUNTERS_READ_WITHIN_S", "REVIEW_STEP_S",
           "GB10_CAPABILITY", "BRICK_W", "BRICK_NEAR", "LIMIT_NEAR"),
    "G5": ("WARN_BELOW", "FUTURE_SLACK_S", "MIN_BUFFER"),
    "G6": ("HEADROOM_FRACTION", "SMALL_GPU_BYTES", "REVIEW_BLIND_OK_SHARE"),
    "G7": ("SM121", "MIN_MAJOR", "MAX_MAJOR", "MAX_MINOR"),
    "G8": ("UNTOUCHED_DAYS", "DETAIL_LINES", "STALE_MAX_DAYS"),
    "G9": (),
    "G10": ("MAX_DETAILS",),
    "G11": ("MAX_DETAILS", "MAX_SUMMARY_PARTS", "WRAPPED_AFTER_S"),
    "G12": ("JUMBO_MTU", "MIN_SPEED_MBPS", "MIN_MTU", "REACHABLE_BUSBW_GBS", "DEFAULT_BUSBW_GBS", "OK_BUSBW_GBS",
            "DEFAULT_LIKE_BUSBW_GBS", "MAX_BUSBW_GBS", "CX7_MAX_MTU", "ETHERNET_MAX_MTU"),
    "G13": ("GB10_CAPABILITY", "ERROR_TEXT_CHARS"),
    "G14": ("STALL_FLOOR_S", "LATE_FLOOR_S", "STALL_PACE_FACTOR", "SLOW_MIN_POINTS", "SLOW_BASELINE_WINDOWS", "CLOCK_DROP_SHARE",
            "CLOCK_EVENT_SHARE", "REASON_MIN_SAMPLES", "COUNTERS_READ_S", "LOCK_QUIET_SHARE", "PSI_CAUSE_PCT", "SWAP_GROWTH_GIB", "ERROR_TEXT_CHARS", "NAME_CHARS", "SHORT_WINDOW_S"),
}
MODULES = {"G1": g01_cuda_abi, "G2": g02_flash_attn, "G3": g03_unified_memory, "G4": g04_throttling,
           "G5": g05_bandwidth, "G6": g06_contention, "G7": g07_nvfp4_arch, "G8": g08_stale_playbooks,
           "G9": g09_container_drift, "G10": g10_tensor_parallel, "G11": g11_kernel_log, "G12": g12_two_spark_link,
           "G13": g13_driver_flavour, "G14": g14_run_progress}
HELPERS = (_facts, _packages, _when, base)  # shared by the judges: no threshold of their own
# Module-level numbers that are not thresholds (units): left out of the doc on purpose.
NOT_THRESHOLDS = {("G4", "NS_PER_S"): "a unit (nanoseconds in a second)",
                  ("G1", "TORCH_INDEXES"): "PyTorch's wheel index names, for the fix block",
                  ("G6", "COMMAND_KEPT"): "the process probe's command-line cut, for the fix block",
                  ("G8", "ISSUES_TO_OPEN"): "issues the fix opens one by one",
                  ("G10", "MAX_EDITS"): "settings the fix names one by one"}

# The config keys each judge reads (cfg.section.key; G4's `th` is cfg.thermal; GpuFacts reads
# hardware.gpu_name_hint for G1 and G7): each must appear in its section with Config()'s default.
CONFIG_KEYS: dict[str, tuple[str, ...]] = {
    "G1": ("hardware.gpu_name_hint",),
    "G2": (),
    "G3": ("memory.available_floor_gib", "memory.cache_warn_fraction"),
    "G4": ("thermal.window_min", "thermal.hot_c", "thermal.plateau_fraction", "thermal.load_util_pct",
           "thermal.fault_clock_mhz", "thermal.fault_power_w", "hardware.rated_power_w"),
    "G5": (),
    "G6": ("memory.server_cap_ok_fraction",),
    "G7": ("hardware.gpu_name_hint",),
    "G8": ("playbooks.repo",),
    "G9": (),
    "G10": (),
    "G11": (),
    "G12": ("fleet.peers",),
    "G13": ("hardware.gpu_name_hint",),
    "G14": ("run.slow_window_s", "run.slow_ratio", "run.late_factor", "run.stall_after_s", "memory.available_floor_gib",
            "thermal.load_util_pct"),
}

# Constants outside the judges that a section cites as "module.NAME".
QUALIFIED = {"recording": "sparktui.core.recording", "sampler": "sparktui.probes.sampler",
             "processes": "sparktui.probes.processes", "tpscan": "sparktui.probes.tpscan",
             "driver_flavour": "sparktui.probes.driver_flavour", "kernel_log": "sparktui.probes.kernel_log",
             "link": "sparktui.probes.link"}

ROW = re.compile(r"^\| `([A-Za-z_][\w.]*)` \| `([^`]*)` \|", re.M)


@pytest.fixture(scope="module")
def doc() -> str:
    return DOC.read_text(encoding="utf-8")


def sections(doc: str) -> dict[str, str]:
    """'G4' -> the text of '## G4: ...' up to the next '## '."""
    out: dict[str, str] = {}
    for m in re.finditer(r"^## (G\d+): .*?(?=^## |\Z)", doc, re.S | re.M):
        out[m.group(1)] = m.group(0)
    return out


def rows(text: str) -> dict[str, str]:
    """Table rows '| `name` | `value` |' of a section: name -> value as written."""
    return {m.group(1): m.group(2) for m in ROW.finditer(text)}


def literal(gid: str, name: str, written: str) -> Any:
    try:
        return ast.literal_eval(written)
    except (ValueError, SyntaxError):
        pytest.fail(f"docs/gotchas.md {gid}: {name} is given as `{written}`, not a Python literal")


def default(key: str) -> Any:
    section, name = key.split(".")
    return getattr(getattr(Config(), section), name)


def numeric_constants(module) -> dict[str, Any]:
    """Module-level UPPER_CASE names bound to a number or a tuple of numbers (bools excluded)."""
    tree = ast.parse(inspect.getsource(module))
    out = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        names = [e for t in targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]  # A, B = 1, 2
        for t in names:
            if isinstance(t, ast.Name) and t.id.isupper() and hasattr(module, t.id):
                v = getattr(module, t.id)
                if _is_number(v) or (isinstance(v, tuple) and v and all(_is_number(x) for x in v)):
                    out[t.id] = v
    return out


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def keys_read(module) -> set[str]:
    src = inspect.getsource(module)
    found = {f"{s}.{k}" for s, k in re.findall(r"\bcfg\.([a-z_]+)\.([a-z_]+)", src)}
    if module is g04_throttling:
        found |= {f"thermal.{k}" for k in re.findall(r"\bth\.([a-z_]+)", src)}
    if "GpuFacts(" in src:
        found |= keys_read(_facts)
    return found


# ------------------------------------------------------------------------- sections


def test_every_gotcha_has_its_section_with_every_part(doc):
    found = sections(doc)
    assert list(found) == list(REGISTRY), f"docs/gotchas.md sections {list(found)}, the registry has {list(REGISTRY)}"
    for gid, g in REGISTRY.items():
        text = found[gid]
        assert text.startswith(f"## {gid}: {g.title}\n"), f"{gid}'s heading must be '## {gid}: {g.title}'"
        for part in ("**What it judges.**", "**Readings used**", "**Verdicts", "**Unknown when**",
                     "**Thresholds", "**Review mode.**"):
            assert part in text, f"docs/gotchas.md {gid} has no {part} part"


def test_every_probe_a_gotcha_needs_is_named_in_its_section(doc):
    found = sections(doc)
    for gid, g in REGISTRY.items():
        for probe in g.probes:
            assert f"| `{probe}`" in found[gid], (
                f"docs/gotchas.md {gid}: probe `{probe}` (GOTCHA.probes) has no row in 'Readings used'")


def test_readme_links_the_doc():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/gotchas.md)" in readme


# ------------------------------------------------------------------------- thresholds


def test_the_threshold_lists_cover_every_numeric_constant_of_the_judges():
    """A new module-level number in a judge must be listed above (and so documented) or named as not
    a threshold: nothing is left out by accident."""
    for gid, module in MODULES.items():
        have = set(numeric_constants(module))
        listed = set(THRESHOLDS[gid]) | {n for g, n in NOT_THRESHOLDS if g == gid}
        assert have <= listed, (f"{module.__name__} has numeric constants {sorted(have - listed)} not in "
                                f"THRESHOLDS['{gid}'] of tests/test_gotcha_doc.py: add them there and to docs/gotchas.md")
        assert listed <= have, f"THRESHOLDS['{gid}'] names {sorted(listed - have)}, which {module.__name__} no longer has"
    for module in HELPERS:
        assert not numeric_constants(module), f"{module.__name__} grew numeric constants: document them per gotcha"


@pytest.mark.parametrize("gid", list(THRESHOLDS))
def test_every_threshold_constant_is_documented_with_its_value(doc, gid):
    module = MODULES[gid]
    documented = rows(sections(doc)[gid])
    for name in THRESHOLDS[gid]:
        actual = getattr(module, name)
        assert name in documented, f"docs/gotchas.md {gid}: no row for {module.__name__}.{name} = {actual!r}; {FIX}"
        written = literal(gid, name, documented[name])
        assert written == actual, (
            f"docs/gotchas.md {gid}: {name} is documented as {documented[name]}, the code has {actual!r}; {FIX}")


@pytest.mark.parametrize("gid", list(CONFIG_KEYS))
def test_every_config_key_a_judge_reads_is_documented_with_its_default(doc, gid):
    module = MODULES[gid]
    read = keys_read(module)
    assert read <= set(CONFIG_KEYS[gid]), (f"{module.__name__} reads {sorted(read - set(CONFIG_KEYS[gid]))}, not in "
                                           f"CONFIG_KEYS['{gid}'] of tests/test_gotcha_doc.py: add it there and to the doc")
    documented = rows(sections(doc)[gid])
    for key in CONFIG_KEYS[gid]:
        want = default(key)
        assert key in documented, f"docs/gotchas.md {gid}: no row for config {key} (default {want!r}); {FIX}"
        got = literal(gid, key, documented[key])
        assert got == want, (f"docs/gotchas.md {gid}: config {key} is documented with default {documented[key]}, "
                             f"Config() has {want!r}; {FIX}")


def test_every_other_row_names_a_real_setting_or_constant_with_its_value(doc):
    """Rows beyond the required ones (probe settings, constants of probes) must be true too."""
    config_sections = {f.name for f in fields(Config)}
    for gid, text in sections(doc).items():
        for name, written in rows(text).items():
            head, _, tail = name.partition(".")
            if not tail:
                continue  # a judge's own constant: checked above
            got = literal(gid, name, written)
            if tail.isupper():
                assert head in QUALIFIED, f"docs/gotchas.md {gid}: `{name}`: unknown module '{head}' (known: {sorted(QUALIFIED)})"
                actual = getattr(importlib.import_module(QUALIFIED[head]), tail)
                assert got == actual, f"docs/gotchas.md {gid}: {name} is documented as {written}, the code has {actual!r}"
            else:
                assert head in config_sections, f"docs/gotchas.md {gid}: `{name}` is not a config setting"
                want = default(name)
                assert got == want, f"docs/gotchas.md {gid}: config {name} documented as {written}, Config() has {want!r}"


def test_g5_device_table_matches_expected_ranges(doc):
    text = sections(doc)["G5"]
    for e in g05_bandwidth.EXPECTED:
        line = next((ln for ln in text.splitlines() if ln.startswith(f"| {e.label} |")), None)
        assert line is not None, f"docs/gotchas.md G5: no row for {e.label} in the expected ranges; {FIX}"
        cells = [c.strip() for c in line.strip("|").split("|")]
        want = [e.label, f"`{e.pattern}`", f"{e.spec:g}", f"{e.copy[0]:g}-{e.copy[1]:g}", f"{e.read[0]:g}-{e.read[1]:g}"]
        assert cells[:5] == want, f"docs/gotchas.md G5: {e.label} row is {cells[:5]}, the code has {want}; {FIX}"


# ------------------------------------------------------------------------- the test itself


def test_a_drifted_value_is_caught(doc):
    """The checks above see a changed value (not only a missing row)."""
    text = sections(doc)["G4"].replace("| `SLOWDOWN_SHARE` | `0.01` |", "| `SLOWDOWN_SHARE` | `0.02` |")
    assert literal("G4", "SLOWDOWN_SHARE", rows(text)["SLOWDOWN_SHARE"]) != g04_throttling.SLOWDOWN_SHARE
    text = sections(doc)["G3"].replace("| `memory.available_floor_gib` | `8.0` |", "| `memory.available_floor_gib` | `6.0` |")
    assert literal("G3", "k", rows(text)["memory.available_floor_gib"]) != default("memory.available_floor_gib")
