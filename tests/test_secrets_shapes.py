"""The secret shapes issue 22 found missed (item 7), each scrubbed, each with a linearity case, and the
scrubber on runs of dashes and dots (item 6: ``-`` x 20,000 took ``check G6`` 54-86 s); ``report
--redact`` hides IPv6 addresses as it hides IPv4 ones."""

from __future__ import annotations

import pytest

from sparktui.core.secrets import REDACTED, scrub_secrets, secret_env_values
from sparktui.fleet.report import Redaction, redact_paths
from tests.test_linear_patterns import _TooSlow, _time_once, grows_linearly

# (command line or text, the secret that must not survive, what must stay)
SHAPES = [
    ("git clone https://ghp_" + "A1b2" * 9 + "@github.com/org/repo", "A1b2A1b2", "@github.com/org/repo"),
    ("git clone https://x7Fh3kLm9QpR2sTvW4yZ@git.example.com/r.git", "x7Fh3kLm9QpR2sTvW4yZ", "@git.example.com/r.git"),
    ("pip install git+https://deploy:pa/ss@git.example.com/r.git", "pa/ss", "@git.example.com/r.git"),
    ("DATABASE_URL=postgres://u:p@ssw0rd@db.example.com:5432/x", "ssw0rd", "db.example.com:5432/x"),
    ("python worker.py --broker mysql://app:p@ssw0rd@db/x", "ssw0rd", "@db/x"),
    ("python worker.py --broker redis://:hunter2pw@cache.example.com:6379/0", "hunter2pw", "@cache.example.com:6379/0"),
    ("python fetch.py --src https://x.example.com/r?next=https://u:Hunter2Secret@mirror.example.com/f", "Hunter2Secret",
     "https://x.example.com/r?next=https://"),  # a URL inside another one's query
    ("AWS_ID=ASIAQWERTYUIOPASDFGH aws s3 ls", "ASIAQWERTYUIOPASDFGH", "aws s3 ls"),
    ("aws configure set aws_access_key_id ASIAQWERTYUIOPASDFGH", "ASIAQWERTYUIOPASDFGH", "aws configure"),
    ("sshpass -p Hunter2Secret ssh -p 2222 user@spark-2", "Hunter2Secret", "ssh -p 2222 user@spark-2"),
    ("mysql -u root -pHunter2Secret training_db", "Hunter2Secret", "mysql -u root -p"),
    ("mysql -h db -u root -p Hunter2Secret", "Hunter2Secret", "mysql -h db -u root -p "),
    ("docker login -u me -p Hunter2Secret nvcr.io", "Hunter2Secret", "nvcr.io"),
    ("redis-cli -h cache -a Hunter2Secret ping", "Hunter2Secret", "ping"),
    ("python train.py --secretKey Hunter2Secret --epochs 3", "Hunter2Secret", "--epochs 3"),
    ("python train.py --accessKey=Hunter2Secret --epochs 3", "Hunter2Secret", "--epochs 3"),
    ("python etl.py --db-pass Hunter2Secret --rows 10", "Hunter2Secret", "--rows 10"),
    ("python etl.py --db_pass=Hunter2Secret --rows 10", "Hunter2Secret", "--rows 10"),
    ("DB_PASS=Hunter2Secret python etl.py", "Hunter2Secret", "python etl.py"),
    ("curl --cookie 'session=Hunter2Secret' https://example.com", "Hunter2Secret", "https://example.com"),
    ("python scrape.py --cookie session=Hunter2Secret --n 5", "Hunter2Secret", "--n 5"),
    ("Cookie: session=Hunter2Secret", "Hunter2Secret", "Cookie: "),
]


@pytest.mark.parametrize("raw, secret, kept", SHAPES, ids=[s[0][:40] for s in SHAPES])
def test_each_missed_shape_is_scrubbed(raw, secret, kept):
    out = scrub_secrets(raw)
    assert secret not in out and REDACTED in out, out
    assert kept in out, out
    assert scrub_secrets(out) == out  # idempotent


