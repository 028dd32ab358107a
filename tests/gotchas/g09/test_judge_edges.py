"""G9 pinned (issue 16, mutation survivors): the module's constants (the commands a user copies),
compare()'s odd paths (unreadable markers and specifiers, non-PEP 440 versions, the order of the
entries), the fix blocks filled from the evidence, and readiness() on plain host_runtime dicts."""

from __future__ import annotations

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.verdict import Status
from sparktui.gotchas import g09_container_drift as g9
from tests.conftest import readings_of
from tests.gotchas.builders import NGC_TORCH, g9_judge as judge, sourced as ev

GB10 = {"devices": [{"index": 0, "name": {"value": "NVIDIA GB10"}}]}
PINS_PATH = "/home/u/pins.txt"


def target(packages: dict, torch_cuda: str | None = "13.0", env: dict | None = None, **python) -> dict:
    py = {"version": "3.12.3", "implementation": "CPython", "machine": "aarch64", "system": "Linux", "env": env or {}}
    py.update(python)
    return {"python": py, "packages": packages,
            "torch": {"version": packages.get("torch"), "cuda": torch_cuda} if packages.get("torch") else None,
            "stages": {"packages": {"status": "done"}}, "interpreter": "/usr/bin/python3"}


def user_pins(*lines, meta: dict | None = None, origin: str = "file", path: str | None = PINS_PATH) -> dict:
    return {"origin": origin, "image": None, "path": path, "meta": meta or {}, "skipped": [],
            "pins": [{"name": n, "spec": s, "marker": m, "line": i} for i, (n, s, m) in enumerate(lines, 1)],
            "shipped_sets": ["ngc-pytorch-25.09", "ngc-pytorch-25.11"]}


def docker(release: str | None = "25.11") -> dict:
    return {"in_container": True, "runtime": "docker", "name": None, "ngc": {"product": "PyTorch", "release": release}
            if release else None, "hints": [], "checks": []}


def by_name(entries) -> dict:
    return {e["name"]: e for e in entries}


# --- constants: what the user copies ---------------------------------------------------------------

def test_module_constants():
    assert g9.ID == "G9"
    assert g9.ABI_COUPLED == {"torch", "torchvision", "torchaudio", "triton", "pytorch-triton", "flash-attn",
                              "transformer-engine", "apex", "xformers", "bitsandbytes", "deepspeed", "vllm",
                              "torchao", "nvfuser"}
    assert g9.TORCH_FAMILY == ("torch", "torchvision", "torchaudio")
    assert g9.NGC_IMAGE.format(release="25.11") == "nvcr.io/nvidia/pytorch:25.11-py3"
    assert g9.DEFAULT_NGC_RELEASE == "25.11" and g9.NGC_CONSTRAINT == "/etc/pip/constraint.txt"
    assert [bool(g9._CU_LABEL.match(x)) for x in ("cu1", "cu12", "cu130", "cu1300", "xcu130", "cpu")] == \
        [False, True, True, False, False, False]


def test_static_fix_commands():
    for cmd in ('docker run --gpus all -it --rm --ipc=host --ulimit memlock=-1 --ulimit stack=67108864',
                '-v "$PWD":/workspace nvcr.io/nvidia/pytorch:25.11-py3', "PIP_CONSTRAINT=/etc/pip/constraint.txt",
                "pip install --no-deps unsloth unsloth_zoo", "sparktui check G9 --pins /etc/pip/constraint.txt",
                "pip install torch torchvision --index-url https://download.pytorch.org/whl/cu130",
                "pip freeze > pins.txt", "sparktui check G9 --pins pins.txt"):
        assert cmd in g9.FIX, cmd


def test_runtime_setup_commands():
    assert g9.TOOLKIT_DOC == ("https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/"
                              "install-guide.html")
    assert g9.TOOLKIT_DOC in g9.INSTALL_TOOLKIT[1]
    assert g9.INSTALL_TOOLKIT[2:] == ["sudo apt-get update", "sudo apt-get install -y nvidia-container-toolkit"]
    assert [c.split("    #")[0] for c in g9.CONFIGURE_DOCKER] == [
        "sudo nvidia-ctk runtime configure --runtime=docker", "sudo systemctl restart docker",
        "docker run --rm --gpus all ubuntu nvidia-smi"]
    assert [c.split("    #")[0] for c in g9.CONFIGURE_PODMAN] == [
        "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml",
        "podman run --rm --device nvidia.com/gpu=all ubuntu nvidia-smi"]
    assert [c.split("    #")[0] for c in g9.INSTALL_DOCKER] == [
        "sudo apt-get update", "sudo apt-get install -y docker.io", 'sudo usermod -aG docker "$USER"']


