"""G6 with real child processes whose command lines look like inference servers and training jobs.

Each child is a Python interpreter sleeping, started with an argv (argv[0] included) that imitates
the real server; NVML (faked, the only fake) lists some of them as GPU processes.
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
from tests.fakes import fake_nvml
from tests.standins.children import Children, _wait_cmdline

GIB = 1024 ** 3


@pytest.fixture
def fake():
    with fake_nvml.installed(fake_nvml.gb10_loaded()) as f:
        yield f


def scan_and_judge(kids: Children, host: bool = True, cfg: Config | None = None, mem_total: int | None = None):
    """Scan the real process table, then judge only this test's own children: tests running in
    parallel on the same machine start servers and training stand-ins of their own."""
    s = NvmlSession()
    try:
        data = processes.scan(s, markers=())
    finally:
        s.close()
    mine = {p.pid for p in kids.procs} | set(kids.extra_pids)
    data["rows"] = [r for r in data["rows"] if r["pid"] in mine]
    if host:  # this test box is itself a container; the judge is told what a host would say
        data["container"] = {"inside": False, "markers": [], "pid1": "systemd"}
    r = Readings()
    r.add(Reading("processes", data, source="NVML process lists + psutil"))
    if mem_total is not None:
        r.add(Reading("meminfo", {"MemTotal": mem_total, "MemAvailable": mem_total // 2}, source="test"))
    return judge(r, cfg or Config()), data


def rows_for(data, *pids):
    return [r for r in data["rows"] if r["pid"] in pids]


def test_capped_vllm_beside_a_small_lora_is_fine(kids, fake):
    server = kids.run("vllm", "serve", "Qwen/Qwen3-8B", "--gpu-memory-utilization", "0.5")
    train = kids.run("train_lora.py", "--config", "lora.yaml")
    fake.set_processes([(server.pid, 58 * GIB), (train.pid, 3 * GIB)])
    v, data = scan_and_judge(kids)
    assert v.status.value == "ok", v.summary
    assert v.summary.startswith(f"vLLM pid {server.pid} capped at 0.5 beside training pid {train.pid}")
    (row,) = rows_for(data, server.pid)
    assert row["kind"] == "server" and row["cap"]["fraction"] == 0.5 and row["gpu_mem_bytes"] == 58 * GIB
    assert row["user"] == psutil.Process().username() and row["rss_bytes"] > 0 and row["age_s"] >= 0


POOL = int(121.7 * GIB)  # GB10's MemTotal (FACTS.md)


def test_a_capped_server_beside_a_job_too_big_for_what_the_cap_leaves_fails(kids, fake):
    """Capped at 0.5 is fine beside a SMALL job: beside a 70 GiB one it is 131 GiB on a 121.7 pool."""
    server = kids.run("vllm", "serve", "Qwen/Qwen3-8B", "--gpu-memory-utilization", "0.5")
    train = kids.run("torchrun", "--nproc-per-node", "1", "sft.py")
    fake.set_processes([(server.pid, 58 * GIB), (train.pid, 70 * GIB)])
    v, _ = scan_and_judge(kids, mem_total=POOL)
    assert v.status.value == "fail", v.summary
    assert "reserves 60.8 GiB" in v.summary and "holds 70.0 GiB" in v.summary and "121.7 GiB pool" in v.summary
    fake.set_processes([(server.pid, 58 * GIB), (train.pid, 52 * GIB)])  # 112.9 of 121.7: little headroom
    v, _ = scan_and_judge(kids, mem_total=POOL)
    assert v.status.value == "warn" and "under 10% of the 121.7 GiB pool left" in v.summary
    fake.set_processes([(server.pid, 58 * GIB), (train.pid, 3 * GIB)])  # the LoRA of FACTS/the sources
    v, _ = scan_and_judge(kids, mem_total=POOL)
    assert v.status.value == "ok" and "capped coexistence" in v.summary
    v, _ = scan_and_judge(kids)  # no MemTotal: the cap decides, and the summary says what was not weighed
    assert v.status.value == "ok" and "the job's size not weighed: MemTotal unread" in v.summary


def test_uncapped_vllm_with_training_fails_and_alone_warns(kids, fake):
    server = kids.run("vllm", "serve", "meta-llama/Llama-3.1-70B")
    fake.set_processes([(server.pid, 89 * GIB)])
    v, _ = scan_and_judge(kids)
    assert v.status.value == "warn" and f"vLLM pid {server.pid}: no cap given (default 0.92)" in v.summary
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
    expected = "ok" if fraction is not None and fraction <= 0.5 else "warn"
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
        s = NvmlSession()
        data = processes.scan(s, markers=(str(marker),))
        s.close()
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
    p.kill()
    p.wait()
    assert processes.describe(p.pid, mine, time.time(), skipped) is None
    assert skipped["vanished"] == 1


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
    r.add(Reading("processes", {"rows": rows, "nvml": {"ok": True, "count": 1}, "container": {"inside": False}}))
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
