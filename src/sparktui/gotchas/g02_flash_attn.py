"""G2: flash-attn: is it there and working, and does Unsloth override an explicit SDPA request?"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.shapes import TARGET
from sparktui.core.verdict import EvidenceList, Status, Verdict
from sparktui.gotchas._fix import block, python_of
from sparktui.gotchas._packages import ABSENT, INSTALLED, UNKNOWN, Installed, installed_packages
from sparktui.gotchas.base import Gotcha, unknown_from
from sparktui.gotchas.g01_cuda_abi import torch_not_installed

ID = "G2"
STAGE = "import flash_attn"

# Where the override was read: unslothai/unsloth, unsloth/models/llama.py (FastLlamaModel.from_pretrained)
# calls resolve_attention_implementation(model_function, model_config, ...) without the caller's
# attn_implementation, then kwargs.pop("attn_implementation", None)  # "No need since we auto call it".
# resolve_attention_implementation (unsloth/models/_utils.py, __version__ 2026.7.3) picks
# flash_attention_2 whenever its module-global HAS_FLASH_ATTENTION is true; the patched attention
# forward picks its kernel from unsloth/utils/attention_dispatch.py's own copy of the flag.
# Re-read in the 2026.10.9 wheel from PyPI (2026-12-04): resolve_attention_implementation gained a
# requested_attn_implementation parameter, but llama.py still calls it without one (line 3683) and
# still pops attn_implementation (line 4048); the flag is imported by name into models/loader.py
# and utils/attention_dispatch.py (`from ..models._utils import *`), which the override's loop over
# sys.modules covers.
CHECKED_AGAINST = ("Unsloth 2026.7.x and 2026.10.9 (unsloth/models/llama.py, _utils.py, loader.py, "
                   "utils/attention_dispatch.py)")

OVERRIDE = """\
import sys
import unsloth  # noqa: F401  (import Unsloth first, as usual)

# Unsloth's Llama-family loader drops attn_implementation and picks flash-attn whenever it can
# import it. Clear its flag everywhere Unsloth keeps a copy: the loader then resolves to SDPA,
# and its own attention kernels stop calling flash-attn.
for _name, _mod in list(sys.modules.items()):
    if _name.startswith("unsloth") and getattr(_mod, "HAS_FLASH_ATTENTION", False):
        _mod.HAS_FLASH_ATTENTION = False

from unsloth import FastLanguageModel

model, tokenizer = FastLanguageModel.from_pretrained("unsloth/Llama-3.2-1B-Instruct", attn_implementation="sdpa")
assert model.config._attn_implementation == "sdpa", model.config._attn_implementation
"""

SDPA_WAYS = f"""\
**Bare pip:** don't build flash-attn (there is no aarch64/sm_121 wheel on PyPI, and a source build
takes hours or fails). Ask for PyTorch's SDPA, which transformers honours:

```python
from transformers import AutoModelForCausalLM
model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen3-0.6B", attn_implementation="sdpa")
```

**NGC container (flash-attn 2.7.4.post1 bundled) with Unsloth:** an explicit
`attn_implementation="sdpa"` is dropped by Unsloth's Llama-family loader, which then picks
flash-attn. To really train on SDPA, clear Unsloth's flash-attn flag before loading (checked
against {CHECKED_AGAINST}; the loader part was confirmed in a live load on 2026.7.2):

```python
{OVERRIDE}```

"""

BROKEN = """\
**flash-attn installed but failing to import** (for example `undefined symbol`): it was built
against another torch than the one installed, usually after a `pip install` replaced the
container's torch. Restore the image's torch, or remove flash-attn and use SDPA:

