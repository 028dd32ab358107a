"""Fix blocks filled from the evidence (issue 13 item 6): what a card's `c` copies runs as is.

Every verdict with something to fix (fail, warn, unknown, skip) built from realistic readings (the
rules tests' builders, the real H200 snapshot, the GB10 demo recording): each code block carries no
placeholder, parses (`bash -n`; compile() for Python; the TOML/JSON/YAML parsers for config
snippets), and names the evidence's values (the interpreter's path, the pid, the file:line). Then,
per gotcha, the exact filled command for a given reading, and evidence that cannot smuggle a
command into a block.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Callable

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the backport, as sparktui itself uses
    import tomli as tomllib

import pytest
import yaml

from sparktui.core.config import Config
from sparktui.core.readings import read_snapshot
from sparktui.core.recording import read_recording, readings_from_recording
from sparktui.core.verdict import Status, Verdict
from sparktui.gotchas import REGISTRY
from sparktui.gotchas import g01_cuda_abi as g1
from sparktui.gotchas import g02_flash_attn as g2
from sparktui.gotchas import g05_bandwidth as g5
from sparktui.gotchas import g06_contention as g6
from sparktui.gotchas import g07_nvfp4_arch as g7
from sparktui.gotchas import g08_stale_playbooks as g8
from sparktui.gotchas import g09_container_drift as g9
from sparktui.gotchas import g10_tensor_parallel as g10
from sparktui.probes import tpscan
from tests.gotchas.g01 import test_rules as t1
from tests.gotchas.g02 import test_judge as t2
from tests.gotchas.g03 import test_rules as t3
from tests.gotchas.g04 import test_rules as t4
from tests.gotchas.g06 import test_rules as t6
from tests.gotchas.g07 import test_rules as t7
from tests.gotchas.g09 import test_judge as t9
from tests.gotchas.g14 import test_judge as t14
from tests.gotchas.g08 import test_judge as t8
from tests.conftest import readings_of
from tests.gotchas.g05.test_rules import GB10 as G5_GB10
from tests.gotchas.g10.test_rules import TRAIN as G10_TRAIN

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "tests" / "data" / "h200" / "snapshot.json"
DEMO = ROOT / "src" / "sparktui" / "data" / "gb10-demo.jsonl"

BLOCK = re.compile(r"```([a-zA-Z]*)\n(.*?)```", re.S)  # as ui/screens.py's fix_blocks, with the language
PLACEHOLDERS = (re.compile(r"<[A-Z_a-z ]+>"), re.compile(r"\bPID\b"), re.compile(r"/path/to"),
                re.compile(r"\b(MODEL|CONTAINER|SLUG|HOST|UNIT)\b"), re.compile(r"\.\.\.(?!\S)"))
PARSERS: dict[str, Callable[[str], object]] = {
    "python": lambda code: compile(code, "<fix block>", "exec"), "toml": tomllib.loads,
    "json": json.loads, "yaml": yaml.safe_load,
}
INTERP = t1.INTERP  # /home/spark/venvs/train/bin/python


def blocks(fix: str) -> list[tuple[str, str]]:
    return [(lang or "bash", code) for lang, code in BLOCK.findall(fix)]


def bash_n(code: str) -> str:
    """bash's own syntax check; "" when it parses."""
    bash = shutil.which("bash")
    assert bash, "bash is needed to check the fix blocks"
    done = subprocess.run([bash, "-n"], input=code, capture_output=True, text=True, timeout=10)
    return done.stderr if done.returncode else ""


def assert_runnable(v: Verdict) -> None:
    """Each block of the verdict's fix: no placeholder, and it parses as its language."""
    found = blocks(v.fix)
    assert found, f"{v.id}: a fix without a code block: {v.fix!r}"
    for lang, code in found:
        for pattern in PLACEHOLDERS:
            assert not pattern.search(code), f"{v.id}: placeholder {pattern.pattern!r} in:\n{code}"
        if lang in ("bash", "sh"):
            assert bash_n(code) == "", f"{v.id}: bash -n fails on:\n{code}\n{bash_n(code)}"
        else:
            PARSERS[lang](code)


# -- realistic verdicts, each with the evidence values its fix must name --------------------------

