"""G10: two Sparks train with data parallelism (DDP/FSDP), never with tensor parallelism.

The judge reads the 'tpscan' probe (every TP setting > 1 found under the scan paths, each with the
context of its file) and decides per finding:

- training + multi-node                      -> fail (this is the gotcha)
- training, node count not found             -> warn (a two-Spark launch of it would fail)
- context unknown + multi-node/unknown       -> warn (cannot rule out training across two Sparks)
- TP of a generation engine inside training  -> warn when multi-node (NeMo-RL's vllm_cfg ...), else ok
- serving (vLLM, TRT-LLM, SGLang, NIM ...)   -> ok with a note: NVIDIA's own two-Spark playbooks
                                                serve with TP=2; that is not this error
- single node                                -> ok with a note: TP does not cross the ConnectX-7
                                                link, so not this gotcha (a Spark has one GPU, so
                                                TP > 1 on one node needs a multi-GPU machine)
- value from a variable sparktui cannot resolve, or a value it does not understand (`1.5`, `two`,
  `[2]`): warn in training, unknown where the context is unknown too, ok (noted) for serving or
  single node.

No finding is ``ok`` only when files were actually read: missing paths, nothing readable, or a
scan cut short is ``unknown`` ("no TP found" must never mean "wrong directory"). Without named
paths the current folder is scanned within bounds (depth, files seen, seconds), stated in the
evidence: folders below the depth bound are named in an ``ok``'s summary as not checked; a scan
stopped by the file or time bound (or a cancel) is cut short, so ``unknown`` unless a finding warns.
The headline names the folder looked at. Without named paths, sparktui's own source or install
folder is no job's: ``skip`` with the ``--path`` hint (its own test data holds TP settings); and a
folder with no tensor-parallel setting at all (not even at 1) is ``unknown`` with the hint, since
nothing says a job lives there.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TypeGuard

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.shapes import TPSCAN
from sparktui.core.verdict import Evidence, Status, Verdict, worst
from sparktui.gotchas._fix import block, comment, sh
from sparktui.gotchas.base import Finding, Gotcha, first_finding, unknown_from, unknown_if_lacking

GID = "G10"
MAX_DETAILS = 60
SOURCE = "tpscan"
PACKAGE = Path(__file__).resolve().parents[1]  # sparktui's own package folder (src/sparktui or site-packages/sparktui)
PATH_HINT = "name the job's folders with --path DIR (or [scan] paths)"

TITLE = "Dual-Spark is DDP/FSDP only: no tensor parallelism for training across two Sparks"

SYMPTOM = (
    "A training job spread over two Sparks with tensor parallelism (TP > 1) does not train usefully: "
    "it stalls or times out in NCCL collectives, or each step takes far longer than the same job on "
    "one Spark. Serving a model with TP=2 over the same two Sparks works."
)

CAUSE = (
    "Tensor parallelism splits every layer's matrix multiplies across GPUs and joins the pieces with "
    "all-reduce/all-gather inside every layer, forward and backward: many small, latency-bound "
    "collectives per step, built for NVLink inside one server. A Spark has one GPU, so TP=2 always "
    "crosses the only link between two Sparks, the ConnectX-7 network port; training over it with TP "
    "is not viable on this hardware. Data parallelism (DDP) or sharded data parallelism (FSDP/ZeRO) "
    "exchanges gradients or shards once per step and overlaps that with compute, which the link can "
    "carry. Inference is different: NVIDIA's own vLLM and TensorRT-LLM playbooks serve with TP=2 "
    "across two Sparks, and that is fine."
)

CHECK = (
    "sparktui scans the scan paths (`--path DIR`, repeatable; default the current folder, within "
    "bounds the evidence states: 4 folders deep, 5000 files, 10 s) recursively: YAML, JSON, TOML, shell launch scripts (by extension, .slurm/.sbatch, or a sh/bash shebang), templates (.j2, .tmpl), .env "
    "files, Dockerfiles and Python launchers. It looks for every spelling of a tensor-parallel "
    "setting: vLLM `--tensor-parallel-size`/`-tp`/`tensor_parallel_size`, SGLang `--tp-size`/`--tp`/"
    "`tp_size`, TRT-LLM `--tp_size`, Megatron/NeMo `tensor_model_parallel_size`, NeMo-RL "
    "`tensor_parallel_size`, NeMo AutoModel `distributed.tp_size`, torchtitan "
    "`tensor_parallel_degree`, DeepSpeed `tensor_parallel.autotp_size`, accelerate "
    "`parallelism_config_tp_size`, transformers `tp_size`/`tp_plan: auto`, NIM "
    "`NIM_TENSOR_PARALLEL_SIZE`, torchtune `tensor_parallel_dim`, nanotron `tp`, MaxText `ici_`/`dcn_tensor_parallelism`, "
    "`--tp-degree`, `--tensor-parallel`, GPT-NeoX `model_parallel_size`, OpenRLHF `--vllm_tensor_parallel_size`, "
    "DeepSpeed `\"tensor_parallel\": {\"size\": N}`, in `key: 2`, `key = 2`, `--flag 2`, `--flag=2` and `KEY=2` forms, the "
    "number in any spelling (`0x2`, `+2`, `!!int 2`, `1_0`, `1e1`, a YAML anchor and alias, a value on the "
    "next line, a Dockerfile's `ENV KEY value`), a Hydra sweep (`1,2,4`, `choice(1,4)`, `range(1,3)`, `1,$TP`) by "
    "its largest value (a sweep item that is no integer: not understood); `$VAR` values are resolved from the same script, "
    "`${VAR:=N}`/`${VAR:-N}`, `$((...))`, files it sources and a caller's arguments where possible and reported as unresolved "
    "otherwise, and a value it cannot read is reported as not understood, with its file and line. Each file is classed as training or serving (torchrun, accelerate launch, deepspeed, "
    "optimizer/trainer keys vs. vllm serve, trtllm-serve, sglang.launch_server, NIM) and as "
    "multi-node or single node (--nnodes, num_nodes, num_machines, --node-rank, MASTER_ADDR, rdzv "
    "endpoints, Ray clusters, hostfiles; flags also in Kubernetes/Docker argument arrays; torchrun "
    "without --nnodes is one node, its default, as is `deepspeed --num_gpus N` without a hostfile; pipeline parallelism is no "
    "node count); a config with no node count of its own takes it from a launch script that names it or its `defaults:` "
    "chain, and a file a launcher sources is read as the launcher runs it. TP > 1 in training across nodes fails; in training with the node "
    "count unknown it warns; serving with TP=2 is ok. It skips .git, node_modules, site-packages, "
    "virtualenvs and conda envs (known by pyvenv.cfg, conda-meta/ or bin/activate, never by a folder "
    "name such as env/ alone), binary and oversized files, survives unreadable folders and symlink loops, and "
    "reports what it skipped. It never follows a symlink out of the scan paths or into /proc, /sys or "
    "/dev, and c stops it. Finding nothing is ok only if files were read."
)

DDP_TEXT = """\
Across two Sparks, train with data parallelism: TP=1 and DDP or FSDP (FSDP/ZeRO shards weights,
gradients and optimizer state over both machines, which is how a model too big for one Spark
trains on two)."""
TORCHRUN = """ Launch one process per Spark over the QSFP link:

