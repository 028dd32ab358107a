"""The target probe's event channel under hostile output (issue 15, item 5).

probes/target.py reads JSON lines that target_script.py writes from inside the training interpreter,
an environment sparktui does not control: a sitecustomize, a patched json, a crash mid-write or a
hostile package can put anything on that channel. Whatever arrives (any JSON shape and type,
torn lines, NaN, deep nesting, floods, non-UTF-8 bytes), the probe gives a Reading with data or a
clear error, and G1, G2, G7 and G9 judge it without raising.
"""

from __future__ import annotations

import json
import sys
import textwrap
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.verdict import Status
from sparktui.gotchas import REGISTRY
from sparktui.probes import target
from tests.conftest import readings_of

STAGES = list(target.ENV_STAGES + target.TORCH_STAGES)
JUDGES = ("G1", "G2", "G7", "G9")

SCALAR = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
          | st.text(max_size=30))
JSON = st.recursive(SCALAR, lambda c: st.lists(c, max_size=5) | st.dictionaries(st.text(max_size=10), c, max_size=5),
                    max_leaves=8)
LEAF = SCALAR | st.lists(SCALAR, max_size=3) | st.dictionaries(st.text(max_size=8), SCALAR, max_size=3)
# Data shaped like the script's, with any value at any field: the judges' real input, bent.
TORCH_LIKE = st.fixed_dictionaries({}, optional={
    "version": LEAF, "cuda": LEAF, "file": LEAF, "nccl": LEAF, "available": LEAF, "arch_list": LEAF,
    "devices": st.lists(st.fixed_dictionaries({}, optional={"index": LEAF, "name": LEAF, "capability": LEAF}),
                        max_size=3) | LEAF,
    "versions": st.dictionaries(st.sampled_from(["torch", "flash-attn", "vllm", "numpy", "x"]), JSON, max_size=5) | LEAF,
    "unread": LEAF, "ran": LEAF, "value": LEAF, "reason": LEAF, "executable": LEAF, "env": LEAF,
    "libcudart.so.13": LEAF, "libcudart.so.12": LEAF})
EVENTS = st.fixed_dictionaries(
    {"event": st.sampled_from(sorted(target.EVENT_KINDS)) | JSON, "stage": st.sampled_from(STAGES + [""]) | JSON},
    optional={"data": TORCH_LIKE | JSON, "seconds": JSON, "warnings": JSON, "error": JSON, "error_type": JSON})
LINES = st.lists(st.one_of(EVENTS.map(json.dumps), JSON.map(json.dumps), st.text(max_size=40),
                           st.sampled_from(['{"event": "done", "stage": "python", "data": NaN}', "[" * 5000,
                                            '{"event": "end", "stage": ""', "\x00\ufffd", ""])),
                 max_size=8)


def judged(reading: Reading) -> dict[str, Status]:
    r = readings_of(target=reading)
    return {gid: REGISTRY[gid].judge(r, Config()).status for gid in JUDGES}


@settings(max_examples=100)
@given(LINES)
def test_any_line_gives_only_well_formed_events(lines):
    for ev in target.parse_events(lines):
        assert ev["event"] in target.EVENT_KINDS and isinstance(ev["stage"], str)
        json.dumps(ev, allow_nan=False)


def fed(monkeypatch, runs: dict[str, list[str]], returncode: int = 0) -> Reading:
    """The probe's reading when each mode's script wrote ``runs[mode]`` and exited ``returncode``."""

    def run_script(python, mode, timeout_s, skip=frozenset(), packages=(), cancel=None):
        return target.ScriptRun(events=target.parse_events(runs.get(mode, [])), returncode=returncode)

    monkeypatch.setattr(target, "run_script", run_script)
    data = target.probe_interpreter("/venv/bin/python", 5.0)
    return Reading("target", data, source="test", started_at=1.0, took_s=0.1)


@settings(max_examples=60)
@given(LINES, LINES, st.sampled_from([0, 1, -11]))
def test_any_output_is_a_reading_the_judges_take(monkeypatch, env_lines, torch_lines, rc):
    reading = fed(monkeypatch, {"env": env_lines, "torch": torch_lines}, rc)
    json.dumps(reading.to_dict(), allow_nan=False)
    assert set(reading.data["stages"]) >= set(STAGES)
    assert all(s in Status for s in judged(reading).values())


@settings(max_examples=80)
@given(st.dictionaries(st.sampled_from(STAGES), TORCH_LIKE | JSON, max_size=7))
def test_every_stage_done_with_any_data_is_judged(monkeypatch, data):
    """All stages report done, so every field reaches the judges (a random line rarely gets there)."""
    runs = {mode: [json.dumps({"event": "done", "stage": s, "data": data.get(s)}) for s in stages]
            + [json.dumps({"event": "end", "stage": ""})]
            for mode, stages in (("env", target.ENV_STAGES), ("torch", target.TORCH_STAGES))}
    reading = fed(monkeypatch, runs)
    assert all(v["status"] == "done" for v in reading.data["stages"].values())
    assert all(s in Status for s in judged(reading).values())


def test_events_of_the_wrong_shape_are_dropped_not_raised(monkeypatch):
    bad = ['{"event": ["done"], "stage": "python"}', '{"event": "done", "stage": ["python"]}',
           '{"event": "done", "stage": {"a": 1}}', '{"event": "begin", "stage": null}',
           '{"event": "done", "stage": "python", "data": NaN}', '{"event": "done", "stage": "python", "data": '
           + "[" * 40 + "]" * 40 + "}", "[" * 100_000]
    assert target.parse_events(bad) == []
    reading = fed(monkeypatch, {"env": bad, "torch": bad}, 1)
    assert reading.data["stages"]["python"] == {"status": "not reached",
                                               "error": "the interpreter never started its stages: exited with code 1 "
                                                        "before reporting anything", "signal": None}
    assert judged(reading)["G1"] is Status.UNKNOWN


FLOOD = textwrap.dedent('''\
    import json, os, sys
    fd = int(sys.argv[sys.argv.index("--fd") + 1])
    out = os.fdopen(fd, "wb")
    out.write(b'{"event": "begin", "stage": "python"}\\n')
    out.write(b"x" * (9 << 20) + b"\\n")                      # one 9 MB line
    out.write(b'\\xff\\xfe{"event": "done"}\\n')              # not UTF-8
    out.write(b'{"event": "done", "stage": "python", "data": {"version": "3.12.0"}}\\n' * 300_000)  # 21 MB
    out.write(b'{"event": "end", "stage": ""}\\n')
    out.flush()
''')


def test_a_flood_on_the_channel_is_bounded_and_the_script_never_blocks(tmp_path):
    script = tmp_path / "flood.py"
    script.write_text(FLOOD)
    t0 = time.perf_counter()
    run = target.run_staged(sys.executable, script, [], 30.0)
    assert time.perf_counter() - t0 < 20
    assert run.returncode == 0 and not run.timed_out
    assert len(run.events) == target.MAX_EVENTS
    assert run.events[0] == {"event": "begin", "stage": "python"}
    assert run.events[1] == {"event": "done", "stage": "python", "data": {"version": "3.12.0"}}
