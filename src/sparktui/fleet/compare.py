"""What must match across machines for one DDP/FSDP job: a pure comparison of their readings.

Every rank of a multi-machine job must run the same code against the same collective library:
a different torch, CUDA build or NCCL gives hangs or "NCCL WARN ... version mismatch" at the first
all-reduce; a different transformers or peft can build a different model, and DDP then waits
forever on a gradient bucket one rank never fills. Rows marked ``required`` are those; the rest
(GPU, OS, Python, container image, sparktui itself) are shown and flagged but do not fail.

A cell is a value seen, or unknown with the reason (never guessed). A row matches when every
value was seen and all are equal; it differs as soon as two seen values differ; otherwise it is
unknown. An unreachable machine makes its cells unknown, so nothing "matches" by omission.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from sparktui.core.inert import visible
from sparktui.core.readings import Readings
from sparktui.core.verdict import Status, Verdict
from sparktui.core.versions import canonical_name

# Versions every rank must share (the training stack the target probe reads, minus aliases).
REQUIRED_PACKAGES = frozenset(canonical_name(n) for n in (
    "torch", "torchvision", "torchaudio", "triton", "pytorch-triton", "transformers", "accelerate", "peft", "trl",
    "datasets", "tokenizers", "safetensors", "bitsandbytes", "flash-attn", "xformers", "unsloth", "unsloth_zoo",
    "deepspeed", "vllm", "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu13", "nvidia-cuda-runtime",
    "nvidia-nccl-cu12", "nvidia-nccl-cu13", "transformer-engine", "apex", "torchao", "megatron-core", "nemo-toolkit",
    "torchtitan", "liger-kernel", "axolotl", "lightning", "pytorch-lightning",
))
NOT_INSTALLED = "not installed"


@dataclass(frozen=True)
class Cell:
    """One machine's value: ``value`` when seen (a string), else None with ``why``."""

    value: str | None
    why: str | None = None

    @property
    def known(self) -> bool:
        return self.value is not None

    @property
    def text(self) -> str:
        return self.value if self.value is not None else "?"

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "why": self.why}


def _unknown(why: str | None) -> Cell:
    return Cell(None, why or "not reported")


@dataclass(frozen=True)
class Machine:
    """One column: a name, and its readings (None when it could not be read, with ``reason``)."""

    name: str
    readings: Readings | None
    reason: str | None = None
    sparktui_version: str | None = None
    verdicts: tuple[Verdict, ...] = ()
    local: bool = False

    @property
    def reachable(self) -> bool:
        return self.readings is not None


@dataclass(frozen=True)
class Row:
    key: str  # stable identifier, e.g. "driver", "pkg:transformers"
    what: str  # label shown to people
    required: bool  # a difference fails the comparison
    cells: tuple[Cell, ...]  # one per machine, local first
    match: bool | None  # None: cannot tell
    why: str = ""  # why it has to match

    @property
    def status(self) -> Status:
        if self.match is True:
            return Status.OK
        if self.match is False:
            return Status.FAIL if self.required else Status.WARN
        return Status.UNKNOWN if self.required else Status.SKIP

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "what": self.what, "required": self.required, "match": self.match,
                "status": self.status.value, "why": self.why, "values": [c.to_dict() for c in self.cells]}


@dataclass(frozen=True)
class Comparison:
    machines: tuple[Machine, ...]
    rows: tuple[Row, ...]

    @property
    def status(self) -> Status:
        """fail: a required row differs; else unknown: a required row could not be compared (a
        machine unreachable, a value unreadable); else warn: an advisory row differs; else ok.
        (Unknown outranks an advisory difference here: it is a go/no-go for a launch.)"""
        if self.differing(required_only=True):
            return Status.FAIL
        if self.unknown():
            return Status.UNKNOWN
        if self.differing():
            return Status.WARN
        return Status.OK

    def differing(self, required_only: bool = False) -> list[Row]:
        return [r for r in self.rows if r.match is False and (r.required or not required_only)]

    def unknown(self) -> list[Row]:
        return [r for r in self.rows if r.match is None and r.required]

    def row(self, key: str) -> Row | None:
        return next((r for r in self.rows if r.key == key), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status.value,
            "machines": [{"name": m.name, "local": m.local, "reachable": m.reachable, "reason": m.reason,
                          "sparktui_version": m.sparktui_version} for m in self.machines],
            "rows": [r.to_dict() for r in self.rows],
        }


def match_of(cells: Sequence[Cell]) -> bool | None:
    seen = {c.value for c in cells if c.known}
    if len(seen) > 1:
        return False
    if len(seen) == 1 and all(c.known for c in cells):
        return True
    return None


# -- reading one machine's facts -----------------------------------------------------------------

