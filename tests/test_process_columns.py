"""The process table's columns for an 8-hour companion (issue 24, What to build 7): CPU % between two
scans of real processes (n/a on the first, never 0), GPU utilisation from NVML's per-process samples
(n/a where NVML gives none), the container that owns a process from its /proc/PID/cgroup (parsed on
real lines from public sources), and what the all-processes view costs (nothing while it is off)."""

from __future__ import annotations

import json
import os
import sys
import time

import pytest

from sparktui.probes import processes
from sparktui.probes.nvml import NvmlSession
from sparktui.probes.processes import CpuMeter, ContainerOf, container_name, parse_cgroup
from sparktui.testing import fake_nvml
from tests.real_processes import orphan

GIB = 1024 ** 3
BUSY = "import pathlib, sys\npathlib.Path(sys.argv[1]).write_text('ready')\nwhile True:\n    pass\n"


@pytest.fixture(autouse=True)
def scans_describe_the_classified_only():
    processes.want_all(False)
    yield
    processes.want_all(False)


def other_row(data: dict, pid: int) -> dict:
    return next(r for r in data["others"] if r["pid"] == pid)


# -- CPU % -----------------------------------------------------------------------------------------

def test_cpu_percent_of_real_processes_is_na_on_the_first_scan_then_measured(tmp_path):
    ready = tmp_path / "ready"
    with orphan([sys.executable, "-c", BUSY, str(ready)], ready=ready) as busy, orphan(["sleep", "79"]) as idle:
        first = processes.scan(None, everything=True)
        assert other_row(first, busy)["cpu_pct"] is None and other_row(first, idle)["cpu_pct"] is None  # n/a, never 0
        time.sleep(1.0)
        second = processes.scan(None, everything=True)
        # two cores shared with other work: a spinning loop still gets a good part of one
        assert other_row(second, busy)["cpu_pct"] > 20, other_row(second, busy)
        assert 0 <= other_row(second, idle)["cpu_pct"] < 5, other_row(second, idle)
        assert other_row(second, busy)["container"] is None  # this test's processes are on the host (or this box's own cgroup)


def test_cpu_meter_starts_afresh_for_a_reused_pid_and_forgets_gone_ones():
    m = CpuMeter()
    assert m.percent(42, 1000.0, 5.0, 10.0) is None  # first look
    assert m.percent(42, 1000.0, 6.0, 12.0) == 50.0  # one second of CPU in two of wall time
    assert m.percent(42, 2000.0, 0.1, 14.0) is None  # another process holds pid 42 now
    assert m.percent(42, 2000.0, None, 16.0) is None  # unreadable: n/a, and forgotten
    assert m.percent(42, 2000.0, 0.2, 18.0) is None
    m.forget_except([])
    assert m.percent(42, 2000.0, 0.3, 20.0) is None


def test_the_all_view_costs_only_while_on(monkeypatch):
    described = []
    real = processes.describe

    def counting(pid, base, now, skipped):
        described.append(pid)
        return real(pid, base, now, skipped)

    monkeypatch.setattr(processes, "describe", counting)
    with orphan(["sleep", "81"]) as pid:
        off = processes.scan(None)
        assert "others" not in off and off["all"] is False and pid not in described
        n_off = len(described)
        processes.want_all(True)  # what the dashboard's 'a' asks (live.list_every_process)
        on = processes.scan(None)
        assert on["all"] is True and any(r["pid"] == pid for r in on["others"]) and len(described) > n_off
        assert on["mem_total_bytes"] > GIB
        read_by_checks = processes.read(None)  # G6's probe: the classified rows only, whatever the dashboard shows
        assert "others" not in read_by_checks.data


# -- GPU utilisation from NVML ---------------------------------------------------------------------

def scan_with(fake) -> dict:
    with fake_nvml.installed(fake):
        s = NvmlSession()
        try:
            return processes.scan(s, exclude_own=False)
        finally:
            s.close()