"""


def broken_block(py: str = "python", pip: str = "pip", finder: tuple[str, ...] = ()) -> str:
    """The remove-flash-attn block, for ``py`` (the generic text says plain pip and python)."""
    return block([*finder, f"{pip} uninstall -y flash-attn",
                  f"{py} -c \"import torch; print(torch.__version__, torch.version.cuda)\""])


FIX = SDPA_WAYS + BROKEN + broken_block()


def fix_for(t: Mapping[str, Any]) -> str:
    """FIX with the remove block run by the target interpreter (found, when it was not read)."""
    py, finder = python_of(t)
    return SDPA_WAYS + BROKEN + broken_block(py, f"{py} -m pip", finder)


def _capability_warnings(t: Mapping[str, Any]) -> list[str]:
    """torch's own 'capability 12.1 is outside this build's range' warning, wherever it surfaced."""
    out = []
    for st in (t.get("stages") or {}).values():
        for w in (st or {}).get("warnings") or []:
            if "capability" in w.lower() and ("12.1" in w or "minimum and maximum" in w.lower()):
                out.append(w.strip())
    return list(dict.fromkeys(out))


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0][:300] if (text or "").strip() else ""


@dataclass(frozen=True)
class _Facts:
    """What the judge reads from the target reading, gathered once."""

    t: Mapping[str, Any]
    src: str
    pk: Installed
    stage: Mapping[str, Any]
    fa: Mapping[str, Any]

    @property
    def status(self) -> str | None:
        return self.stage.get("status")

    @property
    def fa_pkg(self) -> str | None:
        return self.pk.version("flash-attn")

    @property
    def unsloth(self) -> str | None:
        return self.pk.version("unsloth")

    @property
    def unsloth_state(self) -> str:
        return self.pk.state("unsloth")


def _evidence(f: _Facts, tr_source: str) -> tuple[EvidenceList, list[str]]:
    ev = EvidenceList()
    st = f.stage
    ev.add("training interpreter", f.t.get("selected_by") or "target", f.t.get("interpreter") or tr_source)
    ev.add("flash-attn package", f"{f.src}: importlib.metadata", f.pk.describe("flash-attn"))
    etype = st.get("error_type")
    import_value = {"done": f"ok, version {f.fa.get('version')}", None: "no record"}.get(
        f.status, f"{f.status}: {f'{etype}: ' if etype else ''}{_first_line(st.get('error'))}")
    ev.add("import flash_attn", f"{f.src}: import in a subprocess", import_value)
    ev.add("unsloth package", f"{f.src}: importlib.metadata", f.pk.describe("unsloth"))
    details = [f"torch warns: {w}" for w in _capability_warnings(f.t)]
    if details:
        ev.add("torch capability warning", f"{f.src}: torch import/cuda warnings", details[0][len("torch warns: "):])
        details.append("a pip torch that does not list capability 12.1 is G1/G7's concern; flash-attn is unaffected")
    return ev, details


def _no_torch(f: _Facts, ev: EvidenceList, details: list[str]) -> Verdict:
    """No torch in the target at all: not the training interpreter, so nothing here says anything
    about the training's attention (G1 and G9 say unknown too)."""
    imp = (f.t.get("stages") or {}).get("import torch") or {}
    ev.add("import torch", f"{f.src}: import in a subprocess", f"{imp.get('error_type')}: {_first_line(imp.get('error'))}")
    interp = f.t.get("interpreter") or "the target interpreter"
    return Verdict(ID, Status.UNKNOWN, f"cannot tell: torch is not installed in {interp}: is --python the training "
                                       "environment?", evidence=ev.tuple(), details=tuple(details))


def _imported(f: _Facts, ev: EvidenceList, details: list[str]) -> Verdict:
    """flash-attn imports: the verdict turns on Unsloth, which must be seen installed or seen absent."""
    version = f.fa.get("version") or f.fa_pkg or "(version unknown)"
    if f.fa.get("file"):
        details.insert(0, f"flash_attn imported from {f.fa['file']}")
    if f.unsloth_state == INSTALLED:
        details += [
            f"Unsloth {f.unsloth}: FastLanguageModel's Llama-family loader ignores attn_implementation and "
            f"resolves flash_attention_2 because flash-attn imports (read in {CHECKED_AGAINST})",
            "Unsloth's vision loader (FastVisionModel / FastModel) passes attn_implementation on; this "
            "concerns the language-model loader",
        ]
        return Verdict(ID, Status.WARN,
                       f"flash-attn {version} importable and Unsloth {f.unsloth} installed: an explicit "
                       f"attn_implementation=\"sdpa\" is overridden to flash_attention_2",
                       evidence=ev.tuple(), fix=fix_for(f.t), details=tuple(details))
    if f.unsloth_state == UNKNOWN:  # a failed or missing read is never "no Unsloth"
        return Verdict(ID, Status.UNKNOWN,
                       f"cannot tell: flash-attn {version} importable, but whether Unsloth is installed is "
                       f"unknown ({f.pk.why_unknown('unsloth')}); with Unsloth an explicit "
                       f"attn_implementation=\"sdpa\" is overridden", evidence=ev.tuple(), details=tuple(details))
    return Verdict(ID, Status.OK,
                   f"flash-attn {version} importable; no Unsloth, so an explicit attn_implementation is honoured",
                   evidence=ev.tuple(), details=tuple(details))


