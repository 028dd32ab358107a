"""Container detection on fake /-trees built from real files: each marker, what every check saw,
and that no match is "unknown", never "bare host"."""

from __future__ import annotations

from pathlib import Path

from sparktui.probes import container

HOST_CGROUP_V2 = "0::/\n"
HOST_MOUNTINFO = "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n"
DOCKER_CGROUP_V1 = (
    "12:memory:/docker/3f1c2a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f\n"
    "1:name=systemd:/docker/3f1c2a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f\n"
)
DOCKER_MOUNTINFO = (
    "611 560 0:57 / / rw,relatime master:300 - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/A\n"
    "640 611 259:2 /var/lib/docker/containers/3f1c/resolv.conf /etc/resolv.conf rw - ext4 /dev/nvme0n1p2 rw\n"
)


def tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def by_check(data: dict) -> dict[str, dict]:
    return {c["check"].split(" ")[0]: c for c in data["checks"]}


def test_no_marker_is_unknown_and_every_check_says_what_it_saw(tmp_path):
    root = tree(tmp_path, {"proc/1/cgroup": HOST_CGROUP_V2, "proc/self/mountinfo": HOST_MOUNTINFO})
    d = container.inspect(root, environ={"PATH": "/usr/bin"})
    assert d["in_container"] is None  # never False: a cgroup namespace can hide everything
    assert d["runtime"] is None and d["ngc"] is None
    checks = by_check(d)
    assert [c["check"].split(" ")[0] for c in d["checks"]] == [
        "/.dockerenv", "/run/.containerenv", "$container", "$KUBERNETES_SERVICE_HOST", "/proc/1/cgroup",
        "/proc/self/mountinfo", "NGC"]
    assert checks["/.dockerenv"]["seen"] == "absent" and not checks["/.dockerenv"]["matched"]
    assert "root cgroup only" in checks["/proc/1/cgroup"]["seen"]
    assert checks["/proc/self/mountinfo"]["seen"] == "root filesystem ext4"
    assert not any(c["matched"] for c in d["checks"])


def test_empty_tree_records_absent_files_without_crashing(tmp_path):
    d = container.inspect(tree(tmp_path, {}), environ={})
    assert d["in_container"] is None
    assert by_check(d)["/proc/1/cgroup"]["seen"] == "absent"


def test_dockerenv_marks_docker(tmp_path):
    d = container.inspect(tree(tmp_path, {".dockerenv": ""}), environ={})
    assert d["in_container"] is True and d["runtime"] == "docker"
    assert by_check(d)["/.dockerenv"] == {"check": "/.dockerenv (Docker marker)", "seen": "present", "matched": True}


def test_podman_containerenv_fields_are_parsed(tmp_path):
    env_text = 'engine="podman-5.2.2"\nname="trainer"\nimage="nvcr.io/nvidia/pytorch:25.11-py3"\nid="9a8b"\nrootless=1\n'
    d = container.inspect(tree(tmp_path, {"run/.containerenv": env_text}), environ={"container": "podman"})
    assert d["runtime"] == "podman" and d["name"] == "trainer"
    assert d["image"] == "nvcr.io/nvidia/pytorch:25.11-py3"
    assert "engine=podman-5.2.2" in by_check(d)["/run/.containerenv"]["seen"]
    assert by_check(d)["$container"]["seen"] == "podman"


def test_rootless_podman_empty_containerenv_still_counts(tmp_path):
    d = container.inspect(tree(tmp_path, {"run/.containerenv": ""}), environ={})
    assert d["in_container"] is True and d["runtime"] == "podman" and d["name"] is None


def test_cgroup_v1_names_the_runtime(tmp_path):
    d = container.inspect(tree(tmp_path, {"proc/1/cgroup": DOCKER_CGROUP_V1}), environ={})
    assert d["in_container"] is True and d["runtime"] == "docker"
    assert by_check(d)["/proc/1/cgroup"]["matched"]


def test_kubepods_wins_over_the_engine_named_on_the_same_line(tmp_path):
    cg = "0::/kubepods.slice/kubepods-burstable.slice/cri-containerd-4b1e.scope\n"
    d = container.inspect(tree(tmp_path, {"proc/1/cgroup": cg}), environ={})
    assert d["runtime"] == "kubernetes"


def test_mountinfo_runtime_storage_detects_docker_behind_cgroupns(tmp_path):
    root = tree(tmp_path, {"proc/1/cgroup": HOST_CGROUP_V2, "proc/self/mountinfo": DOCKER_MOUNTINFO})
    d = container.inspect(root, environ={})
    assert d["in_container"] is True and d["runtime"] == "docker"
    seen = by_check(d)["/proc/self/mountinfo"]["seen"]
    assert "root filesystem overlay" in seen and "docker" in seen


def test_overlay_root_alone_is_only_a_hint(tmp_path):
    mi = "611 560 0:57 / / rw - overlay overlay rw,lowerdir=/lower\n"
    d = container.inspect(tree(tmp_path, {"proc/self/mountinfo": mi}), environ={})
    assert d["in_container"] is None
    assert d["hints"] and "overlay" in d["hints"][0]


def test_ngc_environment_names_the_image_release(tmp_path):
    env = {"NVIDIA_PRODUCT_NAME": "PyTorch", "NVIDIA_PYTORCH_VERSION": "25.11", "NVIDIA_BUILD_ID": "231042567",
           "PYTORCH_BUILD_VERSION": "2.10.0a0+b558c986e8", "CUDA_VERSION": "13.0.2.006", "NVIDIA_DRIVER_CAPABILITIES": "all"}
    d = container.inspect(tree(tmp_path, {}), environ=env)
    assert d["in_container"] is True
    assert d["ngc"]["product"] == "PyTorch" and d["ngc"]["release"] == "25.11"
    assert d["ngc"]["build_id"] == "231042567" and d["ngc"]["cuda_version"] == "13.0.2.006"
    assert "NVIDIA_PYTORCH_VERSION=25.11" in by_check(d)["NGC"]["seen"]


def test_ngc_derived_image_reports_its_own_product(tmp_path):
    env = {"NVIDIA_PRODUCT_NAME": "vLLM", "NVIDIA_VLLM_VERSION": "25.10", "NVIDIA_PYTORCH_VERSION": "25.10"}
    d = container.inspect(tree(tmp_path, {".dockerenv": ""}), environ=env)
    assert d["runtime"] == "docker" and d["ngc"]["product"] == "vLLM" and d["ngc"]["release"] == "25.10"


def test_a_folder_where_a_file_should_be_is_reported_not_fatal(tmp_path):
    root = tree(tmp_path, {})
    (root / "proc" / "1" / "cgroup").mkdir(parents=True)
    d = container.inspect(root, environ={})
    assert by_check(d)["/proc/1/cgroup"]["seen"] == "a folder, not a file"
    assert d["in_container"] is None


def test_read_on_this_machine_never_claims_a_bare_host():
    reading = container.read(None)
    assert reading.data is not None and reading.data["in_container"] in (True, None)
