"""`sparktui report`: on the shipped GB10 recording, on a stand-in broken interpreter, and what
must never leave the machine (tokens), plus what --redact hides (home paths, user, host)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sparktui.cli.main import main
from sparktui.core.config import Config
from sparktui.core.readings import Reading, write_snapshot
from sparktui.core.recording import read_recording, readings_from_recording
from sparktui.fleet.report import Redaction, redact_paths, scrub_secrets, telemetry_summary
from sparktui.gotchas import REGISTRY
from sparktui.runner import collect, run_checks
from tests.standins.make import make_standin

DEMO = Path(__file__).resolve().parents[1] / "src" / "sparktui" / "data" / "gb10-demo.jsonl"
GIB = 1024 ** 3
SECRETS = {
    "GITHUB_TOKEN": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "GH_PAT": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMN",
    "HF_TOKEN": "hf_" + "abcdefghijklmnopqrstuvwxyzABCDEFGH",
    "WANDB_API_KEY": "0123456789abcdef0123456789abcdef01234567",
    "DB_PASSWORD": "hunter2-but-longer",
    "MY_SECRET": "s3cr3t-value",
    "GHO": "gho_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2",
}


def test_report_on_the_shipped_recording(tmp_path):
    out = tmp_path / "report.md"
    assert main(["report", "--replay", str(DEMO), "-o", str(out)]) == 0
    text = out.read_text()
    rec = read_recording(DEMO)
    verdicts, _ = run_checks(["G3", "G4", "G6"], Config(), readings_from_recording(rec))
    assert text.startswith("# sparktui report: spark-demo")
    for v in verdicts:  # every verdict, its status and its evidence; the fix for problems
        assert f"### {v.id} · {REGISTRY[v.id].title}: {v.status.glyph} {v.status.value}" in text
        assert v.summary in text
        for e in v.evidence:
            assert e.what in text
        if v.status.value in ("warn", "fail"):
            first_fix_line = (v.fix or REGISTRY[v.id].fix).strip().splitlines()[0]
            assert first_fix_line in text
    assert "| NVIDIA driver | 580.95.05 |" in text and "NVIDIA GB10 (compute capability 12.1)" in text
    # telemetry min / max / last, checked against the samples themselves
    temps = [s["gpus"][0]["temp_c"] for s in rec.samples]
    assert f"| GPU temperature (°C) | {min(temps)} | {max(temps)} | {temps[-1]} |" in text
    avail = [s["mem"]["MemAvailable"] / GIB for s in rec.samples]
    assert f"| MemAvailable (GiB) | {min(avail):.1f} | {max(avail):.1f} | {avail[-1]:.1f} |" in text
    assert f"{len(rec.samples)} samples over {rec.duration_s:.0f} s" in text
    assert "sw_thermal_slowdown" in text
    # the recording's header carries the target interpreter's reading: its stack is reported
    assert "Not in a recording" not in text
    stack = text.split("## Training stack", 1)[1]
    assert "| torch | 2.9.0+cu128 |" in stack and "| torch built for CUDA | 12.8 |" in stack
    assert "/home/spark/venvs/train/bin/python" in stack


def test_telemetry_summary_names_what_could_not_be_read():
    samples = [{"t": 1.0, "gpus": [{"index": 0, "temp_c": 50, "power_w": None, "errors": {"power_w": "NOT_SUPPORTED (x)"}}],
                "mem": {"MemAvailable": 10 * GIB}},
               {"t": 3.0, "gpus": [{"index": 0, "temp_c": 70, "power_w": None, "errors": {"power_w": "NOT_SUPPORTED (x)"}}],
                "mem": {"MemAvailable": 4 * GIB}}]
    s = telemetry_summary(samples)
    rows = {r.what: r for r in s.rows}
    assert (rows["GPU temperature"].min, rows["GPU temperature"].max, rows["GPU temperature"].last) == (50, 70, 70)
    assert rows["GPU power"].n == 0 and "NOT_SUPPORTED" in rows["GPU power"].why
    assert rows["MemAvailable"].min == 4.0 and s.span_s == 2.0
    no_nvml = telemetry_summary([{"t": 1.0, "gpus": [], "mem": {}, "errors": {"nvml": "nvmlInit failed: LIBRARY_NOT_FOUND"}}])
    assert all("LIBRARY_NOT_FOUND" in r.why for r in no_nvml.rows if r.unit in ("°C", "W", "MHz"))


def _broken_snapshot(tmp_path: Path, *, secrets: bool = False, home: str = "/home/alice") -> Path:
    """A snapshot of a machine whose training torch fails to import with an undefined CUDA
    symbol (a stand-in interpreter), taken with the real probes."""
    py = make_standin(tmp_path, "undefined_symbol")
    cfg = Config().with_overrides(target={"python": py, "cuda_smoke": False})
    readings = collect(["host", "target", "cudalibs", "container", "pins", "meminfo"], cfg)
    t = dict(readings.data("target"))
    t["interpreter"] = f"{home}/venvs/train/bin/python"
    if secrets:
        t["python"] = {**t["python"], "env": {**t["python"].get("env", {}), **SECRETS,
                                              "HF_HUB_URL": "https://alice:pa55w0rd-xyz@hub.example.com/x"}}
    readings.add(Reading("target", t, source=f"{home}/venvs/train/bin/python (subprocess)"))
    host = {**readings.data("host"), "hostname": "spark-7"}
    readings.add(Reading("host", host, source="uname"))
    path = tmp_path / "snap.json"
    write_snapshot(path, readings, host, "0.1.0")
    return path


def test_report_on_a_standin_failure_carries_verdict_evidence_and_fix(tmp_path):
    snap = _broken_snapshot(tmp_path)
    out = tmp_path / "r.md"
    assert main(["report", "G1", "G3", "--snapshot", str(snap), "-o", str(out)]) == 0
    text = out.read_text()
    assert re.search(r"### G1 · .*: ✘ fail", text)
    assert "undefined symbol" in text
    assert "Install a torch built for CUDA 13.0 into this interpreter" in text  # the verdict's fix, filled
    assert re.search(r"\S*venvs/train/bin/python -m pip install torch torchvision --index-url \S+/cu130", text)
    assert "## Training stack" in text and "venvs/train/bin/python" in text
    assert "/home/alice" in text  # not redacted unless asked


def test_tokens_never_reach_the_report(tmp_path, capsys):
    snap = _broken_snapshot(tmp_path, secrets=True)
    assert main(["report", "G1", "--snapshot", str(snap)]) == 0
    text = capsys.readouterr().out
    assert "Environment seen by the interpreter" in text
    for key, value in SECRETS.items():
        assert key in text  # the key is named ...
        assert value not in text  # ... its value is not
    assert "pa55w0rd" not in text and "https://[redacted]@hub.example.com/x" in text
    assert text.count("[redacted]") >= len(SECRETS)


@pytest.mark.parametrize("raw, leaked", [
    ("token ghp_" + "a" * 36, "ghp_"),
    ("--hf-token hf_" + "b" * 34 + " --port 8000", "hf_b"),
    ("vllm serve m --api-key sk-proj-" + "c" * 40, "sk-proj"),
    ('{"OPENAI_API_KEY": "abc123def456"}', "abc123def456"),
    ("export NGC_API_KEY=nvapi-" + "d" * 40, "nvapi-"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", "eyJhbGci"),
    ("password: 'correct horse'", "correct horse"),
    # forms a first version let through (audit): underscores in flags, *_KEY names, Basic auth
    ("vllm serve m --hf_token plainsecretvalue42xyz", "plainsecretvalue42"),
    ("python sft.py --api_key abc123def456 --wandb-key 0123456789abcdef", "abc123def456"),
    ("python sft.py --wandb-key 0123456789abcdef", "0123456789abcdef"),
    ("NGC_KEY=abcdefgh12345678 docker run", "abcdefgh12345678"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpw"),
    ("hf_" + "x" * 9, "hf_xxxx"),  # short Hugging Face token cut from a long line
])
def test_scrub_secrets_forms(raw, leaked):
    assert leaked not in scrub_secrets(raw)
    assert scrub_secrets(scrub_secrets(raw)) == scrub_secrets(raw)  # idempotent: no "[redacted]]"


def test_scrub_keeps_placeholders_and_prose_of_fix_texts():
    text = ("on a shared address set a token:\n\n```bash\nexport GITHUB_TOKEN=...   # or: gh auth login\n"
            "curl -H 'Authorization: Bearer <TOKEN>' https://api.github.com\nHF_TOKEN=$HF_TOKEN vllm serve m\n```")
    assert scrub_secrets(text) == text


def test_values_of_secret_named_environment_variables_are_hidden_whatever_their_shape(tmp_path, capsys, monkeypatch):
    from sparktui.core.secrets import secret_env_values

    monkeypatch.setenv("MY_SERVICE_TOKEN", "plain-looking-value-1234")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")  # not a secret name
    assert secret_env_values() == ["plain-looking-value-1234"]
    assert main(["report", "G8", "--command", "serve --auth plain-looking-value-1234"]) == 0
    text = capsys.readouterr().out
    assert "plain-looking-value-1234" not in text and "serve --auth [redacted]" in text


def test_scrub_leaves_ordinary_words_alone():
    text = '| tokenizers | 0.22.1 |\nmax_tokens: 512\n"pad_token_id": 0\nsecret-sauce'
    assert scrub_secrets(text) == text


def test_redact_replaces_home_user_and_host(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", "/home/alice")
    monkeypatch.setenv("USER", "alice")
    monkeypatch.setenv("LOGNAME", "alice")
    snap = _broken_snapshot(tmp_path, home="/home/alice")
    assert main(["report", "G1", "--snapshot", str(snap)]) == 0
    plain = capsys.readouterr().out
    assert "/home/alice" in plain and "spark-7" in plain
    assert main(["report", "G1", "--snapshot", str(snap), "--redact"]) == 0
    red = capsys.readouterr().out
    assert "/home/alice" not in red and "alice" not in red and "spark-7" not in red
    assert "~/venvs/train/bin/python" in red
    assert "# sparktui report: \\<host\\>" in red  # escaped: a bare <host> is an HTML tag GitHub drops


def test_redact_paths_rules():
    r = Redaction(home="/home/alice", user="alice", hostnames=("spark-7.lab.example.com", "spark-7"))
    text = ("/home/alice/x /home/bob/y /root/.cache ~/z alice@spark-7.lab.example.com spark-7 "
            "aliceX /rootfs Ubuntu nvidia-smi")
    assert redact_paths(text, r) == ("~/x /home/<user>/y ~/.cache ~/z <user>@<host> <host> "
                                     "aliceX /rootfs Ubuntu nvidia-smi")


def test_redact_hides_network_addresses_and_what_ssh_names_but_not_versions():
    r = Redaction(home="/home/alice", user="alice", hostnames=("spark-1",))
    text = ("ssh: connect to host 10.0.0.2 port 22: Connection refused\n"
            "ssh: Could not resolve hostname spark-2.lab: Name or service not known\n"
            "NVML 13.580.95.05, driver 580.95.05, exporter on 127.0.0.1:9400, NCCL via 192.168.1.20")
    out = redact_paths(text, r)
    assert "10.0.0.2" not in out and "spark-2.lab" not in out and "192.168.1.20" not in out
    assert "connect to host <host> port 22" in out and "NCCL via <ip>" in out
    assert "13.580.95.05" in out and "580.95.05" in out and "127.0.0.1:9400" in out
