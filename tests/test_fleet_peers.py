"""Peers over SSH, against a real sshd on loopback started here (Debian's openssh-server), with a
throwaway host key and user key. The client is the system's ssh with an -F config file, exactly
as a user's ~/.ssh/config would drive it. Plus the pure comparison on hand-made readings."""

from __future__ import annotations

import getpass
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading, write_snapshot
from sparktui.core.verdict import Status
from sparktui.fleet.compare import Machine, compare, match_of, Cell
from sparktui.fleet.peers import PeerSpec, PeerState, fetch_peer, local_machine, parse_snapshot_output, PeerOutputError
from tests.conftest import readings_of

SSHD = "/usr/sbin/sshd"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    """A real sshd on 127.0.0.1 and an ssh config naming four peers: ok, down, refused, and the
    same host with the wrong key. Yields (ssh config path, work dir)."""
    if not os.path.exists(SSHD) or shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        pytest.skip("openssh-server (/usr/sbin/sshd) or the ssh client is not installed (apt-get install openssh-server)")
    d = tmp_path_factory.mktemp("sshd")
    for name in ("host_key", "user_key", "stranger_key"):
        _keygen(d / name)
    (d / "authorized_keys").write_text((d / "user_key.pub").read_text())
    try:
        os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege-separation directory
    except OSError as e:
        pytest.skip(f"cannot create /run/sshd for sshd: {e}")
    port = _free_port()
    (d / "sshd_config").write_text(f"""\
HostKey {d}/host_key
ListenAddress 127.0.0.1
Port {port}
AuthorizedKeysFile {d}/authorized_keys
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
PidFile {d}/sshd.pid
LogLevel ERROR
""")
    log = open(d / "sshd.log", "wb")
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(d / "sshd_config")], stdout=log, stderr=log)
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.skip(f"sshd did not start: {(d / 'sshd.log').read_text()[-500:]}")
            time.sleep(0.05)
    host_pub = " ".join((d / "host_key.pub").read_text().split()[:2])
    (d / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_pub}\n")
    closed = _free_port()  # nothing listens there
    user = getpass.getuser()
    common = f"  HostName 127.0.0.1\n  User {user}\n  UserKnownHostsFile {d}/known_hosts\n  StrictHostKeyChecking yes\n  IdentitiesOnly yes\n"
    (d / "ssh_config").write_text(
        f"Host peer-ok\n{common}  Port {port}\n  IdentityFile {d}/user_key\n\n"
        f"Host peer-down\n{common}  Port {closed}\n  IdentityFile {d}/user_key\n\n"
        f"Host peer-stranger\n{common}  Port {port}\n  IdentityFile {d}/stranger_key\n")
    # The peer's sparktui: its own config (a short telemetry window keeps this fast) and folders.
    peer_home = d / "peer"
    (peer_home / "xdg" / "sparktui").mkdir(parents=True)
    (peer_home / "xdg" / "sparktui" / "config.toml").write_text("[telemetry]\ncheck_window_s = 0.2\n")
    (peer_home / "project").mkdir()
    yield d, peer_home
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def _peer_command(peer_home: Path) -> str:
    """The real sparktui, run by the peer's shell the way a user would wrap it."""
    env = " ".join(f"{k}={peer_home / v}" for k, v in
                   (("XDG_CONFIG_HOME", "xdg"), ("XDG_STATE_HOME", "state"), ("XDG_CACHE_HOME", "cache")))
    return f"cd {peer_home / 'project'} && {env} {sys.executable} -m sparktui"


def _spec(sshd, host: str, command: str | None = None, **kw) -> PeerSpec:
    d, peer_home = sshd
    return PeerSpec(host=host, command=command or _peer_command(peer_home), ssh_config=str(d / "ssh_config"),
                    connect_timeout_s=5, **kw)


@pytest.fixture(scope="module")
def peer_ok(sshd):
    return fetch_peer(_spec(sshd, "peer-ok"), Config())


def test_reachable_peer_answers_with_a_snapshot_judged_here(peer_ok):
    assert peer_ok.state is PeerState.OK, peer_ok.reason
    assert peer_ok.reason is None
    assert peer_ok.host_facts["hostname"] == socket.gethostname()
    assert peer_ok.readings.data("host")["hostname"] == socket.gethostname()
    assert peer_ok.readings.data("target")["python"]["executable"] == sys.executable
    assert [v.id for v in peer_ok.verdicts] == [f"G{i}" for i in range(1, 15)]
    # the peer's telemetry reading is its own short window, judged by this sparktui's G4 judge
    assert peer_ok.readings.data("telemetry")["requested_window_s"] == 0.2
    assert peer_ok.sparktui_version


