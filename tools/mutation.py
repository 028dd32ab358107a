#!/usr/bin/env python3
"""Mutation testing of the judges (src/sparktui/gotchas/): prints the share of mutants the tests kill.

Why: a judge's test suite can pass while a changed threshold or a deleted ``unknown`` guard goes
unnoticed. A mutant is the judge with one small change; a good suite fails on it ("killed").

Two passes, both over the judge-level tests only (pure, fast tests; see TEST_PATTERNS):

1. mutmut 3 mutates the code inside functions (operators, comparisons, numbers, strings, returns,
   deleted arguments). It maps each test to the functions it reaches once, then runs a mutant only
   against the tests that reach its function, in processes forked from one warm interpreter.
2. Module constants. mutmut leaves module-level code alone, and that is where the thresholds live
   (``HEADROOM_FRACTION = 0.9``). This pass nudges every number outside functions 5% up and 5%
   down (integers at least by 1) and runs the tests of that module (the test files that name it,
   plus the never-lie property test): a threshold survives unless some test sits just below and
   just above it.

Not part of CI (mutmut is not in the ``test`` extra). Install it with
``pip install 'mutmut==3.8.1'`` or pass ``--install``. Run from the repository root:

    python tools/mutation.py                  # all judges; exit 1 under --min (85%)
    python tools/mutation.py g07 g04 --min 0  # some modules
    python tools/mutation.py --sample 0.25    # a fixed quarter of mutmut's mutants: an estimate, 4x sooner
    python tools/mutation.py --report --survivors FILE  # the last run again (kept in .mutation/)

On a quiet 2-core machine a mutant takes about 0.15-0.3 s (all ~9800 of them: under an hour); the
run works on a copy of src/ and tests/ made when it starts, so edits during the run do not matter.

Tests failing in the tree before the run are deselected (and listed), so a half-finished edit
elsewhere does not make every mutant look killed.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures as cf
import datetime as dt
import glob
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOTCHAS = Path("src/sparktui/gotchas")
# the run's copy of src/, tests/ and pyproject.toml, and mutmut's mutants/ (git-ignored); runs side by
# side each take their own (SPARKTUI_MUTATION_DIR=/tmp/mut-g11), or they would spoil each other's copy
SNAP = Path(os.environ.get("SPARKTUI_MUTATION_DIR") or ROOT / ".mutation").resolve()
MUTMUT_VERSION = "3.8.1"
# each check's tests live in tests/gotchas/gNN/; all of them are judge-level except G8's end-to-end
# runs against a local HTTP server (client, CLI, garbage lists, token host), which never reach a mutant
TEST_PATTERNS = ("tests/gotchas/g*/test_*.py", "tests/test_verdicts_never_lie.py")
NOT_JUDGE_LEVEL = ("tests/gotchas/g08/test_client.py", "tests/gotchas/g08/test_cli.py",
                   "tests/gotchas/g08/test_garbage.py", "tests/gotchas/g08/test_token_host.py")
ALWAYS = ("tests/test_verdicts_never_lie.py",)  # reaches every judge
NUDGE = 0.05
PREPASS_TIMEOUT_S = 600
# the never-lie test judges every spoilt reading; per mutant a fixed sample of them is enough
NEVER_LIE_VARIANTS = "100"
DETECTED = {"killed", "timeout", "caught by type check"}


# --- which modules, which tests ------------------------------------------------------------------

def modules(names: list[str]) -> list[str]:
    """Module stems under gotchas/ for the given names ("g07", "g07_nvfp4_arch", "g07_nvfp4_arch.py")."""
    every = sorted(p.stem for p in (ROOT / GOTCHAS).glob("*.py"))
    if not names:
        return every
    out = []
    for n in names:
        n = Path(n).stem
        hits = [m for m in every if m == n or m.startswith(n + "_")]
        if not hits:
            sys.exit(f"mutation: no module {n!r} under {GOTCHAS} (have: {', '.join(every)})")
        out += [h for h in hits if h not in out]
    return out


def test_files(patterns=TEST_PATTERNS) -> list[str]:
    files: list[str] = []
    for p in patterns:
        files += [f for f in sorted(glob.glob(p, root_dir=SNAP)) if f not in files and f not in NOT_JUDGE_LEVEL]
    return files


def tests_naming(module: str, files: list[str]) -> list[str]:
    """The test files that name the module (import it), plus the never-lie property test; of that
    one, only the cases of the module's own gotcha when it is one (g04_throttling: G4)."""
    out = [f for f in files if f not in ALWAYS and module in (SNAP / f).read_text(encoding="utf-8")]
    num = re.match(r"g(\d+)_", module)
    for f in ALWAYS:
        if f in files:
            out += [i for i in _collect(f) if not _other_gotcha(i, f"G{int(num.group(1))}")] if num else [f]
    return out


