"""G8 matching on issues shaped like the real ones in NVIDIA/dgx-spark-playbooks (docs/reference/FACTS.md)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from sparktui.core.config import Config
from sparktui.playbooks.matching import (Matcher, command_tokens, edit_distance, rank_issues, redact_cmdline,
                                         suggest_slugs)
from sparktui.probes import playbooks as pb_probe


def issue(number, title, body="", **kw):
    return {"number": number, "title": title, "body": body, "html_url": f"https://github.com/x/y/issues/{number}",
            "created_at": kw.get("created_at", "2026-03-01T00:00:00Z"),
            "updated_at": kw.get("updated_at", "2026-03-02T00:00:00Z"), "comments": kw.get("comments", 0)}


VLLM_RAY = issue(109, "nvidia/vllm is wrong missing Ray",
                 "The tutorial for https://github.com/NVIDIA/dgx-spark-playbooks/tree/main/nvidia/vllm is now wrong: "
                 "the current vllm container is missing Ray.")
UNSOLTH = issue(15, "Unsolth playbook issues (with PR to correct it)",
                "The test script URL moved and trl conflicts; hf_transfer is missing.")
SGLANG_IMAGE = issue(68, "SGLang: Mismatch between build.nvidia.com and GitHub playbook container image",
                     "https://build.nvidia.com/spark/sglang/instructions says lmsysorg/sglang:spark; the repo says "
                     "nvcr.io/nvidia/sglang:26.02-py3. Serving nvidia/Phi-4-multimodal-instruct-NVFP4 fails.")
TRT_TWO_SPARKS = issue(3, "nvidia/Qwen3-235B-A22B-FP4 really slow when served across two sparks",
                       "I followed the steps and ran\n```\nmpirun -x HF_TOKEN trtllm-llmapi-launch trtllm-serve $MODEL "
                       "--tp_size 2 --backend pytorch --port 8355\n```\nin nvcr.io/nvidia/tensorrt-llm/release:spark-single-gpu-dev")
GEMMA_VLLM = issue(75, "Gemma4 cannot run with DGX Spark vLLM Ray playbook",
                   "image vllm/vllm-openai:gemma4-cu130 lacks ray.\n exec vllm serve google/gemma-4-31B-it "
                   "--gpu-memory-utilization 0.8 -tp 2 --distributed-executor-backend ray")
STATION_VLLM = issue(201, "vLLM: container fails on the Station",
                     "Following https://github.com/NVIDIA/dgx-spark-playbooks/tree/main/nvidia/station-vllm step 3.")
OLLAMA_ASIDE = issue(202, "Ollama: Open WebUI cannot reach the server", "Before this I also tried vLLM, same network.")
START_SH = issue(203, "Multi-agent chatbot: ./start.sh exits with code 137", "running ./start.sh after docker compose pull")
UNRELATED = issue(204, "Tailscale: cannot reach the Spark from my laptop", "tailscale up hangs")

ALL = [VLLM_RAY, UNSOLTH, SGLANG_IMAGE, TRT_TWO_SPARKS, GEMMA_VLLM, STATION_VLLM, OLLAMA_ASIDE, START_SH, UNRELATED]


def numbers(matches):
    return [m.number for m in matches]


def test_vllm_issues_by_path_url_container_and_command_not_by_an_aside():
    ms = rank_issues(ALL, ["vllm"])
    assert set(numbers(ms)) == {109, 75}
    by = {m.number: m for m in ms}
    assert "mentions nvidia/vllm" in by[109].reasons and "links tree/main/nvidia/vllm" in by[109].reasons
    assert {"container vllm/vllm-openai", "command 'vllm serve'", "title names vLLM"} <= set(by[75].reasons)
    assert by[109].slugs == ("vllm",)


def test_station_vllm_is_not_conflated_with_vllm():
    assert 201 not in numbers(rank_issues(ALL, ["vllm"]))
    ms = rank_issues(ALL, ["station-vllm"])
    assert numbers(ms) == [201] and "links tree/main/nvidia/station-vllm" in ms[0].reasons


def test_misspelled_title_still_matches_unsloth():
    ms = rank_issues(ALL, ["unsloth"])
    assert numbers(ms) == [15]
    assert ms[0].reasons == ("title says 'Unsolth' (near 'Unsloth')",)


def test_title_prefix_build_link_and_container_tags_for_sglang():
    (m,) = rank_issues(ALL, ["sglang"])
    assert m.number == 68
    assert m.reasons[0] == "links build.nvidia.com/spark/sglang"  # strongest first
    assert {"title prefix 'SGLang:'", "container nvcr.io/nvidia/sglang", "container lmsysorg/sglang"} <= set(m.reasons)


def test_trt_llm_by_command_and_container_while_model_names_are_not_playbooks():
    (m,) = rank_issues(ALL, ["trt-llm"])
    assert m.number == 3
    assert {"command 'trtllm-serve'", "container nvcr.io/nvidia/tensorrt-llm"} <= set(m.reasons)
    assert rank_issues(ALL, ["connect-two-sparks"]) == []  # "two sparks" in prose is not the playbook


def test_user_command_matches_on_its_significant_parts():
    cmd = "docker run --gpus all -e HF_TOKEN=$HF_TOKEN vllm/vllm-openai:gemma4-cu130 vllm serve google/gemma-4-31B-it --port 8000"
    ms = rank_issues(ALL, [], [cmd])
    assert numbers(ms) == [75]
    assert {"image 'vllm/vllm-openai:gemma4-cu130'", "command 'vllm serve'", "model 'google/gemma-4-31B-it'"} <= set(ms[0].reasons)
    assert ms[0].commands == (cmd,)


def test_script_command_matches_start_sh():
    ms = rank_issues(ALL, [], ["./start.sh"])
    assert numbers(ms) == [203] and ms[0].reasons == ("script 'start.sh'",)


def test_generic_flags_alone_do_not_match():
    assert rank_issues([issue(1, "Server listens on the wrong --port", "use --port 8000 --host 0.0.0.0")], [],
                       ["mytool --port 8000 --host 0.0.0.0"]) == []


def test_ranking_strongest_first_then_most_recently_updated():
    a = issue(1, "vLLM fails", updated_at="2026-01-01T00:00:00Z")  # title mention only
    b = issue(2, "vLLM fails too", updated_at="2026-02-01T00:00:00Z")
    c = issue(3, "x", "see nvidia/vllm and vllm serve")
    assert numbers(rank_issues([a, b, c], ["vllm"])) == [3, 2, 1]


def test_slug_spelled_as_a_path_and_unknown_slugs_match_by_path():
    m = Matcher(["nvidia/VLLM", "my-new-playbook"])
    assert m.slugs == ["vllm", "my-new-playbook"]
    assert m.match(issue(9, "broken", "see nvidia/my-new-playbook/README.md")).reasons == ("mentions nvidia/my-new-playbook",)


def test_command_tokens_see_through_wrappers_and_bash_c():
    toks = {(t.kind, t.text) for t in command_tokens(
        "docker exec -it $C bash -c 'mpirun -x HF_TOKEN trtllm-llmapi-launch trtllm-serve $MODEL --tp_size 2'")}
    assert ("program", "trtllm-serve") in toks and ("program", "trtllm-llmapi-launch") in toks
    assert ("flag", "--tp_size") in toks
    toks = {(t.kind, t.text) for t in command_tokens("python -m sglang.launch_server --model-path Qwen/Qwen3-8B")}
    assert ("program", "sglang.launch_server") in toks and ("model", "Qwen/Qwen3-8B") in toks
    assert ("flag", "--model-path") not in toks  # too generic to mean anything


def test_edit_distance_counts_a_transposition_once():
    assert edit_distance("unsolth", "unsloth") == 1
    assert edit_distance("sglang", "sglang") == 0
    assert edit_distance("ollama", "llama", limit=2) == 1
    assert edit_distance("abcdefgh", "zzzzzzzz", limit=2) == 3  # stops early past the limit


def test_llama_is_not_a_misspelling_of_ollama():
    assert rank_issues([issue(1, "Llama 3.1 70B too slow")], ["ollama"]) == []


def test_suggest_slugs_from_process_command_lines_and_script_lines():
    got = dict(suggest_slugs([
        "/usr/bin/python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen3-8B",
        "python -m sglang.launch_server --model-path x",
        "llama-server -m /models/x.gguf -ngl 99",
        "ollama serve",
        "bash",
        "docker run nvcr.io/nvidia/tensorrt-llm/release:spark-single-gpu-dev trtllm-serve x",
        "python train_unsloth.py --epochs 3",
    ]))
    assert set(got) == {"vllm", "sglang", "llama-cpp", "ollama", "trt-llm", "unsloth"}
    assert "vllm.entrypoints" in got["vllm"] and "Qwen/Qwen3-8B" in got["vllm"]
    assert suggest_slugs(["vllm serve a", "vllm serve b"]) == [("vllm", "'vllm serve' in: vllm serve a")]


def test_a_long_interpreter_path_does_not_push_the_model_out_of_the_quoted_line():
    prefix = "/home/someone/.local/share/venvs/serving-env-2025-11/bin/python -c import time; time.sleep(30)"
    ((slug, why),) = suggest_slugs([f"{prefix} vllm serve Qwen/Qwen3-8B --max-model-len 32768"])
    assert slug == "vllm" and len(why) <= len("'vllm serve' in: ") + 80
    assert why.startswith("'vllm serve' in: …") and "vllm serve Qwen/Qwen3-8B" in why


def test_suggestions_hide_secrets_from_command_lines():
    line = "HF_TOKEN=hf_abcdefghijkl vllm serve x --api-key sk-12345678abcd GITHUB_TOKEN=ghp_0123456789ab"
    (slug, why), = suggest_slugs([line])
    assert slug == "vllm" and "hf_abcdefghijkl" not in why
    red = redact_cmdline(line)
    assert red == "HF_TOKEN=[redacted] vllm serve x --api-key [redacted] GITHUB_TOKEN=[redacted]"


# --- issue 12, class 9: sparktui and its children are never evidence --------------------------------
# Real processes: a child imitating the target probe (`python .../sparktui/probes/target_script.py
# --packages torch,...,unsloth,vllm`), a grandchild, and a user process that is not sparktui's.

SLEEP = "import time; time.sleep(60)\n"
PROBE_PACKAGES = "torch,torchvision,transformers,flash-attn,unsloth,unsloth_zoo,vllm,sglang"


def _wait_argv(pid: int, needle: str) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if needle in " ".join(psutil.Process(pid).cmdline()):
                return
        except psutil.NoSuchProcess:
            pass
        time.sleep(0.01)
    raise AssertionError(f"pid {pid} never showed {needle!r}")


def _fake_probe_script(tmp_path) -> str:
    script = tmp_path / "site-packages" / "sparktui" / "probes" / "target_script.py"
    script.parent.mkdir(parents=True)
    script.write_text(SLEEP)
    return str(script)


@pytest.fixture
def procs():
    started: list[int] = []
    popens: list[subprocess.Popen] = []
    yield started, popens
    for pid in started:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for p in popens:
        p.kill()
        p.wait()


def _detached(argv: list[str], procs) -> int:
    """A process that is not this one's descendant: started through an intermediate that exits, so it
    is re-parented (to init or a subreaper), as a user's job started from another shell is."""
    code = ("import subprocess, sys; p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, "
            "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True); print(p.pid)")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=30, check=True)
    pid = int(out.stdout.strip())
    procs[0].append(pid)
    return pid