```bash
# on both Sparks: the ConnectX-7 interface that `ibdev2netdev` shows as (Up)
export NCCL_SOCKET_IFNAME=enp1s0f1np1 GLOO_SOCKET_IFNAME=enp1s0f1np1
# Spark 1 (its QSFP address is the master address)
torchrun --nnodes=2 --nproc-per-node=1 --node-rank=0 \\
  --master-addr=<spark-1 QSFP IP> --master-port=29500 train.py --config cfg.yaml
# Spark 2
torchrun --nnodes=2 --nproc-per-node=1 --node-rank=1 \\
  --master-addr=<spark-1 QSFP IP> --master-port=29500 train.py --config cfg.yaml
```

"""
CONFIGS = """\
Set tensor parallelism to 1 in the framework's config, and let data parallelism use both ranks:

```yaml
# NeMo AutoModel
distributed:
  tp_size: 1
  cp_size: 1
  dp_size: none        # all ranks data-parallel (FSDP2)
# Megatron / NeMo
tensor_model_parallel_size: 1
pipeline_model_parallel_size: 1
# NeMo-RL (policy)
dtensor_cfg:
  tensor_parallel_size: 1
# accelerate config
distributed_type: FSDP
parallelism_config_tp_size: 1
```

```toml
# torchtitan
[parallelism]
tensor_parallel_degree = 1
data_parallel_shard_degree = -1   # FSDP over all ranks
```

DeepSpeed: drop the `"tensor_parallel"` block (or set `"autotp_size": 1`) and shard with ZeRO:

```json
{"zero_optimization": {"stage": 3}}
```

For transformers, drop the `tp_plan` argument of `from_pretrained(...)` and wrap the model with
FSDP instead (e.g. `accelerate launch` with an FSDP config).