def test_gotcha_registration():
    g = g9.GOTCHA
    assert (g.id, g.slug, g.intrusive, g.cadence_s) == ("G9", "container-drift", False, None)
    assert g.probes == ("container", "target", "pins", "nvml")
    assert g.fix == g9.FIX and g.title == "Container-first, not bare pip"
    assert any("/etc/pip/constraint.txt" in ref for ref in g.references)


# --- the fix, filled -------------------------------------------------------------------------------

@pytest.mark.parametrize("cuda, url", [
    ("13.0", "https://download.pytorch.org/whl/cu130"), ("12.8", "https://download.pytorch.org/whl/cu128"),
    ("13", None), ("cpu", None), ("", None), (None, None)])
def test_torch_index_url(cuda, url):
    assert g9._torch_index_url(cuda) == url


def test_fix_release_comes_from_the_container_then_the_pins_then_the_default():
    t = target({})
    pins = user_pins(meta={"ngc": "25.09"})
    assert "nvcr.io/nvidia/pytorch:25.08-py3" in g9.fix_for(t, pins, {"release": "25.08"}, [], None)
    assert "nvcr.io/nvidia/pytorch:25.09-py3" in g9.fix_for(t, pins, None, [], None)
    assert "nvcr.io/nvidia/pytorch:25.11-py3" in g9.fix_for(t, user_pins(), None, [], None)


def test_fix_inside_ngc_checks_with_the_image_constraint_and_no_bare_pip_block():
    fix = g9.fix_for(target({}), user_pins(origin="shipped"), {"release": "25.11"}, [], None)
    assert "/usr/bin/python3 -m pip check" in fix
    assert "sparktui check G9 --python /usr/bin/python3 --pins /etc/pip/constraint.txt" in fix
    assert "--index-url" not in fix and "pip freeze" not in fix


def test_fix_bare_pip_uses_the_pinned_cuda_index_or_cu130():
    fix = g9.fix_for(target({}), user_pins(origin="shipped"), None, [], "12.8")
    assert "/usr/bin/python3 -m pip install torch torchvision --index-url https://download.pytorch.org/whl/cu128" in fix
    assert "/usr/bin/python3 -m pip freeze > pins.txt" in fix
    assert "sparktui check G9 --python /usr/bin/python3 --pins pins.txt" in fix
    assert "pip check" not in fix
    fix = g9.fix_for(target({}), user_pins(origin="shipped"), None, [], None)
    assert "--index-url https://download.pytorch.org/whl/cu130" in fix


def test_fix_puts_drifting_packages_back_under_the_users_pins():
    drift = [{"name": "torch"}, {"name": "accelerate"}, {"name": "torch"}]
    fix = g9.fix_for(target({}), user_pins(), None, drift, "13.0")
    assert "Put the 2 drifting package(s) back" in fix
    assert (f"/usr/bin/python3 -m pip install -c {PINS_PATH} --extra-index-url https://download.pytorch.org/whl/cu130"
            " accelerate torch") in fix
    assert f"sparktui check G9 --python /usr/bin/python3 --pins {PINS_PATH}" in fix
    assert "pip freeze" not in fix  # the user's own pin file replaces the bare-pip block
    # no torch-family package drifting: no CUDA index
    fix = g9.fix_for(target({}), user_pins(), None, [{"name": "accelerate"}], "13.0")
    assert f"pip install -c {PINS_PATH} accelerate" in fix and "--extra-index-url" not in fix
    # no CUDA known: no index either
    fix = g9.fix_for(target({}), user_pins(), None, [{"name": "torch"}], None)
    assert f"pip install -c {PINS_PATH} torch" in fix
    # shipped pins, or a file without a path: no put-back block
    for pins in (user_pins(origin="shipped"), user_pins(path=None)):
        assert "drifting package(s) back" not in g9.fix_for(target({}), pins, None, drift, "13.0")


