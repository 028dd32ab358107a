"""G9 (issue 14): when G9 advises the NGC container, can one run here? The container probe's
``host_runtime`` on fake / trees (etc/docker/daemon.json, etc/cdi) and a fake PATH holding real
executables that print what docker/podman print; the judge's words, evidence and set-up block."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.gotchas import g09_container_drift as g9
from sparktui.probes import container
from tests.conftest import readings_of

DOCKER_VERSION = "Docker version 28.3.3, build 980b856"
PODMAN_VERSION = "podman version 4.9.3"
# what `sudo nvidia-ctk runtime configure --runtime=docker` writes
DAEMON_NVIDIA = """{
    "runtimes": {
        "nvidia": {
            "args": [],
            "path": "nvidia-container-runtime"
        }
    }
}
"""
DAEMON_DEFAULT_NVIDIA = """{
    "default-runtime": "nvidia",
    "runtimes": {"nvidia": {"path": "/usr/bin/nvidia-container-runtime", "runtimeArgs": []}}
}
"""
DAEMON_PLAIN = '{\n  "log-driver": "json-file",\n  "log-opts": {"max-size": "10m"}\n}\n'
CDI_SPEC = """---
cdiVersion: 0.5.0
kind: nvidia.com/gpu
devices:
- name: "0"
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
"""


def exe(folder: Path, name: str, out: str, rc: int = 0) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_text(f"#!/bin/sh\necho '{out}'\nexit {rc}\n")
    p.chmod(p.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def host(tmp_path: Path, files: dict[str, str] | None = None, tools: dict[str, str] | None = None,
         version=container.engine_version) -> dict:
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    for rel, text in (files or {}).items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    for name, out in (tools or {}).items():
        exe(bindir, name, out)
    return container.host_runtime(root, path_env=str(bindir), version=version)


DOCKER = {"docker": DOCKER_VERSION}
CTK = {"nvidia-ctk": "NVIDIA Container Toolkit CLI version 1.17.8"}


# ------------------------------------------------------------------------- the probe


def test_docker_on_path_with_its_version(tmp_path):
    hr = host(tmp_path, tools=DOCKER)
    d = {e["name"]: e for e in hr["engines"]}
    assert d["docker"]["path"].endswith("/bin/docker") and d["docker"]["version"] == DOCKER_VERSION
    assert d["podman"] == {"name": "podman", "path": None, "version": None, "error": None}
    assert hr["tools"]["nvidia-ctk"] is None
    assert hr["daemon_json"]["state"] == "absent" and hr["daemon_json"]["nvidia_runtime"] is False
    assert hr["cdi"] == {"specs": [], "errors": []}


def test_engine_whose_version_fails_is_a_reason(tmp_path):
    bindir = tmp_path / "bin"
    exe(bindir, "docker", "Cannot connect", rc=1)
    hr = container.host_runtime(tmp_path, path_env=str(bindir))
    e = hr["engines"][0]
    assert e["path"] and e["version"] is None and "exited 1" in e["error"]


def test_engine_that_hangs_times_out(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    p = bindir / "docker"
    p.write_text("#!/bin/sh\nsleep 5\n")
    p.chmod(0o755)
    ver, err = container.engine_version(str(p), timeout_s=0.2)
    assert ver is None and "did not answer within 0.2 s" in err


def test_a_non_executable_file_is_not_on_path(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "docker").write_text("not a program")
    hr = container.host_runtime(tmp_path, path_env=str(bindir))
    assert hr["engines"][0]["path"] is None


def test_daemon_json_with_the_nvidia_runtime(tmp_path):
    hr = host(tmp_path, {"etc/docker/daemon.json": DAEMON_NVIDIA}, DOCKER)
    assert hr["daemon_json"] == {"path": "/etc/docker/daemon.json", "state": "read", "error": None,
                                 "nvidia_runtime": True, "default_runtime": None}
    hr = host(tmp_path, {"etc/docker/daemon.json": DAEMON_DEFAULT_NVIDIA}, DOCKER)
    assert hr["daemon_json"]["default_runtime"] == "nvidia"


@pytest.mark.parametrize("text, why", [
    ('{"runtimes": {"nvidia": {"path": "nvidia-container-runtime"}', "not JSON"),  # a brace short
    ("runtimes: nvidia\n", "not JSON"),
    ('["nvidia"]', "a JSON list, not an object"),
    ('{"runtimes": "nvidia"}', '"runtimes" is not an object'),
])
def test_malformed_daemon_json_is_malformed_not_a_crash(tmp_path, text, why):
    dj = host(tmp_path, {"etc/docker/daemon.json": text}, DOCKER)["daemon_json"]
    assert dj["state"] == "malformed" and why in dj["error"] and dj["nvidia_runtime"] is None


def test_daemon_json_that_is_a_folder_is_unreadable(tmp_path):
    (tmp_path / "root" / "etc" / "docker" / "daemon.json").mkdir(parents=True)
    dj = host(tmp_path, tools=DOCKER)["daemon_json"]
    assert dj["state"] == "unreadable" and dj["error"] == "a folder, not a file"


def test_cdi_specs_in_etc_and_var_run(tmp_path):
    hr = host(tmp_path, {"etc/cdi/nvidia.yaml": CDI_SPEC, "var/run/cdi/nvidia-container-toolkit.json": "{}",
                         "etc/cdi/other-vendor.yaml": "x"})
    assert hr["cdi"]["specs"] == ["/etc/cdi/nvidia.yaml", "/var/run/cdi/nvidia-container-toolkit.json"]


# ------------------------------------------------------------------------- readiness (pure)


def test_docker_with_nvidia_runtime_is_ready(tmp_path):
    rd = g9.readiness(host(tmp_path, {"etc/docker/daemon.json": DAEMON_NVIDIA}, {**DOCKER, **CTK}))
    assert rd.ready is True and rd.fix == ()
    assert rd.words.startswith(f"docker {DOCKER_VERSION} with the NVIDIA runtime (/etc/docker/daemon.json)")


def test_docker_with_the_hook_only_is_ready(tmp_path):
    rd = g9.readiness(host(tmp_path, tools={**DOCKER, "nvidia-container-runtime-hook": "x"}))
    assert rd.ready is True and "nvidia-container-runtime-hook" in rd.words


def test_docker_without_toolkit_says_what_to_install(tmp_path):
    rd = g9.readiness(host(tmp_path, {"etc/docker/daemon.json": DAEMON_PLAIN}, DOCKER))
    assert rd.ready is False and "not installed" in rd.words
    assert "sudo apt-get install -y nvidia-container-toolkit" in rd.fix
    assert any(line.startswith("sudo nvidia-ctk runtime configure --runtime=docker") for line in rd.fix)
    assert "sudo systemctl restart docker" in rd.fix


def test_docker_with_ctk_but_not_configured_skips_the_install(tmp_path):
    rd = g9.readiness(host(tmp_path, tools={**DOCKER, **CTK}))
    assert rd.ready is False and "not configured" in rd.words
    assert "sudo apt-get install -y nvidia-container-toolkit" not in rd.fix
    assert any(line.startswith("sudo nvidia-ctk runtime configure --runtime=docker") for line in rd.fix)


def test_malformed_daemon_json_is_cannot_tell(tmp_path):
    rd = g9.readiness(host(tmp_path, {"etc/docker/daemon.json": "{oops"}, DOCKER))
    assert rd.ready is None and rd.words.startswith("cannot tell whether docker")
    assert "malformed" in rd.words and "not JSON" in rd.words
    assert any("not JSON" in e.value for e in rd.evidence)


def test_cdi_spec_only_with_podman_is_ready(tmp_path):
    rd = g9.readiness(host(tmp_path, {"etc/cdi/nvidia.yaml": CDI_SPEC}, {"podman": PODMAN_VERSION}))
    assert rd.ready is True and "--device nvidia.com/gpu=all" in rd.words and PODMAN_VERSION in rd.words


def test_cdi_spec_only_with_docker_is_ready_with_the_device_flag(tmp_path):
    rd = g9.readiness(host(tmp_path, {"etc/cdi/nvidia.yaml": CDI_SPEC}, DOCKER))
    assert rd.ready is True and "--device nvidia.com/gpu=all" in rd.words


def test_podman_without_cdi_spec_is_told_to_generate_it(tmp_path):
    rd = g9.readiness(host(tmp_path, tools={"podman": PODMAN_VERSION, **CTK}))
    assert rd.ready is False and "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml" in rd.fix


def test_no_engine_at_all(tmp_path):
    rd = g9.readiness(host(tmp_path))
    assert rd.ready is False and rd.words.startswith("no docker or podman on PATH")
    assert "sudo apt-get install -y docker.io" in rd.fix and "sudo apt-get install -y nvidia-container-toolkit" in rd.fix


def test_unlistable_cdi_folder_makes_podman_cannot_tell(tmp_path):
    hr = host(tmp_path, tools={"podman": PODMAN_VERSION})
    hr["cdi"] = {"specs": [], "errors": ["/etc/cdi: Permission denied"]}
    rd = g9.readiness(hr)
    assert rd.ready is None and "/etc/cdi: Permission denied" in rd.words


@pytest.mark.parametrize("garbage", [{}, {"engines": "docker", "tools": None, "daemon_json": 3, "cdi": []},
                                     {"engines": [None, {"name": "docker"}]}])
def test_garbled_host_runtime_never_crashes(garbage):
    rd = g9.readiness(garbage)
    assert rd.ready in (False, None) and rd.words


# ------------------------------------------------------------------------- in the verdict


def target(packages: dict) -> dict:
    return {"python": {"version": "3.12.3", "implementation": "CPython", "machine": "aarch64", "system": "Linux",
                       "env": {}},
            "packages": packages, "torch": {"version": packages.get("torch"), "cuda": "13.0"},
            "stages": {"packages": {"status": "done"}}, "interpreter": "/usr/bin/python3"}


PINS = {"origin": "file", "image": None, "path": "/home/u/pins.txt", "meta": {}, "skipped": [],
        "pins": [{"name": "transformers", "spec": "==4.57.1", "marker": None, "extras": [], "file": "/home/u/pins.txt",
                  "line": 1}, {"name": "torch", "spec": "==2.9.0+cu130", "marker": None, "extras": [],
                               "file": "/home/u/pins.txt", "line": 2}],
        "shipped_sets": []}
DRIFT = {"torch": "2.9.0+cu130", "transformers": "4.56.0"}
BARE = {"in_container": None, "runtime": None, "name": None, "image": None, "ngc": None, "hints": [],
        "checks": [{"check": "/.dockerenv (Docker marker)", "seen": "absent", "matched": False}]}


def verdict(c: dict | None, packages: dict = DRIFT):
    return g9.judge(readings_of(container=c, target=target(packages), pins=PINS, nvml=None), Config())


def test_drift_on_a_bare_host_without_runtime_gives_the_setup_block_first(tmp_path):
    before = verdict(BARE)
    v = verdict({**BARE, "host_runtime": host(tmp_path, {"etc/docker/daemon.json": DAEMON_PLAIN}, DOCKER)})
    assert v.status is before.status is Status.WARN  # the status never changes for it
    assert v.summary.startswith(before.summary) and "; container here: docker" in v.summary
    assert v.fix.startswith("Set up the container runtime first (docker")
    assert v.fix.index("nvidia-ctk runtime configure") < v.fix.index("nvcr.io/nvidia/pytorch")
    assert v.fix.endswith(before.fix)
    words = next(e.value for e in v.evidence if e.what == "can a GPU container run here")
    assert "no NVIDIA container runtime" in words


def test_drift_with_a_ready_runtime_says_so_and_adds_no_block(tmp_path):
    before = verdict(BARE)
    v = verdict({**BARE, "host_runtime": host(tmp_path, {"etc/docker/daemon.json": DAEMON_NVIDIA}, DOCKER)})
    assert v.status is Status.WARN and v.fix == before.fix
    assert "container here: docker Docker version 28.3.3, build 980b856 with the NVIDIA runtime" in v.summary


def test_malformed_daemon_json_in_the_verdict_is_cannot_tell_not_a_crash(tmp_path):
    v = verdict({**BARE, "host_runtime": host(tmp_path, {"etc/docker/daemon.json": "{"}, DOCKER)})
    assert v.status is Status.WARN and "container here: cannot tell whether docker" in v.summary
    assert v.fix.startswith("Check the container runtime first")


def test_ok_verdict_only_gets_evidence(tmp_path):
    ok = {"torch": "2.9.0+cu130", "transformers": "4.57.1"}
    before = verdict(BARE, ok)
    v = verdict({**BARE, "host_runtime": host(tmp_path, tools=DOCKER)}, ok)
    assert v.status is Status.OK and v.summary == before.summary and not v.fix
    assert any(e.what == "can a GPU container run here" for e in v.evidence)


def test_inside_a_container_the_runtime_is_not_judged(tmp_path):
    inside = {**BARE, "in_container": True, "runtime": "docker", "host_runtime": host(tmp_path)}
    v = verdict(inside)
    assert "container here" not in v.summary
    assert next(e.value for e in v.evidence if e.what == "container runtime here").startswith("not judged")


def test_without_host_runtime_nothing_changes():
    v = verdict(BARE)
    assert not any(e.what.startswith("can a GPU container") for e in v.evidence)


def test_the_real_probe_reads_this_machine_without_crashing():
    hr = container.read(Config()).data["host_runtime"]
    assert [e["name"] for e in hr["engines"]] == ["docker", "podman"]
    assert g9.readiness(hr).words
    assert os.path.isabs(hr["daemon_json"]["path"])
