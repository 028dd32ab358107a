"""G6 (issues 24 and 26): no warning from process names alone, and Ray's memory monitor beside vLLM.

Issue 24, Seen 8: two orphaned ``train_fake.py`` of 10 MB RSS with their GPU memory unknown warned
"2 uncapped jobs share the pool" while the card said it could not tell whether they fit; with their
parent alive the same processes were unknown. The same evidence gets the same verdict, and a warning
needs a measured quantity (NVML's figure of what each job holds).

Issue 26, item 3: a Ray daemon (raylet, gcs_server, ``ray start``) without
``RAY_memory_monitor_refresh_ms=0`` in its environment beside a vLLM server warns: Ray's memory monitor
counts page cache as pressure and kills vLLM's workers (docs.ray.io, "Out-Of-Memory Prevention":
https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html, "set the environment
variable RAY_memory_monitor_refresh_ms to zero" to disable it; FIELD-FACTS: conselara.dev, community).
An environment that could not be read is unknown for that rule, never ok.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from sparktui.core.verdict import Status
from sparktui.gotchas import g06_contention as g6
from sparktui.probes import processes
from tests.gotchas.builders import GIB, MIB, g6v, job, snap, vllm

ENV = "RAY_memory_monitor_refresh_ms"


# -- Seen 8: names alone -------------------------------------------------------------------------

def _fake(pid: int, group: int, ppid: int) -> dict:
    """A `python3 train_fake.py` of 10 MB RSS, not in an NVML list (unread)."""
    row = job(pid, None, listed=False, name="train_fake.py", rss=10 * MIB)
    row.update(group=group, ppid=ppid)
    return row


def test_two_orphaned_jobs_with_nothing_measured_are_unknown_not_a_warning():
    """Fails on 5e064fb: "2 uncapped jobs share the pool" (warn) from the names alone."""
    v = g6v(snap(_fake(7101, 7101, 1), _fake(7102, 7102, 1), nv_ok=False))
    assert v.status is Status.UNKNOWN, v.summary
    assert "uncapped jobs" not in v.summary
    assert not any("uncapped jobs" in e.value for e in v.evidence)


def test_the_same_jobs_with_their_parent_alive_get_the_same_verdict():
    parent = job(7100, None, listed=False, name="train_fake.py", rss=10 * MIB)
    parent.update(group=7100, ppid=3002)
    orphaned = g6v(snap(_fake(7101, 7101, 1), _fake(7102, 7102, 1), nv_ok=False))
    alive = g6v(snap(parent, _fake(7101, 7100, 7100), _fake(7102, 7100, 7100), nv_ok=False))
    assert orphaned.status is alive.status is Status.UNKNOWN


def test_two_jobs_nvml_read_holding_nothing_are_not_a_warning():
    """NVML's list was read and neither job is in it: measured, nothing on the GPU."""
    v = g6v(snap(_fake(7101, 7101, 1), _fake(7102, 7102, 1), job(9000, 2 * GIB, kind="gpu-process",
                                                               name="python3")))
    assert v.status is not Status.WARN or "uncapped jobs" not in v.summary, v.summary


def test_two_jobs_measured_on_the_gpu_still_warn_and_say_what_each_holds():
    v = g6v(snap(job(3310, 10 * GIB), job(4410, 12 * GIB, name="train_dpo.py")))
    assert v.status is Status.WARN
    assert v.summary == ("2 uncapped jobs share the pool: training pid 3310 (torchrun) holding 10.0 GiB, "
                         "training pid 4410 (train_dpo.py) holding 12.0 GiB")


def test_one_measured_one_unknown_is_not_a_warning_from_the_name_of_the_second():
    v = g6v(snap(job(3310, 10 * GIB), job(4410, None, name="train_dpo.py")))
    assert v.status is Status.UNKNOWN, v.summary


# -- Ray beside vLLM ------------------------------------------------------------------------------

def ray(pid: int, env: dict | str | None, name: str = "raylet") -> dict:
    row = {"pid": pid, "ppid": 1, "kind": "other", "server": "ray", "name": name, "command": name,
           "gpu_mem_bytes": None, "rss_bytes": 80 * MIB, "group": pid,
           "cap": {"state": "n/a", "fraction": None, "source": "", "detail": ""}}
    if env is not None:
        row["env"] = env
    return row


CAPPED = vllm(5120, 0.5, 58 * GIB)