# --- compare(): the odd paths ----------------------------------------------------------------------

def test_marker_needing_an_unreported_variable_is_compared_anyway():
    t = target({"torch": NGC_TORCH, "pkg": "1.0"})
    del t["python"]["machine"]
    cmp = g9.compare(t, user_pins(("pkg", "==2.0", "platform_machine == 'x86_64'")))
    assert by_name(cmp["entries"])["pkg"]["status"] == "mismatch"
    assert cmp["notes"] == ["pkg: marker needs platform_machine, which the target did not report; compared anyway"]


def test_unreadable_marker_is_compared_anyway():
    t = target({"pkg": "1.0"})
    cmp = g9.compare(t, user_pins(("pkg", "==2.0", "python_version >>> '3'")))
    assert by_name(cmp["entries"])["pkg"]["status"] == "mismatch"
    assert cmp["notes"][0].startswith("pkg: unreadable marker (") and cmp["notes"][0].endswith("compared anyway")


def test_marker_false_then_true_for_one_name_applies():
    t = target({"pkg": "1.0"})
    pins = user_pins(("pkg", "==9", "sys_platform == 'win32'"), ("pkg", "==1.0", "sys_platform == 'linux'"))
    assert by_name(g9.compare(t, pins)["entries"])["pkg"]["status"] == "ok"
    t = target({"pkg": "1.0"}, system="Windows")
    e = by_name(g9.compare(t, pins)["entries"])["pkg"]
    assert (e["status"], e["pinned"]) == ("mismatch", "9")


def test_a_pin_that_is_not_a_mapping_is_skipped_with_an_unknown_line():
    cmp = g9.compare(target({"pkg": "1.0"}), {"pins": ["pkg==1.0", {"name": "pkg", "spec": "==1.0"}]})
    assert cmp["notes"] == ["a pin without a package name was skipped (line ?)"]
    assert [e["status"] for e in cmp["entries"]] == ["ok"]


def test_unparseable_specifier_is_not_compared_and_the_next_pins_still_are():
    t = target({"aaa": "1.0", "bbb": "2.0"})
    cmp = g9.compare(t, user_pins(("aaa", "==1.0,~=", None), ("bbb", "==3.0", None)))
    e = by_name(cmp["entries"])
    assert e["aaa"]["status"] == "unparseable" and "~=" in e["aaa"]["note"]
    assert e["bbb"]["status"] == "mismatch"


def test_only_unparseable_pins_are_unknown_not_ok():
    v = judge(container=docker(), target=target({"aaa": "1.0"}), pins=user_pins(("aaa", "==1.0,~=", None)))
    assert v.status is Status.UNKNOWN and v.id == "G9"
    assert "no pinned version could be compared" in v.summary
    assert any(d.startswith("aaa: not compared (") and "~=" in d for d in v.details)


def test_non_pep440_version_is_compared_only_by_triple_equals():
    t = target({"odd": "weird_ver!"})
    assert by_name(g9.compare(t, user_pins(("odd", "===weird_ver!", None)))["entries"])["odd"]["status"] == "ok"
    e = by_name(g9.compare(t, user_pins(("odd", "==1.0", None)))["entries"])["odd"]
    assert e["status"] == "unparseable" and e["note"] == "installed version is not PEP 440; not compared"
    e = by_name(g9.compare(t, user_pins(("odd", "===weird_ver!,>=1", None)))["entries"])["odd"]
    assert e["status"] == "unparseable" and "not PEP 440" in e["note"]
    e = by_name(g9.compare(t, user_pins(("odd", "", None)))["entries"])["odd"]
    assert e["status"] == "unparseable"


def test_non_pep440_version_missing_its_triple_equals_pin_is_drift():
    """Bug fixed in issue 16: `===other` against `weird_ver!` was 'not compared ()' and, alone,
    'cannot tell'; it was compared, and it drifts."""
    t = target({"odd": "weird_ver!"})
    e = by_name(g9.compare(t, user_pins(("odd", "===other", None)))["entries"])["odd"]
    assert (e["status"], e["note"]) == ("mismatch", "")
    v = judge(container=docker(), target=t, pins=user_pins(("odd", "===other", None)))
    assert v.status is Status.WARN and v.id == "G9"
    assert "1 of 1 pinned packages drift" in v.summary
    assert "odd: installed weird_ver!, pinned ===other" in v.details