def _collect(file: str) -> list[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider", file],
                          cwd=SNAP, env=dict(os.environ, PYTHONPATH=str(SNAP / "src")), capture_output=True, text=True)
    ids = [ln.strip() for ln in done.stdout.splitlines() if "::" in ln]
    return ids or [file]


def _other_gotcha(node_id: str, gid: str) -> bool:
    """A never-lie case of another gotcha ("...[gb10-demo-G6]" when judging G4)."""
    m = re.search(r"-(G\d+)\]$", node_id)
    return m is not None and m.group(1) != gid


def failing_tests(files: list[str]) -> list[str]:
    """Node ids of the tests that fail on the unmutated tree (they are deselected for the run)."""
    with tempfile.NamedTemporaryFile(suffix=".xml") as xml:
        try:
            subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={xml.name}",
                            *files], cwd=SNAP, env=dict(os.environ, PYTHONPATH=str(SNAP / "src")),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=PREPASS_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            sys.exit(f"mutation: the unmutated tests took over {PREPASS_TIMEOUT_S} s (a hung test?); fix that first")
        text = Path(xml.name).read_text(encoding="utf-8", errors="replace")
    import xml.etree.ElementTree as ET
    out = []
    for case in ET.fromstring(text).iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            parts = case.get("classname", "").split(".")  # tests.test_x[.TestClass]
            for i in range(len(parts), 0, -1):
                if (SNAP / ("/".join(parts[:i]) + ".py")).is_file():
                    out.append("::".join(["/".join(parts[:i]) + ".py", *parts[i:], case.get("name", "")]))
                    break
    return out


# --- pass 1: mutmut ------------------------------------------------------------------------------

MUTMUT_DRIVER = """
import json, os, random, sys
from pathlib import Path
from mutmut import configuration
cfg = configuration.config()
spec = json.loads(Path(sys.argv[1]).read_text())
cfg.only_mutate = spec["only"]
cfg.pytest_add_cli_args_test_selection = spec["tests"]
cfg.pytest_add_cli_args = cfg.pytest_add_cli_args + [f"--deselect={t}" for t in spec["deselect"]]
import mutmut.__main__ as mm
names = spec["names"]
if spec["sample"] < 1:  # generate first, then run a fixed share of the mutants of each module
    mm.set_mutant_under_test("mutant_generation")
    os.makedirs("mutants", exist_ok=True)
    mm.copy_src_dir(); mm.copy_also_copy_files(); mm.setup_source_paths(); mm.store_lines_covered_by_tests()
    mm.create_mutants(spec["jobs"])
    rnd, names = random.Random(spec["seed"]), []
    for only in spec["only"]:
        keys = sorted(json.loads(Path("mutants", only + ".meta").read_text())["exit_code_by_key"])
        names += sorted(rnd.sample(keys, round(len(keys) * spec["sample"])))
    print(f"sampled {len(names)} mutants", flush=True)
mm._run(names, spec["jobs"])
"""


def run_mutmut(mods: list[str], files: list[str], deselect: list[str], jobs: int, log: Path,
               sample: float = 1.0, seed: int = 0) -> int:
    spec = {"only": [f"{GOTCHAS}/{m}.py" for m in mods], "tests": files, "deselect": deselect, "jobs": jobs,
            "names": [f"sparktui.gotchas.{m}.*" for m in mods], "sample": sample, "seed": seed}
    (SNAP / "mutmut-spec.json").write_text(json.dumps(spec))
    with open(log, "w", encoding="utf-8") as out:
        child = subprocess.Popen([sys.executable, "-c", MUTMUT_DRIVER, str(SNAP / "mutmut-spec.json")], cwd=SNAP,
                                 stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            return child.wait()
        finally:  # stopped (Ctrl-C, kill): take mutmut's workers down too
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGTERM)
                child.wait()