def test_the_target_probes_own_child_is_never_a_suggestion(tmp_path, procs):
    """What G8 once read: sparktui's target probe names unsloth and vllm in its argv."""
    script = _fake_probe_script(tmp_path)
    child = subprocess.Popen([sys.executable, script, "--fd", "5", "--mode", "env", "--skip", "",
                              "--packages", PROBE_PACKAGES], start_new_session=True)  # as run_staged starts it
    procs[1].append(child)
    _wait_argv(child.pid, PROBE_PACKAGES)
    lines = pb_probe._process_cmdlines()
    assert not [line for line in lines if script in line]
    assert not any(slug in ("unsloth", "vllm") for slug, _ in suggest_slugs([line for line in lines if str(tmp_path) in line]))


def test_a_probe_script_started_by_another_sparktui_is_excluded_by_its_command_line(tmp_path, procs):
    """Not our descendant (an exporter or another dashboard started it): the script name decides."""
    script = _fake_probe_script(tmp_path)
    pid = _detached([sys.executable, script, "--fd", "5", "--mode", "env", "--packages", PROBE_PACKAGES], procs)
    _wait_argv(pid, PROBE_PACKAGES)
    assert not any(script in line for line in pb_probe._process_cmdlines())


def test_a_user_process_counts_and_the_same_under_sparktui_does_not(tmp_path, procs):
    marker = f"Qwen/Qwen3-8B-{os.getpid()}-{time.monotonic_ns()}"
    user = _detached([sys.executable, "-c", SLEEP, "vllm", "serve", marker], procs)
    _wait_argv(user, marker)
    mine = subprocess.Popen([sys.executable, "-c", SLEEP, "vllm", "serve", marker + "-mine"])
    procs[1].append(mine)
    _wait_argv(mine.pid, marker + "-mine")
    lines = [line for line in pb_probe._process_cmdlines() if marker in line]
    assert len(lines) == 1 and lines[0].endswith(f"vllm serve {marker}")  # the user's, not sparktui's child
    assert dict(suggest_slugs(lines))["vllm"].startswith("'vllm serve' in:")


