"""Which open issues concern the playbooks and commands the user follows, and why (PURE: no I/O).

The playbooks repository uses no labels, so an issue names its playbook in prose: a title prefix
("SGLang: ..."), a path ``nvidia/<slug>``, a URL (``tree/main/nvidia/<slug>``,
``build.nvidia.com/spark/<slug>``), a container image, a command (``trtllm-serve``), or a
misspelling ("Unsolth"). Every match carries its reasons so the user can judge it.

The slug is the identity: titles repeat across playbooks (``station-vllm`` vs ``vllm``), so when
an issue names a *sibling* folder by path (one whose slug contains ours) and not ours, the
name-based hints for ours are dropped rather than conflated.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterable

from sparktui.core.secrets import scrub_secrets

MATCH_THRESHOLD = 4  # an issue matches when its score reaches this

# Weights of the ways an issue can name a playbook (a kind counts once per playbook).
W_PATH = 10  # nvidia/<slug>, tree/main/nvidia/<slug>, build.nvidia.com/spark/<slug>
W_TITLE_PREFIX = 8  # "vLLM: ..." / "[vLLM] ..."
W_CONTAINER = 6  # nvcr.io/nvidia/vllm:..., lmsysorg/sglang:spark
W_COMMAND = 5  # vllm serve, trtllm-serve
W_TITLE_MENTION = 4  # the name anywhere in the title
W_TITLE_NEAR = 4  # a near misspelling in the title ("Unsolth")
W_BODY_MENTION = 2  # the name in the body only: weak alone


@dataclass(frozen=True)
class Playbook:
    slug: str  # the folder under nvidia/: the identity
    name: str  # display name in the repository's README
    aliases: tuple[str, ...] = ()  # how issues name it ("vLLM", "TRT-LLM")
    commands: tuple[str, ...] = ()  # commands that belong to it ("vllm serve")
    containers: tuple[str, ...] = ()  # images, without tag
    hints: tuple[str, ...] = ()  # extra words that suggest it in a process command line only


def _pb(slug, name, aliases=(), commands=(), containers=(), hints=()) -> Playbook:
    return Playbook(slug, name, tuple(aliases), tuple(commands), tuple(containers), tuple(hints))


CATALOG: dict[str, Playbook] = {p.slug: p for p in (
    _pb("vllm", "vLLM for Inference", ["vLLM"],
        ["vllm serve", "vllm.entrypoints", "VLLM::EngineCore"], ["nvcr.io/nvidia/vllm", "vllm/vllm-openai"]),
    _pb("sglang", "SGLang for Inference", ["SGLang"],
        ["sglang.launch_server", "sglang serve", "sglang::scheduler"], ["nvcr.io/nvidia/sglang", "lmsysorg/sglang"]),
    _pb("trt-llm", "TRT LLM for Inference", ["TRT-LLM", "TRT LLM", "TensorRT-LLM", "TensorRT LLM", "TRTLLM"],
        ["trtllm-serve", "trtllm-llmapi-launch", "trtllm-build", "trtllm-bench"], ["nvcr.io/nvidia/tensorrt-llm"]),
    _pb("unsloth", "Unsloth on DGX Spark", ["Unsloth"], [], ["unsloth/unsloth"], ["unsloth"]),
    _pb("nemo-fine-tune", "Fine-tune with NeMo", ["NeMo fine-tune", "NeMo AutoModel", "NeMo fine-tuning"],
        ["automodel finetune", "nemo_automodel"], ["nvcr.io/nvidia/nemo"], ["nemo_automodel", "nemo.collections"]),
    _pb("pytorch-fine-tune", "Fine-tune with Pytorch", ["PyTorch fine-tune", "PyTorch fine-tuning"]),
    _pb("llama-factory", "LLaMA Factory", ["LLaMA Factory", "LLaMA-Factory", "LlamaFactory"],
        ["llamafactory-cli"], ["hiyouga/llamafactory"], ["llamafactory"]),
    _pb("flux-finetuning", "FLUX.1 Dreambooth LoRA Fine-tuning", ["FLUX.1", "FLUX fine-tuning", "Dreambooth"]),
    _pb("nvfp4-quantization", "NVFP4 Quantization", ["NVFP4 Quantization", "NVFP4 quantisation"],
        ["hf_ptq.py"], [], ["modelopt"]),
    _pb("ollama", "Ollama", ["Ollama"], ["ollama serve", "ollama run", "ollama pull", "ollama runner"],
        ["ollama/ollama"]),
    _pb("llama-cpp", "Run models with llama.cpp", ["llama.cpp", "llama-cpp", "llamacpp"],
        ["llama-server", "llama-cli", "llama-bench"], ["ghcr.io/ggml-org/llama.cpp"]),
    _pb("connect-two-sparks", "Connect Two Sparks", ["Connect Two Sparks", "Connect two DGX Sparks"]),
    _pb("connect-three-sparks", "Connect Three DGX Spark in a Ring Topology", ["Connect Three Sparks"]),
    _pb("multi-sparks-through-switch", "Connect Multiple DGX Spark through a Switch", ["Multiple Sparks through a Switch"]),
    _pb("nccl", "NCCL for Multiple Sparks", ["NCCL"], ["all_reduce_perf", "nccl-tests"]),
    _pb("nim-llm", "NIM on Spark", ["NIM on Spark"]),
    _pb("speculative-decoding", "Speculative Decoding", ["Speculative Decoding"]),
    _pb("comfy-ui", "Comfy UI", ["ComfyUI", "Comfy UI"]),
    _pb("open-webui", "Open WebUI with Ollama", ["Open WebUI", "OpenWebUI"], [], ["ghcr.io/open-webui/open-webui"]),
    _pb("lm-studio", "LM Studio on DGX Spark", ["LM Studio"], ["lms server"]),
    _pb("nemotron", "Nemotron Model Family on DGX Spark", ["Nemotron"]),
    _pb("multi-modal-inference", "Multi-modal Inference", ["Multi-modal Inference", "Multimodal Inference"]),
    _pb("jax", "Optimized JAX", ["JAX"]),
    _pb("isaac", "Install and Use Isaac Sim and Isaac Lab", ["Isaac Sim", "Isaac Lab"]),
    _pb("txt2kg", "Text to Knowledge Graph on DGX Spark", ["txt2kg", "Text to Knowledge Graph"]),
    _pb("vss", "Build a Video Search and Summarization (VSS) Agent", ["VSS"]),
    _pb("dgx-dashboard", "DGX Dashboard", ["DGX Dashboard"]),
    _pb("tailscale", "Set up Tailscale on Your Spark", ["Tailscale"]),
    _pb("live-vlm-webui", "Live VLM WebUI", ["Live VLM WebUI"]),
    _pb("multi-agent-chatbot", "Build and Deploy a Multi-Agent Chatbot", ["Multi-Agent Chatbot"]),
)}

# Words that are one edit from a playbook name but mean something else.
_NOT_MISSPELLINGS = frozenset({"llama", "llamas", "slang", "model", "models", "nvidia", "spark", "sparks"})


def playbook(slug: str) -> Playbook:
    """The catalog entry, or a bare one for a slug sparktui does not know (paths still match)."""
    return CATALOG.get(slug) or Playbook(slug, slug)


# --------------------------------------------------------------------------- small helpers


def edit_distance(a: str, b: str, limit: int = 2) -> int:
    """Optimal-string-alignment distance (a transposition costs 1: "unsolth" -> "unsloth" is 1).

    Returns ``limit + 1`` as soon as the distance must exceed ``limit`` (cheap on long words).
    """
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1] if prev[-1] <= limit else limit + 1


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


class _Phrase:
    """A lower-case pattern with a literal it must contain: ``in`` (C speed) rules most text out
    before the regex (whose leading look-behind defeats re's own literal-prefix scan) runs."""

    __slots__ = ("needle", "rx")

    def __init__(self, needle: str, rx: re.Pattern[str]) -> None:
        self.needle, self.rx = needle, rx

    def search(self, text: str) -> bool:
        return self.needle in text and self.rx.search(text) is not None


def _word_re(phrase: str) -> _Phrase:
    """``phrase`` as a whole word (not part of a hyphenated compound), flexible whitespace."""
    parts = phrase.lower().split()
    body = r"\s+".join(re.escape(part) for part in parts)
    return _Phrase(max(parts, key=len), re.compile(r"(?<![\w-])" + body + r"(?![\w-])"))


def _literal_re(literal: str, before: str = r"(?<![\w.-])", after: str = r"(?![\w-])") -> _Phrase:
    low = literal.lower()
    return _Phrase(low, re.compile(before + re.escape(low) + after))


_SLUG_CHARS = r"[a-z0-9][a-z0-9._-]*[a-z0-9]"
_PATH_RE = re.compile(r"nvidia/(" + _SLUG_CHARS + r")(?![\w-])")  # literal first: re scans fast
_BUILD_RE = re.compile(r"build\.nvidia\.com/spark/(" + _SLUG_CHARS + r")(?![\w-])")
_PREFIX_RE = re.compile(r"^\s*(?:\[([^\]]{1,40})\]|([^:\[\]]{1,40}):)")
_WORD_RE = re.compile(r"[a-z][a-z0-9]*")


def _is_sibling(ours: str, other: str) -> bool:
    """``station-vllm`` is a sibling of ``vllm``: our slug is a run of its hyphen-separated parts."""
    if other == ours:
        return False
    a, b = ours.split("-"), other.split("-")
    return any(b[i:i + len(a)] == a for i in range(len(b) - len(a) + 1))


# --------------------------------------------------------------------------- issue text


class _Doc:
    """One issue's text, with the costlier views computed only when a rule asks for them."""

    def __init__(self, issue: dict[str, Any]) -> None:
        self.title = str(issue.get("title") or "")
        self.title_l = self.title.lower()
        self.body_l = str(issue.get("body") or "").lower()
        self.text_l = self.title_l + "\n" + self.body_l
        # slug -> how it was named ("mentions nvidia/x", "links ...", "container ..."), and the slugs
        # named as playbook folders (URLs; bare paths that do not look like model names)
        self.paths, self.folders = _scan_paths(self.text_l)
        m = _PREFIX_RE.match(self.title)
        raw = re.sub(r"\s+playbook$", "", (m.group(1) or m.group(2) or "").strip(), flags=re.I) if m else ""
        self.title_prefix = _norm(raw)  # "sglang" for "SGLang: ...", "" if none

    @cached_property
    def title_p(self) -> str:
        """Prose only: tokens with a slash (URLs, paths, images) dropped, so a name inside a path
        is not counted again as a "mention"."""
        return _prose(self.title_l)

    @cached_property
    def body_p(self) -> str:
        return _prose(self.body_l)

    @cached_property
    def title_words(self) -> set[str]:
        return set(_WORD_RE.findall(self.title_p))



def _prose(text: str) -> str:
    return " ".join(t for t in text.split() if "/" not in t)


def _scan_paths(text_l: str) -> tuple[dict[str, list[str]], set[str]]:
    found: dict[str, list[str]] = {}
    folders: set[str] = set()
    if "nvidia" not in text_l:  # most issues: nothing to scan
        return found, folders
    for m in _BUILD_RE.finditer(text_l):
        found.setdefault(m.group(1), []).append(f"links build.nvidia.com/spark/{m.group(1)}")
        folders.add(m.group(1))
    for m in _PATH_RE.finditer(text_l):
        if m.start() and (text_l[m.start() - 1].isalnum() or text_l[m.start() - 1] in "_.-"):
            continue  # "envidia/x", "my.nvidia/x": not a path of the repository
        slug = m.group(1)
        before = text_l[max(0, m.start() - 80):m.start()]
        if before.endswith("nvcr.io/"):
            what = f"container nvcr.io/nvidia/{slug}"
        elif re.search(r"dgx-spark-playbooks/(?:tree|blob)/[^/\s]+/$", before):
            what = f"links tree/main/nvidia/{slug}"
            folders.add(slug)
        else:
            what = f"mentions nvidia/{slug}"
            if not re.search(r"\d", slug):  # nvidia/Nemotron-Nano-9B-v2 is a model, not a folder
                folders.add(slug)
        found.setdefault(slug, []).append(what)
    return found, folders


def _doc(issue: dict[str, Any]) -> _Doc:
    return _Doc(issue)


# --------------------------------------------------------------------------- per-playbook rules


class _PlaybookRules:
    def __init__(self, pb: Playbook) -> None:
        self.pb = pb
        names = [pb.slug, *pb.aliases]
        self.prefixes = {_norm(n) for n in names} | {_norm(pb.name)}
        self.mentions = [(n, _word_re(n)) for n in dict.fromkeys([*pb.aliases] or [pb.slug])]
        self.commands = [(c, _word_re(c)) for c in pb.commands]
        self.containers = [(c, _literal_re(c, before="")) for c in pb.containers]
        single = {n.lower() for n in names if re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", n)}
        self.near_targets = sorted(w for w in single if len(w) >= 5)
        self._near_cache: dict[str, str | None] = {}

    def near(self, word: str) -> str | None:
        """The name ``word`` is a near misspelling of, if any."""
        if word in self._near_cache:
            return self._near_cache[word]
        hit = None
        if len(word) >= 5 and word not in _NOT_MISSPELLINGS and word not in _KNOWN_NAMES:
            for target in self.near_targets:
                if word[0] == target[0] and word != target:
                    if edit_distance(word, target, 2) <= (2 if len(target) >= 9 else 1):
                        hit = target
                        break
        self._near_cache[word] = hit
        return hit

    def reasons(self, d: _Doc) -> dict[str, tuple[int, list[str]]]:
        """kind -> (weight, reason texts) for this playbook in this issue."""
        out: dict[str, tuple[int, list[str]]] = {}

        def add(kind: str, weight: int, text: str) -> None:
            w, texts = out.setdefault(kind, (weight, []))
            if text not in texts:
                texts.append(text)

        slug = self.pb.slug
        for what in d.paths.get(slug, ()):
            add("container" if what.startswith("container") else "path",
                W_CONTAINER if what.startswith("container") else W_PATH, what)
        if slug not in d.paths and any(_is_sibling(slug, other) for other in d.folders):
            return out  # the issue is about a sibling folder (station-vllm), named by path
        if d.title_prefix and d.title_prefix in self.prefixes:
            prefix = _PREFIX_RE.match(d.title)
            add("title-prefix", W_TITLE_PREFIX, f"title prefix '{prefix.group(0).strip() if prefix else d.title_prefix}'")
        for name, rx in self.mentions:
            if rx.needle in d.title_l and rx.search(d.title_p):
                add("title-mention", W_TITLE_MENTION, f"title names {name}")
            elif rx.needle in d.body_l and rx.search(d.body_p):
                add("body-mention", W_BODY_MENTION, f"body names {name}")
        for cmd, rx in self.commands:
            if rx.search(d.text_l):
                add("command", W_COMMAND, f"command '{cmd}'")
        for image, rx in self.containers:
            if rx.search(d.text_l):
                add("container", W_CONTAINER, f"container {image}")
        if self.near_targets and "title-mention" not in out:  # misspellings: in the title only
            for word in d.title_words:
                target = self.near(word)
                if target:
                    add("title-near", W_TITLE_NEAR,
                        f"title says '{_original(d.title, word)}' (near '{_display(self.pb, target)}')")
        return out


_KNOWN_NAMES = frozenset(
    w.lower() for p in CATALOG.values() for w in (p.slug, *p.aliases) if re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", w)
)


def _display(pb: Playbook, lowered: str) -> str:
    for n in (*pb.aliases, pb.slug):
        if n.lower() == lowered:
            return n
    return lowered


def _original(title: str, lowered_word: str) -> str:
    m = re.search(re.escape(lowered_word), title, flags=re.I)
    return m.group(0) if m else lowered_word


# --------------------------------------------------------------------------- the user's commands

_WRAPPERS = frozenset({"sudo", "env", "exec", "nohup", "time", "nice", "python", "python3", "uv", "run", "torchrun",
                       "accelerate", "launch", "mpirun", "srun", "bash", "sh", "docker", "podman", "deepspeed", "-m",
                       "-c", "stdbuf", "taskset", "numactl", "pixi", "poetry", "conda"})
_GENERIC_PROGRAMS = frozenset({"python", "python3", "bash", "sh", "docker", "podman", "git", "pip", "pip3", "uv",
                               "conda", "curl", "wget", "cd", "export", "source", "sudo", "make", "cmake", "exec", "env",
                               "echo", "cat", "ls", "ssh", "scp", "rsync", "tee", "nohup"})
_GENERIC_FLAGS = frozenset({"--port", "--host", "--help", "--verbose", "--name", "--network", "--gpus", "--rm", "--ipc",
                            "--detach", "--interactive", "--volume", "--env", "--model", "--config", "--output",
                            "--output-dir", "--model-path", "--debug", "--trust-remote-code", "--privileged", "--runtime", "--shm-size",
                            "--ulimit", "--entrypoint", "--workdir", "--user", "--restart"})
_MULTI_COMMAND = frozenset({"vllm", "sglang", "ollama", "hf", "huggingface-cli", "llamafactory-cli", "automodel",
                            "lms", "trtllm-llmapi-launch", "nemo", "tune"})
_IMAGE_RE = re.compile(r"^(?:[a-z0-9.-]+(?::\d+)?/)?[a-z0-9._-]+(?:/[a-z0-9._-]+)*:[\w][\w.-]*$")
_MODEL_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
_FILE_EXT_RE = re.compile(r"\.(?:ya?ml|json|toml|py|sh|txt|cfg|ini|md|jsonl|csv|parquet)$", re.I)


@dataclass(frozen=True)
class CommandToken:
    kind: str  # "command", "program", "script", "image", "model", "flag"
    text: str
    weight: int
    pattern: _Phrase = field(compare=False, repr=False)

    def reason(self, command: str) -> str:
        if self.kind == "command":
            return f"same command as yours ({_short(command)})"
        label = {"program": "command", "script": "script", "image": "image", "model": "model", "flag": "flag"}[self.kind]
        return f"{label} '{self.text}'"


def _short(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _around(text: str, hint: str, n: int) -> str:
    """``text`` cut to ``n`` characters so that ``hint`` stays visible: long interpreter paths and
    ``-c`` arguments come before the part that matters (``vllm serve MODEL``)."""
    text = " ".join(text.split())
    if len(text) <= n:
        return text
    at = text.lower().find(hint.lower())
    if at <= 0 or at + len(hint) + 30 <= n - 1:  # the hint and what follows it (the model) fit
        return _short(text, n)
    start = max(0, min(at - 10, len(text) - (n - 1)))
    return "…" + _short(text[start:], n - 1)


def command_tokens(command: str) -> list[CommandToken]:
    """The significant parts of a launch command, each with a weight and a text pattern."""
    out: dict[tuple[str, str], CommandToken] = {}

    def add(kind: str, text: str, weight: int, rx: _Phrase | None = None) -> None:
        key = (kind, text.lower())
        if text and key not in out:
            out[key] = CommandToken(kind, text, weight, rx or _word_re(text))

    flat = " ".join(command.split())
    if len(flat) >= 16:
        words = flat.lower().split()
        add("command", flat, 8, _Phrase(max(words, key=len), re.compile(r"\s+".join(re.escape(p) for p in words))))
    _walk(flat, add, depth=0)
    for pb in CATALOG.values():  # a known tool named anywhere in the command
        for cmd in pb.commands:
            if _word_re(cmd).search(flat.lower()):
                add("program", cmd, W_COMMAND)
    return list(out.values())


def _walk(command: str, add, depth: int) -> None:
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    program_seen = False
    container_args = False  # between `docker run` and its image: words are option values
    for i, w in enumerate(words):
        if " " in w:  # bash -c '...': look inside
            if depth < 2:
                _walk(w, add, depth + 1)
            continue
        if "$" in w or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", w):
            continue
        low = w.lower()
        if w.startswith("--"):
            flag = low.split("=", 1)[0]
            if len(flag) >= 8 and flag not in _GENERIC_FLAGS:
                add("flag", flag, 2)
            continue
        if w.startswith("-"):
            continue
        if _IMAGE_RE.match(low) and "/" in low:
            add("image", low, 6)
            add("image", low.rsplit(":", 1)[0], 5)
            container_args = False
            continue
        if low in ("docker", "podman"):
            container_args = True
            continue
        base = low.rsplit("/", 1)[-1]
        if low.endswith((".sh", ".py")):
            add("script", base, 4, _literal_re(base))
            program_seen = True
            continue
        if _MODEL_RE.match(w) and not _FILE_EXT_RE.search(w) and not w.startswith((".", "/")):
            add("model", w, 4)
            continue
        if container_args or program_seen or low in _WRAPPERS or w.isupper() or "/" in w:
            continue
        if not re.match(r"[a-z]", low):
            continue
        program_seen = True
        if base in _GENERIC_PROGRAMS or len(base) < 4:
            continue
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if base in _MULTI_COMMAND and re.fullmatch(r"[a-z][a-z0-9_-]*", nxt):
            add("program", f"{base} {nxt}", W_COMMAND)
        else:
            add("program", base, W_COMMAND)


# --------------------------------------------------------------------------- ranking


@dataclass(frozen=True)
class Match:
    number: int
    title: str
    url: str
    created_at: str | None
    updated_at: str | None
    comments: int
    score: int
    reasons: tuple[str, ...]  # strongest first
    slugs: tuple[str, ...]  # followed playbooks it names
    commands: tuple[str, ...]  # the user's commands it names

    def to_dict(self) -> dict[str, Any]:
        return {"number": self.number, "title": self.title, "url": self.url, "created_at": self.created_at,
                "updated_at": self.updated_at, "comments": self.comments, "score": self.score,
                "reasons": list(self.reasons), "slugs": list(self.slugs), "commands": list(self.commands)}


class Matcher:
    """Compiled rules for the followed slugs and commands; ``rank`` is then cheap per issue."""

    def __init__(self, slugs: Iterable[str], commands: Iterable[str] = ()) -> None:
        self.slugs = [s.strip().lower().removeprefix("nvidia/").strip("/") for s in slugs if s and s.strip()]
        self.slugs = list(dict.fromkeys(self.slugs))
        self.rules = [_PlaybookRules(playbook(s)) for s in self.slugs]
        self.commands = [(c, command_tokens(c)) for c in dict.fromkeys(c for c in commands if c and c.strip())]

    def match(self, issue: dict[str, Any]) -> Match | None:
        d = _doc(issue)
        weighted: list[tuple[int, str]] = []
        score = 0
        slugs, commands = [], []
        for rules in self.rules:
            found = rules.reasons(d)
            s = sum(w for w, _ in found.values())
            if s >= MATCH_THRESHOLD:
                slugs.append(rules.pb.slug)
            score += s
            weighted += [(w, t) for w, texts in found.values() for t in texts]
        for command, tokens in self.commands:
            hit = [t for t in tokens if t.pattern.search(d.text_l)]
            s = sum(t.weight for t in hit)
            if s >= MATCH_THRESHOLD:
                commands.append(command)
            score += s
            weighted += [(t.weight, t.reason(command)) for t in hit]
        if score < MATCH_THRESHOLD:
            return None
        weighted.sort(key=lambda wt: -wt[0])
        reasons = tuple(dict.fromkeys(t for _, t in weighted))
        return Match(number=int(issue.get("number") or 0), title=d.title,
                     url=str(issue.get("html_url") or issue.get("url") or ""),
                     created_at=issue.get("created_at"), updated_at=issue.get("updated_at"),
                     comments=int(issue.get("comments") or 0), score=score, reasons=reasons,
                     slugs=tuple(slugs), commands=tuple(commands))

    def rank(self, issues: Iterable[dict[str, Any]]) -> list[Match]:
        """Matching issues, strongest first (then most recently updated)."""
        found = [m for m in (self.match(i) for i in issues) if m is not None]
        found.sort(key=lambda m: (-m.score, _neg_time(m.updated_at), -m.number))
        return found


def _neg_time(stamp: str | None) -> str:
    # ISO-8601 UTC stamps sort as text; invert so the newest comes first within equal scores.
    return "".join(chr(0x10FFFF - ord(c)) for c in (stamp or ""))


def rank_issues(issues: Iterable[dict[str, Any]], slugs: Iterable[str], commands: Iterable[str] = ()) -> list[Match]:
    return Matcher(slugs, commands).rank(issues)


# --------------------------------------------------------------------------- what the user runs


def redact_cmdline(line: str) -> str:
    """A command line fit to show: values of secret-looking variables, flags and tokens hidden."""
    return scrub_secrets(line)


# sparktui's own probe scripts, run in a training interpreter: their argv names unsloth, vllm ...
# (``target_script.py --packages torch,...,unsloth,vllm``). Whichever sparktui started them (this one,
# an exporter, a peer's), they are never evidence of what the user runs.
_OWN_PROBE_SCRIPT = re.compile(r"(^|/)sparktui/probes/(target|bandwidth)_script\.py$")
OWN_PROBE_ARGS = 4  # the script path sits right after the interpreter (and maybe a flag or two)


def is_own_probe(argv: list[str]) -> bool:
    """True for a command line running one of sparktui's probe scripts."""
    return any(isinstance(a, str) and _OWN_PROBE_SCRIPT.search(a) for a in argv[:OWN_PROBE_ARGS])


def suggest_slugs(cmdlines: Iterable[str]) -> list[tuple[str, str]]:
    """Playbooks that running processes or launch-script lines suggest: ``[(slug, why), ...]``.

    ``vllm serve ...`` suggests ``vllm``; ``nvcr.io/nvidia/sglang:...`` suggests ``sglang``. The
    quoted line has secret-looking values hidden (argv often carries HF_TOKEN=...). A line that
    runs one of sparktui's own probe scripts suggests nothing.
    """
    rules = []
    for pb in CATALOG.values():
        for hint in (*pb.commands, *pb.containers, *pb.hints):
            rules.append((pb.slug, hint, _word_re(hint) if " " in hint or "::" in hint else
                          _literal_re(hint, r"(?<![a-z0-9])", r"(?![a-z0-9])")))
    out: dict[str, str] = {}
    for line in cmdlines:
        low = (line or "").lower()
        if not low.strip() or is_own_probe(low.split()):
            continue
        for slug, hint, rx in rules:
            if slug not in out and rx.search(low):
                out[slug] = f"'{hint}' in: {_around(redact_cmdline(line), hint, 80)}"
    return list(out.items())
