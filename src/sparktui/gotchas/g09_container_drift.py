"""G9: container-first, not bare pip: where the training runs, and how far its stack drifts from
a tested pin set (an NGC image's, or the user's own)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.shapes import CONTAINER, NVML, PINS, TARGET
from sparktui.core.verdict import Evidence, EvidenceList, Status, Verdict
from sparktui.core.versions import (
    InvalidMarker,
    InvalidSpecifier,
    Marker,
    UndefinedMarkerVariable,
    parse_specifiers,
    parse_version,
    specifiers_contain,
)
from sparktui.gotchas._facts import field_value
from sparktui.gotchas._fix import block, python_of, sh
from sparktui.gotchas._packages import ABSENT, installed_packages
from sparktui.gotchas.base import Finding, Gotcha, first_finding, unknown_from
from sparktui.gotchas.g01_cuda_abi import torch_not_installed

ID = "G9"

# Built against torch's C++ ABI (or CUDA itself): drift here surfaces as an undefined symbol at
# import or a missing kernel at run time, not as a polite version error.
ABI_COUPLED = {
    "torch", "torchvision", "torchaudio", "triton", "pytorch-triton", "flash-attn", "transformer-engine",
    "apex", "xformers", "bitsandbytes", "deepspeed", "vllm", "torchao", "nvfuser",
}
TORCH_FAMILY = ("torch", "torchvision", "torchaudio")
_CU_LABEL = re.compile(r"^cu(\d{2,3})$")

FIX = """\
Train inside the NGC PyTorch container: its torch, torchvision, flash-attn and TransformerEngine
were built together against CUDA 13 with sm_121 support.

```bash
docker run --gpus all -it --rm --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 \\
  -v "$PWD":/workspace nvcr.io/nvidia/pytorch:25.11-py3
```

Inside it, add libraries without letting pip replace the image's torch (the image sets
`PIP_CONSTRAINT=/etc/pip/constraint.txt`; keep it, and use `--no-deps` for packages that pin their
own torch):

```bash
pip install --no-deps unsloth unsloth_zoo
sparktui check G9 --pins /etc/pip/constraint.txt    # compare with the image's full list
```

On bare pip, install torch from PyTorch's CUDA 13 index rather than PyPI's default (a CUDA 12
wheel), and pin what you tested in your own file:

```bash
pip install torch torchvision --index-url https://download.pytorch.org/whl/cu130
pip freeze > pins.txt
sparktui check G9 --pins pins.txt
```
"""


NGC_IMAGE = "nvcr.io/nvidia/pytorch:{release}-py3"
DEFAULT_NGC_RELEASE = "25.11"
NGC_CONSTRAINT = "/etc/pip/constraint.txt"


def _torch_index_url(cuda: str | None) -> str | None:
    """PyTorch's wheel index for a CUDA version ("13.0" -> .../whl/cu130); None for none or cpu."""
    m = re.match(r"^(\d+)\.(\d)", cuda) if cuda else None
    return f"https://download.pytorch.org/whl/cu{m.group(1)}{m.group(2)}" if m else None


def fix_for(t: Mapping[str, Any], pins: Mapping[str, Any], ngc: dict | None, drift: list[dict],
            pinned_cuda: str | None) -> str:
    """FIX filled: the NGC release seen (or the pins'), the target interpreter's pip, the drifting
    packages put back under the user's own pin file, and the CUDA index the pins expect."""
    py, finder = python_of(t)
    release = (ngc or {}).get("release") or (pins.get("meta") or {}).get("ngc") or DEFAULT_NGC_RELEASE
    parts = [
        "Train inside the NGC PyTorch container: its torch, torchvision, flash-attn and TransformerEngine were "
        "built together against CUDA 13 with sm_121 support.\n",
        block(['docker run --gpus all -it --rm --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 \\',
               f'  -v "$PWD":/workspace {sh(NGC_IMAGE.format(release=release))}']),
    ]
    if ngc:
        parts += ["Inside it, keep the image's `PIP_CONSTRAINT` when adding libraries (`--no-deps` for packages that "
                  "pin their own torch), and see what a `pip install` changed:\n",
                  block([*finder, f"{py} -m pip check",
                         f"sparktui check G9 --python {py} --pins {NGC_CONSTRAINT}    # the image's full list"])]
    index = _torch_index_url(pinned_cuda)
    if pins.get("origin") == "file" and pins.get("path") and drift:
        names = sorted({e["name"] for e in drift})
        extra = f" --extra-index-url {index}" if index and set(names) & set(TORCH_FAMILY) else ""
        parts += [f"Put the {len(names)} drifting package(s) back to your pins:\n",
                  block([*finder, f"{py} -m pip install -c {sh(pins['path'])}{extra} {sh(*names)}",
                         f"sparktui check G9 --python {py} --pins {sh(pins['path'])}"])]
    elif not ngc:
        parts += ["On bare pip, install torch from PyTorch's CUDA index rather than PyPI's default, and pin what "
                  "you tested in your own file:\n",
                  block([*finder,
                         f"{py} -m pip install torch torchvision --index-url {index or _torch_index_url('13.0')}",
                         f"{py} -m pip freeze > pins.txt",
                         f"sparktui check G9 --python {py} --pins pins.txt"])]
    return "\n".join(parts)