def _field(d: Any) -> tuple[Any, str | None]:
    """NVML static fields are {"value": v} or {"value": None, "error": why}."""
    if isinstance(d, dict):
        return d.get("value"), d.get("error")
    return d, None


def _reading_why(readings: Readings, probe: str) -> str:
    r = readings.get_reading(probe)
    return f"{probe}: {r.error or 'no data'}"


def _nvml(readings: Readings, key: str) -> Cell:
    data = readings.data("nvml")
    if not data:
        return _unknown(_reading_why(readings, "nvml"))
    v, err = _field(data.get(key))
    return Cell(str(v)) if v not in (None, "") else _unknown(f"NVML: {err or 'not reported'}")


def _gpu(readings: Readings) -> Cell:
    data = readings.data("nvml")
    if not data:
        return _unknown(_reading_why(readings, "nvml"))
    names = []
    devices = data.get("devices")
    for dev in devices if isinstance(devices, list) else []:
        if not isinstance(dev, dict):
            return _unknown("NVML: a device entry is malformed")
        name, err = _field(dev.get("name"))
        cc, _ = _field(dev.get("compute_capability"))
        if name is None:
            return _unknown(f"NVML: {err or 'GPU name not reported'}")
        names.append(f"{name} (sm_{cc[0]}{cc[1]})" if isinstance(cc, (list, tuple)) and len(cc) == 2 else str(name))
    return Cell(", ".join(names)) if names else _unknown("NVML saw no GPU")


def _target(readings: Readings) -> tuple[Mapping[str, Any] | None, str]:
    data = readings.data("target")
    return data, ("" if data else _reading_why(readings, "target"))


def _obj(v: Any) -> dict[str, Any]:
    """A field that should be an object, or {} (unknown) when it is missing or of another type."""
    return v if isinstance(v, dict) else {}


def _stage_why(t: Mapping[str, Any], stage: str) -> str:
    st = _obj(_obj(t.get("stages")).get(stage))
    err = st.get("error") or st.get("status") or "not reported"
    return f"{stage}: {err}"


def _torch_not_installed(t: Mapping[str, Any]) -> bool:
    pk = t.get("packages")
    st = _obj(_obj(t.get("stages")).get("import torch"))
    return isinstance(pk, dict) and "torch" in pk and pk.get("torch") is None and \
        ("No module named" in str(st.get("error") or "") or not t.get("torch"))


CPU_ONLY = "none (CPU-only torch)"


def _cpu_only(info: dict[str, Any]) -> bool:
    """torch imported and reports no CUDA (nor ROCm) build: a fact, not a missing value."""
    return bool(info.get("version")) and "cuda" in info and info.get("cuda") is None and not info.get("hip")


def _torch_field(readings: Readings, key: str, what: str) -> Cell:
    t, why = _target(readings)
    if t is None:
        return _unknown(why)
    info = _obj(t.get("torch"))
    if info.get(key) not in (None, ""):
        return Cell(str(info[key]))
    if _torch_not_installed(t):
        return Cell(NOT_INSTALLED)
    if _cpu_only(info):
        return Cell(CPU_ONLY)
    if info:
        return _unknown(info.get(f"{key}_error") or f"{what} not reported by torch")
    return _unknown(_stage_why(t, "import torch"))


def _torch_version(readings: Readings) -> Cell:
    t, why = _target(readings)
    if t is None:
        return _unknown(why)
    v = _obj(t.get("torch")).get("version")
    if v:
        return Cell(str(v))
    if _torch_not_installed(t):
        return Cell(NOT_INSTALLED)
    pk = _obj(t.get("packages"))
    if pk.get("torch"):  # installed, but the import failed: the distribution's version still counts
        return Cell(str(pk["torch"]))
    return _unknown(_stage_why(t, "import torch"))


def _nccl(readings: Readings) -> Cell:
    """The NCCL torch links (torch.cuda.nccl.version), else the pip wheel torch loads."""
    t, why = _target(readings)
    if t is None:
        return _unknown(why)
    info = _obj(t.get("torch"))
    if info.get("nccl"):
        return Cell(str(info["nccl"]))
    pk = _obj(t.get("packages"))
    for name in ("nvidia-nccl-cu13", "nvidia-nccl-cu12"):
        if pk.get(name):
            return Cell(f"{pk[name]} ({name})")
    if _torch_not_installed(t):
        return Cell(NOT_INSTALLED)
    if _cpu_only(info):
        return Cell(CPU_ONLY)
    return _unknown(info.get("nccl_error") or ("torch did not report NCCL" if info else _stage_why(t, "import torch")))


def _python(readings: Readings) -> Cell:
    t, why = _target(readings)
    if t is None:
        return _unknown(why)
    py = _obj(t.get("python"))
    return Cell(str(py["version"])) if py.get("version") else _unknown(_stage_why(t, "python"))