def test_unreachable_peer_says_connection_refused(sshd):
    t0 = time.monotonic()
    r = fetch_peer(_spec(sshd, "peer-down"), Config())
    assert r.state is PeerState.UNREACHABLE
    assert "connection refused" in r.reason.lower()
    assert r.readings is None and r.verdicts == []
    assert time.monotonic() - t0 < 5


def test_peer_that_drops_packets_times_out_at_the_connect_timeout(tmp_path):
    """A peer switched off or behind a dropping firewall answers nothing (unlike a refused port).
    A listener whose accept queue is full makes the kernel drop further SYNs: ssh's ConnectTimeout
    is what ends the wait, and the reason says so."""
    if shutil.which("ssh") is None:
        pytest.skip("the ssh client is not installed")
    with socket.socket() as dark:
        dark.bind(("127.0.0.1", 0))
        dark.listen(0)
        port = dark.getsockname()[1]
        fillers = []
        for _ in range(3):  # fill the accept queue; nothing is ever accepted
            c = socket.socket()
            c.setblocking(False)
            c.connect_ex(("127.0.0.1", port))
            fillers.append(c)
        time.sleep(0.1)
        (tmp_path / "ssh_config").write_text(f"Host peer-dark\n  HostName 127.0.0.1\n  Port {port}\n")
        t0 = time.monotonic()
        r = fetch_peer(PeerSpec(host="peer-dark", command="true", ssh_config=str(tmp_path / "ssh_config"),
                                connect_timeout_s=1), Config())
        took = time.monotonic() - t0
        for c in fillers:
            c.close()
    assert r.state is PeerState.UNREACHABLE
    assert r.reason.startswith("connection timed out after 1 s") and "Connection timed out" in r.reason
    assert 0.9 < took < 4


def test_peer_that_refuses_the_key(sshd):
    r = fetch_peer(_spec(sshd, "peer-stranger"), Config())
    assert r.state is PeerState.REFUSED
    assert "Permission denied" in r.reason and "BatchMode" in r.reason


def test_peer_without_sparktui(sshd):
    r = fetch_peer(_spec(sshd, "peer-ok", command="sparktui-not-installed-here"), Config())
    assert r.state is PeerState.NO_SPARKTUI
    assert r.returncode == 127
    assert "sparktui is not installed on the peer (or not on PATH for non-interactive shells)" in r.reason
    assert "--peer-command" in r.reason


def test_peer_printing_garbage(sshd):
    r = fetch_peer(_spec(sshd, "peer-ok", command="echo 'Welcome!'; echo '{not json'; true"), Config())
    assert r.state is PeerState.BAD_OUTPUT
    assert "not JSON" in r.reason and "{not json" in r.reason


def test_banner_before_the_snapshot_is_skipped_and_noted(sshd, peer_ok, tmp_path):
    snap = tmp_path / "peer.json"
    write_snapshot(snap, peer_ok.readings, peer_ok.host_facts, "0.1.0")
    r = fetch_peer(_spec(sshd, "peer-ok", command=f"echo 'Welcome to spark-2'; cat {snap}; true"), Config())
    assert r.state is PeerState.OK, r.reason
    assert any("before the snapshot" in n for n in r.notes)


def test_slow_peer_is_killed_at_the_total_timeout(sshd):
    t0 = time.monotonic()
    r = fetch_peer(_spec(sshd, "peer-ok", command="sleep 30; true", timeout_s=1.0), Config())
    assert r.state is PeerState.TIMEOUT
    assert "within 1 s" in r.reason
    assert time.monotonic() - t0 < 5


def test_peers_command_end_to_end(sshd, peer_ok, tmp_path):
    """`sparktui peers` with one good and one unreachable peer: the table still comes, the exit
    status says the comparison could not be completed (3), nothing is hidden."""
    from sparktui.cli.main import main

    d, peer_home = sshd
    local = tmp_path / "local.json"
    write_snapshot(local, peer_ok.readings, peer_ok.host_facts, "0.1.0")
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["peers", "--json", "--snapshot", str(local), "--ssh-config", str(d / "ssh_config"),
                     "--peer-command", _peer_command(peer_home), "--peer", "peer-ok", "--peer", "peer-down"])
    doc = json.loads(out.getvalue())
    assert code == 3
    assert [p["state"] for p in doc["peers"]] == ["ok", "unreachable"]
    rows = {r["key"]: r for r in doc["comparison"]["rows"]}
    # same interpreter on both ends of the ssh: Python is seen on two, unknown for the unreachable one
    assert [v["value"] for v in rows["python"]["values"]][:2] == [sys.version.split()[0]] * 2
    assert rows["python"]["values"][2]["value"] is None and "connection refused" in rows["python"]["values"][2]["why"].lower()
    assert rows["torch"]["match"] is None