Serving is not this gotcha: NVIDIA's two-Spark playbooks run `vllm serve ... --tensor-parallel-size 2`
(over a Ray cluster) and `trtllm-serve ... --tp_size 2` (over MPI), and sparktui reports those as ok.
Then rerun the check:

"""
FIX = DDP_TEXT + TORCHRUN + CONFIGS + block(["sparktui check G10 --path ./configs --path ./scripts"])

FIX_UNKNOWN = """\
Point the scan at the folders that hold the job's launch scripts and configs (or at the files
themselves):

```bash
sparktui check G10 --path ~/my-training-job --path ~/my-training-job/configs/train.yaml
```

or set them once in the config file:

```toml
[scan]
paths = ["~/my-training-job"]
```
"""

# -- the verdict's fix: the files, lines and settings found ----------------------------------------

MAX_EDITS = 8  # settings named one by one in the fix; the details list every finding
TORCHRUN_TEXT = """ Launch one process per Spark
with your own script: `torchrun --nnodes=2 --nproc-per-node=1 --node-rank=0`
on Spark 1 and `--node-rank=1` on Spark 2, both with `--master-port=29500` and `--master-addr` set to
Spark 1's QSFP address. The interface and that address:

"""
IFACE_LINES = (
    "# on both Sparks: the ConnectX-7 interface that ibdev2netdev shows as (Up), for NCCL and Gloo",
    "IFACE=$(ibdev2netdev | awk '/\\(Up\\)/ {print $5; exit}')",
    'export NCCL_SOCKET_IFNAME="$IFACE" GLOO_SOCKET_IFNAME="$IFACE"',
    "# --master-addr: Spark 1's address on it (run on Spark 1), or the other end of the cable (run on Spark 2)",
    'ip -4 -o addr show dev "$IFACE"',
    'ip -4 neigh show dev "$IFACE"',
)
FIND_CONFIGS = (
    "# files under your home folder naming a launcher or a tensor-parallel setting: --path takes their folders",
    "grep -rlE --include='*.sh' --include='*.yaml' --include='*.yml' --include='*.toml' --include='*.json' "
    "'torchrun|accelerate launch|deepspeed|tensor_parallel|tp_size' ~ 2>/dev/null | head -20",
)


def setting_change(text: str, key: str, value: str) -> tuple[str, str] | None:
    """The setting as the line writes it (``key`` to its value) and as it should read with 1, or
    None when the value is not written after the key on that line."""
    at = text.find(key)
    v = text.find(value, at + len(key)) if at >= 0 and value else -1
    return None if v < 0 else (text[at:v + len(value)], text[at:v] + "1")


def edit_lines(m: dict[str, Any]) -> list[str]:
    """Where one setting is and what it becomes, then the editor opened at its line."""
    file, line, key = str(m.get("file", "?")), m.get("line"), str(m.get("key", ""))
    text, value = str(m.get("text", "")), str(m.get("value", ""))
    where = f"{file}:{line}" if line is not None else file
    if key.lower().startswith("tp_plan"):
        said = f"{where}: `{text}`: drop tp_plan and wrap the model with FSDP"
    else:
        change = setting_change(text, key, value)
        said = f"{where}: `{change[0]}` -> `{change[1]}`" if change else f"{where}: `{text}`: set {key} to 1"
        if m.get("via"):
            said += f" (its value comes from {m['via']})"
    at_line = f"+{line} " if isinstance(line, int) and not isinstance(line, bool) else ""
    return [comment(said), f"${{EDITOR:-vi}} {at_line}{sh(file)}"]


def _rerun(roots: list[dict[str, Any]]) -> str:
    paths = [str(p.get("path")) for p in roots if p.get("path")]
    return sh("sparktui", "check", "G10", *(w for p in paths for w in ("--path", p)))


def fix_for(flagged: list[dict[str, Any]], roots: list[dict[str, Any]]) -> str:
    """FIX filled: each flagged setting's file:line with its line set to 1, the ConnectX-7 interface
    and master address found, and the rerun over the paths scanned."""
    n = len(flagged)
    more = f" ({n - MAX_EDITS} more in the details)" if n > MAX_EDITS else ""
    return ("Set each tensor-parallel setting found to 1" + more + "; every block names the file, the line and "
            "the change, and opens your editor there:\n\n"
            + "\n".join(block(edit_lines(m)) for m in flagged[:MAX_EDITS]) + "\n"
            + DDP_TEXT + TORCHRUN_TEXT + block(IFACE_LINES) + "\n" + CONFIGS + block([_rerun(roots)]))


def unknown_fix(roots: list[dict[str, Any]]) -> str:
    """FIX_UNKNOWN filled: the paths that could not be scanned, a search for the real ones."""
    missing = [f"{p.get('path')} ({p.get('status')})" for p in roots if p.get("status") not in ("scanned", "already scanned")]
    said = f" ({'; '.join(missing)} could not be scanned)" if missing else ""
    return (f"Point the scan at the folders that hold the job's launch scripts and configs{said}: find them, then "
            "pass each with `--path`, or set them once in the config file (`[scan] paths`):\n\n" + block(FIND_CONFIGS))


_NODES: dict[Any, str] = {"multi": "multi-node", "single": "single node", "unknown": "nodes unknown"}
_CONTEXT: dict[Any, str] = {"training": "training", "serving": "serving", "unknown": "context unknown"}

_SERVING_NOTE = ("serving with TP across two Sparks is what NVIDIA's vLLM and TensorRT-LLM playbooks do; "
                 "it is not the training error")
_SINGLE_NOTE = ("single node: TP does not cross the ConnectX-7 link, so not this gotcha "
                "(but a Spark has one GPU: TP > 1 on one node needs a machine with more GPUs)")
_GENERATION_NOTE = ("TP of a generation engine inside a training job: inference-style TP over two Sparks "
                    "can work, but make sure the trained model itself uses DDP/FSDP")


_DCN_NOTE = ("MaxText dcn_*_parallelism is parallelism across the data-centre network, between nodes by "
             "definition: TP over it is TP across nodes, not viable over the ConnectX-7 link")


def _is_int(v: Any) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


# Findings whose degree could not be read: what the verdict says of each in training, and where the
# context is unknown.
_UNREAD = {
    "unresolved": ("TP comes from a variable sparktui cannot resolve: a value > 1 fails across two Sparks",
                   "TP from an unresolved variable in a file sparktui cannot class as training or serving"),
    "unreadable": ("TP has a value sparktui does not understand: a value > 1 fails across two Sparks",
                   "TP with a value sparktui does not understand in a file it cannot class as training or serving"),
}


def classify(match: dict[str, Any], ctx: dict[str, Any]) -> tuple[Status, str]:
    """Status of one finding given its file's context, and a short reason."""
    context = ctx.get("context")  # only "serving" and "training" are asked about
    nodes = ctx.get("nodes") or "unknown"
    unresolved = match.get("status") in _UNREAD
    scope = match.get("scope")
    if context == "serving":
        return Status.OK, _SERVING_NOTE
    if scope == "dcn" and match.get("status") == "set":
        return Status.FAIL, _DCN_NOTE
    if nodes == "single":
        return Status.OK, _SINGLE_NOTE
    if context == "training" and scope == "generation":
        # one rule for every engine (NeMo-RL vllm_cfg, verl rollout, OpenRLHF --vllm_...): on one node its
        # TP group stays inside the node (ok); in a multi-node job on two Sparks (one GPU each) any TP
        # group > 1 spans both, even where the recipe's own cluster keeps it inside a node: warn
        if nodes == "multi":
            gpn, degree = ctx.get("gpus_per_node"), match.get("degree")
            if _is_int(gpn) and _is_int(degree) and degree <= gpn:
                return Status.WARN, (f"{_GENERATION_NOTE} (on its own cluster, {gpn} GPUs per node, the group of "
                                     f"{degree} stays inside a node; on two Sparks, one GPU each, it spans them)")
            return Status.WARN, _GENERATION_NOTE
        if nodes == "unknown":  # not ok on what was not seen: on two Sparks a group > 1 spans them
            return Status.WARN, "node count not found: " + _GENERATION_NOTE
        return Status.OK, _GENERATION_NOTE
    if context == "training":
        if unresolved:
            return Status.WARN, _UNREAD[match["status"]][0]
        if nodes == "multi":
            return Status.FAIL, "TP > 1 in training across nodes: not viable over the ConnectX-7 link"
        return Status.WARN, "training with TP > 1; node count not found: launched on two Sparks this fails"
    # context unknown
    if unresolved:
        return Status.UNKNOWN, _UNREAD[match["status"]][1]
    return Status.WARN, ("cannot tell training from serving here: if this trains across two Sparks, it fails"
                         if nodes == "multi" else
                         "cannot tell training from serving or the node count: if this trains on two Sparks, it fails")