def _cuda_of_label(version: str | None) -> str | None:
    """``2.9.0+cu130`` -> ``13.0``; ``+cpu`` -> ``cpu``; None when the label says nothing."""
    v = parse_version(version or "")
    if v is None or v.local is None:
        return None
    for part in v.local:
        m = _CU_LABEL.match(str(part))
        if m:
            digits = m.group(1)
            return f"{digits[:-1]}.{digits[-1]}"
        if part == "cpu":
            return "cpu"
    return None


def _cuda_major(cuda: str | None) -> str | None:
    if not cuda:
        return None
    return cuda.split(".")[0]  # "13.0" -> "13"; "cpu" stays "cpu"


def _marker_env(t: Mapping[str, Any]) -> dict[str, str]:
    py = t.get("python") or {}
    env: dict[str, str] = {"extra": ""}
    version = py.get("version")
    if version:
        env["python_full_version"] = version
        env["python_version"] = ".".join(version.split(".")[:2])
    impl = py.get("implementation")
    if impl:
        env["platform_python_implementation"] = impl
        env["implementation_name"] = impl.lower()
    system = py.get("system")
    if system:
        env["platform_system"] = system
        env["sys_platform"] = "win32" if system == "Windows" else system.lower()  # Linux -> linux, Darwin -> darwin
        env["os_name"] = "nt" if system == "Windows" else "posix"
    if py.get("machine"):
        env["platform_machine"] = py["machine"]
    return env


def _pinned_text(specs: list[str]) -> str:
    if len(specs) == 1 and specs[0].startswith("==") and not specs[0].startswith("==="):
        return specs[0][2:]
    return ",".join(specs) or "any version"


