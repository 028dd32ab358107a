"""G2's judge on hand-written target readings: flash-attn present, absent, broken, crashing, and
the Unsloth override."""

from __future__ import annotations

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.gotchas import g02_flash_attn as g2
from tests.conftest import readings_of
from tests.gotchas.builders import rows
from tests.gotchas.builders import g2_judge as judge, g2_target as target

CAP_WARNING = ("Found GPU0 NVIDIA GB10 which is of cuda capability 12.1. Minimum and Maximum cuda capability "
               "supported by this version of PyTorch is (8.0) - (12.0)")


IMPORTED = {"status": "done", "seconds": 0.8, "warnings": []}
FA_DATA = {"version": "2.7.4.post1", "file": "/usr/local/lib/python3.12/dist-packages/flash_attn/__init__.py"}
NO_MODULE = {"status": "error", "error_type": "ModuleNotFoundError", "error": "No module named 'flash_attn'"}


def test_ngc_flash_attn_with_unsloth_warns_and_gives_the_override():
    t = target(IMPORTED, {"flash_attn": "2.7.4.post1+25.11", "unsloth": "2026.7.3"}, FA_DATA)
    v = judge(t)
    assert v.status is Status.WARN
    assert v.summary == ('flash-attn 2.7.4.post1 importable and Unsloth 2026.7.3 installed: an explicit '
                         'attn_implementation="sdpa" is overridden to flash_attention_2')
    assert "HAS_FLASH_ATTENTION = False" in v.fix and 'model.config._attn_implementation == "sdpa"' in v.fix
    assert any("Llama-family loader ignores attn_implementation" in d for d in v.details)
    values = {e.what: e.value for e in v.evidence}
    assert values["unsloth package"] == "2026.7.3" and values["import flash_attn"] == "ok, version 2.7.4.post1"


def test_the_override_in_the_fix_text_is_valid_python():
    code = g2.OVERRIDE
    compile(code, "override.py", "exec")
    assert code.index("import unsloth") < code.index("HAS_FLASH_ATTENTION = False") < code.index("from_pretrained")


def test_flash_attn_without_unsloth_is_ok():
    v = judge(target(IMPORTED, {"flash-attn": "2.7.4.post1", "unsloth": None}, FA_DATA))
    assert v.status is Status.OK and "honoured" in v.summary
    assert v.details[0].startswith("flash_attn imported from /usr/local/lib/python3.12")


def test_bare_pip_without_flash_attn_is_ok_even_with_unsloth():
    v = judge(target(NO_MODULE, {"flash-attn": None, "flash_attn": None, "unsloth": "2026.7.3"}))
    assert v.status is Status.OK
    assert "flash-attn not installed: attention runs on SDPA" in v.summary and "Unsloth 2026.7.3" in v.summary
    assert {e.what: e.value for e in v.evidence}["flash-attn package"] == "not installed"


def test_undefined_symbol_while_installed_warns_naming_the_error():
    err = ("/usr/local/lib/python3.12/dist-packages/flash_attn_2_cuda.cpython-312-aarch64-linux-gnu.so: "
           "undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE")
    v = judge(target({"status": "error", "error_type": "ImportError", "error": err}, {"flash_attn": "2.7.4.post1+25.11"}))
    assert v.status is Status.WARN
    assert v.summary.startswith("flash-attn 2.7.4.post1+25.11 is installed but `import flash_attn` fails: ImportError:")
    assert "undefined symbol" in v.summary
    assert v.details[0].startswith("undefined symbol: flash-attn was compiled against a different torch/CUDA")


def test_missing_dependency_of_an_installed_flash_attn_warns():
    v = judge(target({"status": "error", "error_type": "ModuleNotFoundError", "error": "No module named 'einops'"},
                     {"flash-attn": "2.8.3", "unsloth": "2026.7.3"}))
    assert v.status is Status.WARN and "No module named 'einops'" in v.summary
    assert any("falls back" in d for d in v.details)