def describe(match: dict[str, Any], ctx: dict[str, Any]) -> str:
    """`path:line: key=value (training, multi-node)`."""
    key = match.get("key_path") or match.get("key", "?")
    value = match.get("value", "?")
    if match.get("status") == "unresolved":
        value = f"{value} (unresolved)"
    elif match.get("status") == "unreadable":
        value = f"{value} (value not understood" + (f": {match['via']})" if match.get("via") else ")")
    elif match.get("via"):
        value = f"{value} = {match.get('degree')} ({match['via']})"
    context = _CONTEXT.get(ctx.get("context"), "context unknown")  # none, "" or "unknown" alike
    nodes = _NODES.get(ctx.get("nodes"), "nodes unknown")
    through = f", as {match['judged_in']} runs it" if match.get("judged_in") else ""
    return f"{match.get('file', '?')}:{match.get('line', '?')}: {key}={value} ({context}, {nodes}{through})"


def _ctx_of(match: dict[str, Any], files: dict[str, Any]) -> dict[str, Any]:
    """The context a finding is judged in: its own file's, or that of the file that reads it
    (a launcher that sources it, a config whose `defaults:` take it)."""
    ctx = files.get(str(match.get("judged_in") or match.get("file")))
    return ctx if isinstance(ctx, dict) else {}