@pytest.mark.parametrize("text", [
    "vllm serve m -p 8000 --port 8001",  # -p is a port here
    "python -m http.server -p 8000",
    "ssh -p 2222 user@spark-2",
    "ssh://git@github.com/org/repo.git",  # a plain user name stays
    "pip install git+https://github.com/org/repo.git@v1.0",  # @tag after the path: no credentials
    "pip install git+https://gitlab.example.com:8443/org/repo.git@v1.0",  # a port, then a path
    "monkey=1 bypass=2 compass: 3 --bypass x --max-tokens 5 tokenizers=0.22",
    "mysql -u root training_db",  # no -p at all
    "export GITHUB_TOKEN=...   # or: gh auth login",
])
def test_ordinary_text_stays(text):
    assert scrub_secrets(text) == text


def test_secret_named_environment_variables_with_the_new_words():
    env = {"DB_PASS": "Hunter2Secret", "SESSION_COOKIE": "abcdefgh123", "BYPASS_CACHE": "1234567890", "PWD": "/home/alice/x"}
    assert secret_env_values(env) == sorted(["Hunter2Secret", "abcdefgh123"], key=len, reverse=True)


# -- linear: one adversarial unit per shape, grown from n to 4n ------------------------------------

NOBODY = Redaction(home="/home/alice", user="alice", hostnames=("spark-1",))
LINEAR_UNITS = ["-", ".", "a.", " -", "--", "-a", "https://", "https://a:", "https://a@", "://u:p@", "redis://:",
                "@", ":@", "ASIA", "ASIA0", "sshpass -p ", "mysql ", " -p", "-p", "login -p ", "redis-cli -a ",
                "--secretKey ", "secretKey", "Key", "--db-pass ", "-pass", "--cookie ", "cookie=", "token=",
                "\"token\": \"", "Bearer ", "a:", "::", "fe80::", "1:", "[::1]"]


@pytest.mark.parametrize("unit", LINEAR_UNITS)
def test_each_shape_is_scrubbed_in_linear_time(unit):
    assert grows_linearly(lambda t: scrub_secrets(t), unit) is None
    assert grows_linearly(lambda t: redact_paths(t, NOBODY), unit) is None