def test_entries_order_status_then_abi_then_name():
    t = target({"torch": NGC_TORCH, "aaa": "1.0", "xformers": "0.1", "bbb": "1.0"})
    pins = user_pins(("zzz", "==1", None), ("aaa", "==1.0", None), ("torch", "==" + NGC_TORCH, None),
                     ("bbb", "==2.0", None), ("xformers", "==0.2", None), ("yyy", "==1", "sys_platform == 'win32'"),
                     ("apex", "==1", "sys_platform == 'win32'"))
    t["packages"]["zzz"] = None
    t["stages"]["packages"]["not_asked"] = []
    cmp = g9.compare(t, pins)
    assert [(e["name"], e["status"]) for e in cmp["entries"]] == [
        ("xformers", "mismatch"), ("bbb", "mismatch"), ("zzz", "missing"), ("torch", "ok"), ("aaa", "ok"),
        ("apex", "not-applicable"), ("yyy", "not-applicable")]


def test_unreported_sorts_after_unparseable_and_before_ok():
    t = target({"torch": NGC_TORCH, "aaa": "1.0"})
    cmp = g9.compare(t, user_pins(("torch", "==" + NGC_TORCH, None), ("aaa", "==1,~=", None), ("zzz", "==1", None)))
    assert [(e["name"], e["status"]) for e in cmp["entries"]] == [
        ("aaa", "unparseable"), ("zzz", "unreported"), ("torch", "ok")]


def test_cuda_versions_of_the_comparison():
    t = target({"torch": "2.9.0+cu128"}, torch_cuda=None)
    t["torch"] = None
    cmp = g9.compare(t, user_pins(("torch", "==2.9.0+cu130", None)))
    assert (cmp["built_cuda"], cmp["pinned_cuda"]) == ("12.8", "13.0")
    assert by_name(cmp["entries"])["torch"]["note"] == "a CUDA 12.8 build per its wheel tag; the pins expect CUDA 13.0"
    cmp = g9.compare(target({"torch": "2.9.0"}, torch_cuda=None), user_pins(("torch", "==2.9.0", None), meta={"cuda": "13.0"}))
    assert cmp["built_cuda"] == "cpu"
    assert by_name(cmp["entries"])["torch"]["note"] == "a CPU-only build per torch.version.cuda; the pins expect CUDA 13.0"
    # torchvision by its own wheel tag, with no source named
    cmp = g9.compare(target({"torch": "2.9.0+cu130", "torchvision": "0.24.0+cu128"}),
                     user_pins(("torch", "==2.9.0+cu130", None), ("torchvision", ">=0.24", None)))
    e = by_name(cmp["entries"])
    assert e["torch"]["status"] == "ok"
    assert (e["torchvision"]["status"], e["torchvision"]["note"]) == (
        "cuda-mismatch", "a CUDA 12.8 build; the pins expect CUDA 13.0")


def test_same_cuda_major_is_not_a_cuda_mismatch():
    cmp = g9.compare(target({"torch": "2.9.0+cu129"}, torch_cuda="12.9"), user_pins(("torch", "==2.9.0", None),
                                                                                   meta={"cuda": "12.8"}))
    assert by_name(cmp["entries"])["torch"]["status"] == "ok"


# --- judge(): ids, sources, words on every path -----------------------------------------------------

def test_every_path_is_g9():
    good = target({"torch": NGC_TORCH})
    pins = user_pins(("torch", "==" + NGC_TORCH, None))
    no_pk = target({})
    no_pk["packages"] = None
    cases = [
        dict(target=None, pins=pins), dict(target=good, pins=None), dict(target=no_pk, pins=pins),
        dict(target=good, pins=pins), dict(target=good, pins=user_pins(("torch", "==1.0", None))),
        dict(target=target({"torch": "2.9.0+cu128"}, "12.8"), pins=user_pins(("torch", ">=2", None), meta={"cuda": "13.0"})),
        dict(target=target({"torch": "2.9.0+cu128"}, "12.8"), pins=user_pins(("torch", ">=2", None), meta={"cuda": "13.0"}),
             nvml=GB10),
    ]
    statuses = []
    for c in cases:
        v = judge(container=docker(None), **c)
        assert v.id == "G9", c
        statuses.append(v.status)
    assert statuses == [Status.UNKNOWN] * 3 + [Status.OK, Status.WARN, Status.WARN, Status.FAIL]


