"""G2: flash-attn: is it there and working, and does Unsloth override an explicit SDPA request?"""

from __future__ import annotations

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.verdict import EvidenceList, Status, Verdict
from sparktui.core.versions import canonical_name
from sparktui.gotchas.base import Gotcha, unknown_from

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

FIX = f"""\
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

**flash-attn installed but failing to import** (for example `undefined symbol`): it was built
against another torch than the one installed, usually after a `pip install` replaced the
container's torch. Restore the image's torch, or remove flash-attn and use SDPA:

```bash
pip uninstall -y flash-attn
python -c "import torch; print(torch.__version__, torch.version.cuda)"
```
"""


def _installed(t: dict) -> dict[str, str | None]:
    pk = t.get("packages")
    out: dict[str, str | None] = {}
    if isinstance(pk, dict):
        for name, version in pk.items():
            c = canonical_name(name)
            out[c] = version if version is not None else out.get(c)
    return out


def _capability_warnings(t: dict) -> list[str]:
    """torch's own 'capability 12.1 is outside this build's range' warning, wherever it surfaced."""
    out = []
    for st in (t.get("stages") or {}).values():
        for w in (st or {}).get("warnings") or []:
            if "capability" in w.lower() and ("12.1" in w or "minimum and maximum" in w.lower()):
                out.append(w.strip())
    return list(dict.fromkeys(out))


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0][:300] if (text or "").strip() else ""