def test_missing_cuda_extension_is_not_mistaken_for_an_absent_package():
    v = judge(target({"status": "error", "error_type": "ModuleNotFoundError", "error": "No module named 'flash_attn_2_cuda'"},
                     {"flash-attn": None, "flash_attn": None}))
    assert v.status is Status.WARN and "(no package metadata)" in v.summary
    v = judge(target({"status": "error", "error_type": "ModuleNotFoundError", "error": "No module named 'flash_attn_2_cuda'"},
                     {}))  # flash-attn not asked: its metadata is unknown, not absent
    assert v.status is Status.WARN and "(package metadata not read)" in v.summary


def test_import_crash_fails_when_unsloth_would_load_the_same_extension():
    crashed = {"status": "crashed", "error": "process died by SIGSEGV during 'import flash_attn'", "signal": "SIGSEGV"}
    v = judge(target(crashed, {"flash-attn": "2.7.4.post1", "unsloth": "2026.7.3"}))
    assert v.status is Status.FAIL and "crashed the interpreter" in v.summary and "SIGSEGV" in v.summary
    v = judge(target(crashed, {"flash-attn": "2.7.4.post1", "unsloth": None}))
    assert v.status is Status.WARN


def test_import_hang_is_named():
    hung = {"status": "hung", "error": "no answer after 90.0 s during 'import flash_attn'; killed"}
    v = judge(target(hung, {"flash-attn": "2.7.4.post1"}))
    assert v.status is Status.WARN and v.summary.startswith("`import flash_attn` hung: no answer after 90.0 s")


def test_not_attempted_or_missing_reading_is_unknown():
    v = judge(target({"status": "not reached"}, {}))
    assert v.status is Status.UNKNOWN and "not attempted (not reached)" in v.summary
    v = judge(target({"status": "skipped"}, {}))
    assert v.status is Status.UNKNOWN and "skipped" in v.summary
    v = g2.judge(readings_of(target=None), Config())
    assert v.status is Status.UNKNOWN and "target interpreter reading" in v.summary


def test_pip_torch_capability_warning_is_reported_without_changing_the_status():
    v = judge(target(NO_MODULE, {"flash-attn": None}, torch_warnings=[CAP_WARNING]))
    assert v.status is Status.OK
    assert v.details[0] == f"torch warns: {CAP_WARNING}"
    assert {e.what: e.value for e in v.evidence}["torch capability warning"] == CAP_WARNING


# ---- the override, run against a stand-in Unsloth -------------------------------------------
# Modelled on unslothai/unsloth 2026.7.x: _utils.resolve_attention_implementation reads its module's
# HAS_FLASH_ATTENTION; llama.py calls it without the caller's request, then pops attn_implementation;
# utils/attention_dispatch.py star-imports _utils and picks the kernel from its own copy of the flag.
STANDIN = {
    "unsloth/__init__.py": "from .models import FastLanguageModel\n",
    "unsloth/models/__init__.py": "from .llama import FastLanguageModel\n",
    "unsloth/models/_utils.py": """\
HAS_FLASH_ATTENTION = True
def resolve_attention_implementation(model_class, config, requested_attn_implementation=None, supports_sdpa=None):
    if requested_attn_implementation is not None:
        return requested_attn_implementation
    return "flash_attention_2" if HAS_FLASH_ATTENTION else "sdpa"
""",
    "unsloth/utils/__init__.py": "",
    "unsloth/utils/attention_dispatch.py": """\
from ..models._utils import *
def select_attention_backend(use_varlen=False):
    return "flash_dense" if HAS_FLASH_ATTENTION else "sdpa"
""",
    "unsloth/models/llama.py": """\
import types
from ._utils import *
from ..utils.attention_dispatch import select_attention_backend
class FastLanguageModel:
    @staticmethod
    def from_pretrained(model_name, **kwargs):
        impl = resolve_attention_implementation(object, None)
        kwargs.pop("attn_implementation", None)  # No need since we auto call it
        model = types.SimpleNamespace(config=types.SimpleNamespace(_attn_implementation=impl),
                                      attention_kernel=select_attention_backend)
        return model, None
""",
}


def run_with_standin(tmp_path, code: str):
    import subprocess
    import sys

    for rel, text in STANDIN.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30,
                          env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})