def mutmut_results(mods: list[str]) -> dict[str, dict[str, str]]:
    """module -> {mutant name: status} from mutmut's .meta files."""
    from mutmut.stats import status_by_exit_code
    out = {}
    for m in mods:
        meta = SNAP / "mutants" / GOTCHAS / f"{m}.py.meta"
        codes = json.loads(meta.read_text())["exit_code_by_key"] if meta.exists() else {}
        out[m] = {k: status_by_exit_code[v] for k, v in codes.items()}
    return out


def describe_mutmut(name: str, module: str, source: str) -> tuple[int, str, str]:
    """(line in the source as it was mutated, "`before` -> `after`", kind) for one mutmut mutant."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant
    from mutmut.utils.format_utils import orig_function_and_class_names_from_key
    cwd = os.getcwd()
    os.chdir(SNAP)
    try:
        diff = get_diff_for_mutant(name, path=str(GOTCHAS / f"{module}.py"))
    except Exception as e:  # a mutmut internals change: still list the mutant
        return 0, f"(no diff: {e})", "logic"
    finally:
        os.chdir(cwd)
    func, cls = orig_function_and_class_names_from_key(name)
    def_line = _def_line(source, func, cls)
    old = new = None
    old_no = 0
    lines = diff.splitlines()
    def_idx = 0
    for ln in lines:  # where the def line sits in the diffed text (leading comments shift it)
        if ln.startswith(("@@", "---", "+++")):
            continue
        if re.match(r"^[ -]\s*(async\s+)?def\s", ln):
            break
        def_idx += 1 if not ln.startswith("+") else 0
    cur = 0
    for ln in lines:
        m = re.match(r"^@@ -(\d+)", ln)
        if m:
            cur = int(m.group(1))
            continue
        if ln.startswith(("---", "+++")):
            continue
        if ln.startswith("-") and old is None:
            old, old_no = ln[1:], cur
        elif ln.startswith("+") and new is None:
            new = ln[1:]
        if not ln.startswith("+"):
            cur += 1
    line = def_line + (old_no - 1 - def_idx) if def_line and old_no else def_line
    return line, _short_change(old or "", new or ""), kind_of(old or "", new or "")


def _def_line(source: str, func: str, cls: str | None) -> int:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return 0
    body = tree.body
    if cls:
        body = next((n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), [])
    for n in body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == func:
            return n.lineno
    return 0


def _short_change(old: str, new: str) -> str:
    """The differing middle of two lines, with a little context: `a > b` -> `a >= b`."""
    old, new = old.strip(), new.strip()
    p = 0
    while p < min(len(old), len(new)) and old[p] == new[p]:
        p += 1
    s = 0
    while s < min(len(old), len(new)) - p and old[-1 - s] == new[-1 - s]:
        s += 1
    lo, ctx = max(0, p - 12), 12
    a, b = old[lo:len(old) - max(0, s - ctx)], new[lo:len(new) - max(0, s - ctx)]
    if not new:
        return f"`{old[:70]}` deleted"
    return f"`{a[:70]}` -> `{b[:70]}`"


def kind_of(old: str, new: str) -> str:
    """"text" when the mutant only changes the wording of messages (string literals that are not
    keys: they hold a space or punctuation), "logic" otherwise (a changed dict key is logic)."""
    a, b = _tokens(old.strip()), _tokens(new.strip())
    if a is None or b is None or len(a) != len(b):
        return "logic"
    changed = [(x, y) for x, y in zip(a, b) if x != y]
    if not changed or any(x[0] != tokenize.STRING or y[0] != tokenize.STRING for x, y in changed):
        return "logic"
    for x, _ in changed:
        body = x[1].lstrip("rbuRBUfF").strip("'\"")
        if re.fullmatch(r"[A-Za-z_][\w.]*", body):
            return "logic"
    return "text"


def _tokens(code: str):
    """(type, string) tokens of a code fragment (possibly cut mid-statement), or None."""
    out = []
    try:
        for t in tokenize.generate_tokens(io.StringIO(code).readline):
            if t.type in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT):
                continue
            out.append((t.type, t.string))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out or None


# --- pass 2: module constants --------------------------------------------------------------------

@dataclass
class Site:
    module: str
    line: int
    start: int  # offsets into the source text
    end: int
    text: str
    value: float | int
    name: str  # the assignment it belongs to


def constant_sites(module: str, source: str) -> list[Site]:
    """Numbers (or constant arithmetic like ``512 << 20``) outside functions, lambdas and f-strings."""
    tree = ast.parse(source)
    offsets = [0]
    for ln in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(ln))
    sites: list[Site] = []

    def folded(node):
        try:
            v = eval(compile(ast.Expression(node), "<const>", "eval"), {"__builtins__": {}})  # constants only
        except Exception:
            return None
        return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    def numeric_only(node) -> bool:
        return all(isinstance(n, (ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop, ast.expr_context))
                   and (not isinstance(n, ast.Constant) or type(n.value) in (int, float))
                   for n in ast.walk(node))

    def visit(node, name):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.JoinedStr)):
            return
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            name = ", ".join(ast.unparse(t) for t in targets)
        if isinstance(node, (ast.Constant, ast.BinOp, ast.UnaryOp)) and numeric_only(node):
            v = folded(node)
            if v is not None and node.end_lineno is not None and node.end_col_offset is not None:
                a = offsets[node.lineno - 1] + _col(source, offsets, node.lineno, node.col_offset)
                b = offsets[node.end_lineno - 1] + _col(source, offsets, node.end_lineno, node.end_col_offset)
                sites.append(Site(module, node.lineno, a, b, source[a:b], v, name))
            return
        for child in ast.iter_child_nodes(node):
            visit(child, name)

    for top in tree.body:
        if not (isinstance(top, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "GOTCHA" for t in top.targets)):
            visit(top, "")  # GOTCHA = Gotcha(...) holds how often to re-check, not a verdict's threshold
    return sites


def _col(source: str, offsets: list[int], lineno: int, col: int) -> int:
    """ast columns are UTF-8 byte offsets; the text offset within the line."""
    line = source[offsets[lineno - 1]:offsets[lineno]]
    return len(line.encode("utf-8")[:col].decode("utf-8", errors="replace"))


def nudges(v: float | int) -> list[float | int]:
    if v == 0:
        return [1] if isinstance(v, int) else [1.0]
    if isinstance(v, int):
        d = max(1, round(abs(v) * NUDGE))
        return [v + d, v - d]
    return [v * (1 + NUDGE), v * (1 - NUDGE)]


@dataclass
class ConstResult:
    site: Site
    value: float | int
    status: str
    seconds: float = 0.0


def run_constants(mods: list[str], files: list[str], deselect: list[str], jobs: int,
                  sources: dict[str, str]) -> list[ConstResult]:
    work: dict[str, tuple[list[str], list[tuple[Site, float | int]]]] = {}
    for m in mods:
        nudged = [(s, v) for s in constant_sites(m, sources[m]) for v in nudges(s.value)]
        if nudged:
            work[m] = (tests_naming(m, files), nudged)
    if not work:
        return []
    tmp = SNAP / "constants"
    trees = []
    for i in range(jobs):
        t = tmp / f"w{i}" / "src"
        _copy_tree(SNAP, t.parent)
        trees.append(t)
    free = list(range(jobs))
    deselect_args = [f"--deselect={d}" for d in deselect]

    def pytest(module: str, text: str, tests: list[str]) -> tuple[str, float]:
        """Run ``tests`` with ``module`` holding ``text``: killed, survived, timeout, ..."""
        slot = free.pop()
        try:
            t = trees[slot]
            path = t / "sparktui" / "gotchas" / f"{module}.py"
            path.write_text(text, encoding="utf-8")
            env = dict(os.environ, PYTHONPATH=str(t), PYTHONDONTWRITEBYTECODE="1")
            t0 = time.monotonic()
            try:
                rc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                                     *deselect_args, *tests], cwd=t.parent, env=env, timeout=300,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
                # 2: interrupted, here by errors while collecting (the mutant breaks the import): detected
                status = "killed" if rc in (1, 2, 3) else "survived" if rc == 0 else "no tests" if rc == 5 \
                    else "suspicious"
            except subprocess.TimeoutExpired:
                status = "timeout"
            path.write_text(sources[module], encoding="utf-8")
            return status, time.monotonic() - t0
        finally:
            free.append(slot)

    # the copies must be what the tests import (not the editable install of the work tree)
    probe = subprocess.run([sys.executable, "-c", "import sparktui; print(sparktui.__file__)"], cwd=tmp,
                           env=dict(os.environ, PYTHONPATH=str(trees[0])), capture_output=True, text=True)
    if not probe.stdout.strip().startswith(str(trees[0])):
        sys.exit(f"mutation: the copied tree is not what imports ({probe.stdout.strip() or probe.stderr.strip()})")
    try:
        with cf.ThreadPoolExecutor(jobs) as pool:
            # each module's tests must pass unmutated, or no kill of its constants would mean anything
            clean = dict(zip(work, pool.map(lambda m: pytest(m, sources[m], work[m][0])[0], work)))
            todo = [(m, s, v) for m, (_, nudged) in work.items() for s, v in nudged]

            def one(item: tuple[str, Site, float | int]) -> ConstResult:
                m, s, v = item
                if clean[m] != "survived":
                    return ConstResult(s, v, f"not checked (its tests: {clean[m]} unmutated)")
                src = sources[m]
                return ConstResult(s, v, *pytest(m, src[:s.start] + repr(v) + src[s.end:], work[m][0]))

            return list(pool.map(one, todo))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --- report --------------------------------------------------------------------------------------

@dataclass
class Tally:
    killed: int = 0
    survived: int = 0
    timeout: int = 0
    no_tests: int = 0
    other: int = 0
    strings: int = 0  # survivors that only change the wording of a message
    survivors: list[tuple[int, str, str, str]] = field(default_factory=list)  # (line, where, change, kind)

    def add(self, status: str) -> None:
        if status in ("killed", "caught by type check"):
            self.killed += 1
        elif status == "timeout":
            self.timeout += 1
        elif status == "survived":
            self.survived += 1
        elif status == "no tests":
            self.no_tests += 1
        else:
            self.other += 1

    @property
    def total(self) -> int:
        return self.killed + self.survived + self.timeout + self.no_tests + self.other

    @property
    def detected(self) -> int:
        return self.killed + self.timeout

    def score(self) -> float:
        return 100.0 * self.detected / self.total if self.total else 100.0


def report(mods, mm, consts, sources, header: list[str], survivors_file: Path | None) -> float:
    tallies = {m: Tally() for m in mods}
    unrun = 0
    for m in mods:
        for name, status in sorted(mm.get(m, {}).items(), key=lambda kv: _mutant_no(kv[0])):
            if status == "not checked":  # not run: outside --sample (or mutmut was stopped)
                unrun += 1
                continue
            t = tallies[m]
            t.add(status)
            if status not in DETECTED:
                line, change, kind = describe_mutmut(name, m, sources[m])
                func = _function_of(name)
                t.strings += kind == "text"
                t.survivors.append((line, f"{func}()", f"{change}" + ("" if status == "survived" else f" [{status}]")
                                    + f"  ({name.rsplit('.', 1)[-1]})", kind))
    for r in consts:
        t = tallies[r.site.module]
        t.add(r.status)
        if r.status not in DETECTED:
            t.survivors.append((r.site.line, r.site.name or "module constant",
                                f"`{r.site.text}` -> `{r.value!r}`"
                                + ("" if r.status == "survived" else f" [{r.status}]"),
                                "constant"))
    total = Tally()
    rows = []
    for m in mods:
        t = tallies[m]
        for f in ("killed", "survived", "timeout", "no_tests", "other", "strings"):
            setattr(total, f, getattr(total, f) + getattr(t, f))
        rows.append(f"{m + '.py':28s} {t.total:6d} {t.killed:7d} {t.survived:9d} {t.no_tests:9d} {t.timeout:8d} "
                    f"{t.other:6d} {t.score():6.1f}%")
    lines = [*header, "",
             f"{'module':28s} {'mutants':>6s} {'killed':>7s} {'survived':>9s} {'no tests':>9s} {'timeout':>8s} "
             f"{'other':>6s} {'score':>7s}", *rows,
             f"{'TOTAL':28s} {total.total:6d} {total.killed:7d} {total.survived:9d} {total.no_tests:9d} "
             f"{total.timeout:8d} {total.other:6d} {total.score():6.1f}%", "",
             f"of the {total.total - total.detected} undetected, {total.strings} only change a message's wording; "
             f"score without them: "
             f"{100.0 * total.detected / max(1, total.total - total.strings):.1f}%",
             f"constants pass: {len(consts)} nudges of module-level numbers "
             f"({sum(r.status in DETECTED for r in consts)} detected)",
             *([f"{unrun} mutmut mutants generated but not run (outside --sample)"] if unrun else []),
             f"mutation score: {total.score():.1f}% ({total.detected}/{total.total} killed or timed out)"]
    print("\n".join(lines))
    if survivors_file:
        out = [f"# surviving mutants ({dt.date.today()}): module:line  where  `before` -> `after`  (mutmut's name)",
               "# the line is in the judge as it was when the run began; the whole mutant: `cd .mutation &&",
               "# mutmut show sparktui.gotchas.MODULE.NAME`; rerun a module: `python tools/mutation.py g04 --min 0`",
               *header, ""]
        for m in mods:
            t = tallies[m]
            if not t.survivors:
                continue
            out.append(f"## {m}.py: {t.total - t.detected} of {t.total} undetected "
                       f"({t.strings} change only a message's wording, listed last)")
            srt = sorted(t.survivors, key=lambda s: (s[3] == "text", s[0]))
            out += [f"{m}.py:{line}  {where}  {change}" for line, where, change, _ in srt]
            out.append("")
        survivors_file.write_text("\n".join(out) + "\n", encoding="utf-8")
        print(f"survivors listed in {survivors_file}")
    return total.score()


def _function_of(mutant: str) -> str:
    """sparktui.gotchas.g04_throttling.x_judge__mutmut_3 -> judge; ...xǁSeriesǁ__init____mutmut_1 -> Series.__init__"""
    from mutmut.utils.format_utils import orig_function_and_class_names_from_key
    func, cls = orig_function_and_class_names_from_key(mutant)
    return f"{cls}.{func}" if cls else func


def _mutant_no(name: str) -> tuple[str, int]:
    head, _, n = name.rpartition("__mutmut_")
    return head, int(n) if n.isdigit() else 0


# --- main ----------------------------------------------------------------------------------------

def _copy_tree(src: Path, dst: Path) -> None:
    """src/, tests/ and pyproject.toml of ``src`` into ``dst`` (no caches)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    dst.mkdir(parents=True, exist_ok=True)
    for part in ("src", "tests"):
        shutil.copytree(src / part, dst / part, ignore=ignore)
    shutil.copy2(src / "pyproject.toml", dst / "pyproject.toml")