def test_preflight_blocks_on_a_stack_mismatch_with_a_peer(sshd, peer_ok, tmp_path, capsys):
    """This machine has transformers, the peer does not: DDP would build different models."""
    from sparktui.cli.main import main
    from sparktui.core.readings import Reading, Readings

    d, peer_home = sshd
    readings = Readings(dict(peer_ok.readings))  # a copy: the fixture is shared
    t = dict(readings.data("target"))
    t["packages"] = {**t["packages"], "transformers": "4.57.1"}
    readings.add(Reading("target", t, source="test"))
    local = tmp_path / "local.json"
    write_snapshot(local, readings, peer_ok.host_facts, "0.1.0")
    code = main(["preflight", "G3", "--snapshot", str(local), "--ssh-config", str(d / "ssh_config"),
                 "--peer-command", _peer_command(peer_home), "--peer", "peer-ok"])
    out = capsys.readouterr().out
    assert code == 2
    assert "peer ✘ fail   transformers differs" in out and "4.57.1" in out and "not installed" in out
    assert out.strip().splitlines()[-1].startswith("preflight: FAILED: peers differ")
    assert out.strip().endswith("details: sparktui peers --differences")  # not a bare `check -v`


def test_preflight_blocks_when_a_named_peer_cannot_be_reached(sshd, peer_ok, tmp_path, capsys):
    """`preflight --peer spark-2 && torchrun --nnodes 2 ...`: with spark-2 down the job would hang
    at rendezvous, so an unreachable peer blocks even without --strict; options given before the
    subcommand count as after it."""
    from sparktui.cli.main import main

    d, _ = sshd
    local = tmp_path / "local.json"
    write_snapshot(local, peer_ok.readings, peer_ok.host_facts, "0.1.0")
    code = main(["--ssh-config", str(d / "ssh_config"), "--peer", "peer-down", "preflight", "G3", "--snapshot", str(local)])
    out = capsys.readouterr().out
    assert code == 2
    assert "peer peer-down:" in out and "connection refused" in out.lower()
    assert out.strip().splitlines()[-1].startswith("preflight: FAILED: peer peer-down unreachable")


def test_report_with_peers_has_the_comparison_and_redacts_peer_names_and_addresses(sshd, peer_ok, tmp_path, capsys):
    from sparktui.cli.main import main

    d, peer_home = sshd
    local = tmp_path / "local.json"
    write_snapshot(local, peer_ok.readings, peer_ok.host_facts, "0.1.0")
    argv = ["report", "G3", "--snapshot", str(local), "--ssh-config", str(d / "ssh_config"),
            "--peer-command", _peer_command(peer_home), "--peer", "peer-ok", "--peer", "peer-down"]
    assert main(argv) == 0
    plain = capsys.readouterr().out
    peers = plain.split("## Peers", 1)[1]
    assert "peer-ok" in peers and "peer-down" in peers and "NVIDIA driver" in peers and "torch" in peers
    assert "connect to host 127.0.0.1" in plain or "connection refused" in plain.lower()
    assert main(argv + ["--redact"]) == 0
    red = capsys.readouterr().out
    assert "## Peers" in red and "peer-ok" not in red and "peer-down" not in red
    assert "connect to host 127.0.0.1" not in red  # ssh's words name the real address


def test_no_peers_is_a_usage_error(capsys):
    from sparktui.cli.main import main

    assert main(["peers"]) == 64
    assert "no peers" in capsys.readouterr().err


def test_option_looking_host_is_refused(capsys):
    from sparktui.cli.main import main

    assert main(["peers", "--peer", "-oProxyCommand=touch /tmp/x"]) == 64
    assert "starts with '-'" in capsys.readouterr().err


# -- parsing and comparison without ssh ---------------------------------------------------------