def test_standin_reproduces_the_override_and_the_fix_undoes_it(tmp_path):
    plain = ("from unsloth import FastLanguageModel\n"
             "m, _ = FastLanguageModel.from_pretrained('x', attn_implementation='sdpa')\n"
             "print(m.config._attn_implementation, m.attention_kernel())\n")
    assert run_with_standin(tmp_path, plain).stdout.split() == ["flash_attention_2", "flash_dense"]
    fixed = run_with_standin(tmp_path, g2.OVERRIDE + "print(model.config._attn_implementation, model.attention_kernel())\n")
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout.split() == ["sdpa", "sdpa"]


# --- audit: packages not read is not "not installed" ----------------------------------------------


def _without_packages(t: dict, odd=None) -> dict:
    t = dict(t)
    if odd is None:
        del t["packages"]
    else:
        t["packages"] = odd
    return t


def test_flash_attn_importable_with_packages_not_read_is_unknown_not_ok():
    for odd in (None, ["unsloth"], "unsloth==2026.7.3"):
        v = judge(_without_packages(target(IMPORTED, {"flash-attn": "2.7.4.post1"}, FA_DATA), odd))
        assert v.status is Status.UNKNOWN, (odd, v.summary)
        assert "whether Unsloth is installed is unknown (packages not read: " in v.summary
        values = {e.what: e.value for e in v.evidence}
        assert values["unsloth package"].startswith("unknown (packages not read: ")
        assert values["flash-attn package"].startswith("unknown (packages not read: ")


def test_flash_attn_absent_with_packages_not_read_says_so():
    v = judge(_without_packages(target(NO_MODULE, {})))
    assert v.status is Status.OK and "packages not read" in v.summary  # no flash_attn: SDPA either way
    assert {e.what: e.value for e in v.evidence}["unsloth package"].startswith("unknown (packages not read: ")


# --- issue 12, class 2: a failed read is unknown, never absence; no torch is not judged -------------

NO_TORCH = {"status": "error", "error_type": "ModuleNotFoundError", "error": "No module named 'torch'"}
PKGS_READ = {"flash-attn": None, "flash_attn": None, "unsloth": None, "torch": None}


def _no_torch(fa_stage: dict, packages: dict) -> dict:
    t = target(fa_stage, packages)
    t["stages"]["import torch"] = NO_TORCH
    t["stages"]["torch.cuda"] = {"status": "not reached"}
    return t


def test_interpreter_without_torch_is_unknown_like_g1_and_g9():
    """Was ok "flash-attn not installed: SDPA" while G1 and G9 said unknown in the same run."""
    from sparktui.gotchas import g01_cuda_abi

    t = _no_torch(NO_MODULE, PKGS_READ)
    v = judge(t)
    assert v.status is Status.UNKNOWN, v.summary
    assert v.summary == "cannot tell: torch is not installed in /usr/bin/python3: is --python the training environment?"
    assert {e.what: e.value for e in v.evidence}["import torch"] == "ModuleNotFoundError: No module named 'torch'"
    assert g01_cuda_abi.judge(readings_of(target=t), Config()).status is Status.UNKNOWN


def test_interpreter_without_torch_but_with_unsloth_listed_is_still_unknown():
    assert judge(_no_torch(NO_MODULE, {**PKGS_READ, "unsloth": "2026.7.3"})).status is Status.UNKNOWN


def test_a_broken_torch_submodule_is_not_no_torch():
    """No module named 'torch._C' is a broken torch (G1's fail), not a missing one: G2 judges on."""
    t = target(NO_MODULE, PKGS_READ)
    t["stages"]["import torch"] = {"status": "error", "error_type": "ModuleNotFoundError", "error": "No module named 'torch._C'"}
    assert judge(t).status is Status.OK


def test_old_snapshot_with_a_packages_error_object_is_not_no_unsloth():
    """A Python without importlib.metadata once reported packages = {"error": ...}: that is not an
    empty machine, so flash-attn importable cannot be ok."""
    v = judge(target(IMPORTED, {"error": "importlib.metadata unavailable"}, FA_DATA))
    assert v.status is Status.UNKNOWN
    assert "unknown (packages not read: importlib.metadata unavailable)" in v.summary


def test_packages_null_with_the_probe_error_is_unknown_naming_it():
    t = target(IMPORTED, {}, FA_DATA)
    t["packages"] = None
    t["packages_error"] = "packages stage crashed: process died by SIGSEGV during 'packages'"
    t["stages"]["packages"] = {"status": "crashed", "error": "process died by SIGSEGV during 'packages'"}
    v = judge(t)
    assert v.status is Status.UNKNOWN and "process died by SIGSEGV during 'packages'" in v.summary
    values = {e.what: e.value for e in v.evidence}
    assert values["unsloth package"] == ("unknown (packages not read: packages stage crashed: process died by "
                                         "SIGSEGV during 'packages')")


