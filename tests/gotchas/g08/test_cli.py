"""`sparktui check G8 ...` headless, against a real local GitHub-like server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import psutil
import pytest

from sparktui.cli.main import EXIT_OK, EXIT_UNKNOWN, EXIT_WARN, main
from sparktui.core.config import Config
from sparktui.probes import playbooks as probe
from sparktui.testing.github_server import LocalServer, Reply, make_issue, serve_issues

ISSUES = [
    make_issue(109, "nvidia/vllm is wrong missing Ray", "https://github.com/NVIDIA/dgx-spark-playbooks/tree/main/nvidia/vllm",
               comments=4),
    make_issue(68, "SGLang: Mismatch between build.nvidia.com and GitHub playbook container image",
               "https://build.nvidia.com/spark/sglang/instructions"),
    make_issue(90, "llama-factory: re-validate on DGX Spark", "PR body", pr=True),
]


def check_json(capsys, *args):
    code = main(["check", "G8", "--json", *args])
    doc = json.loads(capsys.readouterr().out)
    (g8,) = doc["checks"]
    return code, g8


def test_check_g8_warns_and_lists_the_matching_issue(capsys):
    server, _ = serve_issues(ISSUES, commit_dates={"vllm": "2026-01-10T00:00:00Z"})
    with server:
        code, g8 = check_json(capsys, "--playbook", "vllm", "--command", "vllm serve Qwen/Qwen3-8B",
                              "--api-url", server.url)
        assert code == EXIT_WARN and g8["status"] == "warn"
        assert g8["summary"].startswith("1 open issue in NVIDIA/dgx-spark-playbooks name vllm or your command: #109")
        assert g8["details"][0].startswith("#109 nvidia/vllm is wrong missing Ray (") and "4 comments" in g8["details"][0]
        ev = {e["what"]: e["value"] for e in g8["evidence"]}
        assert ev["open issues checked"] == "2 (1 pull requests left out)"
        assert ev["nvidia/vllm last change"].startswith("2026-01-10T00:00:00Z")
        first = len(server.requests)
        assert first == 2  # one page of issues + the folder's last commit

        code, g8 = check_json(capsys, "--playbook", "vllm", "--api-url", server.url)  # inside the TTL
        assert code == EXIT_WARN and len(server.requests) == first
        assert "inside its TTL (no request made)" in {e["what"]: e["value"] for e in g8["evidence"]}["where the list came from"]


def test_env_api_url_is_used_and_no_match_is_ok(capsys, monkeypatch):
    server, _ = serve_issues(ISSUES)
    with server:
        monkeypatch.setenv("SPARKTUI_GITHUB_API", server.url)
        code, g8 = check_json(capsys, "--playbook", "ollama")
    assert code == EXIT_OK and g8["status"] == "ok"
    assert g8["summary"] == "none of 2 open issues in NVIDIA/dgx-spark-playbooks name ollama"


def test_failed_fetch_and_no_cache_is_unknown(capsys):
    with LocalServer(lambda req: Reply(404, {}, b'{"message": "Not Found"}')) as server:
        code, g8 = check_json(capsys, "--playbook", "vllm", "--api-url", server.url)
        assert len(server.requests) == 1  # no folder lookups after the listing failed
    assert code == EXIT_UNKNOWN and g8["status"] == "unknown"
    assert "nothing is cached (repository NVIDIA/dgx-spark-playbooks not found at 127.0.0.1 (HTTP 404: Not Found))" in g8["summary"]


def test_nothing_configured_sends_no_request(capsys, monkeypatch):
    server, _ = serve_issues(ISSUES)
    with server:
        monkeypatch.setenv("SPARKTUI_GITHUB_API", server.url)
        code, g8 = check_json(capsys)
        reading = probe.read(Config())
    assert code == EXIT_OK and g8["status"] == "skip" and server.requests == []
    assert reading.data["configured"] is False and reading.error is None


def test_probe_data_is_plain_json_with_bounded_excerpts():
    long_body = "nvidia/vllm " + "x" * 5000
    server, _ = serve_issues([make_issue(7, "vLLM: broken", long_body)])
    with server:
        cfg = Config().with_overrides(playbooks={"slugs": ["vllm"], "api_url": server.url})
        reading = probe.read(cfg)
    d = json.loads(json.dumps(reading.data))
    assert d == reading.data
    (m,) = d["matches"]
    assert m["number"] == 7 and m["reasons"][0] == "mentions nvidia/vllm" and len(m["body_excerpt"]) == probe.EXCERPT_CHARS
    assert d["api_host"] == server.url.removeprefix("http://") and d["source"] == "network" and d["requests"] == 2


def test_nothing_configured_suggests_slugs_from_running_processes(capsys, monkeypatch):
    code = "import time; time.sleep(30)"
    model = f"Qwen/Qwen3-8B-{os.getpid()}"  # other tests run vllm stand-ins beside this one
    child = subprocess.Popen([sys.executable, "-c", code, "vllm", "serve", model, "--hf-token", "hf_abcdefghijklmnop"])
    try:
        deadline = time.monotonic() + 10  # under CI load the exec may not have happened yet
        while "vllm" not in " ".join(psutil.Process(child.pid).cmdline()) and time.monotonic() < deadline:
            time.sleep(0.02)
        # own_pid=-1: this test's child would be sparktui's own child (never evidence) otherwise
        ours = [line for line in probe._process_cmdlines(own_pid=-1) if model in line]
        assert len(ours) == 1  # the real process list has our child
        monkeypatch.setattr(probe, "_process_cmdlines", lambda: ours)  # and only it suggests
        reading = probe.read(Config())
    finally:
        child.kill()
        child.wait()
    (s,) = [s for s in reading.data["suggestions"] if s["slug"] == "vllm"]
    assert "'vllm serve' in:" in s["why"] and model in s["why"]
    assert "hf_abcdefghijklmnop" not in json.dumps(reading.data)


# --------------------------------------------------------------------------- audit: odd --api-url values

BAD_API_URLS = {
    "http://[::1": "unbalanced [ ] around an IPv6 address",
    "http://127.0.0.1:99999": "the port must be a number from 1 to 65535",
    "http://127.0.0.1:notaport": "the port must be a number from 1 to 65535",
    "https://user:pw@api.github.com": "a user name or password in the URL (not shown)",
    "https://api.github.com/?x=1#frag": "no ?query or #fragment allowed",
    "http://evil.localhost": "refusing plain http:// to evil.localhost",
}


@pytest.mark.parametrize("url, why", sorted(BAD_API_URLS.items()))
def test_check_g8_with_a_bad_api_url_is_unknown_and_says_what_is_wrong(capsys, monkeypatch, url, why):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_must_not_travel")
    code, g8 = check_json(capsys, "--playbook", "vllm", "--api-url", url)
    assert code == EXIT_UNKNOWN and g8["status"] == "unknown"
    assert g8["summary"].startswith("cannot tell: the GitHub API URL cannot be used") and why in g8["summary"]
    ev = {e["what"]: e["value"] for e in g8["evidence"]}
    assert why in ev["GitHub API URL"]
    assert "pw@" not in json.dumps(g8) and "ghp_must_not_travel" not in json.dumps(g8)


def test_probe_with_userinfo_in_the_api_url_shows_no_credentials_and_sends_nothing():
    server, _ = serve_issues(ISSUES)
    port = server.httpd.server_address[1]
    with server:
        cfg = Config().with_overrides(playbooks={"slugs": ["vllm"], "api_url": f"http://user:pw@127.0.0.1:{port}"})
        reading = probe.read(cfg, token=None)
    assert server.requests == []
    assert reading.data["api_host"] == f"127.0.0.1:{port}" and reading.data["api_url"] == f"http://***@127.0.0.1:{port}"
    assert "pw" not in json.dumps(reading.data) and "pw" not in reading.source and reading.data["url_problem"]


# --------------------------------------------------------------------------- audit: unwritable cache


def test_check_g8_with_an_unwritable_cache_still_judges_and_says_so(capsys, tmp_path, monkeypatch):
    cache_home = tmp_path / "cache-is-a-file"
    cache_home.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_home / "x"))  # <file>/x/sparktui/github cannot exist
    server, _ = serve_issues(ISSUES)
    with server:
        code, g8 = check_json(capsys, "--playbook", "ollama", "--api-url", server.url)
    assert code == EXIT_OK and g8["status"] == "ok"
    ev = {e["what"]: e["value"] for e in g8["evidence"]}
    root = cache_home / "x" / "sparktui" / "github"
    assert ev["disk cache"].startswith(f"cache not writable: {root} (Not a directory); every refresh asks")


def test_issues_the_api_sends_that_cannot_be_read_are_counted_in_the_evidence(capsys):
    broken = make_issue(0, "x")
    del broken["number"]
    server, _ = serve_issues([make_issue(5, "unrelated docs fix"), broken])
    with server:
        code = main(["check", "G8", "--playbook", "vllm", "--api-url", server.url, "--json"])
    doc = json.loads(capsys.readouterr().out)
    (g8,) = doc["checks"]
    assert code == EXIT_OK and "(1 more could not be read)" in g8["summary"]
    assert any("1 issue object without a usable number" in str(e["value"]) for e in g8["evidence"])