def test_parse_rejects_other_json_and_schemas():
    with pytest.raises(PeerOutputError, match="printed nothing"):
        parse_snapshot_output(b"  \n")
    with pytest.raises(PeerOutputError, match="kind"):
        parse_snapshot_output(b'{"checks": []}')
    with pytest.raises(PeerOutputError, match="schema 7"):
        parse_snapshot_output(b'{"kind": "sparktui-snapshot", "schema": 7, "readings": {}}')


def _machine(name, *, driver="580.95.05", torch="2.9.0+cu130", cuda="13.0", nccl="2.27.7", transformers="4.57.1",
             peft=None, image="NGC PyTorch 25.11"):
    packages = {"torch": torch.split("+")[0], "transformers": transformers, "peft": peft, "nvidia-nccl-cu13": None}
    r = readings_of(
        host={"hostname": name, "os_release": "Ubuntu 24.04.3 LTS", "kernel": "6.11.0-1016-nvidia", "machine": "aarch64"},
        nvml={"driver_version": {"value": driver}, "cuda_driver_version": {"value": "13.0"},
              "devices": [{"index": 0, "name": {"value": "NVIDIA GB10"}, "compute_capability": {"value": [12, 1]}}]},
        target={"python": {"version": "3.12.3"}, "packages": packages, "stages": {},
                "torch": {"version": torch, "cuda": cuda, "cudnn": 91300, "nccl": nccl}},
        container={"in_container": True, "runtime": "docker", "image": None,
                   "ngc": {"product": "PyTorch", "release": image.split()[-1], "build_id": None}},
    )
    return Machine(name, r, sparktui_version="0.1.0")


def test_identical_machines_match():
    cmp = compare([_machine("spark-1"), _machine("spark-2")])
    assert cmp.status is Status.OK
    assert all(r.match for r in cmp.rows if r.required)
    assert cmp.row("nccl").cells[0].value == "2.27.7"
    assert cmp.row("gpu").cells[0].value == "NVIDIA GB10 (sm_121)"


def test_required_differences_fail_and_name_the_rows():
    cmp = compare([_machine("spark-1"), _machine("spark-2", driver="580.82.09", nccl="2.26.2", peft="0.17.1")])
    assert cmp.status is Status.FAIL
    assert {r.key for r in cmp.differing(required_only=True)} == {"driver", "nccl", "pkg:peft"}
    peft = cmp.row("pkg:peft")
    assert [c.value for c in peft.cells] == ["not installed", "0.17.1"]


def test_cuda_build_difference_is_caught_even_with_same_torch_release():
    cmp = compare([_machine("a"), _machine("b", torch="2.9.0+cu128", cuda="12.8")])
    assert {r.key for r in cmp.differing(required_only=True)} >= {"torch", "torch_cuda"}


def test_unreachable_peer_makes_rows_unknown_not_matching():
    down = Machine("spark-2", None, reason="unreachable: connection refused")
    cmp = compare([_machine("spark-1"), down])
    assert cmp.status is Status.UNKNOWN
    assert cmp.row("driver").match is None
    assert "connection refused" in cmp.row("driver").cells[1].why


def test_advisory_difference_warns_only():
    b = _machine("b")
    t = dict(b.readings.data("target"))
    t["python"] = {"version": "3.12.4"}
    b.readings.add(Reading("target", t, source="test"))
    cmp = compare([_machine("a"), b])
    assert cmp.row("python").match is False and not cmp.row("python").required
    assert cmp.status is Status.WARN


def test_two_seen_container_images_must_match_a_bare_host_beside_one_is_advisory():
    """The issue's list of what must match includes the container image: two images seen on two
    nodes are two stacks. Beside a bare host (no image to compare) the rows decide."""
    cmp = compare([_machine("a"), _machine("b", image="NGC PyTorch 25.09")])
    row = cmp.row("container")
    assert row.match is False and row.required and cmp.status is Status.FAIL
    bare = _machine("c")
    bare.readings.add(Reading("container", {"in_container": False, "runtime": None, "image": None, "ngc": None},
                              source="test"))
    cmp = compare([_machine("a"), bare])
    row = cmp.row("container")
    assert row.match is None and not row.required and cmp.status is not Status.FAIL


def test_nccl_falls_back_to_the_pip_wheel_and_missing_nvml_is_unknown():
    a = _machine("a")
    r = readings_of(host={"hostname": "b"}, nvml=None,
                    target={"python": {"version": "3.12.3"}, "stages": {}, "torch": {"version": "2.9.0+cu130", "cuda": "13.0",
                            "nccl_error": "no _nccl_version"}, "packages": {"torch": "2.9.0", "nvidia-nccl-cu13": "2.27.7"}})
    cmp = compare([a, Machine("b", r)])
    assert cmp.row("nccl").cells[1].value == "2.27.7 (nvidia-nccl-cu13)"
    assert cmp.row("driver").match is None and "nvml" in cmp.row("driver").cells[1].why