def test_unsloth_whose_metadata_could_not_be_read_is_unknown():
    t = target(IMPORTED, {"flash-attn": "2.7.4.post1", "flash_attn": None}, FA_DATA)
    t["packages_unread"] = {"unsloth": "metadata has no Version"}
    v = judge(t)
    assert v.status is Status.UNKNOWN
    assert "unknown (its metadata could not be read: metadata has no Version)" in v.summary


def test_unsloth_not_asked_is_unknown_not_absent():
    v = judge(target(IMPORTED, {"flash-attn": "2.7.4.post1"}, FA_DATA))
    assert v.status is Status.UNKNOWN and "the target reading did not include it" in v.summary


def test_unsloth_under_another_spelling_counts():
    v = judge(target(IMPORTED, {"flash-attn": "2.7.4.post1", "Unsloth": "2026.10.9"}, FA_DATA))
    assert v.status is Status.WARN and "Unsloth 2026.10.9 installed" in v.summary


def test_flash_attn_version_from_metadata_when_the_module_has_none():
    v = judge(target(IMPORTED, {"flash-attn": "2.7.4.post1", "unsloth": None}, {"version": None}))
    assert v.status is Status.OK and v.summary.startswith("flash-attn 2.7.4.post1 importable")
    v = judge(target(IMPORTED, {"flash-attn": None, "unsloth": None}, {}))
    assert v.status is Status.OK and v.summary.startswith("flash-attn (version unknown) importable")


def test_absent_flash_attn_with_its_metadata_unread_is_ok_and_says_so():
    """No module 'flash_attn' is seen directly: SDPA runs whatever the metadata would have said."""
    t = target(NO_MODULE, {"unsloth": None})
    t["packages_unread"] = {"flash-attn": "KeyError: 'Version'"}
    v = judge(t)
    assert v.status is Status.OK
    assert "flash-attn's package metadata unknown: its metadata could not be read: KeyError" in v.summary


def test_absent_module_but_metadata_present_is_a_broken_install():
    t = target(NO_MODULE, {"flash-attn": "2.7.4.post1", "unsloth": None})
    v = judge(t)
    assert v.status is Status.WARN and v.summary.startswith("flash-attn 2.7.4.post1 is installed but `import flash_attn` fails")


CRASHED = {"status": "crashed", "error": "process died by SIGSEGV during 'import flash_attn'", "signal": "SIGSEGV"}


def test_crash_with_unsloth_unread_warns_and_says_what_is_unknown():
    t = target(CRASHED, {"flash-attn": "2.7.4.post1"})
    t["packages_unread"] = {"unsloth": "metadata has no Version"}
    v = judge(t)
    assert v.status is Status.WARN
    assert v.details[0].startswith("whether Unsloth is installed is unknown (its metadata could not be read")


def test_crash_with_unsloth_seen_absent_warns_without_the_unsloth_note():
    v = judge(target(CRASHED, {"flash-attn": "2.7.4.post1", "unsloth": None}))
    assert v.status is Status.WARN and not any("Unsloth" in d for d in v.details)


def test_hang_with_unsloth_fails():
    hung = {"status": "hung", "error": "no answer after 30.0 s during 'import flash_attn'; killed"}
    v = judge(target(hung, {"flash-attn": "2.7.4.post1", "unsloth": "2026.7.3"}))
    assert v.status is Status.FAIL and v.summary == "`import flash_attn` hung: no answer after 30.0 s during 'import flash_attn'; killed"


def test_crash_named_by_its_signal_only():
    v = judge(target({"status": "crashed", "signal": "SIGBUS"}, {"flash-attn": "2.7.4.post1", "unsloth": None}))
    assert v.summary == "`import flash_attn` crashed the interpreter: signal SIGBUS"