def judge(r: Readings, cfg: Config) -> Verdict:
    """Rules:

    - target reading missing, or the flash_attn import never attempted: ``unknown``.
    - ``import flash_attn`` works and Unsloth is installed: ``warn``: an explicit
      ``attn_implementation="sdpa"`` is overridden by Unsloth's loader; fix text gives the override.
    - it works without Unsloth: ``ok`` (transformers honours what the caller asks for).
    - it fails with "No module named 'flash_attn'" and no package is installed: ``ok``: SDPA is used,
      as expected on bare pip.
    - it fails any other way while installed (undefined symbol, missing dependency): ``warn`` naming
      the error; code asking for flash_attention_2 crashes, Unsloth falls back on its own.
    - it crashes the interpreter or hangs: ``fail`` when Unsloth is installed (importing Unsloth loads
      the same extension, so the training start dies or hangs the same way), else ``warn``.
    """
    tr = r.get_reading("target")
    if tr.data is None:
        return unknown_from(ID, tr, "target interpreter reading")
    t = tr.data
    installed = _installed(t)
    # An absent or odd "packages" (another version's snapshot, an edited one) is not "nothing installed".
    known = isinstance(t.get("packages"), dict)
    not_read = "unknown (packages not read)"
    fa_pkg = installed.get("flash-attn")
    unsloth = installed.get("unsloth")
    st = (t.get("stages") or {}).get(STAGE) or {}
    status = st.get("status")
    fa = t.get("flash_attn") or {}
    src = tr.source or "target"

    ev = EvidenceList()
    ev.add("training interpreter", t.get("selected_by") or "target", t.get("interpreter") or tr.source)
    ev.add("flash-attn package", f"{src}: importlib.metadata", fa_pkg or ("not installed" if known else not_read))
    import_value = {"done": f"ok, version {fa.get('version')}", None: "no record"}.get(
        status, f"{status}: {st.get('error_type') + ': ' if st.get('error_type') else ''}{_first_line(st.get('error'))}")
    ev.add("import flash_attn", f"{src}: import in a subprocess", import_value)
    ev.add("unsloth package", f"{src}: importlib.metadata", unsloth or ("not installed" if known else not_read))
    details = [f"torch warns: {w}" for w in _capability_warnings(t)]
    if details:
        ev.add("torch capability warning", f"{src}: torch import/cuda warnings", details[0][len("torch warns: "):])
        details.append("a pip torch that does not list capability 12.1 is G1/G7's concern; flash-attn is unaffected")
    ev_t = ev.tuple()

    if status == "done":
        version = fa.get("version") or fa_pkg or "(version unknown)"
        if fa.get("file"):
            details.insert(0, f"flash_attn imported from {fa['file']}")
        if unsloth:
            details += [
                f"Unsloth {unsloth}: FastLanguageModel's Llama-family loader ignores attn_implementation and "
                f"resolves flash_attention_2 because flash-attn imports (read in {CHECKED_AGAINST})",
                "Unsloth's vision loader (FastVisionModel / FastModel) passes attn_implementation on; this "
                "concerns the language-model loader",
            ]
            return Verdict(ID, Status.WARN,
                           f"flash-attn {version} importable and Unsloth {unsloth} installed: an explicit "
                           f"attn_implementation=\"sdpa\" is overridden to flash_attention_2",
                           evidence=ev_t, fix=FIX, details=tuple(details))
        if not known:  # the verdict turns on Unsloth: without the package list it cannot be ok
            return Verdict(ID, Status.UNKNOWN,
                           f"cannot tell: flash-attn {version} importable, but whether Unsloth is installed is "
                           f"unknown (packages not read); with Unsloth an explicit attn_implementation=\"sdpa\" "
                           f"is overridden", evidence=ev_t, details=tuple(details))
        return Verdict(ID, Status.OK,
                       f"flash-attn {version} importable; no Unsloth, so an explicit attn_implementation is honoured",
                       evidence=ev_t, details=tuple(details))

    if status == "error":
        etype, err = st.get("error_type") or "Error", st.get("error") or ""
        absent = etype == "ModuleNotFoundError" and "'flash_attn'" in err and not fa_pkg
        if absent:
            extra = f"; Unsloth {unsloth} will not pick flash-attn" if unsloth else ""
            if not known:
                extra += " (installed packages not read)"
            return Verdict(ID, Status.OK,
                           f"flash-attn not installed: attention runs on SDPA (expected on bare pip: no "
                           f"aarch64/sm_121 wheel on PyPI){extra}",
                           evidence=ev_t, details=tuple(details))
        if "undefined symbol" in err:
            details.insert(0, "undefined symbol: flash-attn was compiled against a different torch/CUDA than "
                              "the one installed (ABI mismatch)")
        if unsloth:
            details.append(f"Unsloth {unsloth} notices the broken install and falls back; code that asks "
                           "for attn_implementation=\"flash_attention_2\" fails at load")
        return Verdict(ID, Status.WARN,
                       f"flash-attn {fa_pkg or '(no package metadata)'} is installed but `import flash_attn` fails: "
                       f"{etype}: {_first_line(err)}",
                       evidence=ev_t, fix=FIX, details=tuple(details))

    if status in ("crashed", "hung"):
        what = "crashed the interpreter" if status == "crashed" else "hung"
        how = st.get("error") or (f"signal {st.get('signal')}" if st.get("signal") else "")
        if unsloth:
            details.insert(0, f"`import unsloth` loads flash-attn's CUDA extension too (Unsloth {unsloth}): "
                              "the training start will die or hang the same way")
        elif not known:
            details.insert(0, "installed packages not read: if Unsloth is installed, `import unsloth` loads "
                              "the same extension and the training start dies or hangs the same way")
        return Verdict(ID, Status.FAIL if unsloth else Status.WARN,
                       f"`import flash_attn` {what}: {how}".rstrip(": "),
                       evidence=ev_t, fix=FIX, details=tuple(details))

    why = "skipped" if status == "skipped" else (status or "no record of the stage")
    if st.get("error") and status == "not reached":
        why = f"{status}: {st['error']}"
    return Verdict(ID, Status.UNKNOWN, f"cannot tell: `import flash_attn` was not attempted ({why})",
                   evidence=ev_t, details=tuple(details))


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
           "installed. Also repeats torch's warning when a pip build does not list capability 12.1."),
    fix=FIX,
    intrusive=False,
    cadence_s=None,
    probes=("target",),
    judge=judge,
    references=(
        "Dao-AILab/flash-attention #1969: no aarch64/sm_121 wheel on PyPI (open)",
        "unslothai/unsloth unsloth/models/llama.py: kwargs.pop(\"attn_implementation\", None)  # No need since we auto call it",
        "unslothai/unsloth unsloth/models/_utils.py (2026.7.3, 2026.10.9): resolve_attention_implementation reads HAS_FLASH_ATTENTION",
        "gotcha-checks G2: NGC 25.09 flash-attn 2.7.4.post1 runs on GB10; override confirmed on Unsloth 2026.7.2",
    ),
)