@dataclass
class _Scan:
    """What the scan covered, worked out once for the rules: the paths, what was read and skipped,
    and the matches (TP settings > 1 or unresolved) with how each was judged."""

    src: str
    roots: list[dict[str, Any]]
    files_read: int
    empty: bool  # every file read was empty (/dev/null, an empty .yaml): nothing was seen
    unchecked: int
    unchecked_tail: str
    total: int
    matches: list[dict[str, Any]]
    missing: list[dict[str, Any]]
    truncated: Any
    graded: list[tuple[Status, str, str]] = field(default_factory=list)

    @property
    def extra(self) -> str:
        return f" (+{self.total - len(self.matches)} not listed)" if self.total > len(self.matches) else ""


def _unusable(reading: Any) -> Verdict | None:
    """unknown when there is no scan, or it lacks what the judge decides on; None otherwise."""
    data = reading.data
    if data is None:
        return unknown_from(GID, reading, "the tensor-parallel scan")
    lacking = unknown_if_lacking(GID, reading, "the tensor-parallel scan", "matches", "files_read")
    if lacking is not None:
        return lacking
    if not isinstance(data.get("matches"), list):
        reason = f"the {reading.probe} reading's matches is a {type(data.get('matches')).__name__}, not a list"
        return Verdict(GID, Status.UNKNOWN, f"cannot tell: the tensor-parallel scan: {reason}",
                       (Evidence("the tensor-parallel scan", reading.source or SOURCE, f"unavailable: {reason}"),))
    return None


def _scan_of(data: Any, src: str, ev: list[Evidence]) -> _Scan:
    """The scan's coverage, said in the evidence as it is read."""
    roots = data.get("paths") or []
    ev.append(Evidence("scan paths", src, [f"{p.get('path')} ({p.get('status', '?')})" for p in roots]))
    files_read = _int(data.get("files_read"))
    empty = files_read > 0 and "bytes_read" in data and _int(data.get("bytes_read")) == 0
    ev.append(Evidence("files read (YAML/JSON/TOML/shell/.env/Dockerfile/Python)", src,
                       {"files": files_read, "folders": data.get("dirs_walked", 0), "bytes": data.get("bytes_read", 0)}))
    skipped = data.get("skipped") if isinstance(data.get("skipped"), dict) else {}
    not_checked = {r: _int(n) for r, n in skipped.items() if _unchecked(r)}
    unchecked = sum(not_checked.values())
    unchecked_tail = (f"; {unchecked} skipped ({', '.join(f'{n} {_short(r)}' for r, n in not_checked.items())}): "
                      "not checked") if unchecked else ""
    ev.append(Evidence("skipped (by reason)", src, skipped))
    bounds = _bounds(roots, files_read, skipped, data.get("truncated"))
    if bounds:
        ev.append(Evidence("scan bounds (no --path named)", src, bounds))
    matches = [m for m in (data.get("matches") or []) if isinstance(m, dict)]
    total = _int(data.get("matches_total")) or len(matches)
    ev.append(Evidence("tensor-parallel settings > 1 or unresolved", src, total))
    if data.get("at_one"):
        ev.append(Evidence("tensor-parallel settings at 1 (fine)", src,
                           {"count": data["at_one"], "sample": data.get("at_one_sample") or []}))
    missing = [p for p in roots if p.get("status") not in ("scanned", "already scanned")]
    return _Scan(src, roots, files_read, empty, unchecked, unchecked_tail, total, matches, missing,
                 data.get("truncated"))


