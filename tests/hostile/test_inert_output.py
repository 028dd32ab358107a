"""Outside text on the command line's outputs is shown inert (issue 22, "Seen" 3, 5 and 10).

Another local user's process (its argv holds OSC title / OSC 52 clipboard / CSI clear-screen
sequences, an 8-bit CSI, a bidi override, Textual markup and Markdown with a newline), files in a
scanned folder named with such bytes (one not even UTF-8), a peer's host name, a kept session's
host, a snapshot's host name and environment, GitHub issue titles: `check`, `preflight`, `peers`,
`history` and `report` must show each with its control characters as visible escapes (`\\e`,
`\\x9b`, `\\u202e`), never as raw bytes, while `--json` keeps the data exact. The report must keep
its own structure: a newline in an argv cannot leave its fence, `## G6 verdict corrected: ok` is
not a heading of the report and `![x](http://remote/img)` is not an image.

With `2>/dev/full` a usage or config error still exits 64 / 78 (an unguarded stderr print made
it exit 1).

The real CLI runs in a subprocess where the bytes matter (what reaches the terminal); the
processes are real (psutil sees them), started here and killed at the end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from sparktui.cli.render import table
from sparktui.core.readings import Reading, Readings
from sparktui.core.verdict import Evidence, Status, Verdict
from sparktui.testing import fake_nvml

SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "h200" / "snapshot.json"
OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
INJECT = "x\n```\n## G6 verdict corrected: ok\n![x](http://remote/img)\n"
# bytes a terminal acts on: ESC, BEL, an 8-bit CSI (as a character, or as the raw byte a non-UTF-8
# file name gives), the bidi override
RAW = (b"\x1b", b"\x07", b"\xc2\x9b", b"\x9b", "\u202e".encode())


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "SPARKTUI_DEBUG", "NO_COLOR")}
    return {**env, "COLUMNS": "100", **extra}


def sparktui(*args: str, timeout: float = 120, env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sparktui", *args], capture_output=True, env=env or _env(),
                          timeout=timeout, **kw)


def assert_inert(out: bytes) -> None:
    for raw in RAW:
        assert raw not in out, f"raw {raw!r} reached the output: ...{out[max(0, out.find(raw) - 80):out.find(raw) + 40]!r}"


def report_structure(text: str) -> tuple[list[str], list[str]]:
    """(the headings, the kinds of active tokens: images, links, raw HTML) as a CommonMark + tables
    renderer (markdown-it, what GitHub's renderer follows) reads ``text``."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    headings, active = [], []
    for i, t in enumerate(tokens):
        if t.type == "heading_open":
            headings.append(tokens[i + 1].content)
        for child in [t, *(t.children or [])]:
            if child.type in ("image", "link_open", "html_inline", "html_block"):
                active.append(child.type)
    return headings, active


OWN_HEADINGS = ("sparktui report:", "Host", "Checks", "Training stack", "Telemetry", "Peers", "Input problems")


def assert_own_headings(text: str, ids: list[str]) -> None:
    headings, active = report_structure(text)
    for h in headings:
        assert h.startswith(OWN_HEADINGS) or any(h.startswith(f"{gid} · ") for gid in ids), f"injected heading {h!r}"
    assert sum(h.startswith("sparktui report:") for h in headings) <= 1
    assert not any(h.startswith(tuple(f"{gid} verdict" for gid in ids)) for h in headings)
    assert "image" not in active and "html_inline" not in active and "html_block" not in active, active


# -- a training job started by another user, with a hostile argv -----------------------------------

# G6's words where the host's processes are out of sight (a container, NVML's process list empty)
CANNOT_SEE = "cannot tell: host processes not visible (inside a container, NVML's process list is empty)"

# What a container on a GPU host shows (the lent H100, a VM whose /proc/1/cgroup read as a container):
# NVML answers, with an empty process list, and the process scan finds itself inside a container.
CONTAINER_SITE = """from sparktui.probes import nvml, processes
from sparktui.testing import fake_nvml

nvml.set_backend(fake_nvml.h200(in_container=True))
_detect = processes.detect_container


def _inside(*args, **kwargs):
    return {**_detect(*args, **kwargs), "inside": True}


processes.detect_container = _inside
"""


@pytest.fixture(params=["this machine", "a container"])
def g6_view(request, tmp_path) -> tuple[str, dict[str, str]]:
    """The CLI's environment: as this machine is (real NVML or none, its own container answer), and
    as a container on a GPU host (NVML faked at its boundary, listing nothing; the scan inside),
    where G6 is "cannot tell" and still shows the processes it saw."""
    if request.param == "this machine":
        return request.param, _env()
    site = tmp_path / "container-site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(CONTAINER_SITE)
    env = _env()
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), str(fake_nvml.SRC), env.get("PYTHONPATH", "")) if p)
    return request.param, env