def test_pins_unavailable_names_the_pin_set():
    v = judge(container=docker(), target=target({"torch": NGC_TORCH}),
              pins=Reading("pins", None, error="no such file"))
    assert v.summary == "cannot tell: pin set unavailable (no such file)"
    assert [(e.what, e.value) for e in v.evidence] == [("pin set", "unavailable: no such file")]


def test_container_reading_without_a_source_is_named_container():
    r = readings_of(target=target({"torch": NGC_TORCH}), pins=user_pins(("torch", "==" + NGC_TORCH, None)))
    r.add(Reading("container", None, error="boom"))
    v = g9.judge(r, Config())
    assert v.status is Status.OK
    assert [(e.source, e.value) for e in v.evidence if e.what == "container detection"] == [("container", "unavailable: boom")]


def test_packages_unavailable_evidence_source():
    t = target({})
    t["packages"] = None
    r = readings_of(pins=user_pins(("torch", "==1", None)))
    r.add(Reading("target", t))
    v = g9.judge(r, Config())
    assert v.status is Status.UNKNOWN and v.id == "G9"
    assert [e.source for e in v.evidence if e.what == "installed packages"] == ["target"]


def test_marker_env_windows_and_macos():
    env = g9._marker_env(target({}, system="Windows"))
    assert (env["sys_platform"], env["os_name"]) == ("win32", "nt")
    env = g9._marker_env(target({}, system="Darwin"))
    assert (env["sys_platform"], env["os_name"]) == ("darwin", "posix")
    assert g9._marker_env(target({}, system="FreeBSD"))["sys_platform"] == "freebsd"


# --- readiness() on plain host_runtime dicts --------------------------------------------------------

def hr(engines=(), tools=None, dj=None, specs=(), errors=()) -> dict:
    return {"engines": [{"name": n, "path": f"/usr/bin/{n}", "version": v} for n, v in engines],
            "tools": tools if tools is not None else {"nvidia-ctk": None, "nvidia-container-runtime-hook": None},
            "daemon_json": dj if dj is not None else {"path": "/etc/docker/daemon.json", "state": "absent"},
            "cdi": {"specs": list(specs), "errors": list(errors)}}


def test_readiness_no_engine():
    rd = g9.readiness(hr())
    assert rd.ready is False
    assert rd.fix == (*g9.INSTALL_DOCKER, *g9.INSTALL_TOOLKIT, *g9.CONFIGURE_DOCKER)
    e = ev(rd)
    assert e["NVIDIA container tools"] == ("PATH", "none of nvidia-ctk, nvidia-container-runtime-hook on PATH")
    assert e["docker daemon.json runtimes"] == ("/etc/docker/daemon.json", "absent (docker has only its built-in runtimes)")
    assert e["NVIDIA CDI specs"] == ("/etc/cdi, /var/run/cdi", "none")
    assert ev(g9.readiness({}))["NVIDIA container tools"] == ("PATH", "none of nvidia-ctk on PATH")


def test_readiness_engine_evidence():
    h = hr([("docker", "Docker version 28.3.3")])
    h["engines"] += [{"name": "podman", "path": None}, {"name": "x", "path": "/x", "version": None, "error": "rc 1"},
                     {"name": "y", "path": "/y"}, "odd"]
    e = ev(g9.readiness(h))
    assert e["docker (container engine)"] == ("PATH", "/usr/bin/docker (Docker version 28.3.3)")
    assert e["podman (container engine)"] == ("PATH", "not on PATH")
    assert e["x (container engine)"] == ("PATH", "/x (version unknown: rc 1)")
    assert e["y (container engine)"] == ("PATH", "/y (version unknown: not read)")