def _g10_flagged(context: str, nodes: str, line: int = 12) -> Verdict:
    m = {"file": "jobs/two-spark/launch.sh", "line": line, "key": "--tensor-model-parallel-size", "value": "2",
         "status": "set", "degree": 2, "text": "--tensor-model-parallel-size 2 \\"}
    d = tpscan_reading([m], {"jobs/two-spark/launch.sh": {"context": context, "nodes": nodes, "kind": "shell"}})
    return g10.judge(readings_of(tpscan=d), Config())


def tpscan_reading(matches: list[dict], files: dict) -> dict:
    """A tpscan reading as the probe writes it, for the paths ./jobs."""
    return {"paths": [{"path": "./jobs", "status": "scanned"}], "files_read": 14, "dirs_walked": 4, "bytes_read": 9000,
            "matches": matches, "matches_total": len(matches), "files": files, "skipped": {}, "truncated": None,
            "at_one": 0}


def _g11_from_lines(*lines: str) -> Verdict:
    """G11 judged on a saved kernel log holding ``lines`` (the file reader the CLI's replay uses)."""
    import tempfile

    from sparktui.gotchas import g11_kernel_log as g11
    from sparktui.probes import kernel_log

    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
        f.write("\n".join(lines) + "\n")
    return g11.judge(readings_of(kernel_log=kernel_log.read_file(f.name)), Config())


def _g12_single_half_mtu_1500() -> Verdict:
    """G12 on a Spark whose cabled halves run MTU 1500, NCCL_IB_HCA unset, with a peer configured."""
    import tempfile

    from tests.gotchas.g12 import test_link as t12

    return t12.judged(t12.spark(Path(tempfile.mkdtemp()), mtu=1500))


def _g13_proprietary_on_gb10() -> Verdict:
    import tempfile

    from tests.gotchas.g13 import test_driver_flavour as t13
    from sparktui.probes import driver_flavour

    return t13.verdict(driver_flavour.read_tree(t13.tree(Path(tempfile.mkdtemp()), nvrm=t13.PROP_NVRM, taint="PO")))