def test_gpu_utilisation_per_process_where_nvml_samples_it_and_na_where_not():
    fake = fake_nvml.h200()
    fake.set_processes([(999_001, 40 * GIB), (999_002, 2 * GIB), (999_003, GIB)])
    fake.set_process_util([(999_001, 87), (999_003, 0xFFFFFFFF)])  # a value past 100 is no reading
    data = scan_with(fake)
    # (the real training or server processes other tests run beside this one are rows too: not NVML's)
    util = {r["pid"]: r["gpu_util"] for r in data["rows"] if r["pid"] in (999_001, 999_002, 999_003)}
    assert util == {999_001: 87, 999_002: None, 999_003: None}  # no sample: n/a, never 0
    assert data["gpu_util_error"] is None


def test_no_samples_or_gb10_not_supported_is_na_with_the_reason():
    idle = fake_nvml.h200()
    idle.set_processes([(999_004, GIB)])  # listed, but the buffer holds no sample: NOT_FOUND
    data = scan_with(idle)
    assert data["rows"][0]["gpu_util"] is None and "NOT_FOUND" in data["gpu_util_error"]
    spark = fake_nvml.gb10()
    spark.set_processes([(999_005, 80 * GIB)])
    spark.set_process_util([(999_005, 95)])  # even with samples: GB10's profile refuses (not on record)
    data = scan_with(spark)
    assert data["rows"][0]["gpu_util"] is None and "NOT_SUPPORTED" in data["gpu_util_error"]
    assert data["rows"][0]["gpu_mem_bytes"] == 80 * GIB  # the memory column is unaffected


# -- the container of a process: real /proc/PID/cgroup lines ------------------------------------------

# Each line below is copied from a public test suite that collected it from a real host:
KEPLER = ("https://github.com/sustainable-computing-io/kepler/blob/32d60d59e6e56d7ccb852d5d6752deaf6f85dd66/"
          "internal/resource/container_test.go")
DD_TRACE = ("https://github.com/open-telemetry/opentelemetry-java-instrumentation/blob/24632212e5de1198e8052a37e9e3c15a30bbb4c4/"
            "dd-trace-ot/src/test/groovy/datadog/opentracing/ContainerInfoTest.groovy")
NEUVECTOR = "https://github.com/neuvector/neuvector/blob/0553cd335347dd08ef4eda86f7d66bd60d46d933/share/system/cgroup_test.go"