def test_a_grandchild_of_sparktui_is_excluded(tmp_path, procs):
    marker = f"unsloth-grandchild-{time.monotonic_ns()}"
    code = ("import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', "
            f"'unsloth', '{marker}']); time.sleep(60)")
    mid = subprocess.Popen([sys.executable, "-c", code])
    procs[1].append(mid)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not psutil.Process(mid.pid).children():
        time.sleep(0.01)
    (gc,) = psutil.Process(mid.pid).children()
    procs[0].append(gc.pid)
    _wait_argv(gc.pid, marker)
    assert not any(marker in line for line in pb_probe._process_cmdlines())
    # the same tree seen by another sparktui (own_pid elsewhere) is a user's: it counts
    assert any(marker in line for line in pb_probe._process_cmdlines(own_pid=-1))


def test_sparktui_itself_is_excluded():
    """By process, not by command line: parallel test workers share one command line, and a user's
    process may look like sparktui's. A child of this process carries a marker no other has."""
    marker = f"sparktui-g8-own-{os.getpid()}-{time.monotonic_ns()}"
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", marker])
    try:
        deadline = time.monotonic() + 10
        while marker not in " ".join(psutil.Process(child.pid).cmdline()) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not any(marker in c for c in pb_probe._process_cmdlines())
        assert any(marker in c for c in pb_probe._process_cmdlines(own_pid=-1))
    finally:
        child.kill()
        child.wait()