CASES: dict[str, tuple[Callable[[], Verdict], tuple[str, ...]]] = {
    "G1 cu128 wheel on a GB10 beside a leftover .so.12": (
        lambda: t1.g1_of(t1.target(cuda="12.8", version="2.9.0+cu128"), libs={"libcudart": [t1.CUDA13, t1.CUDA12]}),
        (f"{INTERP} -m pip install torch torchvision --index-url https://download.pytorch.org/whl/cu130",
         f"dpkg -S {t1.CUDA12['path']}")),
    "G1 undefined symbol at import": (
        lambda: t1.g1_of(t1.target(imp={"status": "error", "error_type": "ImportError", "error": t1.UNDEF})),
        (f"{INTERP} -m pip uninstall -y torch torchvision torchaudio",)),
    "G1 blind torch with CUDA_VISIBLE_DEVICES=-1": (
        lambda: t1.g1_of(t1.target(torch_cuda={"available": False}, python={"env": {"CUDA_VISIBLE_DEVICES": "-1"}})),
        ("unset CUDA_VISIBLE_DEVICES", f"{INTERP} -c \"import torch; print(torch.cuda.is_available()")),
    "G1 cu130 torch on an H200 whose driver has CUDA 12.8": (
        lambda: t1.g1_of(t1.target(), t1.H200), ("--index-url https://download.pytorch.org/whl/cu128",)),
    "G2 NGC flash-attn with Unsloth": (
        lambda: t2.judge(t2.target(t2.IMPORTED, {"flash_attn": "2.7.4.post1+25.11", "unsloth": "2026.7.3"}, t2.FA_DATA)),
        ("/usr/bin/python3 -m pip uninstall -y flash-attn",)),
    "G2 flash-attn crashes the interpreter": (
        lambda: t2.judge(t2.target({"status": "crashed", "error": "SIGSEGV", "signal": "SIGSEGV"},
                                   {"flash-attn": "2.7.4.post1", "unsloth": "2026.7.3"})),
        ("/usr/bin/python3 -c",)),
    "G3 reclaimable cache leaves MemFree under the floor": (
        lambda: t3.v_of(t3._cache_mem(0.6)), ("echo 3 | sudo tee /proc/sys/vm/drop_caches",)),
    "G3 shmem holds the pool": (
        lambda: t3.v_of(t3.mi(avail=6.5, free=3.0, cached=70.0, shmem=62.0, anon=40.0)), ("df -h /dev/shm",)),
    "G4 SW thermal slowdown": (
        lambda: t4.verdict(t4.samples(lambda i, t: t4.gpu(temp=84, sw_thermal=903_158_000 + t4.linear(6.1)(t)))),
        ("nvidia-smi -q -d PERFORMANCE",)),
    "G5 far below the range": (lambda: g5.judge_result({**G5_GB10, "copy_gbs": 90.0, "read_gbs": 110.0}, 1000.0, True),
                               ("sparktui bandwidth",)),
    "G6 uncapped vLLM beside training": (
        lambda: t6.g6v(t6.snap(t6.vllm(5120, 0.9, t6.ENGINE_CORE, state="default"), t6.job(3325, 15 * t6.GIB))),
        ("kill 5120", "vllm serve m --gpu-memory-utilization 0.5")),
    "G6 two jobs beside a loaded Ollama": (
        lambda: t6.g6v(t6.snap(t6.ollama(4242, 8 * t6.GIB, loaded=True), t6.job(3310, t6.LORA), t6.job(3320, t6.LORA))),
        ("kill 4242", "kill 3310", "kill 3320", "xargs -r -n1 ollama stop")),
    "G6 NVML down": (lambda: t6.g6v(t6.snap(t6.job(3325, None, listed=False), nv_ok=False)),
                     ("nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",)),
    "G7 generic sm_120 kernels only": (
        lambda: t7.judge(t7.GB10, t7.target(["sm_90", "sm_120"], env={"TORCH_CUDA_ARCH_LIST": "9.0;12.0"})),
        (f"{INTERP} -c", "# TORCH_CUDA_ARCH_LIST is '9.0;12.0' in the training environment now")),
    "G7 CPU-only torch": (lambda: t7.judge(t7.GB10, t7.target([], available=False, cuda=None, version="2.9.0+cpu")),
                          (f"{INTERP} -c",)),
    "G8 open issues name the playbook": (
        lambda: t8.verdict(t8.data(matches=[t8.MATCH], matches_total=1)),
        ("gh issue view 109 -R NVIDIA/dgx-spark-playbooks --comments",)),
    "G8 nothing configured, vllm running": (
        lambda: t8.verdict({"configured": False, "repo": "NVIDIA/dgx-spark-playbooks", "slugs": [], "commands": [],
                            "suggestions": [{"slug": "vllm", "why": "'vllm serve' in: vllm serve m"}]}),
        ("sparktui check G8 --playbook vllm", 'slugs = ["vllm"]')),
    "G8 nothing fetched": (
        lambda: t8.verdict(t8.data(issues_checked=None, source=None, error="offline")),
        ("gh issue list -R NVIDIA/dgx-spark-playbooks --state open --search 'vllm in:title,body'",)),
    "G9 PyPI cu128 torch over the NGC container": (
        lambda: t9.judge(container=t9.docker(), target=t9.target({**t9.NGC_PACKAGES, "torch": "2.9.0+cu128"}, "12.8"),
                         pins=t9.shipped(), nvml=t9.GB10),
        ("nvcr.io/nvidia/pytorch:25.11-py3", "/usr/bin/python3 -m pip check")),
    "G9 bare pip drifting from the user's pins": (
        lambda: t9.judge(container=t9.no_container(),
                         target=t9.target({"torch": "2.9.0+cu128", "transformers": "4.57.1"}, "12.8"),
                         pins=t9.user_pins(("torch", "==2.9.0+cu130", None), ("transformers", "==4.56.0", None)),
                         nvml=t9.GB10),
        ("/usr/bin/python3 -m pip install -c /home/u/pins.txt --extra-index-url https://download.pytorch.org/whl/cu130 "
         "torch transformers",)),
    "G10 TP 2 in a two-node training launch": (lambda: _g10_flagged("training", "multi"),
                                               ("jobs/two-spark/launch.sh:12", "${EDITOR:-vi} +12 jobs/two-spark/launch.sh",
                                                "sparktui check G10 --path ./jobs")),
    "G10 TP 2 in a file neither training nor serving": (lambda: _g10_flagged("unknown", "unknown", 3),
                                                        ("jobs/two-spark/launch.sh:3",)),
    "G10 nothing readable": (
        lambda: g10.judge(readings_of(tpscan={**tpscan_reading([], {}), "files_read": 0,
                                              "paths": [{"path": "./jobs", "status": "missing"}]}), Config()),
        ("grep -rlE --include='*.sh'",)),
    "G11 Xid 169 and an OOM kill this boot": (
        lambda: _g11_from_lines("[    7.250000] NVRM: Xid (PCI:000f:01:00): 169, pid='<unknown>', name=<unknown>, "
                                "RmInitAdapter failed!",
                                "[ 9120.000000] Out of memory: Killed process 4242 (python3) total-vm:131234567kB, "
                                "anon-rss:104857600kB, "
                                "file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:210000kB oom_score_adj:0"),
        ("open",)),
    "G12 MTU 1500 on the cabled halves": (_g12_single_half_mtu_1500, ("mtu 9000",)),
    "G13 proprietary module on a GB10": (_g13_proprietary_on_gb10, ("580-open",)),
    "G14 a live run stalled": (lambda: t14.verdict(t14.run(t14.steady(t14.T3, 1000), read_at=t14.T3 + 1700)),
                               ("sudo py-spy dump --pid 4100", "sudo py-spy dump --pid 4101")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_block_of_a_filled_fix_runs_as_is_and_names_the_evidence(name):
    build, values = CASES[name]
    v = build()
    assert v.status in (Status.FAIL, Status.WARN, Status.UNKNOWN, Status.SKIP), (name, v.status, v.summary)
    assert_runnable(v)
    code = "\n".join(c for _, c in blocks(v.fix))
    for value in values:
        assert value in code, f"{name}: {value!r} is not in the fix's blocks:\n{code}"


def test_the_cases_cover_every_gotcha_that_fixes_something():
    assert {n.split()[0] for n in CASES} == set(REGISTRY)


def _every_verdict(readings) -> list[Verdict]:
    return [g.judge(readings, Config()) for g in REGISTRY.values()]


def test_every_fix_judged_from_the_real_h200_snapshot_runs_as_is():
    r, _, _ = read_snapshot(SNAPSHOT)
    fixing = [v for v in _every_verdict(r) if v.fix and v.status is not Status.OK]
    assert {v.id for v in fixing} >= {"G6", "G9"}  # what this snapshot shows: a container, drifting pins
    for v in fixing:
        assert_runnable(v)
    g9_fix = next(v for v in fixing if v.id == "G9").fix
    interp = r.data("target")["interpreter"]
    assert f"{interp} -m pip install torch torchvision --index-url https://download.pytorch.org/whl/cu130" in g9_fix


def test_every_fix_judged_from_the_gb10_demo_recording_runs_as_is():
    fixing = [v for v in _every_verdict(readings_from_recording(read_recording(DEMO)))
              if v.fix and v.status is not Status.OK]
    assert "G6" in {v.id for v in fixing}
    for v in fixing:
        assert_runnable(v)


# -- the exact filled command, per gotcha -----------------------------------------------------------

def test_g1_reinstalls_into_the_target_interpreter_from_the_index_the_gpu_needs():
    v = CASES["G1 cu128 wheel on a GB10 beside a leftover .so.12"][0]()
    assert blocks(v.fix)[0][1] == (
        f"{INTERP} -m pip uninstall -y torch torchvision torchaudio\n"
        f"{INTERP} -m pip install torch torchvision --index-url https://download.pytorch.org/whl/cu130\n"
        f"{INTERP} -c \"import torch; print(torch.__version__, torch.version.cuda)\"   # expect 13.x\n")
    assert blocks(v.fix)[2][1] == ("ldconfig -p | grep libcudart\n"
                                   "dpkg -S /usr/local/cuda-12.8/targets/sbsa-linux/lib/libcudart.so.12\n")


def test_g1_without_a_leftover_offers_no_libcudart_block_and_the_generic_text_stays():
    v = t1.g1_of(t1.target(cuda="12.8", version="2.9.0+cu128"))
    assert "dpkg -S" not in v.fix and len(blocks(v.fix)) == 2
    assert "pip uninstall -y torch torchvision torchaudio\n" in g1.GOTCHA.fix  # `sparktui explain` keeps the words


def test_g1_an_interpreter_not_read_is_found_not_guessed():
    t = t1.target(cuda="12.8", version="2.9.0+cu128")
    del t["interpreter"]
    code = blocks(t1.g1_of(t).fix)[0][1]
    assert code.startswith("# the training interpreter was not read") and "command -v python3" in code
    assert "python3 -m pip install torch torchvision --index-url" in code


def test_g2_removes_flash_attn_with_the_target_interpreters_pip():
    v = CASES["G2 NGC flash-attn with Unsloth"][0]()
    assert blocks(v.fix)[-1][1] == ("/usr/bin/python3 -m pip uninstall -y flash-attn\n"
                                    "/usr/bin/python3 -c \"import torch; print(torch.__version__, torch.version.cuda)\"\n")
    assert g2.GOTCHA.fix.endswith("```bash\npip uninstall -y flash-attn\npython -c \"import torch; "
                                  "print(torch.__version__, torch.version.cuda)\"\n```\n")


def test_g3_offers_drop_caches_only_for_reclaimable_cache():
    assert t3.DROP in CASES["G3 reclaimable cache leaves MemFree under the floor"][0]().fix
    assert t3.DROP not in CASES["G3 shmem holds the pool"][0]().fix


def test_g6_stops_the_servers_pid_through_what_keeps_it_running():
    v = CASES["G6 uncapped vLLM beside training"][0]()
    assert blocks(v.fix)[0][1] == (
        "# stop vLLM pid 5120 through its service or container when it runs in one, else TERM\n"
        "unit=$(ps -o unit= -p 5120 2>/dev/null)\n"
        'case "$unit" in\n'
        '  user@*|session-*|"") kill 5120 ;;\n'
        '  docker-*.scope) id=${unit#docker-}; docker stop "${id%.scope}" ;;\n'
        '  *.service) sudo systemctl stop "$unit" ;;\n'
        "  *) kill 5120 ;;\n"
        "esac\n")


def test_g6_restarts_the_recorded_server_with_its_own_cap_flag():
    fixing = [v for v in _every_verdict(readings_from_recording(read_recording(DEMO))) if v.id == "G6"]
    assert blocks(fixing[0].fix)[1][1] == (
        "# start vLLM pid 5120 again capped at 0.5 of the pool, once it has stopped\n"
        "/home/spark/.venv/bin/python3 /home/spark/.venv/bin/vllm serve nvidia/Llama-3.3-70B-Instruct-FP8 "
        "--max-model-len 32768 --port 8001 --gpu-memory-utilization 0.5\n")


@pytest.mark.parametrize("server, command, line", [
    ("sglang", "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --mem-fraction-static=0.88",
     "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --mem-fraction-static 0.5"),
    ("tgi", "text-generation-launcher --model-id m --cuda-memory-fraction 1.0 --port 80",
     "text-generation-launcher --model-id m --port 80 --cuda-memory-fraction 0.5"),
    ("vllm", "vllm serve m --api-key [redacted]", "tr '\\0' ' ' < /proc/7001/cmdline; echo"),
    ("vllm", "vllm serve m " + "x" * 400, "tr '\\0' ' ' < /proc/7001/cmdline; echo"),
    ("nim", "/opt/nim/start_server.sh", "docker ps --format '{{.ID}}  {{.Image}}  {{.Names}}'"),
])
def test_g6_restart_line_per_server_or_where_to_read_the_command(server, command, line):
    p = g6.Party(f"{server} pid 7001", "server", None, "", "fraction", {"state": "default", "fraction": 0.9},
                 pid=7001, server=server, command=command)
    lines = g6.restart_lines(p, 0.5)
    assert lines[-1] == line and lines[0].startswith("# ")
    assert bash_n("\n".join(lines)) == ""


def test_g7_checks_the_build_in_the_target_interpreter():
    v = CASES["G7 generic sm_120 kernels only"][0]()
    assert blocks(v.fix)[0][1] == (f"{INTERP} -c \"import torch; print(torch.cuda.get_device_capability(), "
                                   f"torch.cuda.get_arch_list())\"\n")
    assert g7.FIX.count("python -c") == 1  # the generic text still says plain python


def test_g8_opens_each_matching_issue_by_number():
    v = CASES["G8 open issues name the playbook"][0]()
    assert blocks(v.fix)[0][1] == ("gh issue view 109 -R NVIDIA/dgx-spark-playbooks --comments\n"
                                   "gh issue list -R NVIDIA/dgx-spark-playbooks --state open --search 'vllm in:title,body'\n")
    assert g8.FIX in g8.GOTCHA.explain()


def test_g9_puts_the_drifting_packages_back_under_the_users_pins():
    v = CASES["G9 bare pip drifting from the user's pins"][0]()
    assert blocks(v.fix)[1][1] == (
        "/usr/bin/python3 -m pip install -c /home/u/pins.txt --extra-index-url https://download.pytorch.org/whl/cu130 "
        "torch transformers\n"
        "sparktui check G9 --python /usr/bin/python3 --pins /home/u/pins.txt\n")
    assert "docker run" in g9.FIX and "pip install --no-deps unsloth unsloth_zoo" in g9.FIX


def test_g10_names_the_file_line_and_the_setting_to_change(tmp_path):
    launch = tmp_path / "launch.sh"
    launch.write_text(G10_TRAIN.format(tp=2, nodes=2))
    v = g10.judge(readings_of(tpscan=tpscan.scan([str(tmp_path)], 4 * 1024 * 1024, deadline_s=10)), Config())
    assert v.status is Status.FAIL
    assert blocks(v.fix)[0][1] == (
        f"# {launch}:2: `--tensor-model-parallel-size 2` -> `--tensor-model-parallel-size 1`\n"
        f"${{EDITOR:-vi}} +2 {launch}\n")
    assert blocks(v.fix)[-1][1] == f"sparktui check G10 --path {tmp_path}\n"
    assert_runnable(v)
    assert "<spark-1 QSFP IP>" in g10.FIX  # the generic text is unchanged; the filled one finds the address


def test_g10_says_which_scan_path_was_missing_and_finds_the_real_ones():
    v = CASES["G10 nothing readable"][0]()
    assert v.status is Status.UNKNOWN and "(./jobs (missing) could not be scanned)" in v.fix
    assert blocks(v.fix) == [("bash", "\n".join(g10.FIND_CONFIGS) + "\n")]


# -- evidence cannot turn into a command -------------------------------------------------------------

def test_an_interpreter_path_with_spaces_and_shell_syntax_is_quoted():
    odd = "/home/spark/my envs/$(touch pwned)/bin/python"
    t = t1.target(cuda="12.8", version="2.9.0+cu128")
    t["interpreter"] = odd
    v = t1.g1_of(t)
    assert "'/home/spark/my envs/$(touch pwned)/bin/python' -m pip uninstall -y torch" in v.fix
    assert_runnable(v)


def test_a_process_name_with_a_newline_stays_inside_its_comment():
    row = t6.job(3310, t6.LORA, name="train\nrm -rf ~")
    v = t6.g6v(t6.snap(row, t6.job(3320, t6.LORA)))
    lines = [ln for _, code in blocks(v.fix) for ln in code.splitlines()]
    assert not any(ln.lstrip().startswith("rm ") for ln in lines)
    assert_runnable(v)


def test_a_tp_line_with_backticks_and_a_newline_in_a_file_name_stays_a_comment():
    m = {"file": "jobs/a b;c.sh", "line": 4, "key": "--tp", "value": "2", "status": "set", "degree": 2,
         "text": "--tp 2 `reboot`"}
    d = tpscan_reading([m], {"jobs/a b;c.sh": {"context": "training", "nodes": "multi"}})
    v = g10.judge(readings_of(tpscan=d), Config())
    assert "${EDITOR:-vi} +4 'jobs/a b;c.sh'" in v.fix
    assert_runnable(v)