def compare(t: Mapping[str, Any], pins: Mapping[str, Any]) -> dict:
    """Pin-by-pin comparison. Each entry: name, installed, pinned, status (ok / mismatch /
    missing / cuda-mismatch / unreported / unparseable / not-applicable), note."""
    pk = installed_packages(t)
    installed = pk.versions if pk.known else {}
    env = _marker_env(t)
    groups: dict[str, dict] = {}
    notes: list[str] = []
    for pin in pins.get("pins") or []:
        name = pin.get("name") if isinstance(pin, dict) else None
        if not isinstance(name, str) or not name:
            notes.append(f"a pin without a package name was skipped (line {pin.get('line', '?') if isinstance(pin, dict) else '?'})")
            continue
        if pin.get("marker"):
            try:
                applies = Marker(pin["marker"]).evaluate(env)
            except UndefinedMarkerVariable as e:
                applies = True
                notes.append(f"{name}: marker needs {e.args[0]}, which the target did not report; compared anyway")
            except InvalidMarker as e:  # the pins probe validated it; a hand-edited snapshot may not be
                applies = True
                notes.append(f"{name}: unreadable marker ({e}); compared anyway")
            if not applies:
                groups.setdefault(name, {"specs": [], "applies": False})
                continue
        g = groups.setdefault(name, {"specs": []})
        g["applies"] = True  # a pin of the same name whose marker did not apply may have made it False
        if pin.get("spec"):
            g["specs"].extend(pin["spec"].split(","))
    pinned_cuda = (pins.get("meta") or {}).get("cuda") or _cuda_of_label(_exact_pin(groups.get("torch")))
    torch_info = t.get("torch") or {}
    if torch_info.get("version"):
        built_cuda = torch_info.get("cuda") or "cpu"
        cuda_source = "torch.version.cuda"
    else:
        built_cuda = _cuda_of_label(installed.get("torch"))
        cuda_source = "its wheel tag"
    entries: list[dict[str, Any]] = []
    for name, g in groups.items():
        entry: dict[str, Any] = {"name": name, "installed": installed.get(name), "pinned": _pinned_text(g["specs"]), "note": "",
                 "abi": name in ABI_COUPLED}
        if not g["applies"]:
            entry["status"] = "not-applicable"
        elif name not in installed:
            entry["status"] = "unreported"
            entry["note"] = pk.why_unknown(name)
        elif (ver := installed[name]) is None:
            entry["status"] = "missing"
        else:
            v = parse_version(ver)
            try:
                specs = parse_specifiers(",".join(g["specs"]))
            except InvalidSpecifier as e:
                entry.update(status="unparseable", note=str(e))
                entries.append(entry)
                continue
            if v is None:
                ok = specifiers_contain(specs, ver) if specs and all(s.op == "===" for s in specs) else None
                # compared by === (the only operator for a non-PEP 440 version): a miss is drift
                entry["status"] = "unparseable" if ok is None else "ok" if ok else "mismatch"
                if ok is None:
                    entry["note"] = "installed version is not PEP 440; not compared"
            else:
                entry["status"] = "ok" if specifiers_contain(specs, v) else "mismatch"
            if name in TORCH_FAMILY and pinned_cuda:
                mine = built_cuda if name == "torch" else _cuda_of_label(installed[name])
                if mine and _cuda_major(mine) != _cuda_major(pinned_cuda):
                    entry["status"] = "cuda-mismatch"
                    built = "a CPU-only build" if mine == "cpu" else f"a CUDA {mine} build"
                    src = f" per {cuda_source}" if name == "torch" else ""
                    entry["note"] = f"{built}{src}; the pins expect CUDA {pinned_cuda}"
        entries.append(entry)
    order = {"cuda-mismatch": 0, "mismatch": 1, "missing": 2, "unparseable": 3, "unreported": 4, "ok": 5, "not-applicable": 6}
    entries.sort(key=lambda e: (order[e["status"]], not e["abi"], e["name"]))
    return {"entries": entries, "notes": notes, "pinned_cuda": pinned_cuda, "built_cuda": built_cuda}


def _exact_pin(group: dict | None) -> str | None:
    if not group:
        return None
    for s in group["specs"]:
        if s.startswith("==") and not s.startswith("==="):
            return s[2:]
    return None


def _drift_line(e: dict) -> str:
    if e["status"] == "missing":
        text = f"{e['name']}: missing, pinned {e['pinned']}"
    else:
        text = f"{e['name']}: installed {e['installed']}, pinned {e['pinned']}"
    if e["note"]:
        text += f" ({e['note']})"
    if e["status"] in ("mismatch", "cuda-mismatch"):
        if e["name"] == "torch":
            text += " [every package compiled against torch must match this one]"
        elif e["abi"]:
            text += " [compiled against torch/CUDA: a mismatch shows up as undefined symbols or missing kernels]"
    return text


def _where(c: Mapping[str, Any] | None, t: Mapping[str, Any]) -> tuple[bool | None, str, dict | None]:
    """(in a container?, words for it, NGC facts) from the container probe and the target's env."""
    c = c or {}
    ngc: dict | None = c.get("ngc")
    target_ngc = ((t.get("python") or {}).get("env") or {}).get("NVIDIA_PYTORCH_VERSION")
    if ngc is None and target_ngc:
        ngc = {"product": "PyTorch", "release": target_ngc, "from": "target interpreter's environment"}
    if not c.get("in_container") and ngc is None:
        return None, "no container detected (not proof of a bare host)", None
    runtime = c.get("runtime") if c.get("in_container") else None
    words = f"inside {runtime}" if runtime and not runtime.startswith("unknown") else "inside a container"
    if c.get("name"):
        words += f" '{c['name']}'"
    if ngc and ngc.get("release"):
        words += f", NGC {ngc.get('product') or 'image'} {ngc['release']}"
    return True, words, ngc


