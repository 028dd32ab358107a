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