def test_stage_not_attempted_is_unknown_with_why():
    v = judge(target({"status": "skipped"}, PKGS_READ))
    assert v.status is Status.UNKNOWN and v.summary.endswith("(skipped)")
    v = judge(target({"status": "not reached", "error": "the interpreter never started its stages"}, PKGS_READ))
    assert v.status is Status.UNKNOWN and v.summary.endswith("(not reached: the interpreter never started its stages)")
    v = judge(target({}, PKGS_READ))
    assert v.status is Status.UNKNOWN and v.summary.endswith("(no record of the stage)")
    assert {e.what: e.value for e in v.evidence}["import flash_attn"] == "no record"


def test_no_target_reading_is_unknown():
    v = g2.judge(readings_of(target=None), Config())
    assert v.status is Status.UNKNOWN and "target interpreter reading unavailable" in v.summary


# --- whole verdicts: summary, evidence and details pinned ---------------------------------------------


def test_ngc_with_unsloth_whole_verdict_with_the_capability_warning():
    from sparktui.core.readings import Reading

    t = target(IMPORTED, {"flash_attn": "2.7.4.post1+25.11", "unsloth": "2026.7.3"}, FA_DATA, torch_warnings=[CAP_WARNING])
    v = g2.judge(readings_of(target=Reading("target", t, source="/usr/bin/python3 (subprocess)")), Config())
    src = "/usr/bin/python3 (subprocess)"
    assert v.id == "G2" and v.status is Status.WARN and v.fix == g2.fix_for(t)
    assert rows(v) == [
        ("training interpreter", "configured (--python or [target] python)", "/usr/bin/python3"),
        ("flash-attn package", f"{src}: importlib.metadata", "2.7.4.post1+25.11"),
        ("import flash_attn", f"{src}: import in a subprocess", "ok, version 2.7.4.post1"),
        ("unsloth package", f"{src}: importlib.metadata", "2026.7.3"),
        ("torch capability warning", f"{src}: torch import/cuda warnings", CAP_WARNING),
    ]
    assert v.details == (
        "flash_attn imported from /usr/local/lib/python3.12/dist-packages/flash_attn/__init__.py",
        f"torch warns: {CAP_WARNING}",
        "a pip torch that does not list capability 12.1 is G1/G7's concern; flash-attn is unaffected",
        f"Unsloth 2026.7.3: FastLanguageModel's Llama-family loader ignores attn_implementation and resolves "
        f"flash_attention_2 because flash-attn imports (read in {g2.CHECKED_AGAINST})",
        "Unsloth's vision loader (FastVisionModel / FastModel) passes attn_implementation on; this concerns the "
        "language-model loader",
    )


def test_training_interpreter_row_falls_back_to_the_source():
    from sparktui.core.readings import Reading

    t = target(IMPORTED, {"flash-attn": "2.7.4.post1", "unsloth": None}, FA_DATA)
    del t["interpreter"], t["selected_by"]
    v = g2.judge(readings_of(target=Reading("target", t, source="/opt/py (subprocess)")), Config())
    assert rows(v)[0] == ("training interpreter", "target", "/opt/py (subprocess)")
    assert rows(v)[1][1] == "/opt/py (subprocess): importlib.metadata"


def test_ok_without_unsloth_whole():
    v = judge(target(IMPORTED, {"flash-attn": "2.7.4.post1", "unsloth": None}, {"version": "2.7.4.post1"}))
    assert v.status is Status.OK and v.fix == "" and v.details == ()
    assert v.summary == "flash-attn 2.7.4.post1 importable; no Unsloth, so an explicit attn_implementation is honoured"
    assert rows(v)[3] == ("unsloth package", "target: importlib.metadata", "not installed")


def test_unknown_unsloth_whole_summary():
    v = judge(target(IMPORTED, {"flash-attn": "2.7.4.post1"}, FA_DATA))
    assert v.summary == ("cannot tell: flash-attn 2.7.4.post1 importable, but whether Unsloth is installed is unknown "
                         "(the target reading did not include it); with Unsloth an explicit attn_implementation=\"sdpa\" "
                         "is overridden")
    assert v.fix == ""