def _gpu_seen(r: Readings, t: Mapping[str, Any]) -> str | None:
    """Words for the GPU this machine shows (NVML, else the target's torch), or None if none seen.
    A configured name hint does not count: G9 claims a CUDA failure only for a GPU it saw."""
    nv = r.data(NVML) or {}
    devs = nv.get("devices") or [] if isinstance(nv, dict) else []
    if devs and isinstance(devs[0], dict):
        name = field_value(devs[0], "name")
        return f"{name or 'a GPU'} (NVML)"
    tc = t.get("torch_cuda") or {}
    if isinstance(tc, dict) and tc.get("available") is True:
        devs = tc.get("devices") or []
        name = (devs[0].get("name") if devs and isinstance(devs[0], dict) else None) or tc.get("name")
        return f"{name or 'a GPU'} (the target's torch)"
    return None


# -- can a container with the GPU run here (issue 14) -----------------------------------------------
TOOLKIT_DOC = "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html"
INSTALL_TOOLKIT = [
    "# NVIDIA Container Toolkit (DGX OS ships NVIDIA's apt repository; elsewhere add it first, see",
    f"# {TOOLKIT_DOC})",
    "sudo apt-get update",
    "sudo apt-get install -y nvidia-container-toolkit",
]
CONFIGURE_DOCKER = [
    "sudo nvidia-ctk runtime configure --runtime=docker    # adds \"runtimes\": {\"nvidia\": ...} to /etc/docker/daemon.json",
    "sudo systemctl restart docker",
    "docker run --rm --gpus all ubuntu nvidia-smi    # check: the GPU shows",
]
CONFIGURE_PODMAN = [
    "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml",
    "podman run --rm --device nvidia.com/gpu=all ubuntu nvidia-smi    # check: the GPU shows",
]
INSTALL_DOCKER = ["sudo apt-get update", "sudo apt-get install -y docker.io",
                  "sudo usermod -aG docker \"$USER\"    # then log in again"]


@dataclass(frozen=True)
class Readiness:
    """Whether a container with the GPU can run here: ready None = cannot tell (a part unreadable)."""

    ready: bool | None
    words: str
    fix: tuple[str, ...]  # lines of the block that sets it up; empty when ready
    evidence: tuple[Evidence, ...]


def _engine_text(e: Mapping[str, Any]) -> str:
    if not e.get("path"):
        return "not on PATH"
    return f"{e['path']} ({e.get('version') or 'version unknown: ' + str(e.get('error') or 'not read')})"


def _map(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, dict) else {}


