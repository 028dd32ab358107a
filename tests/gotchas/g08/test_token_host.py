"""GITHUB_TOKEN / GH_TOKEN go only to GitHub's API host, or to the host the user names for them in
SPARKTUI_GITHUB_TOKEN_HOST; never to another --api-url, loopback included (issue 22 item 7: they were
sent to any --api-url). Checked end to end: ``sparktui check G8`` against the real local HTTP server of
the G8 tests, looking at the headers that arrive."""

from __future__ import annotations

import json
import os
import stat

import pytest

from sparktui.cli.main import main
from sparktui.playbooks import github
from sparktui.testing.github_server import make_issue, serve_issues

ISSUES = [make_issue(109, "nvidia/vllm is wrong missing Ray", "body")]
TOKEN_HOST = "SPARKTUI_GITHUB_TOKEN_HOST"  # github.ENV_TOKEN_HOST, as a user types it
SECRET = "ghp_" + "T0kenThatMustNotTravel" * 2


def check_g8(capsys, *args):
    code = main(["check", "G8", "--json", "--playbook", "vllm", *args])
    (g8,) = json.loads(capsys.readouterr().out)["checks"]
    return code, g8


def auth_headers(server):
    return [r.headers.get("authorization") for r in server.requests]


@pytest.fixture
def no_gh(tmp_path, monkeypatch):
    """No ``gh`` on PATH: the environment alone decides."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


@pytest.mark.parametrize("var", ["GITHUB_TOKEN", "GH_TOKEN"])
def test_an_environment_token_never_reaches_a_loopback_api_url(capsys, monkeypatch, var):
    monkeypatch.setenv(var, SECRET)
    server, _ = serve_issues(ISSUES)
    with server:
        code, g8 = check_g8(capsys, "--api-url", server.url)
    assert server.requests, "the server was asked"
    assert auth_headers(server) == [None] * len(server.requests)
    assert SECRET not in json.dumps(g8)


def test_nor_one_the_environment_redirects_the_default_to(capsys, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    server, _ = serve_issues(ISSUES)
    with server:
        monkeypatch.setenv("SPARKTUI_GITHUB_API", server.url)
        check_g8(capsys)
    assert server.requests and auth_headers(server) == [None] * len(server.requests)


def test_the_host_the_user_names_gets_it(capsys, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    server, _ = serve_issues(ISSUES)
    with server:
        host, port = server.httpd.server_address[:2]
        monkeypatch.setenv(TOKEN_HOST, f"{host}:{port}")
        code, g8 = check_g8(capsys, "--api-url", server.url)
    assert server.requests and auth_headers(server) == [f"Bearer {SECRET}"] * len(server.requests)
    assert SECRET not in json.dumps(g8)


def test_a_named_host_without_a_port_is_that_host_on_the_schemes_default_port_only(capsys, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    server, _ = serve_issues(ISSUES)
    with server:
        monkeypatch.setenv(TOKEN_HOST, server.httpd.server_address[0])  # 127.0.0.1, but the server is on another port
        check_g8(capsys, "--api-url", server.url)
    assert server.requests and auth_headers(server) == [None] * len(server.requests)


def test_which_api_urls_an_environment_token_may_go_to(no_gh):
    env = {"GITHUB_TOKEN": SECRET}
    named = {**env, TOKEN_HOST: "ghe.example.com, 127.0.0.1:8765, [::1]:9000"}
    assert github.discover_token("https://api.github.com", env).reveal() == SECRET
    assert github.discover_token("https://api.github.com/", env).reveal() == SECRET
    for url in ("https://ghe.example.com/api/v3", "http://127.0.0.1:8765", "http://localhost:8765",
                "https://api.github.com:8443", "https://api.github.com.evil.example", "http://[::1]:9000"):
        assert github.discover_token(url, env) is None, url
    for url in ("https://ghe.example.com/api/v3", "http://127.0.0.1:8765", "http://[::1]:9000"):
        assert github.discover_token(url, named).reveal() == SECRET, url
    for url in ("https://ghe.example.com:8443/api/v3", "http://127.0.0.1:8766", "https://other.example.com"):
        assert github.discover_token(url, named) is None, url


def test_gh_keeps_its_own_per_host_login_for_a_named_enterprise_host(tmp_path, monkeypatch):
    """An environment token withheld from a GitHub Enterprise host does not stop gh's own login for
    that host (gh stores tokens per host: the user's login there)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    gh = bindir / "gh"
    log = tmp_path / "gh-args"
    gh.write_text(f'#!/bin/sh\necho "$@" > {log}\necho gho_from_gh_for_ghe\n')
    gh.chmod(gh.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    t = github.discover_token("https://ghe.example.com/api/v3", {"GITHUB_TOKEN": SECRET})
    assert t is not None and t.source == "gh auth token" and t.reveal() == "gho_from_gh_for_ghe"
    assert log.read_text().split() == ["auth", "token", "--hostname", "ghe.example.com"]
