"""G9's drift rules and fix held to their exact words (issue 23: _judge became named rules over one
_Compared; the 20% mutation sample of sparktui.gotchas.g09_container_drift showed these unpinned). Every
expected text is what the judge said before the split."""

from __future__ import annotations

from sparktui.core.verdict import Status
from sparktui.gotchas import g09_container_drift as g9
from tests.gotchas.g09.test_judge import GB10, NGC_PACKAGES, docker, judge, no_container, shipped, target, user_pins

HEAD = ("Train inside the NGC PyTorch container: its torch, torchvision, flash-attn and TransformerEngine were "
        "built together against CUDA 13 with sm_121 support.\n\n```bash\ndocker run --gpus all -it --rm --ipc=host "
        "--ulimit memlock=-1 --ulimit stack=67108864 \\\n  -v \"$PWD\":/workspace nvcr.io/nvidia/pytorch:25.11-py3\n```\n\n")


def test_inside_an_ngc_container_the_fix_keeps_its_constraint():
    pk = dict(NGC_PACKAGES, torch="2.9.0+cu128", torchvision="0.24.0+cu128")
    v = judge(container=docker(), target=target(pk, torch_cuda="12.8"), pins=shipped(), nvml=GB10)
    assert v.status is Status.FAIL
    assert v.fix == HEAD + (
        "Inside it, keep the image's `PIP_CONSTRAINT` when adding libraries (`--no-deps` for packages that pin their "
        "own torch), and see what a `pip install` changed:\n\n```bash\n/usr/bin/python3 -m pip check\n"
        "sparktui check G9 --python /usr/bin/python3 --pins /etc/pip/constraint.txt    # the image's full list\n```\n")


def test_drift_from_your_own_pins_goes_back_through_the_cuda_index_they_expect():
    v = judge(container=no_container(), target=target({"torch": "2.9.1+cu128"}, torch_cuda="12.8"),
              pins=user_pins(("torch", "==2.9.0", None), meta={"cuda": "12.8"}))
    assert v.status is Status.WARN
    assert v.fix == HEAD + (
        "Put the 1 drifting package(s) back to your pins:\n\n```bash\n/usr/bin/python3 -m pip install -c "
        "/home/u/pins.txt --extra-index-url https://download.pytorch.org/whl/cu128 torch\n"
        "sparktui check G9 --python /usr/bin/python3 --pins /home/u/pins.txt\n```\n")


def test_on_bare_pip_against_the_shipped_set_the_fix_says_how_to_pin():
    v = judge(container=no_container(), target=target({"torch": "2.9.1+cu130"}, torch_cuda="13.0"), pins=shipped())
    assert v.fix == HEAD + (
        "On bare pip, install torch from PyTorch's CUDA index rather than PyPI's default, and pin what you tested in "
        "your own file:\n\n```bash\n/usr/bin/python3 -m pip install torch torchvision --index-url "
        "https://download.pytorch.org/whl/cu130\n/usr/bin/python3 -m pip freeze > pins.txt\n"
        "sparktui check G9 --python /usr/bin/python3 --pins pins.txt\n```\n")


def test_a_cuda_mismatch_is_listed_before_other_drift_whatever_the_names():
    v = judge(container=no_container(),
              target=target({"torch": "2.9.0+cu128", "flash-attn": "2.6.0"}, torch_cuda="12.8"),
              pins=user_pins(("flash-attn", "==2.7.4", None), ("torch", "==2.9.0", None), meta={"cuda": "13.0"}),
              nvml=GB10)
    assert v.status is Status.FAIL
    assert [d.split(":")[0] for d in v.details] == ["torch", "flash-attn"]


def test_cuda_versions_compare_by_major_and_cpu_is_its_own():
    assert g9._cuda_major("13.0") == "13" and g9._cuda_major("cpu") == "cpu" and g9._cuda_major(None) is None
    assert g9._torch_index_url("12.8") == "https://download.pytorch.org/whl/cu128"
    assert g9._torch_index_url(None) is None and g9._torch_index_url("cpu") is None and g9._torch_index_url("") is None
    for system, platform in (("Linux", "linux"), ("Darwin", "darwin"), ("Windows", "win32"), ("FreeBSD", "freebsd")):
        env = g9._marker_env({"python": {"system": system}})
        assert env["sys_platform"] == platform and env["os_name"] == ("nt" if system == "Windows" else "posix")