def readiness(hr: Mapping[str, Any]) -> Readiness:
    """Pure: from the container probe's ``host_runtime``. docker counts as GPU-ready with the NVIDIA
    runtime in daemon.json (or as default-runtime), the nvidia-container-runtime-hook that
    `--gpus` uses, or an NVIDIA CDI spec; podman with a CDI spec."""
    engines = [e for e in (hr.get("engines") or []) if isinstance(e, dict)]
    tools, dj, cdi = _map(hr.get("tools")), _map(hr.get("daemon_json")), _map(hr.get("cdi"))
    specs = [str(x) for x in cdi.get("specs") or []]
    cdi_errors = [str(x) for x in cdi.get("errors") or []]
    ev = [Evidence(f"{e.get('name')} (container engine)", "PATH", _engine_text(e)) for e in engines]
    ev.append(Evidence("NVIDIA container tools", "PATH",
                       ", ".join(f"{t} {p}" for t, p in tools.items() if p) or
                       "none of " + ", ".join(tools or ("nvidia-ctk",)) + " on PATH"))
    dj_path = str(dj.get("path") or "/etc/docker/daemon.json")
    state = dj.get("state")
    if state == "read":
        dj_text = ("has the nvidia runtime" if dj.get("nvidia_runtime") else "no nvidia runtime") + (
            f"; default-runtime {dj['default_runtime']}" if dj.get("default_runtime") else "")
    elif state == "absent":
        dj_text = "absent (docker has only its built-in runtimes)"
    else:
        dj_text = f"{state or 'not reported'}: {dj.get('error') or 'no reason given'} (cannot tell what it configures)"
    ev.append(Evidence("docker daemon.json runtimes", dj_path, dj_text))
    ev.append(Evidence("NVIDIA CDI specs", "/etc/cdi, /var/run/cdi",
                       (", ".join(specs) or "none") + (f"; cannot list {', '.join(cdi_errors)}" if cdi_errors else "")))
    found = {e.get("name"): e for e in engines if e.get("path")}
    has_ctk = bool(tools.get("nvidia-ctk"))
    toolkit = [] if has_ctk else INSTALL_TOOLKIT
    evt = tuple(ev)
    if not found:
        return Readiness(False, "no docker or podman on PATH: a container cannot run here yet",
                         (*INSTALL_DOCKER, *INSTALL_TOOLKIT, *CONFIGURE_DOCKER), evt)
    if "docker" in found:
        d = found["docker"]
        name = f"docker {d.get('version') or ''}".strip()
        if dj.get("nvidia_runtime") or dj.get("default_runtime") == "nvidia":
            return Readiness(True, f"{name} with the NVIDIA runtime ({dj_path}): the container can run here", (), evt)
        if tools.get("nvidia-container-runtime-hook"):
            return Readiness(True, f"{name} with the NVIDIA Container Toolkit (nvidia-container-runtime-hook, "
                                   "used by --gpus): the container can run here", (), evt)
        if specs:
            return Readiness(True, f"{name} with an NVIDIA CDI spec ({specs[0]}): run it with "
                                   "--device nvidia.com/gpu=all (CDI needs Docker 25 or later)", (), evt)
        if state in ("unreadable", "malformed") or (state is None and not dj):
            return Readiness(None, f"cannot tell whether {name} has the NVIDIA runtime: {dj_path} "
                                   f"{state or 'not reported'} ({dj.get('error') or 'no reason given'})",
                             (f"sudo cat {dj_path}    # fix or remove what is not JSON", *toolkit, *CONFIGURE_DOCKER), evt)
        words = f"{name} but no NVIDIA container runtime"
        if cdi_errors:
            return Readiness(None, f"cannot tell whether {name} reaches the GPU: {words} configured, and "
                                   f"{', '.join(cdi_errors)} could not be listed", (*toolkit, *CONFIGURE_DOCKER), evt)
        return Readiness(False, words + (": nvidia-ctk is installed, docker is not configured for it" if has_ctk else
                                         ": the NVIDIA Container Toolkit is not installed"),
                         (*toolkit, *CONFIGURE_DOCKER), evt)
    p = found["podman"]
    name = f"podman {p.get('version') or ''}".strip()
    if specs:
        return Readiness(True, f"{name} with an NVIDIA CDI spec ({specs[0]}): run it with --device nvidia.com/gpu=all "
                               "instead of --gpus all", (), evt)
    if cdi_errors:
        return Readiness(None, f"cannot tell whether {name} reaches the GPU: {', '.join(cdi_errors)} could not be listed",
                         (*toolkit, *CONFIGURE_PODMAN), evt)
    return Readiness(False, f"{name} but no NVIDIA CDI spec (/etc/cdi/nvidia.yaml)", (*toolkit, *CONFIGURE_PODMAN), evt)


def _with_runtime(v: Verdict, c: Mapping[str, Any] | None, inside: bool | None) -> Verdict:
    """Say whether the container G9 advises can run here: evidence always, and where the verdict
    gives a fix, a summary note and the set-up block first. Nothing when the probe did not look."""
    hr = (c or {}).get("host_runtime") if isinstance(c, dict) else None
    if not isinstance(hr, dict):
        return v
    if inside:
        return replace(v, evidence=v.evidence + (Evidence("container runtime here", "container probe",
                                                          "not judged: already inside a container"),))
    rd = readiness(hr)
    ev = v.evidence + rd.evidence + (Evidence("can a GPU container run here", "container probe", rd.words),)
    if not v.fix:
        return replace(v, evidence=ev)
    fix = v.fix
    if rd.fix:
        head = ("Set up the container runtime first (" + rd.words + "):\n" if rd.ready is False else
                "Check the container runtime first (" + rd.words + "):\n")
        fix = head + "\n" + block(rd.fix) + "\n" + fix
    return replace(v, summary=f"{v.summary}; container here: {rd.words}", evidence=ev, fix=fix)