@contextmanager
def job(*args: str):
    """`./python3 train.py ARGS` (this interpreter) started by "another user": G6 finds it by its
    script name. Short names: G6's details keep the first 80 characters of a command line."""
    folder = Path(tempfile.mkdtemp(prefix="j", dir="/tmp"))
    (folder / "train.py").write_text("import time\ntime.sleep(120)\n")
    (folder / "python3").symlink_to(sys.executable)
    p = subprocess.Popen(["./python3", "train.py", *args], cwd=folder, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    try:
        yield p.pid
    finally:
        p.kill()
        p.wait(10)
        shutil.rmtree(folder, ignore_errors=True)


def test_check_g6_shows_a_hostile_argv_inert_and_json_keeps_it_exact(g6_view):
    view, env = g6_view
    with job("\x1b]2;TITLE\x07", "\u202eevil", "\x9b2J", "[X=\"]", OSC52) as pid:
        r = sparktui("check", "G6", "-v", env=env)
        doc = json.loads(sparktui("check", "G6", "--json", env=env).stdout)
    assert r.returncode in (0, 1, 2, 3), r.stderr.decode()
    if view == "a container":  # the view this variant is for: the host unseen, the verdict unknown
        assert r.returncode == 3 and doc["checks"][0]["summary"] == CANNOT_SEE
    assert f"pid {pid}".encode() in r.stdout  # the job is named ...
    assert_inert(r.stdout + r.stderr)  # ... its escapes shown, not sent
    for shown in (b"\\e]2;TITLE\\x07", b"\\u202eevil", b"\\x9b2J", b"\\e]52;c;"):
        assert shown in r.stdout
    (g6,) = doc["checks"]
    assert any("\x1b]2;TITLE\x07 \u202eevil \x9b2J" in d for d in g6["details"])  # JSON: the data, exact


def test_report_fences_a_hostile_argv_and_keeps_its_own_structure(g6_view):
    """Markdown only (no control character): a newline in the argv ended the details' fence."""
    view, env = g6_view
    with job("x\n```\n## G6 verdict corrected: ok\n![x](http://h/i)\n<img src=x>") as pid:
        r = sparktui("report", "G6", env=env)
    assert r.returncode == 0, r.stderr.decode()
    text = r.stdout.decode()
    if view == "a container":
        assert CANNOT_SEE in text
    assert f"pid {pid}" in text and "G6 verdict corrected" in text  # quoted ...
    assert_inert(r.stdout)
    assert_own_headings(text, ["G6"])  # ... not a heading, nor an image
    assert "\n## G6 verdict corrected" not in text and "\n![x](" not in text


def test_preflight_and_check_on_files_named_with_escapes_in_a_scanned_folder(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    launch = b"torchrun --nnodes 2 --nproc-per-node 1 train.py --tensor-parallel-size 2\n"
    for name in (b"\x1b]2;TITLE\x07run.sh", OSC52.encode() + b".sh", b"\x9b2Jnot-utf8.sh",
                 "\u202eevil.sh".encode(), b"x\n## G10 verdict corrected: ok\n![x](http:remote).sh"):
        (proj / os.fsdecode(name)).write_bytes(launch)
    check = sparktui("check", "G10", "-v", "--path", str(proj))
    assert check.returncode in (1, 2), check.stderr.decode()
    assert_inert(check.stdout + check.stderr)
    assert b"\\e]2;TITLE\\x07run.sh" in check.stdout and b"\\x9b2Jnot-utf8.sh" in check.stdout
    pre = sparktui("preflight", "G10", "--path", str(proj))
    assert pre.returncode in (1, 2) and b"preflight: FAILED" in pre.stdout
    assert_inert(pre.stdout + pre.stderr)
    rep = sparktui("report", "G10", "--path", str(proj))
    assert rep.returncode == 0, rep.stderr.decode()
    assert_inert(rep.stdout)
    assert_own_headings(rep.stdout.decode(), ["G10"])


KILLED = "\x1b]2;TITLE\x07[/]"  # a process can name itself anything (prctl): the kernel logs it as it is
OOM = (f"Out of memory: Killed process 9123 ({KILLED}) total-vm:130000000kB, anon-rss:118000000kB, file-rss:0kB, "
       "shmem-rss:0kB, UID:1000 pgtables:240000kB oom_score_adj:0")


def test_g11_shows_a_kernel_log_process_name_inert_from_a_snapshot(tmp_path):
    """The kernel log's OOM victim name (readable by an unprivileged user through journalctl)."""
    doc = json.loads(SNAPSHOT.read_text())
    event = {"kind": "oom_kill", "pid": 9123, "name": KILLED, "rss_kb": 118000000, "anon_rss_kb": 118000000,
             "t": time.time() - 60, "t_boot": 5000.5, "text": OOM}
    counts = {k: 0 for k in ("xid", "nv_no_memory", "oom_kill", "aer", "soft_lockup")}
    counts["oom_kill"] = 1
    doc["readings"]["kernel_log"] = {
        "probe": "kernel_log", "source": "/dev/kmsg", "error": None, "started_at": time.time(), "took_s": 0.01,
        "data": {"source": "kmsg", "boot_id": "abc", "lines_read": 1200, "events": [event], "truncated": False,
                 "counts": counts, "note": None}}
    snap = tmp_path / "s.json"
    snap.write_text(json.dumps(doc))
    r = sparktui("check", "G11", "--snapshot", str(snap), "-v")
    assert r.returncode == 2, r.stdout.decode() + r.stderr.decode()
    assert_inert(r.stdout + r.stderr)
    assert b"\\e]2;TITLE\\x07[/]" in r.stdout


def test_g11_shows_a_kernel_log_process_name_inert_from_a_saved_log(tmp_path):
    """`--kernel-log FILE` (new with issue 22: on 788276f this fails as an unknown option)."""
    log = tmp_path / "dmesg.txt"
    log.write_text(f"[ 5000.5] {OOM}\n")
    r = sparktui("check", "G11", "--kernel-log", str(log), "-v")
    assert r.returncode == 2, r.stdout.decode() + r.stderr.decode()
    assert_inert(r.stdout + r.stderr)
    assert b"\\e]2;TITLE\\x07[/]" in r.stdout
    rep = sparktui("report", "G11", "--kernel-log", str(log))
    assert rep.returncode == 0, rep.stderr.decode()
    assert_inert(rep.stdout)
    assert_own_headings(rep.stdout.decode(), ["G11"])


def test_check_g8_shows_issue_titles_inert(capsys):
    from sparktui.cli.main import main
    from sparktui.testing.github_server import make_issue, serve_issues

    issues = [make_issue(109, f"nvidia/vllm {OSC52}\x1b]2;TITLE\x07 [/] \u202eevil ## G8 ok ![x](http://remote/img)",
                         "https://github.com/NVIDIA/dgx-spark-playbooks/tree/main/nvidia/vllm")]
    server, _ = serve_issues(issues)
    with server:
        code = main(["check", "G8", "-v", "--playbook", "vllm", "--api-url", server.url])
    out = capsys.readouterr()
    assert code == 1, out.err
    assert "#109" in out.out and "\\e]2;TITLE\\x07" in out.out
    assert_inert((out.out + out.err).encode())


def test_a_snapshot_host_name_and_environment_are_inert_in_check_and_report(tmp_path):
    """A snapshot (a peer's, or one sent for a post-mortem) is outside text through and through."""
    doc = json.loads(SNAPSHOT.read_text())
    name = f"spark\x1b]2;TITLE\x07[/]{INJECT}"
    doc["host"]["hostname"] = name
    doc["readings"]["host"]["data"]["hostname"] = name
    env = doc["readings"]["target"]["data"].setdefault("python", {}).setdefault("env", {})
    env["CUDA_HOME"] = f"/usr/local/cuda\n```\n## G1 verdict corrected: ok\n{OSC52}"
    snap = tmp_path / "s.json"
    snap.write_text(json.dumps(doc))
    r = sparktui("report", "--snapshot", str(snap))
    assert r.returncode == 0, r.stderr.decode()
    assert_inert(r.stdout)
    text = r.stdout.decode()
    assert_own_headings(text, [f"G{i}" for i in range(1, 15)])
    assert text.startswith("# sparktui report: spark\\\\e]2;TITLE\\\\x07")  # `\e` with its backslash escaped
    c = sparktui("check", "--snapshot", str(snap), "-v")
    assert_inert(c.stdout + c.stderr)


def test_peers_and_history_show_host_names_inert(tmp_path):
    host = "peer\x1b]2;TITLE\x07[/]"
    p = sparktui("peers", "--peer", host, "--ssh-config", str(tmp_path / "none"), timeout=120)
    assert p.returncode == 64 and b"not a host name" in p.stderr  # refused, and said inert
    assert_inert(p.stdout + p.stderr)

    from sparktui.core.config import Config
    from sparktui.core.recording import header
    from sparktui.core.session import SessionWriter

    w = SessionWriter(Config().session, header(interval_s=1.0, host={"hostname": host}, static={}, version="t"), host)
    w.verdict(time.time(), "G6", None, "fail", f"restored {OSC52}")
    w.close()
    h = sparktui("history")
    assert h.returncode == 0, h.stderr.decode()
    assert_inert(h.stdout + h.stderr)
    assert b"peer\\e]2;TITLE\\x07" in h.stdout
    assert json.loads(sparktui("history", "--json").stdout)["sessions"][0]["host"] == host  # JSON: exact


# -- 2>/dev/full: the documented exit codes --------------------------------------------------------

@pytest.mark.parametrize("args, code", [
    (["check", "--no-such-option"], 64),
    (["check", "G99"], 64),
    (["snapshot"], 64),
    (["check", "G7", "--python", "/nonexistent/python"], 64),
    (["explain", "G0"], 64),
    (["check", "G7", "--config", "BAD_TOML"], 78),
    (["check", "G7", "--config", "BAD_PYTHON"], 78),
])
def test_usage_and_config_errors_keep_their_codes_when_stderr_is_full(tmp_path, args, code):
    (tmp_path / "bad.toml").write_text("x = [\n")
    (tmp_path / "python.toml").write_text('[target]\npython = "/nonexistent/python"\n')
    args = [{"BAD_TOML": str(tmp_path / "bad.toml"), "BAD_PYTHON": str(tmp_path / "python.toml")}.get(a, a) for a in args]
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "sparktui", *args], stdout=subprocess.PIPE, stderr=full,
                           env=_env(), timeout=60)
    assert r.returncode == code
    ok = subprocess.run([sys.executable, "-m", "sparktui", *args], capture_output=True, env=_env(), timeout=60)
    assert ok.returncode == code and ok.stderr  # the same error, said where stderr can be written