def packages_of(readings: Readings) -> tuple[dict[str, str | None] | None, str]:
    """{canonical name: version or None}, or (None, why) when the stage failed."""
    t, why = _target(readings)
    if t is None:
        return None, why
    pk = t.get("packages")
    if not isinstance(pk, dict) or (set(pk) == {"error"} and isinstance(pk.get("error"), str)):
        return None, (pk.get("error") if isinstance(pk, dict) else None) or _stage_why(t, "packages")
    out: dict[str, str | None] = {}
    for name, version in pk.items():
        c = canonical_name(name)
        if out.get(c) is None:
            out[c] = version if isinstance(version, str) and version else None
    return out, ""


def container_image(readings: Readings) -> Cell:
    """What the container is, as far as it can be seen: an image name, an NGC release, or that
    none was detected. The probe never claims "bare host", so neither does this."""
    c = readings.data("container")
    if not c:
        return _unknown(_reading_why(readings, "container"))
    parts = []
    if c.get("image"):
        parts.append(str(c["image"]))
    ngc = _obj(c.get("ngc"))
    if ngc.get("release"):
        parts.append(f"NGC {ngc.get('product') or ''} {ngc['release']}".replace("  ", " ").strip()
                     + (f" build {ngc['build_id']}" if ngc.get("build_id") else ""))
    if parts:
        return Cell(" · ".join(parts))
    if c.get("in_container"):
        return _unknown(f"inside a {c.get('runtime') or 'container'}, image not visible from inside")
    return _unknown("no container detected (a bare host, or a runtime that hides itself)")


def _os(readings: Readings, host: dict[str, Any] | None) -> Cell:
    h = readings.data("host") or host or {}
    if not h:
        return _unknown(_reading_why(readings, "host"))
    bits = [h.get("os_release"), h.get("kernel"), h.get("machine")]
    return Cell(" · ".join(str(b) for b in bits if b)) if any(bits) else _unknown("host facts empty")


# -- the comparison ------------------------------------------------------------------------------

_FIXED_ROWS = (
    # key, label, required, why
    ("driver", "NVIDIA driver", True, "the CUDA driver and NCCL's transport must be the same build on every node"),
    ("cuda_driver", "CUDA (driver API)", True, "kernels and the CUDA runtime are checked against it"),
    ("torch", "torch", True, "every rank must run the same autograd, collectives and kernels"),
    ("torch_cuda", "torch built for CUDA", True, "a cu12 and a cu13 build do not share a runtime or NCCL"),
    ("nccl", "NCCL", True, "mismatched NCCL versions hang or fail at the first collective"),
    ("cudnn", "cuDNN", False, "different kernels, different numerics"),
    ("python", "Python", False, "pickled objects (broadcast_object_list) and wheels follow it"),
    ("gpu", "GPU", False, "mixed GPUs run, at the slowest one's pace"),
    ("container", "container image", False, "one image pins the whole stack; its versions are compared row by row"),
    ("os", "OS · kernel · arch", False, "drivers and RDMA stacks follow the kernel"),
    ("sparktui", "sparktui", False, "snapshots are compared field by field"),
)


def _cell(key: str, m: Machine, host: dict[str, Any] | None) -> Cell:
    r = m.readings
    if r is None:
        return _unknown(m.reason or "unreachable")
    if key == "driver":
        return _nvml(r, "driver_version")
    if key == "cuda_driver":
        return _nvml(r, "cuda_driver_version")
    if key == "torch":
        return _torch_version(r)
    if key == "torch_cuda":
        return _torch_field(r, "cuda", "torch.version.cuda")
    if key == "nccl":
        return _nccl(r)
    if key == "cudnn":
        return _torch_field(r, "cudnn", "cuDNN version")
    if key == "python":
        return _python(r)
    if key == "gpu":
        return _gpu(r)
    if key == "container":
        return container_image(r)
    if key == "os":
        return _os(r, host)
    if key == "sparktui":
        return Cell(m.sparktui_version) if m.sparktui_version else _unknown("version not reported")
    raise KeyError(key)


def compare(machines: Sequence[Machine]) -> Comparison:
    """Rows for the fixed facts, then one row per package installed on at least one machine
    (torch itself is the "torch" row)."""
    rows: list[Row] = []
    for key, what, required, why in _FIXED_ROWS:
        fixed = tuple(_cell(key, m, None) for m in machines)
        if key == "container" and all(c.known for c in fixed):
            # every machine's image is seen: two images are two stacks, even where the rows below
            # happen to agree (a container beside a bare host stays advisory: rows decide)
            required, why = True, "every node should run the same image; its versions are compared row by row too"
        rows.append(Row(key, what, required, fixed, match_of(fixed), why))
    pkgs = [packages_of(m.readings) if m.readings is not None else (None, m.reason or "unreachable") for m in machines]
    names: dict[str, None] = {}
    for found, _ in pkgs:
        for name, version in (found or {}).items():
            if version is not None and name != "torch":
                names.setdefault(name, None)
    for name in sorted(names, key=lambda n: (n not in REQUIRED_PACKAGES, n)):
        cells: list[Cell] = []
        for found, why in pkgs:
            if found is None:
                cells.append(_unknown(why))
            else:
                v = found.get(name)
                cells.append(Cell(v) if v else (Cell(NOT_INSTALLED) if name in found else _unknown("not asked for on this machine")))
        required = name in REQUIRED_PACKAGES
        rows.append(Row(f"pkg:{name}", name, required, tuple(cells), match_of(cells),
                        "part of the training stack every rank imports" if required else "pinned package"))
    return Comparison(tuple(machines), tuple(rows))