def judge(r: Readings, cfg: Config) -> Verdict:
    """G9's verdict (rules in ``_judge``), then whether the advised container can run here."""
    v = _judge(r, cfg)
    c = r.data(CONTAINER)
    inside = _where(c, ((r.data(TARGET) or {}) if isinstance(r.data(TARGET), dict) else {}))[0]
    return _with_runtime(v, c, inside)


def _judge(r: Readings, cfg: Config) -> Verdict:
    """Rules, in order:

    - target or pins reading missing (a malformed pins file included): ``unknown`` with the reason.
    - ``unknown``: torch is pinned but not installed in the target at all (`import torch` finds no
      module 'torch'): most likely not the training interpreter, so its drift means nothing (G1
      says the same).
    - ``fail``: torch (or torchvision/torchaudio by wheel tag) is built for a different CUDA major
      than the pins expect, e.g. a PyPI cu128 wheel where the NGC set is CUDA 13: G1's crash. Only
      where a GPU was seen (NVML or the target's torch); with none seen the same drift is a
      ``warn`` that says no CUDA failure is claimed.
    - ``warn``: any other drift (a version outside the pin, a pinned package missing), listed
      package by package, ABI-coupled packages first; also a container whose NGC release differs
      from the shipped set being compared against.
    - ``ok``: every applicable pin is satisfied.
    - ``unknown``: nothing could be compared (no pins apply, or no versions reported).

    The container answer only shapes the words: inside a container, drift means something was
    pip-installed over the image; with no marker found it is "not detected", never "bare host".
    """
    tr, pr = r.get_reading(TARGET), r.get_reading(PINS)
    if tr.data is None:
        return unknown_from(ID, tr, "target interpreter reading")
    if pr.data is None:
        return unknown_from(ID, pr, "pin set")
    t, pins = tr.data, pr.data
    cr = r.get_reading(CONTAINER)
    ev = EvidenceList()
    inside, where, ngc = _where(cr.data, t)
    _container_evidence(cr, ngc, pins, ev)
    pk = installed_packages(t)
    if not pk.known:
        why = pk.error
        return Verdict(ID, Status.UNKNOWN, f"cannot tell: installed package versions unavailable ({why})",
                       evidence=ev.tuple() + (Evidence("installed packages", tr.source or "target", f"unavailable: {why}"),))
    cmp = compare(t, pins)
    entries = [e for e in cmp["entries"] if e["status"] != "not-applicable"]
    no_torch = _torch_missing(t, pk, entries, ev)
    if no_torch is not None:
        return no_torch
    for e in entries:
        ev.add(f"{e['name']} installed (pinned {e['pinned']})", "target importlib.metadata",
               "not reported" if e["status"] == "unreported" else (e["installed"] or "not installed"))
    if cmp["built_cuda"] and cmp["pinned_cuda"]:
        ev.add("torch CUDA build vs pins", "target torch / pins", f"{cmp['built_cuda']} vs {cmp['pinned_cuda']}")
    c = _Compared(r, t, ev, where, ngc, pins.get("image") or pins.get("path"), entries,
                  [e for e in entries if e["status"] not in ("unreported", "unparseable")],
                  [e for e in entries if e["status"] in ("cuda-mismatch", "mismatch", "missing")])
    details = _details_of(c, cmp)
    c.release_note = _release_note(inside, ngc, pins)
    if c.release_note:
        details.insert(0, c.release_note)
    fix = fix_for(t, pins, ngc, c.drift, cmp["pinned_cuda"])
    f = first_finding(DRIFT_RULES, c) or rule_all_match(c)
    return Verdict(ID, f.status, f.text, evidence=ev.tuple(), fix=fix if f.status is not Status.OK else "",
                   details=tuple(details))