def test_match_of():
    assert match_of([Cell("1"), Cell("1")]) is True
    assert match_of([Cell("1"), Cell(None, "x")]) is None
    assert match_of([Cell("1"), Cell("2"), Cell(None, "x")]) is False


def test_local_machine_carries_this_version():
    from sparktui import __version__

    m = local_machine(readings_of(host={"hostname": "here"}))
    assert m.name == "here" and m.local and m.sparktui_version == __version__


def test_cpu_only_torch_is_a_value_not_an_unknown():
    """What a CPU wheel of torch 2.13 reports (seen with the real wheel): cuda None, no _nccl_version."""
    cpu = {"version": "2.13.0+cpu", "cuda": None, "hip": None, "cudnn": None,
           "nccl_error": "module 'torch._C' has no attribute '_nccl_version'"}
    a = _machine("a")
    b = Machine("b", readings_of(target={"python": {"version": "3.12.3"}, "stages": {}, "torch": cpu,
                                         "packages": {"torch": "2.13.0+cpu"}}))
    cmp = compare([a, b])
    assert cmp.row("torch_cuda").cells[1].value == "none (CPU-only torch)"
    assert cmp.row("nccl").cells[1].value == "none (CPU-only torch)"
    assert cmp.row("torch_cuda").match is False and cmp.status is Status.FAIL


def test_runaway_output_is_cut_and_the_whole_group_killed():
    import psutil

    from sparktui.fleet.peers import classify, run_bounded

    t0 = time.monotonic()
    run = run_bounded(["yes"], timeout_s=5, max_bytes=100_000)
    assert run.overflow and len(run.stdout) <= 100_001 and time.monotonic() - t0 < 2
    state, reason = classify(run, PeerSpec("h", max_bytes=100_000))
    assert state is PeerState.BAD_OUTPUT and "more than" in reason
    # a grandchild (the remote side's stand-in) dies with the group at the timeout
    run = run_bounded(["sh", "-c", "sleep 30 & echo $!; wait"], timeout_s=0.5)
    assert run.timed_out
    grandchild = int(run.stdout.split()[0])
    deadline = time.monotonic() + 2
    while psutil.pid_exists(grandchild) and psutil.Process(grandchild).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, "grandchild survived the timeout"
        time.sleep(0.02)


def test_table_names_differences_and_unreachable_peers():
    from sparktui.fleet.compare import checklists, format_comparison

    machines = [_machine("spark-1"), _machine("spark-2", driver="580.82.09"),
                Machine("spark-3", None, reason="connection refused: nothing listens for SSH there")]
    text = format_comparison(compare(machines), checklists(machines, ["G1"]))
    driver = next(line for line in text.splitlines() if line.startswith("NVIDIA driver"))
    assert "580.95.05" in driver and "580.82.09" in driver and driver.endswith("✘ DIFFERS")
    assert "spark-3: ✘ connection refused" in text
    assert "MUST MATCH but differ: NVIDIA driver" in text
    assert "G1 CUDA 12/13 ABI mismatch" in text


@pytest.mark.parametrize("pkg", ["megatron-core", "nemo-toolkit", "torchtitan", "liger-kernel"])
def test_frameworks_every_rank_imports_must_match(pkg):
    a, b = _machine("a"), _machine("b")
    for m, version in ((a, "0.14.0"), (b, "0.15.0")):
        t = dict(m.readings.data("target"))
        t["packages"] = {**t["packages"], pkg: version}
        m.readings.add(Reading("target", t, source="test"))
    row = compare([a, b]).row(f"pkg:{pkg}")
    assert row.required and row.match is False


@pytest.mark.parametrize("host, ok", [
    ("spark-2", True), ("alice@spark-2", True), ("10.0.0.2", True), ("[::1]", True), ("spark-2.lab.example", True),
    ("user@", False), ("@host", False), ("host:22", False), ("127.0.0.1;id", False), ("a b", False), ("-oX=y", False),
])
def test_peer_names_are_host_names_user_at_host_or_addresses(host, ok):
    from sparktui.fleet.peers import validate_host

    assert (validate_host(host) is None) is ok, validate_host(host)