CGROUP_LINES = [
    # docker, cgroup v1, cgroupfs driver (DD_TRACE "Docker examples")
    ("13:name=systemd:/docker/3726184226f5d3147c25fdeab5b60097e378e8a720503a5e19ecfdf29f869860",
     "docker", "3726184226f5d3147c25fdeab5b60097e378e8a720503a5e19ecfdf29f869860", DD_TRACE),
    # docker, systemd driver (KEPLER "valid path with cgroup 1"; NEUVECTOR TestDockerIDCentOS has the same shape)
    ("13:hugetlb:/system.slice/docker-2fa3e04b676df750842faf017052dd37ea0cc5bc7259a3487a1718c7fe100c94.scope",
     "docker", "2fa3e04b676df750842faf017052dd37ea0cc5bc7259a3487a1718c7fe100c94", KEPLER),
    ("8:memory:/system.slice/docker-9ec39b91f3d70e1beff50a308f77067065ea6be0d91a3378375056cd4422cf3d.scope",
     "docker", "9ec39b91f3d70e1beff50a308f77067065ea6be0d91a3378375056cd4422cf3d", NEUVECTOR),
    # Kubernetes, cgroup v1, cgroupfs driver (DD_TRACE "Kubernates examples"; KEPLER "cgroup 11 and blkio")
    ("11:perf_event:/kubepods/besteffort/pod3d274242-8ee0-11e9-a8a6-1e68d864ef1a/"
     "3e74d3fd9db4c9dd921ae05c2502fb984d0cde1b36e581b13f79c639da4518a1",
     "kubepods", "3e74d3fd9db4c9dd921ae05c2502fb984d0cde1b36e581b13f79c639da4518a1", DD_TRACE),
    ("11:blkio:/kubepods/burstable/podf6adb0af-0855-4bab-b25b-c853f18d0ce2/"
     "35b97177dada20362ab90d90ac63cd54e8a41cf87bea34f270631b6da17f4a93",
     "kubepods", "35b97177dada20362ab90d90ac63cd54e8a41cf87bea34f270631b6da17f4a93", KEPLER),
    # containerd's systemd driver on cgroup v1 (KEPLER "cgroup 13 and memory")
    ("13:memory:/system.slice/containerd.service/kubepods-besteffort-pod0043435f_1854_4327_b76b_730f681a781d.slice:"
     "cri-containerd:01fd96f7ad292b02a8317cde4ecb8c7ef3cc06ffdd113f13410e0837eb2b2a20",
     "containerd", "01fd96f7ad292b02a8317cde4ecb8c7ef3cc06ffdd113f13410e0837eb2b2a20", KEPLER),
    # containerd under kind, cgroup v2 (KEPLER "kind containerd")
    ("0::/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/kubelet-kubepods-burstable-pod3cae2e45_"
     "052c_4b11_80d3_4d7b2d2d3464.slice/cri-containerd-2b180104511194aab36fd295d3e217439f3ddb5bc88277f37b4952abee85c40e.scope",
     "containerd", "2b180104511194aab36fd295d3e217439f3ddb5bc88277f37b4952abee85c40e", KEPLER),
    # a kind node (docker) with a pod inside: the innermost container owns the process (KEPLER, nested)
    ("0::/system.slice/docker-fd9d0ea06257a9780827cbc7fd92e3812a54fca26d63e191b73610d5d48b9cbd.scope/kubelet.slice/"
     "kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-podeab5a334_93fe_48a8_b139_"
     "9e8079c1f163.slice/cri-containerd-99f3a16ea25b7724cb56a4f0c0df1113ad9474fbf5545bead97fd5c7f61c13f4.scope",
     "containerd", "99f3a16ea25b7724cb56a4f0c0df1113ad9474fbf5545bead97fd5c7f61c13f4", KEPLER),
    # CRI-O, cgroup v2 (KEPLER "valid path with cgroup 2")
    ("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod2c9f8a79_5391_454b_88cb_86190881cb96.slice/"
     "crio-a09343ca97901516c25036e2b954421254f8c68b384b536064e8999f0c4ed18d.scope",
     "cri-o", "a09343ca97901516c25036e2b954421254f8c68b384b536064e8999f0c4ed18d", KEPLER),
    # podman rootless and rootful, cgroup v2 (KEPLER)
    ("0::/user.slice/user-1000.slice/user@1000.service/user.slice/"
     "libpod-3f05ee050f82c0145f1d88c94269c39dff0f07dbf8bba20aafd54b3a75dcaecc.scope/container",
     "podman", "3f05ee050f82c0145f1d88c94269c39dff0f07dbf8bba20aafd54b3a75dcaecc", KEPLER),
    ("0::/machine.slice/libpod-06dc5f321aad8726aa26559f16ec203bc099245bc44894b14a89fc02b022d1d5.scope/container",
     "podman", "06dc5f321aad8726aa26559f16ec203bc099245bc44894b14a89fc02b022d1d5", KEPLER),
    # podman under a quadlet unit (KEPLER "podman quadlet")
    ("0::/system.slice/kepler.service/libpod-payload-8e363eb2287da4ccc9f52ffc5de11252ac5fe707e3ddb917a3c0bdf9bb64165b",
     "podman", "8e363eb2287da4ccc9f52ffc5de11252ac5fe707e3ddb917a3c0bdf9bb64165b", KEPLER),
]

HOST_LINES = [
    "0::/system.slice/ssh.service",  # KEPLER "Not a container"
    "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome.scope",
    "0::/init.scope",
    "0::/",  # inside a container with its own cgroup namespace: nothing to name
    # podman's monitor runs on the host beside the container (a transcript of /proc/PID/cgroup of conmon)
    "0::/machine.slice/libpod-conmon-24fce7291bc6d7f8a5965a5920740b0df25dda9bb4e84ffb889d8ea2927acec5.scope",
    "4:memory:/process_api/bd5233060d69cb79deb14131363a8ea1",  # a sandbox's own cgroup: not a known runtime
]