def _missing_text(s: _Scan) -> str:
    return "; ".join(f"{p.get('path')}: {p.get('status')}" for p in s.missing)


# -- no TP setting > 1 found: the first rule that speaks says why that is (or is not) an ok ---------

def own_folder(abs_path: Any, package: Path = PACKAGE) -> str | None:
    """"source" when ``abs_path`` is sparktui's source checkout (the folder holding src/sparktui) or a
    folder in it; "install" when it is the folder the package is installed in, or inside the package;
    None otherwise. Paths are compared as written (a judge reads no disk)."""
    if not isinstance(abs_path, str) or not abs_path:
        return None
    p = os.path.normpath(abs_path)
    pkg = str(package)
    if p == pkg or p.startswith(pkg + os.sep):
        return "install" if package.parent.name != "src" else "source"
    if package.parent.name == "src":
        checkout = str(package.parent.parent)
        return "source" if p == checkout or p.startswith(checkout + os.sep) else None
    return "install" if p == str(package.parent) else None


def _default_roots(s: _Scan) -> bool:
    """No --path named: every root carries the default scan's bounds."""
    return bool(s.roots) and all("max_depth" in p or "max_files" in p for p in s.roots)


def _where(p: dict[str, Any]) -> str:
    """The folder as the headline names it: the absolute path, "the current folder /x" for "."."""
    path, absolute = p.get("path"), p.get("abs")
    if isinstance(absolute, str) and absolute and absolute != path:
        return f"the current folder {absolute}" if path in (".", "./") else absolute
    return str(path)


def rule_own_folder(s: _Scan) -> Finding | None:
    """A default scan of sparktui's own folder: no job lives there (its test data holds TP settings)."""
    if not _default_roots(s):
        return None
    kinds = [own_folder(p.get("abs") or p.get("path")) for p in s.roots]
    if not all(kinds):
        return None
    what = "source" if "source" in kinds else "install"
    return Finding(Status.SKIP, f"scanned {_paths(s.roots)}, sparktui's own {what} folder, not a training job's: "
                                f"{PATH_HINT}")


def rule_no_tp_at_all(s: _Scan, at_one: int) -> Finding | None:
    """A default scan that met no tensor-parallel setting at all: nothing says a job lives here."""
    if not _default_roots(s) or s.matches or at_one:
        return None
    return Finding(Status.UNKNOWN, f"cannot tell: no tensor-parallel setting at all in {s.files_read} files under "
                                   f"{_paths(s.roots)} (no --path named: is a job's config here?); {PATH_HINT}")


def rule_nothing_to_scan(s: _Scan) -> Finding | None:
    if s.missing and len(s.missing) == len(s.roots):
        return Finding(Status.UNKNOWN, f"cannot tell: nothing to scan ({_missing_text(s)})")
    return None


def rule_nothing_readable(s: _Scan) -> Finding | None:
    if s.files_read == 0 and s.unchecked:
        return Finding(Status.UNKNOWN, f"cannot tell: no file under {_paths(s.roots)} could be read{s.unchecked_tail}")
    if s.files_read == 0:
        return Finding(Status.UNKNOWN, f"cannot tell: no launch config or script could be read under {_paths(s.roots)} "
                                       "(wrong directory? pass --path)")
    return None


def rule_all_empty(s: _Scan) -> Finding | None:
    if s.empty:
        return Finding(Status.UNKNOWN, f"cannot tell: the {s.files_read} files read under {_paths(s.roots)} were empty "
                                       "(0 bytes)" + s.unchecked_tail)
    return None


def rule_partly_scanned(s: _Scan) -> Finding | None:
    if s.missing:
        return Finding(Status.UNKNOWN, f"no TP > 1 in {s.files_read} files read, but not every path could be scanned "
                                       f"({_missing_text(s)})")
    if s.truncated:
        return Finding(Status.UNKNOWN, f"no TP > 1 in {s.files_read} files read, but the scan was cut short ({s.truncated})")
    return None


def rule_clean(s: _Scan) -> Finding:
    if s.unchecked:
        return Finding(Status.OK, f"ok for {s.files_read} files read under {_paths(s.roots)}: no tensor-parallel "
                                  f"setting > 1{s.unchecked_tail} (see evidence)")
    return Finding(Status.OK, f"no tensor-parallel setting > 1 in {s.files_read} files under {_paths(s.roots)}")