# -- checklists side by side ---------------------------------------------------------------------

@dataclass(frozen=True)
class ChecklistRow:
    id: str
    title: str
    statuses: tuple[Status | None, ...]  # None: that machine was not judged (unreachable)
    summaries: tuple[str, ...] = field(default=())


def checklists(machines: Sequence[Machine], ids: Iterable[str] | None = None) -> list[ChecklistRow]:
    from sparktui.gotchas import IDS, REGISTRY

    out = []
    for gid in (list(ids) if ids is not None else list(IDS)):
        sts, sums = [], []
        for m in machines:
            v = next((x for x in m.verdicts if x.id == gid), None)
            sts.append(v.status if v else None)
            sums.append(v.summary if v else (m.reason or "not judged"))
        out.append(ChecklistRow(gid, REGISTRY[gid].title, tuple(sts), tuple(sums)))
    return out


# -- plain-text rendering ------------------------------------------------------------------------

_MARK = {True: "✔ same", False: "✘ DIFFERS", None: "? cannot tell"}


def _clip(text: str, n: int) -> str:
    text = visible(text)  # a peer's host name, version or reason is outside text: shown inert
    return text if len(text) <= n else text[: n - 1] + "…"


def format_comparison(cmp: Comparison, rows: list[ChecklistRow] | None = None, width: int = 28,
                      all_rows: bool = True) -> str:
    """The `sparktui peers` table: machines, what must match, then the checklists side by side."""
    names = [m.name + (" (here)" if m.local else "") for m in cmp.machines]
    lines = ["Machines:"]
    for m, n in zip(cmp.machines, names):
        lines.append(f"  {n}: " + ("ok" + (f" (sparktui {m.sparktui_version})" if m.sparktui_version else "")
                                   if m.reachable else f"✘ {m.reason or 'unreachable'}"))
    lines.append("")
    label_w = max([len(r.what) for r in cmp.rows] + [20]) + 2
    label_w = min(label_w, 34)
    head = f"{'what':<{label_w}}" + "".join(f"{_clip(n, width):<{width + 2}}" for n in names) + "match"
    lines += [head, "-" * len(head)]
    for r in cmp.rows:
        if not all_rows and r.match is True:
            continue
        tag = "" if r.required else " (advisory)" if r.match is False else ""
        lines.append(f"{_clip(r.what, label_w - 1):<{label_w}}"
                     + "".join(f"{_clip(c.text, width):<{width + 2}}" for c in r.cells) + _MARK[r.match] + tag)
    unknown_notes = []
    for r in cmp.rows:
        if r.required and r.match is None:  # unreachable machines were named above
            whys = sorted({f"{names[i]}: {c.why}" for i, c in enumerate(r.cells)
                           if not c.known and cmp.machines[i].reachable})
            if whys:
                unknown_notes.append(f"  {r.what}: " + "; ".join(whys))
    if unknown_notes:
        lines += ["", "Could not compare:"] + [_clip(u, 300) for u in unknown_notes[:12]]
        if len(unknown_notes) > 12:
            lines.append(f"  … {len(unknown_notes) - 12} more")
    if rows:
        label_w = 34
        lines += ["", (f"{'check':<{label_w}}" + "".join(f"{_clip(n, width):<{width + 2}}" for n in names)).rstrip()]
        for cr in rows:
            cells = "".join(f"{(s.glyph + ' ' + s.value) if s else '–':<{width + 2}}" for s in cr.statuses)
            lines.append(f"{_clip(cr.id + ' ' + cr.title, label_w - 1):<{label_w}}{cells}".rstrip())
    diff = cmp.differing(required_only=True)
    lines.append("")
    if diff:
        lines.append("MUST MATCH but differ: " + ", ".join(r.what for r in diff))
    else:
        lines.append({Status.OK: "Everything that must match does.",
                      Status.WARN: "Everything that must match does; advisory rows differ.",
                      Status.UNKNOWN: "Nothing seen differs, but some values that must match could not be compared."}
                     .get(cmp.status, ""))
    return "\n".join(visible(line) for line in lines) + "\n"