# -- the property: any text, through every CLI renderer --------------------------------------------

PIECES = st.sampled_from(["\x1b", "\x07", "\x9b", "\x85", "\x00", "\t", "\n", "\r", "\x7f", "\u202e", "\u2066",
                          "\u200b", "\ufeff", "\udc9b", "\U000e0041", "[/]", '[X="]', "`", "```", "## ", "# ",
                          "![x](http://remote/img)", "<img src=x>", "|", "\\", "1. ", "> ", "[x]: http://h",
                          "]: ", "~~~"])
TEXT = st.lists(st.one_of(PIECES, st.text(max_size=4)), min_size=1, max_size=14).map("".join)


def _verdict(text: str) -> Verdict:
    return Verdict("G6", Status.FAIL, f"training {text} holds the pool",
                   evidence=[Evidence(f"what {text}", text, f"source {text}"), Evidence("n", {"argv": [text]}, "psutil")],
                   details=[f"pid 1 {text}", text], fix=f"Stop it:\n\n```bash\nkill 1  # {text}\n```\n{text}\n")


def _no_raw(out: str) -> None:
    bad = [c for c in out if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f or c in "\u202e\u2066\u200b\ufeff"
           or 0xD800 <= ord(c) <= 0xDFFF or 0xE0000 <= ord(c) <= 0xE007F]
    assert not bad, bad


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT)
def test_any_outside_text_is_inert_in_every_cli_renderer_and_the_report(text):
    from sparktui.cli.history import table as history_table
    from sparktui.core.session import SessionInfo
    from sparktui.fleet.compare import Machine, compare, format_comparison
    from sparktui.fleet.report import ReportInput, render_report

    v = _verdict(text)
    _no_raw(table([v], verbose=True))
    _no_raw(table([v], verbose=False))
    cmp = compare([Machine(f"here {text}", Readings(), None, "1", (v,), local=True),
                   Machine(f"peer {text}", None, f"unreachable: {text}", None, ())])
    _no_raw(format_comparison(cmp))
    info = SessionInfo(id=text, path="p", size=1, host=text, started_at=0.0, first_t=0.0, ended_at=1.0, samples=1,
                       worst=text)
    _no_raw(history_table([info]))
    readings = Readings()
    readings.add(Reading("target", {"interpreter": text, "selected_by": text,
                                    "python": {"version": text, "env": {f"CUDA_{text}": text}},
                                    "packages": {f"pkg{text}": text, f"gone{text}": None}}))
    samples = [{"t": float(i), "errors": {text: text}, "mem": {"MemAvailable": 1 << 30},
                "gpus": [{"temp_c": 50, "reasons": [text], "errors": {"power_w": text}}]} for i in range(2)]
    rep = render_report(ReportInput([v], readings, {"hostname": text, "os_release": text}, f"snapshot {text}", "0", 0.0,
                                    samples=samples, samples_source=text, problems=[text], comparison=cmp))
    _no_raw(rep)
    assert_own_headings(rep, ["G6"])
    # the building blocks (core/inert.py): one line, inert, and a fence nothing inside closes
    from sparktui.core.inert import md_code, md_fence, md_text, visible, visible_lines

    for out in (visible(text), md_text(text), md_code(text), md_code(text, table=True)):
        _no_raw(out)
        assert "\n" not in out
    _no_raw(visible_lines(text).replace("\n", ""))
    fenced = md_fence(text.split("\n"))
    closing = [i for i, line in enumerate(fenced) if line.strip().startswith("`" * len(fenced[0]))]
    assert closing == [0, len(fenced) - 1]
    headings, active = report_structure("\n".join(["para", "", md_text(text), "", *fenced, "", f"| a | {md_text(text, False)} |",
                                                   "|---|---|", f"| {md_code(text, table=True)} | b |"]))
    assert headings == [] and not ({"image", "html_inline", "html_block"} & set(active)), (headings, active)


@pytest.mark.parametrize("unit", ["\x1b", "`", "``x", "\\[", "](", "# ", "\udc9b", "\u202e", "a" * 7 + "\n"])
def test_the_inert_helpers_grow_linearly(unit):
    """Every helper on runs of what it rewrites (core/inert.py: one character class, str methods)."""
    from sparktui.core.inert import md_code, md_fence, md_text, visible, visible_lines
    from tests.test_linear_patterns import grows_linearly

    for fn in (visible, visible_lines, md_text, md_code, lambda s: md_fence(s)):
        assert grows_linearly(fn, unit, n=16_384) is None, (fn, unit)