def _container_evidence(cr: Any, ngc: dict | None, pins: Mapping[str, Any], ev: EvidenceList) -> None:
    """What the container probe checked and hinted, NGC's release, and the pin set compared against."""
    if cr.data is None:
        ev.add("container detection", cr.source or "container", f"unavailable: {cr.error or 'no data'}")
    else:
        for chk in cr.data.get("checks") or []:
            if isinstance(chk, dict):  # an edited snapshot may lack a field: say so, never crash
                ev.add(str(chk.get("check") or "container check (unnamed)"), "container probe", chk.get("seen", "not reported"))
        for hint in cr.data.get("hints") or []:
            ev.add("hint", "container probe", hint)
    if ngc and ngc.get("from"):
        ev.add("NVIDIA_PYTORCH_VERSION", ngc["from"], ngc["release"])
    label = pins.get("image") or pins.get("path")
    ev.add("pin set", pins.get("path") or "pins", f"{label} ({len(pins.get('pins') or [])} pins)")


def _torch_missing(t: Mapping[str, Any], pk: Any, entries: list[dict], ev: EvidenceList) -> Verdict | None:
    """unknown when torch is pinned but not installed in the target: not the training interpreter."""
    imp = (t.get("stages") or {}).get("import torch") or {}
    no_torch = torch_not_installed(t) or (imp.get("status") != "done" and pk.state("torch") == ABSENT)
    if not (no_torch and any(e["name"] == "torch" for e in entries)):
        return None
    ev.add("import torch", "target interpreter",
           f"{imp.get('error_type')}: {imp.get('error')}" if imp.get("status") == "error" else imp.get("status", "not reported"))
    interp = t.get("interpreter") or "the target interpreter"
    return Verdict(ID, Status.UNKNOWN,
                   f"cannot tell: torch not installed in {interp}: is --python the training environment?",
                   evidence=ev.tuple(),
                   details=(f"{len(entries)} pins not compared: the drift of an interpreter without torch says "
                            "nothing about the training stack",))


@dataclass
class _Compared:
    """The pins compared with what the target has installed, for the drift rules."""

    r: Readings
    t: Mapping[str, Any]
    ev: EvidenceList
    where: str
    ngc: dict | None
    label: Any
    entries: list[dict]
    compared: list[dict]
    drift: list[dict]
    release_note: str | None = None


def _details_of(c: _Compared, cmp: dict) -> list[str]:
    details = [_drift_line(e) for e in c.drift]
    details += [f"{e['name']}: not compared ({e['note']})" for e in c.entries if e["status"] in ("unreported", "unparseable")]
    details += cmp["notes"]
    if any(e["name"] == "torch" and e["status"] == "missing" for e in c.entries):
        details.append(f"torch is not installed in {c.t.get('interpreter') or 'the target interpreter'}: "
                       "is it the training interpreter? (--python)")
    return details


def _release_note(inside: bool | None, ngc: dict | None, pins: Mapping[str, Any]) -> str | None:
    """Inside an NGC container whose release is not the shipped pin set's: which set to compare with."""
    pins_release = (pins.get("meta") or {}).get("ngc")
    if not (inside and ngc and ngc.get("release") and pins_release and pins.get("origin") == "shipped"
            and ngc["release"] != pins_release):
        return None
    wanted = f"ngc-pytorch-{ngc['release']}"
    hint = (f"set [pins] image = \"{wanted}\"" if wanted in (pins.get("shipped_sets") or [])
            else "use --pins /etc/pip/constraint.txt (the image's own list)")
    return f"the container is NGC {ngc['release']} but the pins are for {pins_release}: {hint}"


def rule_nothing_compared(c: _Compared) -> Finding | None:
    if c.compared:
        return None
    why = "no pin applies to this interpreter" if not c.entries else "no pinned version could be compared"
    return Finding(Status.UNKNOWN, f"cannot tell: {why} ({c.where})")