def test_readiness_docker_nvidia_runtime_and_default_runtime():
    dj = {"path": "/etc/docker/daemon.json", "state": "read", "nvidia_runtime": True, "default_runtime": "nvidia"}
    rd = g9.readiness(hr([("docker", "28.3.3")], tools={"nvidia-ctk": "/usr/bin/nvidia-ctk"}, dj=dj))
    assert rd.ready is True and rd.fix == ()
    assert rd.words == "docker 28.3.3 with the NVIDIA runtime (/etc/docker/daemon.json): the container can run here"
    assert ev(rd)["docker daemon.json runtimes"][1] == "has the nvidia runtime; default-runtime nvidia"
    assert ev(rd)["NVIDIA container tools"][1] == "nvidia-ctk /usr/bin/nvidia-ctk"
    dj = {"state": "read", "nvidia_runtime": False, "default_runtime": "nvidia"}
    rd = g9.readiness(hr([("docker", None)], dj=dj))
    assert rd.ready is True and rd.words.startswith("docker with the NVIDIA runtime")
    assert ev(rd)["docker daemon.json runtimes"][1] == "no nvidia runtime; default-runtime nvidia"
    dj = {"state": "read", "nvidia_runtime": False, "default_runtime": "runc"}
    rd = g9.readiness(hr([("docker", "28")], tools={"nvidia-ctk": "/c"}, dj=dj))
    assert rd.ready is False and rd.fix == tuple(g9.CONFIGURE_DOCKER)
    assert rd.words == "docker 28 but no NVIDIA container runtime: nvidia-ctk is installed, docker is not configured for it"


def test_readiness_docker_hook_then_cdi():
    rd = g9.readiness(hr([("docker", "28")], tools={"nvidia-container-runtime-hook": "/h"}))
    assert rd.ready is True and "nvidia-container-runtime-hook" in rd.words and rd.fix == ()
    rd = g9.readiness(hr([("docker", "28")], specs=["/etc/cdi/nvidia.yaml", "/var/run/cdi/b.yaml"]))
    assert rd.ready is True and rd.fix == ()
    assert "(/etc/cdi/nvidia.yaml)" in rd.words and "--device nvidia.com/gpu=all" in rd.words
    assert ev(rd)["NVIDIA CDI specs"][1] == "/etc/cdi/nvidia.yaml, /var/run/cdi/b.yaml"


def test_readiness_docker_without_toolkit():
    rd = g9.readiness(hr([("docker", "28")]))
    assert rd.ready is False
    assert rd.words == "docker 28 but no NVIDIA container runtime: the NVIDIA Container Toolkit is not installed"
    assert rd.fix == (*g9.INSTALL_TOOLKIT, *g9.CONFIGURE_DOCKER)


@pytest.mark.parametrize("dj, shown", [
    ({"path": "/etc/docker/daemon.json", "state": "malformed", "error": "line 1"}, "malformed (line 1)"),
    ({"state": "unreadable"}, "unreadable (no reason given)"),
    ({}, "not reported (no reason given)")])
def test_readiness_docker_daemon_json_cannot_tell(dj, shown):
    h = hr([("docker", "28")], tools={"nvidia-ctk": "/c"})
    h["daemon_json"] = dj
    rd = g9.readiness(h)
    assert rd.ready is None
    assert rd.words == f"cannot tell whether docker 28 has the NVIDIA runtime: /etc/docker/daemon.json {shown}"
    assert rd.fix[0] == "sudo cat /etc/docker/daemon.json    # fix or remove what is not JSON"
    assert rd.fix[1:] == tuple(g9.CONFIGURE_DOCKER)
    state = dj.get("state") or "not reported"
    assert ev(rd)["docker daemon.json runtimes"][1] == \
        f"{state}: {dj.get('error') or 'no reason given'} (cannot tell what it configures)"


def test_readiness_docker_cdi_unlistable():
    rd = g9.readiness(hr([("docker", "28")], errors=["/etc/cdi", "/var/run/cdi"]))
    assert rd.ready is None
    assert rd.words == ("cannot tell whether docker 28 reaches the GPU: docker 28 but no NVIDIA container runtime "
                        "configured, and /etc/cdi, /var/run/cdi could not be listed")
    assert rd.fix == (*g9.INSTALL_TOOLKIT, *g9.CONFIGURE_DOCKER)
    assert ev(rd)["NVIDIA CDI specs"][1] == "none; cannot list /etc/cdi, /var/run/cdi"