def test_absent_whole_summaries():
    v = judge(target(NO_MODULE, {"flash-attn": None, "unsloth": "2026.7.3"}))
    assert v.summary == ("flash-attn not installed: attention runs on SDPA (expected on bare pip: no aarch64/sm_121 "
                         "wheel on PyPI); Unsloth 2026.7.3 will not pick flash-attn")
    assert v.fix == ""
    assert rows(v)[2] == ("import flash_attn", "target: import in a subprocess",
                          "error: ModuleNotFoundError: No module named 'flash_attn'")
    v = judge(target(NO_MODULE, {"flash-attn": None, "unsloth": None}))
    assert v.summary == "flash-attn not installed: attention runs on SDPA (expected on bare pip: no aarch64/sm_121 wheel on PyPI)"


def test_a_module_not_found_naming_something_else_is_not_absence():
    v = judge(target({"status": "error", "error_type": "ImportError", "error": "No module named 'flash_attn'"},
                     {"flash-attn": None, "unsloth": None}))
    assert v.status is Status.WARN  # an ImportError, not ModuleNotFoundError: something else broke


def test_broken_install_whole():
    err = "libc10.so: undefined symbol: _ZN3c10"
    v = judge(target({"status": "error", "error_type": "ImportError", "error": err + "\nsecond line"},
                     {"flash-attn": "2.7.4.post1", "unsloth": "2026.7.3"}))
    assert v.status is Status.WARN and v.fix == g2.fix_for(target({}, {}))
    assert v.summary == f"flash-attn 2.7.4.post1 is installed but `import flash_attn` fails: ImportError: {err}"
    assert v.details == (
        "undefined symbol: flash-attn was compiled against a different torch/CUDA than the one installed (ABI mismatch)",
        "Unsloth 2026.7.3 notices the broken install and falls back; code that asks for "
        "attn_implementation=\"flash_attention_2\" fails at load")
    assert rows(v)[2][2] == f"error: ImportError: {err}"
    v = judge(target({"status": "error", "error": "boom"}, {"flash-attn": "2.7.4.post1", "unsloth": None}))
    assert v.summary.endswith("fails: Error: boom") and v.details == ()
    assert rows(v)[2][2] == "error: boom"


def test_first_line_is_cut_at_300():
    assert g2._first_line("x" * 400 + "\nmore") == "x" * 300
    assert g2._first_line("  \n ") == "" and g2._first_line(None) == ""
    assert g2._first_line("\n  first  \nsecond") == "first  "


def test_crash_whole():
    crashed = {"status": "crashed", "error": "process died by SIGSEGV during 'import flash_attn'", "signal": "SIGSEGV"}
    v = judge(target(crashed, {"flash-attn": "2.7.4.post1", "unsloth": "2026.7.3"}))
    assert v.summary == "`import flash_attn` crashed the interpreter: process died by SIGSEGV during 'import flash_attn'"
    assert v.fix == g2.fix_for(target({}, {})) and "/usr/bin/python3 -m pip uninstall -y flash-attn" in v.fix
    assert v.details == ("`import unsloth` loads flash-attn's CUDA extension too (Unsloth 2026.7.3): the training "
                         "start will die or hang the same way",)
    v = judge(target({"status": "crashed"}, {"flash-attn": "2.7.4.post1", "unsloth": None}))
    assert v.summary == "`import flash_attn` crashed the interpreter"


def test_capability_warnings_are_picked_and_deduplicated():
    t = {"stages": {"import torch": {"warnings": [CAP_WARNING, " " + CAP_WARNING + " ", "some other warning"]},
                    "torch.cuda": {"warnings": ["cuda capability sm_90 outside the Minimum and Maximum range",
                                                "capability 9.0 only"]},
                    "packages": None}}
    assert g2._capability_warnings(t) == [CAP_WARNING, "cuda capability sm_90 outside the Minimum and Maximum range"]


def test_no_torch_whole():
    v = judge(_no_torch(NO_MODULE, PKGS_READ))
    assert v.fix == "" and rows(v)[-1] == ("import torch", "target: import in a subprocess",
                                            "ModuleNotFoundError: No module named 'torch'")


# --- the id, the exact words and the order of details on every path ------------------------------------