def rule_cuda_mismatch(c: _Compared) -> Finding | None:
    """A wheel built for another CUDA major fails where a GPU is seen; without one it warns."""
    worst = [e for e in c.drift if e["status"] == "cuda-mismatch"]
    if not worst:
        return None
    e = worst[0]
    gpu = _gpu_seen(c.r, c.t)
    c.ev.add("GPU seen", "NVML / target torch.cuda", gpu or "none (NVML named no device; torch.cuda.is_available() not True)")
    if gpu:
        return Finding(Status.FAIL, f"{e['name']} is {e['note']}; GPU: {gpu}; {c.where}")
    others = len(c.drift) - 1
    return Finding(Status.WARN, (f"{e['name']} is {e['note']} (drift from {c.label}"
                                 + (f", +{others} more drifting" if others else "")
                                 + "); no GPU seen here, so no CUDA failure is claimed; " + c.where))


def rule_drift(c: _Compared) -> Finding | None:
    if not c.drift:
        return None
    names = ", ".join(e["name"] for e in c.drift[:4]) + (", ..." if len(c.drift) > 4 else "")
    prefix = "pip-installed over the image? " if c.ngc else ""
    return Finding(Status.WARN, f"{prefix}{len(c.drift)} of {len(c.compared)} pinned packages drift from {c.label}: "
                                f"{names}; {c.where}")


def rule_release_mismatch(c: _Compared) -> Finding | None:
    return Finding(Status.WARN, f"{c.where}; {c.release_note}") if c.release_note else None


def rule_all_match(c: _Compared) -> Finding:
    return Finding(Status.OK, f"{len(c.compared)} pinned packages match {c.label}; {c.where}")


DRIFT_RULES: tuple[Callable[[_Compared], Finding | None], ...] = (
    rule_nothing_compared, rule_cuda_mismatch, rule_drift, rule_release_mismatch,
)


GOTCHA = Gotcha(
    id=ID,
    slug="container-drift",
    title="Container-first, not bare pip",
    symptom=("A stack assembled with pip fails late: an undefined symbol at import, a missing sm_121 kernel "
             "at the first step, a flash-attn build that never finishes. Or a container that worked "
             "yesterday breaks after a `pip install` quietly replaced its torch."),
    cause=("pip resolves each package on its own and never checks the CUDA ABI. On aarch64 with CUDA 13 and "
           "sm_121, few wheels exist, and those that do were not built together. NVIDIA's NGC PyTorch image "
           "ships torch, torchvision, flash-attn and TransformerEngine built as one set against CUDA 13; "
           "drifting from such a set (by design on bare pip, by accident inside a container) is where the "
           "import-time and first-kernel failures come from."),
    check=("Looks for container markers in order: /.dockerenv, /run/.containerenv (name, image), the "
           "$container and Kubernetes variables, runtime names in /proc/1/cgroup, runtime storage in "
           "/proc/self/mountinfo, and NGC's image variables, here and in the training interpreter. No "
           "match is reported as 'not detected', never as proof of a bare host. Then compares the training "
           "interpreter's installed versions (PEP 440, local labels such as +cu130 included) with a pin "
           "set: the shipped NGC PyTorch set by default, or your own requirements/constraints file "
           "(--pins). A torch built for another CUDA major than the pins fails where a GPU is seen (NVML "
           "or the target's torch) and warns where none is; other drift warns, listed package by package. "
           "An interpreter without torch is not judged: it is probably not the training one. A package "
           "list that could not be read is unknown, and a package whose metadata could not be read is "
           "'not compared', never 'missing'. Where it advises the container, it says whether one can run "
           "here: docker or podman on PATH (and their versions), the NVIDIA Container Toolkit (nvidia-ctk, "
           "nvidia-container-runtime-hook), /etc/docker/daemon.json's nvidia runtime or default-runtime, and "
           "NVIDIA CDI specs in /etc/cdi or /var/run/cdi; if not, the apt and nvidia-ctk commands that set it "
           "up. A daemon.json that cannot be read or parsed makes that part 'cannot tell', never a crash."),
    fix=FIX,
    intrusive=False,
    cadence_s=None,
    probes=("container", "target", "pins", "nvml"),
    judge=judge,
    references=(
        "NGC PyTorch release notes: since 25.03 the image pins its packages in /etc/pip/constraint.txt",
        "Docker: /.dockerenv; Podman: /run/.containerenv",
        "NGC containers bundle flash-attn 2.7.4.post1; no aarch64/sm_121 wheel on PyPI: Dao-AILab/flash-attention #1969",
    ),
)