@pytest.mark.parametrize("line, runtime, cid, source", CGROUP_LINES, ids=[c[1] + str(i) for i, c in enumerate(CGROUP_LINES)])
def test_the_container_of_real_cgroup_lines(line, runtime, cid, source):
    assert source.startswith("https://github.com/")
    assert parse_cgroup(line + "\n") == {"runtime": runtime, "id": cid}


def test_a_v1_file_with_many_hierarchies_and_host_lines():
    v1 = "\n".join(f"{i}:{c}:/docker/3726184226f5d3147c25fdeab5b60097e378e8a720503a5e19ecfdf29f869860"
                   for i, c in enumerate(("cpuset", "cpu", "cpuacct", "blkio", "memory"), 1))
    assert parse_cgroup("0::/\n" + v1)["id"].startswith("3726184226f5")
    for line in HOST_LINES:
        assert parse_cgroup(line + "\n") is None, line
    assert parse_cgroup("") is None and parse_cgroup("garbage\n::\n") is None


def test_a_hostile_cgroup_line_is_parsed_in_linear_time():
    line = "0::/" + "docker-" * 20_000 + "/" + "a" * 100_000 + "/" + "/".join(["x"] * 50_000)
    t = time.perf_counter()
    assert parse_cgroup(line) is None
    assert time.perf_counter() - t < 1.0


def test_container_name_from_dockers_store_else_none(tmp_path, monkeypatch):
    cid = "2fa3e04b676df750842faf017052dd37ea0cc5bc7259a3487a1718c7fe100c94"
    (tmp_path / cid).mkdir()
    # the shape of /var/lib/docker/containers/ID/config.v2.json (moby's container.Container: "Name": "/NAME")
    (tmp_path / cid / "config.v2.json").write_text(json.dumps({"ID": cid, "Name": "/vllm-llama"}))
    monkeypatch.setattr(processes, "DOCKER_ROOT", str(tmp_path))
    monkeypatch.setattr(processes, "_NAMES", {})
    assert container_name("docker", cid) == "vllm-llama"
    assert container_name("docker", "ab" * 32) is None  # not readable: the short id is shown
    assert container_name("kubepods", "cd" * 32) is None  # Kubernetes keeps no name where sparktui reads


def test_container_of_reads_each_process_once(tmp_path):
    proc = tmp_path / "proc"
    (proc / "7").mkdir(parents=True)
    (proc / "7" / "cgroup").write_text(CGROUP_LINES[6][0] + "\n")
    of = ContainerOf(str(proc))
    got = of.of(7, 100.0)
    assert got["runtime"] == "containerd" and got["id"].startswith("2b1801045111") and got["name"] is None
    (proc / "7" / "cgroup").write_text("0::/init.scope\n")
    assert of.of(7, 100.0)["runtime"] == "containerd"  # the same process: read once
    assert of.of(7, 200.0) is None  # another process under the pid: read again
    assert of.of(8, 1.0) is None  # gone: no row, no error


def test_mem_total_from_meminfo(tmp_path):
    (tmp_path / "meminfo").write_text("MemTotal:       127535104 kB\nMemFree: 1 kB\n")
    assert processes.mem_total(str(tmp_path)) == 127535104 * 1024
    assert processes.mem_total(str(tmp_path / "nowhere")) is None
    assert os.path.exists("/proc/meminfo") and processes.mem_total() > 0


def test_every_process_is_shown_but_not_recorded(tmp_path):
    """The all-processes view is a view: the kept session and --record keep the classified rows only."""
    from sparktui.core.config import Config
    from sparktui.live.sources import LiveSource

    shown = []
    rec = tmp_path / "rec.jsonl"
    with fake_nvml.installed(fake_nvml.gb10()):
        src = LiveSource(Config(), lambda s: None, shown.append, record_path=str(rec), keep_session=False)
        src.static = src.sampler.static()
        src._open_writers()
        src.sampler.on_processes({"rows": [{"pid": 7}], "others": [{"pid": 8}], "all": True, "t": 1.0})
        src.stop()
    assert shown[0]["others"] == [{"pid": 8}]
    kept = [json.loads(line) for line in rec.read_text().splitlines() if '"processes"' in line]
    assert kept and all("others" not in json.dumps(k) for k in kept) and '"pid": 7' in rec.read_text().replace('"pid":7', '"pid": 7')