NOTHING_FOUND_RULES: tuple[Callable[[_Scan], Finding | None], ...] = (
    rule_nothing_to_scan, rule_nothing_readable, rule_all_empty, rule_partly_scanned,
)


# -- TP settings > 1 found: the worst of them speaks -----------------------------------------------

def _summary_of(status: Status, s: _Scan) -> tuple[str, str]:
    """The summary and fix for the worst of the graded settings."""
    graded, matches = s.graded, s.matches
    counts = {st: sum(1 for g in graded if g[0] is st) for st in Status}
    flagged = [m for m, g in sorted(zip(matches, graded), key=lambda mg: -mg[1][0].severity)
               if g[0] in (Status.FAIL, Status.WARN, Status.UNKNOWN)]
    first = {st: next((g[1] for g in graded if g[0] is st), None) for st in Status}
    if status is Status.FAIL:
        return ((f"TP > 1 in a multi-node training config: {first[Status.FAIL]}"
                 + (f" and {counts[Status.FAIL] - 1} more" if counts[Status.FAIL] > 1 else "")
                 + "; across two Sparks use DDP/FSDP with TP=1" + s.extra), fix_for(flagged, s.roots))
    if status is Status.WARN:
        return ((f"TP > 1 that may be training across two Sparks: {first[Status.WARN]}"
                 + (f" and {counts[Status.WARN] - 1} more" if counts[Status.WARN] > 1 else "") + s.extra),
                fix_for(flagged, s.roots))
    if status is Status.UNKNOWN:
        how = next(m.get("status") for m, g in zip(matches, graded) if g[0] is Status.UNKNOWN)
        return ((f"cannot tell: TP {'with a value not understood' if how == 'unreadable' else 'set from a variable'} "
                 f"in a file that is neither clearly training nor serving: {first[Status.UNKNOWN]}" + s.extra),
                fix_for(flagged, s.roots))
    serving = sum(1 for g in graded if g[2] == _SERVING_NOTE)
    parts = []
    if serving:
        parts.append(f"{serving} in serving configs (TP=2 serving across two Sparks is what NVIDIA's playbooks do)")
    if len(graded) - serving:
        parts.append(f"{len(graded) - serving} single-node or inference-engine settings")
    return "TP > 1 only where it is fine: " + "; ".join(parts) + s.extra, ""


def _found(s: _Scan, ev: list[Evidence], details: tuple[str, ...]) -> Verdict:
    status = worst([g[0] for g in s.graded])
    summary, fix = _summary_of(status, s)
    if status is not Status.FAIL and status is not Status.WARN and (s.missing or s.truncated):
        status = worst([status, Status.UNKNOWN])
        summary += "; not every path could be scanned" if s.missing else f"; scan cut short ({s.truncated})"
        fix = fix or unknown_fix(s.roots)
    elif status is Status.OK and s.unchecked:
        summary += s.unchecked_tail
    return Verdict(GID, status, summary, tuple(ev), fix, details)


def judge(r: Readings, cfg: Config) -> Verdict:
    reading = r.get_reading(TPSCAN)
    unusable = _unusable(reading)
    if unusable is not None:
        return unusable
    data: Any = reading.data  # the helpers above take plain dicts (TpscanData is its shape)
    src = reading.source or SOURCE
    ev: list[Evidence] = []
    s = _scan_of(data, src, ev)
    own = rule_own_folder(s)
    if own is not None:
        return Verdict(GID, own.status, own.text, tuple(ev), unknown_fix(s.roots))
    files = data.get("files") or {}
    for m in s.matches:
        ctx = _ctx_of(m, files)
        status, why = classify(m, ctx)
        s.graded.append((status, describe(m, ctx), why))
    for shown in _flagged_files(s.matches, files, s.graded):
        ctx = files.get(shown, {})
        ev.append(Evidence(f"context of {shown}", src, _context_value(ctx)))
    details = _details(s.graded, s.total - len(s.matches))
    if s.graded:
        return _found(s, ev, details)
    f = (first_finding(NOTHING_FOUND_RULES, s) or rule_no_tp_at_all(s, _int(data.get("at_one")))
         or rule_clean(s))
    return Verdict(GID, f.status, f.text, tuple(ev), unknown_fix(s.roots) if f.status is Status.UNKNOWN else "")


def _int(v: Any) -> int:
    try:
        return int(v or 0)
    except (TypeError, ValueError):
        return 0