def test_every_path_is_g2():
    cases = [target(IMPORTED, {"flash-attn": "2.7.4.post1", "unsloth": "2026.7.3"}, FA_DATA),
             target(IMPORTED, {"flash-attn": "2.7.4.post1", "unsloth": None}, FA_DATA),
             target(IMPORTED, {"flash-attn": "2.7.4.post1"}, FA_DATA),
             target(NO_MODULE, PKGS_READ), target({"status": "error", "error": "x"}, PKGS_READ),
             target(CRASHED, PKGS_READ), target({"status": "skipped"}, PKGS_READ), _no_torch(NO_MODULE, PKGS_READ)]
    assert {judge(t).id for t in cases} == {"G2"}
    assert g2.judge(readings_of(target=None), Config()).id == "G2"


def test_a_reading_without_a_source_is_named_target():
    from sparktui.core.readings import Reading

    v = g2.judge(readings_of(target=Reading("target", target(NO_MODULE, PKGS_READ), source="")), Config())
    assert rows(v)[1] == ("flash-attn package", "target: importlib.metadata", "not installed")


def test_a_warning_naming_capability_12_1_alone_is_picked():
    w = "Found GPU0 NVIDIA GB10 which is of cuda capability 12.1."
    assert g2._capability_warnings({"stages": {"torch.cuda": {"warnings": [w]}}}) == [w]


def test_first_details_come_first_before_the_capability_warning():
    crashed = target(CRASHED, {"flash-attn": "2.7.4.post1", "unsloth": "2026.7.3"}, torch_warnings=[CAP_WARNING])
    assert judge(crashed).details[0].startswith("`import unsloth` loads flash-attn's CUDA extension too")
    unread = target(CRASHED, {"flash-attn": "2.7.4.post1"}, torch_warnings=[CAP_WARNING])
    assert judge(unread).details[0] == (
        "whether Unsloth is installed is unknown (the target reading did not include it): if it is, `import unsloth` "
        "loads the same extension and the training start dies or hangs the same way")
    undef = target({"status": "error", "error_type": "ImportError", "error": "undefined symbol: x"},
                   {"flash-attn": "2.7.4.post1", "unsloth": None}, torch_warnings=[CAP_WARNING])
    assert judge(undef).details[0].startswith("undefined symbol: flash-attn was compiled against")


def test_details_are_kept_on_the_unknown_paths():
    for t in (target(IMPORTED, {"flash-attn": "2.7.4.post1"}, FA_DATA, torch_warnings=[CAP_WARNING]),
              target({"status": "skipped"}, PKGS_READ, torch_warnings=[CAP_WARNING])):
        assert f"torch warns: {CAP_WARNING}" in judge(t).details
    t = _no_torch(NO_MODULE, PKGS_READ)
    t["stages"]["torch.cuda"] = {"status": "not reached", "warnings": [CAP_WARNING]}
    assert judge(t).details[0] == f"torch warns: {CAP_WARNING}"


def test_exact_words_of_a_broken_install_without_metadata():
    v = judge(target({"status": "error", "error_type": "ImportError", "error": ""}, {"flash-attn": None, "unsloth": None}))
    assert v.summary == "flash-attn (no package metadata) is installed but `import flash_attn` fails: ImportError: "
    v = judge(target({"status": "error", "error_type": "ImportError", "error": "x"}, {"unsloth": None}))
    assert v.summary == "flash-attn (package metadata not read) is installed but `import flash_attn` fails: ImportError: x"


def test_absent_with_unsloth_and_metadata_unread_says_both():
    t = target(NO_MODULE, {"unsloth": "2026.7.3"})
    t["packages_unread"] = {"flash-attn": "KeyError"}
    assert judge(t).summary.endswith("; Unsloth 2026.7.3 will not pick flash-attn (flash-attn's package metadata "
                                     "unknown: its metadata could not be read: KeyError)")


def test_unknown_unsloth_whole_summary_with_the_reason():
    t = target(IMPORTED, {"flash-attn": "2.7.4.post1"}, FA_DATA)
    t["packages_unread"] = {"unsloth": "KeyError"}
    assert judge(t).summary == ("cannot tell: flash-attn 2.7.4.post1 importable, but whether Unsloth is installed is "
                                "unknown (its metadata could not be read: KeyError); with Unsloth an explicit "
                                "attn_implementation=\"sdpa\" is overridden")


def test_no_torch_without_an_interpreter_name():
    t = _no_torch(NO_MODULE, PKGS_READ)
    del t["interpreter"]
    assert judge(t).summary == ("cannot tell: torch is not installed in the target interpreter: is --python the "
                                "training environment?")