@pytest.mark.parametrize("run", ["-", ".", "a.", " -", "-a", "a-"])
def test_twenty_thousand_dashes_or_dots_in_a_command_line_take_milliseconds(run):
    """Issue 22 item 6: a process started with 20,000 dashes kept ``check G6`` busy 54-86 s; the
    scrubber runs on every training job's command line."""
    text = "python train.py " + run * (20_000 // len(run)) + " --hf-token hf_" + "x" * 30
    try:
        took = _time_once(lambda t: scrub_secrets(t), text, guard_s=2.0)
    except _TooSlow:
        pytest.fail(f"scrubbing {run!r} x {20_000 // len(run)} took over 2 s")
    assert took < 0.5
    assert "hf_xxx" not in scrub_secrets(text)


# -- report --redact: IPv6 too ---------------------------------------------------------------------

def test_redact_hides_ipv6_addresses_and_keeps_loopback_and_what_is_no_address():
    r = Redaction(home="/home/alice", user="alice", hostnames=("spark-1",))
    text = ("peer fe80::1c2:3ff:fe4d:5e6f%enp1s0f0np0 up; NCCL via [2001:db8:0:1::20]:29500; "
            "GID fe80:0000:0000:0000:0a5c:1234:5678:9abc; mapped ::ffff:192.168.1.20; exporter on [::1]:9400; "
            "at 12:34:56, MAC aa:bb:cc:dd:ee:ff, std::vector, driver 580.95.05")
    out = redact_paths(text, r)
    for leaked in ("fe80::1c2", "2001:db8", "0a5c:1234", "::ffff", "192.168.1.20"):
        assert leaked not in out, out
    assert "<ip>%enp1s0f0np0" in out and "[<ip>]:29500" in out
    for kept in ("[::1]:9400", "12:34:56", "aa:bb:cc:dd:ee:ff", "std::vector", "580.95.05"):
        assert kept in out, out


# -- the argv the process scan matches is cut first (probes/processes.py) ---------------------------

GIB = 1024 ** 3


@pytest.fixture
def fake_gpu():
    from sparktui.testing import fake_nvml

    with fake_nvml.installed(fake_nvml.gb10_loaded()) as f:
        yield f


def _row_of(server, fake_gpu):
    from sparktui.probes import processes
    from sparktui.probes.nvml import NvmlSession

    fake_gpu.set_processes([(server.pid, 20 * GIB)])
    s = NvmlSession()
    try:
        data = processes.scan(s, exclude_own=False)
    finally:
        s.close()
    (row,) = [r for r in data["rows"] if r["pid"] == server.pid]
    return row, data


def test_a_megabyte_of_dashes_in_a_servers_argv_is_scanned_in_milliseconds(kids, fake_gpu):
    """Issue 22 item 6: every training job's and server's argv (read up to 1 MiB) went whole through
    the scrubber, which was quadratic on runs of dashes; now a stated window is scrubbed."""
    filler = ["-" * (127 * 1024)] * 8  # 1 MiB: one argument may hold at most 128 KiB
    server = kids.run("vllm", "serve", "m", "--hf-token", "hf_" + "s" * 30, *filler)
    try:
        took = _time_once(lambda _: _row_of(server, fake_gpu), None, guard_s=10.0)
    except _TooSlow:
        pytest.fail("scanning a server with 1 MiB of dashes in its argv took over 10 s")
    row, _ = _row_of(server, fake_gpu)
    assert took < 5.0
    assert "hf_sss" not in row["command"] and "--hf-token [redacted]" in row["command"]
    from sparktui.gotchas.g06_contention import with_cap

    assert with_cap(row["command"], "--gpu-memory-utilization", 0.4) is None  # G6: not kept whole


def test_a_cap_flag_past_what_was_read_is_unreadable_never_the_default(kids, fake_gpu):
    """A vLLM whose --gpu-memory-utilization comes after 1 MiB of other arguments: the flag was
    never read, so the cap is not known. It was the default (0.9) 'as if no flag were given'."""
    filler = ["a" * (127 * 1024)] * 9
    server = kids.run("vllm", "serve", "m", *filler, "--gpu-memory-utilization", "0.3")
    row, data = _row_of(server, fake_gpu)
    assert row["cap"]["state"] == "unreadable", row["cap"]
    assert "over 1 MiB" in row["cap"]["source"] and "KiB" in row["cap"]["source"]


def test_a_cap_flag_past_the_matched_window_is_unreadable_and_g6_is_not_ok(kids, fake_gpu):
    from sparktui.core.config import Config
    from sparktui.core.readings import Reading, Readings
    from sparktui.gotchas.g06_contention import judge

    filler = ["b" * 60_000, "c" * 60_000]  # past the matched 64 KiB (ARGV_MATCHED), well inside what is read
    server = kids.run("vllm", "serve", "m", *filler, "--gpu-memory-utilization", "0.3")
    row, data = _row_of(server, fake_gpu)
    assert row["cap"]["state"] == "unreadable" and "64 KiB" in row["cap"]["source"]
    assert "more characters" in row["cap"]["source"]
    data["rows"] = [row]
    data["container"] = {"inside": False, "markers": [], "pid1": "systemd"}
    r = Readings()
    r.add(Reading("processes", data, source="NVML process lists + psutil"))
    assert judge(r, Config()).status.value != "ok"


def test_a_short_argv_is_matched_whole(kids, fake_gpu):
    server = kids.run("vllm", "serve", "m", "--gpu-memory-utilization", "0.3")
    row, _ = _row_of(server, fake_gpu)
    assert row["cap"]["state"] == "set" and row["cap"]["fraction"] == 0.3