@pytest.mark.parametrize("argv,own", [
    (["/usr/bin/python3", "/usr/lib/python3/dist-packages/sparktui/probes/target_script.py", "--fd", "5"], True),
    (["/venv/bin/python", "/work/src/sparktui/probes/bandwidth_script.py", "--bytes", "1"], True),
    (["python3", "-X", "utf8", "/opt/sparktui/probes/target_script.py"], True),
    (["python3", "target_script.py", "--packages", "unsloth"], False),  # not sparktui's path
    (["python3", "/home/u/sparktui/probes/my_script.py"], False),
    (["python3", "train.py", "--note", "see sparktui/probes/target_script.py"], False),  # an argument, late
    (["vllm", "serve", "m"], False),
])
def test_is_own_probe(argv, own):
    assert pb_probe.is_own_probe(argv) is own


def test_descends_from_follows_the_parent_chain_and_stops_on_a_loop():
    parent = {10: 5, 5: 1, 1: 0, 20: 21, 21: 20}
    assert pb_probe._descends_from(10, 5, parent) and pb_probe._descends_from(10, 1, parent)
    assert pb_probe._descends_from(5, 5, parent)
    assert not pb_probe._descends_from(5, 10, parent)
    assert not pb_probe._descends_from(20, 5, parent)  # a loop in a torn scan ends, False
    assert not pb_probe._descends_from(30, 5, parent)  # parent unknown


def test_a_scan_that_cannot_run_is_said_not_an_empty_machine(monkeypatch):
    import psutil as real

    def broken(*a, **k):
        raise PermissionError("/proc: permission denied")

    monkeypatch.setattr(real, "process_iter", broken)
    with pytest.raises(pb_probe.ProcessScanError, match="process list unreadable"):
        pb_probe._process_cmdlines()
    reading = pb_probe.read(Config())
    assert reading.data["suggestions"] == [] and "permission denied" in reading.data["suggestions_error"]
    from sparktui.gotchas.g08_stale_playbooks import judge
    from tests.conftest import readings_of

    v = judge(readings_of(playbook_issues=reading.data), Config())
    assert any(e.what == "running processes" and e.value.startswith("not scanned: process list unreadable")
               for e in v.evidence)


def test_suggest_slugs_ignores_sparktuis_own_probe_lines_but_not_the_next_line():
    probe_line = (f"/usr/bin/python3 /usr/lib/python3/dist-packages/sparktui/probes/target_script.py --fd 5 "
                  f"--mode env --skip  --packages {PROBE_PACKAGES}")
    assert suggest_slugs([probe_line]) == []
    assert [slug for slug, _ in suggest_slugs([probe_line, "vllm serve Qwen/Qwen3-8B"])] == ["vllm"]