def _import_error(f: _Facts, ev: EvidenceList, details: list[str]) -> Verdict:
    """`import flash_attn` raised: absent (SDPA, fine) or installed and broken (warn)."""
    etype, err = f.stage.get("error_type") or "Error", f.stage.get("error") or ""
    if etype == "ModuleNotFoundError" and "'flash_attn'" in err and not f.fa_pkg:
        # The import itself is the evidence: no module, so SDPA runs whatever Unsloth would pick.
        extra = f"; Unsloth {f.unsloth} will not pick flash-attn" if f.unsloth else ""
        if f.pk.state("flash-attn") == UNKNOWN:
            extra += f" (flash-attn's package metadata unknown: {f.pk.why_unknown('flash-attn')})"
        return Verdict(ID, Status.OK,
                       f"flash-attn not installed: attention runs on SDPA (expected on bare pip: no "
                       f"aarch64/sm_121 wheel on PyPI){extra}",
                       evidence=ev.tuple(), details=tuple(details))
    if "undefined symbol" in err:
        details.insert(0, "undefined symbol: flash-attn was compiled against a different torch/CUDA than "
                          "the one installed (ABI mismatch)")
    if f.unsloth:
        details.append(f"Unsloth {f.unsloth} notices the broken install and falls back; code that asks "
                       "for attn_implementation=\"flash_attention_2\" fails at load")
    meta = f.fa_pkg or ("(no package metadata)" if f.pk.state("flash-attn") == ABSENT else "(package metadata not read)")
    return Verdict(ID, Status.WARN,
                   f"flash-attn {meta} is installed but `import flash_attn` fails: {etype}: {_first_line(err)}",
                   evidence=ev.tuple(), fix=fix_for(f.t), details=tuple(details))


def _crashed_or_hung(f: _Facts, ev: EvidenceList, details: list[str]) -> Verdict:
    """The import kills or hangs the interpreter: fail when Unsloth (which loads the same extension)
    is installed, else warn; an unread Unsloth is said."""
    what = "crashed the interpreter" if f.status == "crashed" else "hung"
    how = f.stage.get("error") or (f"signal {f.stage.get('signal')}" if f.stage.get("signal") else "")
    if f.unsloth_state == INSTALLED:
        details.insert(0, f"`import unsloth` loads flash-attn's CUDA extension too (Unsloth {f.unsloth}): "
                          "the training start will die or hang the same way")
    elif f.unsloth_state == UNKNOWN:
        details.insert(0, f"whether Unsloth is installed is unknown ({f.pk.why_unknown('unsloth')}): if it is, "
                          "`import unsloth` loads the same extension and the training start dies or hangs the same way")
    return Verdict(ID, Status.FAIL if f.unsloth_state == INSTALLED else Status.WARN,
                   f"`import flash_attn` {what}: {how}".rstrip(": "),
                   evidence=ev.tuple(), fix=fix_for(f.t), details=tuple(details))


def _not_attempted(f: _Facts, ev: EvidenceList, details: list[str]) -> Verdict:
    why = f.status or "no record of the stage"
    if f.stage.get("error") and f.status == "not reached":
        why = f"{f.status}: {f.stage['error']}"
    return Verdict(ID, Status.UNKNOWN, f"cannot tell: `import flash_attn` was not attempted ({why})",
                   evidence=ev.tuple(), details=tuple(details))