def test_readiness_podman():
    rd = g9.readiness(hr([("podman", "4.9.3")], specs=["/etc/cdi/nvidia.yaml"]))
    assert rd.ready is True and rd.fix == ()
    assert rd.words.startswith("podman 4.9.3 with an NVIDIA CDI spec (/etc/cdi/nvidia.yaml)")
    assert "--device nvidia.com/gpu=all instead of --gpus all" in rd.words
    rd = g9.readiness(hr([("podman", "4.9.3")], errors=["/etc/cdi"]))
    assert rd.ready is None and rd.words == "cannot tell whether podman 4.9.3 reaches the GPU: /etc/cdi could not be listed"
    assert rd.fix == (*g9.INSTALL_TOOLKIT, *g9.CONFIGURE_PODMAN)
    rd = g9.readiness(hr([("podman", None)], tools={"nvidia-ctk": "/c"}))
    assert rd.ready is False and rd.words == "podman but no NVIDIA CDI spec (/etc/cdi/nvidia.yaml)"
    assert rd.fix == tuple(g9.CONFIGURE_PODMAN)


def test_readiness_prefers_docker_when_both_are_on_path():
    rd = g9.readiness(hr([("podman", "4"), ("docker", "28")]))
    assert rd.words.startswith("docker 28 but no NVIDIA container runtime")


def test_runtime_in_the_verdict_heads_the_fix():
    c = {**docker(None), "in_container": None, "host_runtime": hr()}
    v = judge(container=c, target=target({"torch": "1.0"}), pins=user_pins(("torch", "==2.0", None)))
    assert v.status is Status.WARN
    assert v.summary.endswith("; container here: no docker or podman on PATH: a container cannot run here yet")
    assert v.fix.startswith("Set up the container runtime first (no docker or podman on PATH")
    assert "nvidia-smi    # check: the GPU shows\n```\n\nTrain inside" in v.fix
    assert "sudo apt-get install -y docker.io" in v.fix.split("Train inside")[0]
    assert ("can a GPU container run here", "container probe") in [(e.what, e.source) for e in v.evidence]
    c["host_runtime"] = hr([("podman", "4")], errors=["/etc/cdi"])
    v = judge(container=c, target=target({"torch": "1.0"}), pins=user_pins(("torch", "==2.0", None)))
    assert v.fix.startswith("Check the container runtime first (cannot tell whether podman 4")
    c["host_runtime"] = hr([("podman", "4")], specs=["/etc/cdi/nvidia.yaml"])
    v = judge(container=c, target=target({"torch": "1.0"}), pins=user_pins(("torch", "==2.0", None)))
    assert v.fix.startswith("Train inside") and "container here: podman 4 with an NVIDIA CDI spec" in v.summary


def test_runtime_inside_a_container_is_not_judged():
    c = {**docker(), "host_runtime": hr()}
    v = judge(container=c, target=target({"torch": "1.0"}), pins=user_pins(("torch", "==2.0", None)))
    assert [(e.source, e.value) for e in v.evidence if e.what == "container runtime here"] == [
        ("container probe", "not judged: already inside a container")]
    assert "container here" not in v.summary and not v.fix.startswith("Set up")


def test_a_pin_with_an_empty_or_odd_name_is_skipped():
    cmp = g9.compare(target({"pkg": "1.0"}), {"pins": [{"name": "", "spec": "==1", "line": 3},
                                                       {"name": 5, "spec": "==1", "line": 4}]})
    assert cmp["entries"] == []
    assert cmp["notes"] == ["a pin without a package name was skipped (line 3)",
                            "a pin without a package name was skipped (line 4)"]


def test_specifiers_split_on_commas():
    t = target({"torch": "2.9.0+cu130", "pkg": "1.0"}, torch_cuda=None)
    t["torch"] = None
    cmp = g9.compare(t, user_pins(("torch", "==2.9.0+cu130,>=2", None), ("pkg", "==1.0,<2", None)))
    assert cmp["pinned_cuda"] == "13.0"
    e = by_name(cmp["entries"])
    assert e["pkg"]["pinned"] == "==1.0,<2" and e["pkg"]["status"] == "ok"


