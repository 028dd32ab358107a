"""G6 with real child processes whose command lines look like inference servers and training jobs.

Each child is a Python interpreter sleeping, started with an argv (argv[0] included) that imitates
the real server; NVML (faked, the only fake) lists some of them as GPU processes. The children of
this test process stand in for the user's workloads, so the scan is told not to leave out this
process's descendants (``exclude_own=False``); the tests at the end check that sparktui's own
children are left out when it is. Threshold tests on hand-built readings: tests/gotchas/g06/test_rules.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings
from sparktui.gotchas.g06_contention import judge
from sparktui.probes import nvml, processes
from sparktui.probes.nvml import NvmlSession
from sparktui.testing import fake_nvml
from tests.standins.children import Children, _wait_cmdline
from tests.gotchas.builders import GIB


@pytest.fixture
def fake():
    with fake_nvml.installed(fake_nvml.gb10_loaded()) as f:
        yield f


def scan_now(markers: tuple[str, ...] = (), exclude_own: bool = True) -> dict:
    """One real scan of this machine's processes through the (fake) NVML, as the probe does it."""
    s = NvmlSession()
    try:
        return processes.scan(s, markers=markers, exclude_own=exclude_own)
    finally:
        s.close()


def scan_and_judge(kids: Children, host: bool = True, cfg: Config | None = None, mem_total: int | None = None,
                   mem_available: int | None = None):
    """Scan the real process table, then judge only this test's own children: tests running in
    parallel on the same machine start servers and training stand-ins of their own."""
    data = scan_now(exclude_own=False)
    mine = {p.pid for p in kids.procs} | set(kids.extra_pids)
    data["rows"] = [r for r in data["rows"] if r["pid"] in mine]
    if host:  # this test box is itself a container; the judge is told what a host would say
        data["container"] = {"inside": False, "markers": [], "pid1": "systemd"}
    r = Readings()
    r.add(Reading("processes", data, source="NVML process lists + psutil"))
    if mem_total is not None:
        r.add(Reading("meminfo", {"MemTotal": mem_total, "MemAvailable": mem_available if mem_available is not None
                                  else mem_total // 2}, source="test"))
    return judge(r, cfg or Config()), data


POOL = 127_611_700 * 1024  # GB10's MemTotal, 121.7 GiB (docs/reference/FACTS.md), as /proc/meminfo's kB times 1024


def rows_for(data, *pids):
    return [r for r in data["rows"] if r["pid"] in pids]


def test_capped_vllm_beside_a_small_lora_is_fine(kids, fake):
    server = kids.run("vllm", "serve", "Qwen/Qwen3-8B", "--gpu-memory-utilization", "0.5")
    train = kids.run("train_lora.py", "--config", "lora.yaml")
    fake.set_processes([(server.pid, 58 * GIB), (train.pid, 3 * GIB)])
    v, data = scan_and_judge(kids, mem_total=POOL)
    assert v.status.value == "ok", v.summary
    assert v.summary.startswith(f"vLLM pid {server.pid} capped at 0.5 beside training pid {train.pid}")
    (row,) = rows_for(data, server.pid)
    assert row["kind"] == "server" and row["cap"]["fraction"] == 0.5 and row["gpu_mem_bytes"] == 58 * GIB
    assert row["user"] == psutil.Process().username() and row["rss_bytes"] > 0 and row["age_s"] >= 0


def test_a_capped_server_beside_a_job_too_big_for_what_the_cap_leaves_fails(kids, fake):
    """Capped at 0.5 is fine beside a SMALL job: beside a 62 GiB one it is 122.9 GiB on a 121.7 pool."""
    server = kids.run("vllm", "serve", "Qwen/Qwen3-8B", "--gpu-memory-utilization", "0.5")
    train = kids.run("torchrun", "--nproc-per-node", "1", "sft.py")
    fake.set_processes([(server.pid, 58 * GIB), (train.pid, 62 * GIB)])
    v, _ = scan_and_judge(kids, mem_total=POOL)
    assert v.status.value == "fail", v.summary
    assert f"vLLM pid {server.pid} up to 60.9 GiB" in v.summary and f"training pid {train.pid} (torchrun) holds 62.0 GiB" in v.summary
    assert "more than the 121.7 GiB pool" in v.summary
    fake.set_processes([(server.pid, 58 * GIB), (train.pid, 52 * GIB)])  # 112.9 of 121.7: little headroom
    v, _ = scan_and_judge(kids, mem_total=POOL)
    assert v.status.value == "warn" and "under 10% left" in v.summary
    fake.set_processes([(server.pid, 58 * GIB), (train.pid, 3 * GIB)])  # the LoRA of docs/reference/FACTS.md and its sources
    v, _ = scan_and_judge(kids, mem_total=POOL)
    assert v.status.value == "ok" and "capped coexistence" in v.summary
    v, _ = scan_and_judge(kids)  # no MemTotal: the job's size cannot be weighed, so no ok (issue 12, class 2)
    assert v.status.value == "unknown" and "MemTotal unread" in v.summary


def test_uncapped_vllm_with_training_fails_and_alone_warns(kids, fake):
    server = kids.run("vllm", "serve", "meta-llama/Llama-3.1-70B")
    fake.set_processes([(server.pid, 89 * GIB)])
    v, _ = scan_and_judge(kids)
    assert v.status.value == "warn" and f"vLLM pid {server.pid}: no cap given (default 0.9)" in v.summary
    train = kids.run("torchrun", "--nproc-per-node", "1", "sft.py")
    v, data = scan_and_judge(kids)
    assert v.status.value == "fail" and f"while training pid {train.pid} (torchrun) runs" in v.summary
    assert rows_for(data, train.pid)[0]["kind"] == "training"


def test_engine_core_inherits_its_launchers_cap(kids, fake):
    code = ("import subprocess, sys, time\n"
            f"p = subprocess.Popen(['VLLM::EngineCore', '-c', 'import time; time.sleep(60)'], executable={sys.executable!r})\n"
            "print(p.pid, flush=True)\n"
            "time.sleep(60)")
    launcher = kids.run("vllm", "serve", "m", "--gpu-memory-utilization=0.45", code=code)
    core_pid = int(launcher.stdout.readline())
    kids.extra_pids.append(core_pid)
    _wait_cmdline(core_pid, ["VLLM::EngineCore", "-c", "import time; time.sleep(60)"])
    fake.set_processes([(core_pid, 52 * GIB)])
    v, data = scan_and_judge(kids)
    (core,) = rows_for(data, core_pid)
    assert core["name"] == "VLLM::EngineCore" and core["group"] == launcher.pid
    assert core["cap"]["fraction"] == 0.45 and f"launcher pid {launcher.pid}" in core["cap"]["source"]
    assert v.status.value == "ok" and "capped at 0.45" in v.summary


@pytest.mark.parametrize("argv,env,server,state,fraction", [
    (["sglang.launch_server", "--model-path", "m", "--mem-fraction-static", "0.4"], None, "sglang", "set", 0.4),
    (["sglang::scheduler"], None, "sglang", "default", None),
    (["llama-server", "-m", "model.gguf", "-ngl", "99", "--ctx-size", "8192"], None, "llamacpp", "none", None),
    (["ollama", "serve"], {"OLLAMA_MAX_LOADED_MODELS": "2"}, "ollama", "none", None),
    (["ollama", "runner", "--model", "/models/blob"], None, "ollama", "none", None),
    (["trtllm-serve", "m", "--kv_cache_free_gpu_memory_fraction", "0.3"], None, "trtllm", "set", 0.3),
    (["tritonserver", "--model-repository", "/models"], None, "triton", "none", None),
    (["text-generation-launcher", "--model-id", "m", "--cuda-memory-fraction", "0.5"], None, "tgi", "set", 0.5),
    (["nim_llm", "serve"], {"NIM_GPU_MEM_FRACTION": "0.35"}, "nim", "set", 0.35),
    (["vllm", "serve", "m", "--gpu-memory-utilization", "0.9"], None, "vllm", "set", 0.9),
])
def test_each_server_is_recognised_with_its_cap(kids, fake, argv, env, server, state, fraction):
    if argv[0] == "sglang.launch_server":  # python -m sglang.launch_server ...
        p = kids.module(*argv)
    elif "::" in argv[0]:
        p = kids.titled(argv[0])
    else:
        p = kids.run(*argv, env=env)
    fake.set_processes([(p.pid, 20 * GIB)])
    v, data = scan_and_judge(kids)
    (row,) = rows_for(data, p.pid)
    assert row["kind"] == "server" and row["server"] == server
    assert row["cap"]["state"] == state and row["cap"]["fraction"] == fraction
    if server == "ollama" and env:
        assert row["env"] == {"OLLAMA_MAX_LOADED_MODELS": "2"} and "OLLAMA_MAX_LOADED_MODELS=2" in row["cap"]["detail"]
    # alone on the pool: a fraction server is judged by its cap; llama.cpp, Ollama and Triton by what
    # they hold (20 GiB, with no one beside them), never by a missing cap (issue 12, class 6)
    expected = "ok" if (fraction is not None and fraction <= 0.5) or state == "none" else "warn"
    assert v.status.value == expected, v.summary


def test_inside_a_container_an_empty_nvml_list_means_cannot_see(tmp_path, kids):
    f = fake_nvml.gb10_loaded()
    f.in_container = True
    nvml.set_backend(f)
    try:
        server = kids.run("vllm", "serve", "m", "--gpu-memory-utilization", "0.5")
        f.set_processes([(server.pid, 58 * GIB)])  # the host would show it; the container gets []
        marker = tmp_path / ".dockerenv"
        marker.write_text("")
        data = scan_now(markers=(str(marker),), exclude_own=False)
    finally:
        nvml.set_backend(None)
    assert data["container"]["inside"] is True and data["nvml"] == {"ok": True, "error": None, "count": 0}
    r = Readings()
    r.add(Reading("processes", data))
    v = judge(r, Config())
    assert v.status.value == "unknown" and "host processes not visible" in v.summary


def test_process_that_vanishes_mid_scan_is_skipped(kids):
    p = kids.run("vllm", "serve", "m")
    cands, skipped = processes.list_candidates()
    (mine,) = [c for c in cands if c["pid"] == p.pid]
    before = skipped.get("vanished", 0)  # other processes on a busy machine may vanish during the listing
    p.kill()
    p.wait()
    assert processes.describe(p.pid, mine, time.time(), skipped) is None
    assert skipped["vanished"] == before + 1


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to start a process another user cannot read")
def test_environment_denied_reads_as_unreadable_cap(kids, tmp_path):
    p = kids.run("nim_llm", "serve", env={"NIM_GPU_MEM_FRACTION": "0.3"})
    code = ("import json; from sparktui.probes import processes;"
            "print(json.dumps(processes.scan(None, markers=())['rows']))")
    import sparktui

    pypath = os.pathsep.join([str(Path(sparktui.__file__).parents[1]), str(Path(psutil.__file__).parents[1])])
    out = None
    for exe in (sys.executable, f"/usr/bin/python{sys.version_info[0]}.{sys.version_info[1]}"):
        try:
            run = subprocess.run([exe, "-c", code], capture_output=True, text=True, timeout=30, user="nobody",
                                 cwd=tmp_path, env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": pypath})
        except (PermissionError, FileNotFoundError):
            continue
        if run.returncode == 0:
            out = run
            break
    if out is None:
        pytest.skip("no interpreter user nobody can run here")
    rows = [r for r in json.loads(out.stdout) if r["pid"] == p.pid]
    assert rows and rows[0]["cap"]["state"] == "unreadable" and rows[0]["env"] == "unreadable"
    r = Readings()
    r.add(Reading("processes", {"rows": rows, "nvml": {"ok": True, "count": 0}, "container": {"inside": False}}))
    v = judge(r, Config())
    assert v.status.value == "unknown" and "cap unreadable" in v.summary


def test_secrets_in_a_servers_command_line_never_reach_the_row(kids, fake):
    """The row's command feeds the dashboard, snapshots, peers and reports: scrubbed at the source."""
    server = kids.run("vllm", "serve", "m", "--hf_token", "plainsecretvalue42xyz", "--api-key", "sk-" + "z" * 30,
                      "--gpu-memory-utilization", "0.5")
    fake.set_processes([(server.pid, 20 * GIB)])
    _, data = scan_and_judge(kids)
    (row,) = rows_for(data, server.pid)
    assert "plainsecretvalue42xyz" not in row["command"] and "sk-zzz" not in row["command"]
    assert "--hf_token [redacted] --api-key [redacted] --gpu-memory-utilization 0.5" in row["command"]
    assert row["cap"]["fraction"] == 0.5  # the cap is still read from the real argv


def test_sparktuis_own_probe_scripts_are_not_training_jobs():
    """The target probe runs `target_script.py --packages ...,unsloth,...` beside the process scan
    (checks run in parallel): it used to be counted as an Unsloth training job, failing G6."""
    from sparktui.probes import bandwidth, target

    for script, args in ((target.SCRIPT, ["--mode", "env", "--packages", ",".join(target.TRAINING_STACK)]),
                         (bandwidth.SCRIPT, ["--bytes", str(4 << 30), "--repeats", "5"])):
        argv = ["/home/spark/venvs/train/bin/python3.12", str(script), "--fd", "9", *args]
        assert processes.classify("python3.12", argv) == ("", None, ""), argv
    assert "unsloth" in ",".join(target.TRAINING_STACK)
    # a user's own script that mentions unsloth still is one
    assert processes.classify("python3", ["python3", "finetune.py", "--model", "unsloth/Llama-3.2-1B"])[0] == "training"
    assert processes.classify("python3", ["python3", "run.py", "--model", "unsloth/Llama-3.2-1B"])[0] == "training"
    assert processes.classify("python3", ["python3", "-m", "unsloth_cli", "train"])[0] == "training"
    # ... but installing it or testing it is not
    for argv in (["python3", "-m", "pip", "install", "unsloth"], ["/venv/bin/python3", "/venv/bin/pytest", "tests/test_unsloth_x.py"],
                 ["python3", "-m", "pytest", "-k", "unsloth"]):
        assert processes.classify("python3", argv)[0] == "", argv


def test_classify_ignores_lookalikes():
    for argv in (["grep", "vllm"], ["vim", "vllm_notes.md"], ["tail", "-f", "vllm.log"], ["python3", "serve.py"],
                 ["python3", "-m", "pytest", "tests/test_train.py"], ["ollama", "list"]):
        assert processes.classify(os.path.basename(argv[0]), argv)[0] == "", argv
    assert processes.classify("python3", ["python3", "/x/vllm", "serve", "m"])[:2] == ("server", "vllm")
    assert processes.classify("python3", ["accelerate", "launch", "finetune.py"])[0] == "training"
    assert processes.classify("python3", ["python3", "-c", "x", "unsloth_sft.py"])[0] == "training"


def test_flag_and_config_file_caps(tmp_path):
    assert processes.flag_value(["a", "--x", "1", "--x=2"], "--x") == "2"
    cfg = tmp_path / "serve.yaml"
    cfg.write_text("model: m\ngpu-memory-utilization: 0.3\n")
    cap = processes.parse_cap("vllm", ["vllm", "serve", "--config", str(cfg)], {}, None)
    assert cap["state"] == "set" and cap["fraction"] == 0.3
    opts = tmp_path / "extra.yaml"
    opts.write_text("kv_cache_config:\n  free_gpu_memory_fraction: 0.25\n")
    cap = processes.parse_cap("trtllm", ["trtllm-serve", "m", "--extra_llm_api_options", str(opts)], {}, None)
    assert cap["fraction"] == 0.25
    assert processes.parse_cap("nim", [], {"NIM_KVCACHE_PERCENT": "40"}, None)["fraction"] == 0.4


def test_container_detection_from_markers_and_proc(tmp_path):
    proc = tmp_path / "proc"
    (proc / "1").mkdir(parents=True)
    (proc / "1" / "cgroup").write_text("0::/\n")
    (proc / "1" / "comm").write_text("systemd\n")
    assert processes.detect_container(markers=(), proc=str(proc))["inside"] is False
    (proc / "1" / "comm").write_text("bash\n")
    assert processes.detect_container(markers=(), proc=str(proc))["inside"] is None
    (proc / "1" / "cgroup").write_text("0::/kubepods/besteffort/pod1\n")
    assert processes.detect_container(markers=(), proc=str(proc))["inside"] is True


# -- judged by what a server holds, not its command line (issue 12, class 6) -----------------------

OLLAMA = ("import os, subprocess, sys, time\n"
          "if sys.argv[1:2] == ['serve']:\n"
          "    if os.environ.get('LOADED'):\n"
          "        p = subprocess.Popen([sys.argv[0], 'runner', '--model', '/models/blobs/sha256-qwen3-32b'])\n"
          "        print(p.pid, flush=True)\n"
          "time.sleep(60)")


def test_an_idle_ollama_serve_beside_training_is_not_a_failure(kids, fake):
    """`ollama serve` holds nothing until a model is loaded (docs/reference/FIELD-FACTS.md): NVML does not list it."""
    ollama = kids.run("ollama", "serve", code=OLLAMA)
    train = kids.run("torchrun", "--nproc-per-node", "1", "sft.py")
    fake.set_processes([(train.pid, 70 * GIB)])
    v, _ = scan_and_judge(kids, mem_total=POOL)
    assert v.status.value == "ok", v.summary
    assert v.summary == (f"one job on the pool: training pid {train.pid} (torchrun); "
                         f"Ollama pid {ollama.pid} holds nothing on the GPU (idle: no model loaded)")


def test_ollama_with_a_model_loaded_is_judged_by_what_its_runner_holds(kids, fake):
    ollama = kids.run("ollama", "serve", code=OLLAMA, env={"LOADED": "1"})
    runner = int(ollama.stdout.readline())
    kids.extra_pids.append(runner)
    _wait_cmdline(runner, [sys.executable, str(kids.bindir / "ollama"), "runner", "--model", "/models/blobs/sha256-qwen3-32b"])
    train = kids.run("torchrun", "--nproc-per-node", "1", "sft.py")
    fake.set_processes([(runner, 20 * GIB), (train.pid, 40 * GIB)])
    v, data = scan_and_judge(kids, mem_total=POOL)
    assert rows_for(data, runner)[0]["group"] == ollama.pid
    assert v.status.value == "ok" and f"Ollama pid {ollama.pid} holding 20.0 GiB beside training pid {train.pid}" in v.summary
    fake.set_processes([(runner, 52 * GIB), (train.pid, 70 * GIB)])  # 122 GiB held: over the 121.7 GiB pool
    v, _ = scan_and_judge(kids, mem_total=POOL)
    assert v.status.value == "fail" and f"Ollama pid {ollama.pid} holds 52.0 GiB" in v.summary
    fake.set_processes([(runner, None), (train.pid, 40 * GIB)])  # N/A is never 0
    v, _ = scan_and_judge(kids, mem_total=POOL)
    assert v.status.value == "unknown" and f"Ollama pid {ollama.pid} holds an unknown amount" in v.summary


def test_a_llamacpp_server_holding_a_fixed_5_gib_beside_a_job_is_fine(kids, fake):
    """llama.cpp allocates up front: 5 GiB held, 38 GiB still available, a job beside it."""
    server = kids.run("llama-server", "-m", "qwen3-8b-q4_k_m.gguf", "-ngl", "99", "--ctx-size", "8192")
    train = kids.run("train_lora.py", "--config", "lora.yaml")
    fake.set_processes([(server.pid, 5 * GIB), (train.pid, 70 * GIB)])
    v, _ = scan_and_judge(kids, mem_total=POOL, mem_available=38 * GIB)
    assert v.status.value == "ok", v.summary
    assert v.summary.startswith(f"llama.cpp pid {server.pid} holding 5.0 GiB beside training pid {train.pid}")


def test_a_job_whose_gpu_memory_is_na_is_an_unknown_amount_not_zero(kids, fake):
    server = kids.run("vllm", "serve", "Qwen/Qwen3-8B", "--gpu-memory-utilization", "0.5")
    train = kids.run("torchrun", "--nproc-per-node", "1", "sft.py")
    fake.set_processes([(server.pid, 58 * GIB), (train.pid, None)])
    v, data = scan_and_judge(kids, mem_total=POOL)
    (row,) = rows_for(data, train.pid)
    assert row["gpu_mem_bytes"] is None and row["on_gpu"] is True and row["rss_bytes"] > 0
    assert v.status.value == "unknown", v.summary
    assert f"training pid {train.pid} (torchrun) holds an unknown amount" in v.summary and "N/A" in v.summary


# -- a failed scan is not an empty machine (class 2) --------------------------------------------------

def test_a_scan_that_raises_is_a_failure_state_and_the_verdict_cannot_see(monkeypatch, fake):
    def broken(proc="/proc"):
        raise PermissionError(13, "Permission denied", "/proc")

    monkeypatch.setattr(processes, "list_candidates", broken)
    reading = processes.read(Config())
    assert reading.data is not None and "rows" not in reading.data
    assert reading.error == reading.data["scan_error"] and "process scan failed" in reading.error
    r = Readings()
    r.add(reading)
    r.add(Reading("meminfo", {"MemTotal": POOL, "MemAvailable": 100 * GIB}))
    v = judge(r, Config())
    assert v.status.value == "unknown" and v.summary.startswith("cannot see the processes: process scan failed")


# -- sparktui and its children are never the workload (class 9) --------------------------------------

def _own_script(tmp_path, name: str) -> Path:
    path = tmp_path / "site-packages" / "sparktui" / "probes" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("import time; time.sleep(60)\n")
    return path


def _detached(kids: Children, argv: list[str]) -> int:
    """A process that is NOT a descendant of this one: started by a child that then exits."""
    code = ("import subprocess, sys; p = subprocess.Popen(sys.argv[1:], start_new_session=True, "
            "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid)")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=10, check=True)
    pid = int(out.stdout)
    kids.extra_pids.append(pid)
    _wait_cmdline(pid, argv)
    assert psutil.Process(pid).ppid() != os.getpid()
    return pid


def test_sparktuis_own_children_are_left_out_of_the_scan(kids, fake, tmp_path):
    """This process stands for sparktui: its children (a target probe, a server-looking child and
    that child's own child) are never rows, even when NVML lists them holding memory."""
    probe = _own_script(tmp_path, "target_script.py")
    target = kids._spawn([sys.executable, str(probe), "--fd", "9", "--mode", "torch", "--packages", "torch,unsloth,vllm"],
                         [sys.executable, str(probe), "--fd", "9", "--mode", "torch", "--packages", "torch,unsloth,vllm"])
    code = ("import subprocess, sys, time\n"
            f"p = subprocess.Popen(['VLLM::EngineCore', '-c', 'import time; time.sleep(60)'], executable={sys.executable!r})\n"
            "print(p.pid, flush=True)\n"
            "time.sleep(60)")
    server = kids.run("vllm", "serve", "m", code=code)
    grandchild = int(server.stdout.readline())
    kids.extra_pids.append(grandchild)
    _wait_cmdline(grandchild, ["VLLM::EngineCore", "-c", "import time; time.sleep(60)"])
    fake.set_processes([(target.pid, 4 * GIB), (grandchild, 60 * GIB)])
    data = scan_now()
    pids = {r["pid"] for r in data["rows"]}
    assert not pids & {target.pid, server.pid, grandchild, os.getpid()}
    assert data["own_excluded"] >= 3 and data["nvml"]["count"] == 2


def test_any_sparktui_probe_script_is_left_out_but_other_processes_are_seen(kids, fake, tmp_path):
    """Processes not descended from this one: another sparktui's bandwidth probe holding 4 GiB is
    left out by its script's path; a vLLM server beside it is a row."""
    probe = _own_script(tmp_path, "bandwidth_script.py")
    other = _detached(kids, [sys.executable, str(probe), "--fd", "9", "--bytes", str(4 << 30), "--repeats", "5"])
    vllm = kids.bindir / "vllm"
    vllm.write_text(f"#!{sys.executable}\nimport time; time.sleep(60)\n")
    vllm.chmod(0o755)
    server = _detached(kids, [sys.executable, str(vllm), "serve", "m", "--gpu-memory-utilization", "0.5"])
    fake.set_processes([(other, 4 * GIB), (server, 58 * GIB)])
    data = scan_now()
    pids = {r["pid"] for r in data["rows"]}
    assert server in pids and other not in pids