def _unchecked(reason: str) -> bool:
    """Skipped files that could hold a TP setting: too large or unreadable (not binary, not a
    virtualenv, not a FIFO or device), or folders below the depth bound."""
    return reason == "too large" or reason.startswith(("permission denied", "unreadable", "symlink loop",
                                                       "below the depth bound"))


def _bounds(roots: list[dict[str, Any]], files_read: int, skipped: dict[str, Any], truncated: Any) -> list[str]:
    """`scanned 812 files to depth 4 in ., stopped at the 5000-file bound`: one line per bounded root."""
    deeper = sum(_int(n) for r, n in skipped.items() if r.startswith("below the depth bound"))
    out = []
    for p in roots:
        if "max_depth" not in p and "max_files" not in p:
            continue
        line = (f"scanned {files_read} files to depth {p.get('max_depth', '?')} in {p.get('path')} "
                f"(bounds: depth {p.get('max_depth', '?')}, {p.get('max_files', '?')} files seen, "
                f"{p.get('max_seconds', '?')} s)")
        if truncated:
            line += f", {truncated}"
        elif deeper:
            line += f", {deeper} deeper folders not entered"
        out.append(line + "; name the job's folders with --path to scan them whole")
    return out


def _short(reason: str) -> str:
    return "unreadable" if reason.startswith(("permission denied", "unreadable")) else reason


def _paths(roots: list[dict[str, Any]]) -> str:
    return ", ".join(_where(p) for p in roots) or "(no paths)"


def _details(graded: list[tuple[Status, str, str]], not_listed: int) -> tuple[str, ...]:
    """One line per finding, worst first: `path:line: key=value (training, multi-node): status: why`."""
    order = sorted(graded, key=lambda g: -g[0].severity)
    lines = [f"{text}: {status.value}: {why}" for status, text, why in order[:MAX_DETAILS]]
    hidden = max(0, len(order) - MAX_DETAILS) + max(0, not_listed)  # findings the scan did not keep count too
    if hidden > 0:
        lines.append(f"... and {hidden} more")
    return tuple(lines)


def _flagged_files(matches, files, graded, limit: int = 10) -> list[str]:
    out: list[str] = []
    for m, _g in sorted(zip(matches, graded), key=lambda mg: -mg[1][0].severity):
        f = m.get("judged_in") or m.get("file")
        if f in files and f not in out:
            out.append(f)
            if len(out) >= limit:
                break
    return out


def _context_value(ctx: dict[str, Any]) -> dict[str, Any]:
    out = {
        "context": ctx.get("context", "unknown"),
        "training markers": ctx.get("training_markers") or [],
        "serving markers": ctx.get("serving_markers") or [],
        "nodes": ctx.get("nodes", "unknown"),
        "node markers": ctx.get("node_markers") or [],
    }
    lines = ctx.get("node_lines") or []
    if lines and isinstance(lines, list):  # where each node marker is: file:line evidence
        out["node markers at"] = [f"line {ln}: {m}" for ln, m in zip(lines, out["node markers"]) if ln]
    if ctx.get("gpus_per_node"):
        out["GPUs per node"] = f"{ctx['gpus_per_node']} ({ctx.get('gpus_per_node_marker', '')})"
    if ctx.get("node_unresolved"):
        out["unresolved node counts"] = ctx["node_unresolved"]
    if ctx.get("lines_cut"):
        out["lines cut"] = f"{ctx['lines_cut']} line(s) longer than 65536 characters were read on their start only"
    if ctx.get("context_chars"):
        out["context read on"] = f"the first {ctx['context_chars']} characters (a larger file)"
    if ctx.get("defaults_from"):
        out["defaults from"] = ctx["defaults_from"]
    if ctx.get("launched_by"):
        out["launched by"] = ctx["launched_by"]
    return out


GOTCHA = Gotcha(
    id=GID,
    slug="tensor-parallel",
    title=TITLE,
    symptom=SYMPTOM,
    cause=CAUSE,
    check=CHECK,
    fix=FIX,
    intrusive=False,
    cadence_s=300.0,
    probes=(SOURCE,),
    judge=judge,
    references=(
        "The key spellings: each framework's documentation (docs/gotchas.md, G10); NVIDIA's playbooks serve with TP=2 across two Sparks",
        "NVIDIA/dgx-spark-playbooks nvidia/vllm, 'Run on two Sparks': vllm serve --tensor-parallel-size 2 over a Ray cluster",
        "NVIDIA/dgx-spark-playbooks nvidia/trt-llm: mpirun ... trtllm-serve --tp_size 2 on two Sparks",
    ),
)