def test_readiness_daemon_json_elsewhere_and_read_without_default_runtime():
    dj = {"path": "/srv/docker/daemon.json", "state": "read", "nvidia_runtime": True}
    rd = g9.readiness(hr([("docker", "28")], dj=dj))
    assert rd.words == "docker 28 with the NVIDIA runtime (/srv/docker/daemon.json): the container can run here"
    assert ev(rd)["docker daemon.json runtimes"] == ("/srv/docker/daemon.json", "has the nvidia runtime")
    dj = {"path": "/srv/docker/daemon.json", "state": "malformed", "error": "x"}
    rd = g9.readiness(hr([("docker", "28")], dj=dj))
    assert rd.fix[0].startswith("sudo cat /srv/docker/daemon.json")
    rd = g9.readiness(hr([("podman", "4")], errors=["/etc/cdi"]))
    assert ev(rd)["NVIDIA CDI specs"] == ("/etc/cdi, /var/run/cdi", "none; cannot list /etc/cdi")


def test_runtime_not_judged_when_only_the_target_says_ngc():
    c = {"in_container": None, "runtime": None, "ngc": None, "hints": [], "checks": [], "host_runtime": hr()}
    t = target({"torch": "1.0"}, env={"NVIDIA_PYTORCH_VERSION": "25.11"})
    v = judge(container=c, target=t, pins=user_pins(("torch", "==2.0", None)))
    assert [e.value for e in v.evidence if e.what == "container runtime here"] == [
        "not judged: already inside a container"]
    assert "container here" not in v.summary


def test_warn_and_unknown_paths_carry_evidence_and_details():
    pins = user_pins(("torch", ">=2", None), ("pkg", "==1", None), meta={"cuda": "13.0"})
    v = judge(container=docker(None), target=target({"torch": "2.9.0+cu128", "pkg": "2"}, "12.8"), pins=pins)
    assert v.status is Status.WARN and v.id == "G9"
    assert "+1 more drifting" in v.summary and "no CUDA failure is claimed" in v.summary
    assert v.details[0].startswith("torch: installed 2.9.0+cu128, pinned >=2 (a CUDA 12.8 build")
    assert v.details[1] == "pkg: installed 2, pinned 1"
    whats = [e.what for e in v.evidence]
    assert "torch CUDA build vs pins" in whats and "GPU seen" in whats and "pin set" in whats
    v = judge(container=docker(None), target=target({"pkg": "2"}), pins=user_pins(("pkg", "==1", None)))
    assert v.status is Status.WARN and "pkg installed (pinned 1)" in [e.what for e in v.evidence]
    v = judge(container=docker(None), target=target({"pkg": "2"}), pins=user_pins(("pkg", "==1,~=", None)))
    assert v.status is Status.UNKNOWN and "pkg installed (pinned ==1,~=)" in [e.what for e in v.evidence]


def test_release_note_alone_warns_with_its_evidence():
    pins = user_pins(("pkg", "==1", None), meta={"ngc": "25.09"}, origin="shipped")
    v = judge(container=docker("25.11"), target=target({"pkg": "1"}), pins=pins)
    assert v.status is Status.WARN and v.id == "G9"
    assert "the container is NGC 25.11 but the pins are for 25.09" in v.summary
    assert 'set [pins] image = "ngc-pytorch-25.11"' in v.summary
    assert "pkg installed (pinned 1)" in [e.what for e in v.evidence]
    assert "\ndocker run --gpus all -it --rm" in v.fix


def test_a_mapping_pin_without_name_or_line_says_line_unknown():
    cmp = g9.compare(target({}), {"pins": [{"spec": "==1"}]})
    assert cmp["notes"] == ["a pin without a package name was skipped (line ?)"]


def test_podman_cdi_errors_are_all_named():
    rd = g9.readiness(hr([("podman", "4")], errors=["/etc/cdi", "/var/run/cdi"]))
    assert rd.words == "cannot tell whether podman 4 reaches the GPU: /etc/cdi, /var/run/cdi could not be listed"