def ensure_mutmut(install: bool) -> None:
    try:
        from importlib.metadata import version
        v = version("mutmut")
    except Exception:
        v = None
    if v and v.startswith("3."):
        return
    if not install:
        sys.exit(f"mutation: mutmut 3 is not installed{f' (found {v})' if v else ''}; "
                 f"pip install 'mutmut=={MUTMUT_VERSION}', or run with --install")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", f"mutmut=={MUTMUT_VERSION}"], check=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("modules", nargs="*", help="gotcha modules (g04, g04_throttling, ...); default: all")
    ap.add_argument("--min", type=float, default=85.0, help="exit 1 when the score is below this (default 85)")
    ap.add_argument("--jobs", type=int, default=2, help="mutants run at once (default 2)")
    ap.add_argument("--survivors", type=Path, help="write the undetected mutants, grouped by module, to this file")
    ap.add_argument("--report", action="store_true", help="no run: summarise the last run (kept in .mutation/)")
    ap.add_argument("--no-constants", action="store_true", help="skip the module-constants pass")
    ap.add_argument("--sample", type=float, default=1.0,
                    help="run this share of each module's mutmut mutants, a fixed random sample (default 1: all)")
    ap.add_argument("--seed", type=int, default=0, help="seed of --sample (default 0)")
    ap.add_argument("--install", action="store_true", help=f"pip install mutmut=={MUTMUT_VERSION} when missing")
    a = ap.parse_args(argv)
    ensure_mutmut(a.install)
    os.environ.setdefault("SPARKTUI_NEVER_LIE_VARIANTS", NEVER_LIE_VARIANTS)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("mutation: stopped"))  # runs the finally blocks
    mods = modules(a.modules)
    keep = SNAP / "run.json"
    t0 = time.monotonic()
    if a.report:
        if not keep.exists():
            sys.exit(f"mutation: no earlier run in {SNAP} to report")
        saved = json.loads(keep.read_text())
        mods = [m for m in mods if m in saved["sources"]] if a.modules else saved["modules"]
        sources, header = saved["sources"], saved["header"]
        consts = [ConstResult(Site(**c["site"]), c["value"], c["status"], c["seconds"]) for c in saved["consts"]
                  if c["site"]["module"] in mods]
    else:
        # judge the tree as it is now, whatever others edit during the run
        shutil.rmtree(SNAP, ignore_errors=True)
        _copy_tree(ROOT, SNAP)
        files = test_files()
        sources = {m: (SNAP / GOTCHAS / f"{m}.py").read_text(encoding="utf-8") for m in mods}
        deselect = failing_tests(files)
        git = lambda *args: subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout
        dirty = [Path(p).name for p in git("status", "--porcelain", "--", str(GOTCHAS)).split() if p.endswith(".py")]
        header = [f"mutation testing of {GOTCHAS}/ with mutmut {MUTMUT_VERSION} + module-constant nudges "
                  f"(+/-{NUDGE:.0%})",
                  f"run {dt.datetime.now().isoformat(timespec='seconds')} "
                  f"at {git('rev-parse', '--short', 'HEAD').strip()}"
                  + (f", judges edited but not committed: {', '.join(dirty)}" if dirty else ""),
                  f"tests: {' '.join(files)}"]
        if deselect:
            header.append(f"deselected {len(deselect)} test(s) failing before mutation: {' '.join(deselect)}")
        log = SNAP / "mutmut.log"
        if a.sample < 1:
            header.append(f"mutmut mutants: a fixed sample of {a.sample:.0%} of each module's (seed {a.seed}): "
                          f"the score is an estimate")
        rc = run_mutmut(mods, files, deselect, a.jobs, log, a.sample, a.seed)
        if rc != 0:
            print(log.read_text(errors="replace")[-3000:].replace("\r", "\n"))
            sys.exit(f"mutation: mutmut exited {rc} (log: {log})")
        t1 = time.monotonic()
        consts = [] if a.no_constants else run_constants(mods, files, deselect, a.jobs, sources)
        t2 = time.monotonic()
        n_mm = sum(st != "not checked" for v in mutmut_results(mods).values() for st in v.values())
        header.append(f"took {t2 - t0:.0f} s on {a.jobs} job(s): mutmut {t1 - t0:.0f} s for {n_mm} mutants "
                      f"({(t1 - t0) / max(1, n_mm):.2f} s each, generation included), constants {t2 - t1:.0f} s "
                      f"for {len(consts)} ({(t2 - t1) / max(1, len(consts)):.2f} s each)")
        keep.write_text(json.dumps({"modules": mods, "sources": sources, "header": header, "consts": [
            {"site": vars(r.site), "value": r.value, "status": r.status, "seconds": r.seconds} for r in consts]}))
    score = report(mods, mutmut_results(mods), consts, sources, header, a.survivors)
    if score < a.min:
        print(f"mutation score {score:.1f}% is under --min {a.min:g}%")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