def judge(r: Readings, cfg: Config) -> Verdict:
    """Rules, in order:

    - target reading missing: ``unknown``.
    - torch not installed in the target at all (`import torch`: no module 'torch'): ``unknown``: not
      the training interpreter (G1 and G9 say the same).
    - ``import flash_attn`` works and Unsloth is installed: ``warn``: an explicit
      ``attn_implementation="sdpa"`` is overridden by Unsloth's loader; fix text gives the override.
    - it works and Unsloth was seen absent: ``ok``. Unsloth's presence unknown (the package list not
      read, its read failed, or it was not asked): ``unknown``, never "no Unsloth".
    - it fails with "No module named 'flash_attn'" and no flash-attn package is seen: ``ok``: SDPA is
      used, as expected on bare pip.
    - it fails any other way (undefined symbol, missing dependency): ``warn`` naming the error; code
      asking for flash_attention_2 crashes, Unsloth falls back on its own.
    - it crashes the interpreter or hangs: ``fail`` when Unsloth is installed (importing Unsloth loads
      the same extension, so the training start dies or hangs the same way), else ``warn``.
    - the import was never attempted: ``unknown``.
    """
    tr = r.get_reading(TARGET)
    if tr.data is None:
        return unknown_from(ID, tr, "target interpreter reading")
    t = tr.data
    f = _Facts(t=t, src=tr.source or "target", pk=installed_packages(t),
               stage=(t.get("stages") or {}).get(STAGE) or {}, fa=t.get("flash_attn") or {})
    ev, details = _evidence(f, tr.source)
    if torch_not_installed(t):
        return _no_torch(f, ev, details)
    if f.status == "done":
        return _imported(f, ev, details)
    if f.status == "error":
        return _import_error(f, ev, details)
    if f.status in ("crashed", "hung"):
        return _crashed_or_hung(f, ev, details)
    return _not_attempted(f, ev, details)


GOTCHA = Gotcha(
    id=ID,
    slug="flash-attn",
    title="flash-attn: presence check and the Unsloth override",
    symptom=("`pip install flash-attn` fails or compiles for hours on a Spark. Or, inside an NGC container, "
             "a run that asked for attn_implementation=\"sdpa\" trains on flash-attn anyway (Unsloth's banner "
             "shows FA2 = True)."),
    cause=("PyPI has no aarch64/sm_121 flash-attn wheel, so bare pip tries a source build. NGC PyTorch "
           "containers bundle flash-attn 2.7.4.post1, which does run on GB10 (capability 12.1): 'no sm_121 "
           "kernels' only applies to building it yourself. With flash-attn importable, Unsloth's Llama-family "
           "loader resolves the attention implementation on its own and discards the caller's "
           "attn_implementation, so flash_attention_2 wins over an explicit SDPA request. Plain "
           "transformers/TRL/PEFT honour the request."),
    check=("In the training interpreter: flash-attn's installed version, whether `import flash_attn` works "
           "(an undefined-symbol error, a crash or a hang is reported as what it is), and whether Unsloth is "
           "installed. A package list that was not read, or a package whose metadata could not be read, is "
           "unknown, never \"not installed\": with flash-attn importable, Unsloth must be seen absent for an "
           "ok. An interpreter without torch is not judged (unknown, as in G1 and G9): it is probably not "
           "the training one. Also repeats torch's warning when a pip build does not list capability 12.1."),
    fix=FIX,
    intrusive=False,
    cadence_s=None,
    probes=("target",),
    judge=judge,
    references=(
        "Dao-AILab/flash-attention #1969: no aarch64/sm_121 wheel on PyPI (open)",
        "unslothai/unsloth unsloth/models/llama.py: kwargs.pop(\"attn_implementation\", None)  # No need since we auto call it",
        "unslothai/unsloth unsloth/models/_utils.py (2026.7.3, 2026.10.9): resolve_attention_implementation reads HAS_FLASH_ATTENTION",
        "nvcr.io/nvidia/pytorch:25.09-py3: flash-attn 2.7.4.post1 runs on GB10; the override was seen on Unsloth 2026.7.2",
    ),
)