def test_ray_without_the_variable_beside_vllm_warns_naming_it():
    v = g6v(snap(CAPPED, ray(4100, {})))
    assert v.status is Status.WARN, v.summary
    assert v.summary.startswith("Ray raylet pid 4100 (RAY_memory_monitor_refresh_ms not set")
    assert "beside vLLM pid 5120" in v.summary and f"set {ENV}=0" in v.summary
    assert f"{ENV}=0 ray start --head" in v.fix and "ray stop" in v.fix
    assert g6.marked_pids(v) == {4100, 5120}


def test_ray_with_the_monitor_set_to_another_value_warns():
    v = g6v(snap(CAPPED, ray(4100, {ENV: "250"})))
    assert v.status is Status.WARN and f"({ENV}=250)" in v.summary


def test_ray_with_the_monitor_off_beside_vllm_is_fine():
    v = g6v(snap(CAPPED, ray(4100, {ENV: "0"})))
    assert v.status is Status.OK, v.summary
    assert {e.what: e.value for e in v.evidence}["Ray raylet pid 4100: memory monitor"] == f"off: {ENV}=0"
    assert "ray start" not in v.fix


@pytest.mark.parametrize("env,why", [("unreadable", "unreadable"), (None, "not read")])
def test_ray_with_its_environment_unread_is_unknown_not_ok(env, why):
    v = g6v(snap(CAPPED, ray(4100, env)))
    assert v.status is Status.UNKNOWN, v.summary
    assert v.summary.startswith("cannot tell whether Ray's memory monitor is off beside vLLM pid 5120")
    assert why in v.summary
    assert f"{ENV}=0 ray start" in v.fix


def test_ray_without_vllm_is_not_this_rule():
    v = g6v(snap(ray(4100, {})))
    assert v.status is Status.OK, v.summary


def test_one_ray_member_with_the_variable_at_zero_turns_the_instance_off():
    """gcs_server and raylet of one instance: the environment is inherited from `ray start`."""
    gcs = ray(4099, "unreadable", name="gcs_server")
    raylet = ray(4100, {ENV: "0"})
    raylet["group"] = gcs["group"] = 4099
    v = g6v(snap(CAPPED, gcs, raylet))
    assert v.status is Status.OK, v.summary


def test_a_worse_finding_keeps_the_ray_warning_as_also():
    v = g6v(snap(vllm(5120, 0.9, 100 * GIB, state="default"), job(3310, 16 * GIB), ray(4100, {})))
    assert v.status is Status.FAIL
    assert any(e.what == "also" and "Ray raylet pid 4100" in e.value for e in v.evidence)
    assert f"{ENV}=0 ray start" in v.fix


# -- the probe: Ray's daemons are recognised and their environment read ------------------------------

# argv as Ray starts them (ray-project/ray, python/ray/_private/services.py: RAYLET_EXECUTABLE is
# ".../ray/core/src/ray/raylet/raylet", GCS_SERVER_EXECUTABLE ".../ray/core/src/ray/gcs/gcs_server";
# `ray start` is the console script ray=ray.scripts.scripts:main)
SITE = "/home/spark/.venv/lib/python3.12/site-packages/ray"


@pytest.mark.parametrize("name,argv,label", [
    ("raylet", [f"{SITE}/core/src/ray/raylet/raylet", "--raylet_socket_name=/tmp/ray/session_x/sockets/raylet",
                "--node_manager_port=0"], "raylet"),
    ("gcs_server", [f"{SITE}/core/src/ray/gcs/gcs_server", "--gcs_server_port=6379"], "gcs_server"),
    ("ray", ["/home/spark/.venv/bin/python3", "/home/spark/.venv/bin/ray", "start", "--head"], "ray start"),
])
def test_ray_daemons_are_classified_as_ray_helpers(name, argv, label):
    assert processes.classify(name, argv) == ("other", "ray", label)


def test_ray_status_is_not_a_ray_daemon():
    assert processes.classify("ray", ["/home/spark/.venv/bin/python3", "/home/spark/.venv/bin/ray", "status"]) \
        == ("", None, "")


def test_the_probe_reads_the_monitor_variable_from_a_real_process():
    env = dict(os.environ, **{ENV: "0", "RAY_memory_usage_threshold": "0.95", "UNRELATED_SECRET": "x"})
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], env=env)
    try:
        time.sleep(0.05)
        base = {"pid": p.pid, "ppid": os.getpid(), "name": "raylet", "cmdline": ["raylet"], "kind": "other",
                "server": "ray", "label": "raylet"}
        row = processes.describe(p.pid, base, time.time(), {"vanished": 0, "denied": 0})
    finally:
        p.kill()
        p.wait()
    assert row is not None
    assert row["env"] == {ENV: "0", "RAY_memory_usage_threshold": "0.95"}
    assert row["cap"]["state"] == "n/a"
