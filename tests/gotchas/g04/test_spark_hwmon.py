"""Issue 26 item 2: the Spark's own SPBM readings (the `spark_hwmon` DKMS module) read and judged.

The stand-in /sys tree uses the driver's real names and units, from its source
(https://github.com/antheas/spark_hwmon/blob/main/spbm.c; the fork jaim12005/spark_hwmon at 352c76e,
FIELD-FACTS.md "Field reports beyond G13"): one hwmon device named "spbm"; power1..14 labelled
sys_total, soc_pkg, cpu_gpu, cpu_p, cpu_e, vcore, dc_input, gpu, prereg, dla, pl1, pl2, syspl1,
syspl2 in µW (firmware mW x 1000), pl1..syspl2 with power*_cap / _max / _min; energy1..4 (pkg, cpu_e,
cpu_p, gpu) in µJ; temp1..8 in m°C; the plain attributes prochot, pl_level and tj_max_c (tenths of
a °C) in the hwmon folder (registered as the hwmon device's extra groups). Idle figures are the
README's (sys_total ~25 W, dc_input ~26 W, gpu ~5 W, tj_max_c ~40); the ceilings its table gives
(PL1/PL2 max 250 W, SysPL1/SysPL2 max 300 W). The caps below are the test's own.
"""

from __future__ import annotations

from pathlib import Path

from sparktui.core.config import Config
from sparktui.core.recording import readings_from_samples
from sparktui.core.telemetry import History
from sparktui.gotchas.g04_throttling import judge
from sparktui.probes import spark_hwmon
from sparktui.probes.sampler import Sampler
from sparktui.testing import fake_nvml
from tests.conftest import readings_of
from tests.gotchas.g04.test_rules import gpu, samples

POWER = ("sys_total", "soc_pkg", "cpu_gpu", "cpu_p", "cpu_e", "vcore", "dc_input", "gpu", "prereg", "dla",
         "pl1", "pl2", "syspl1", "syspl2")
IDLE_W = dict(zip(POWER, (25, 17, 6, 0.5, 0.01, 4, 26, 5, 8, 0.1, 18, 18, 26, 27)))
MAX_W = {"pl1": 250, "pl2": 250, "syspl1": 300, "syspl2": 300}
ENERGY = ("pkg", "cpu_e", "cpu_p", "gpu")
TEMPS = ("tj_max", "cpu_e_clu0", "cpu_p_clu0", "cpu_e_clu1", "cpu_p_clu1", "gpu", "soc", "dla")
GB10 = {"devices": [{"index": 0, "name": {"value": "NVIDIA GB10"}, "compute_capability": {"value": [12, 1]}}]}


def sys_tree(root: Path, *, watts=None, caps=None, prochot=0, pl_level=0, loaded=True) -> Path:
    """A stand-in /sys with another hwmon device and, when ``loaded``, the spbm one."""
    other = root / "sys" / "class" / "hwmon" / "hwmon0"
    other.mkdir(parents=True, exist_ok=True)
    (other / "name").write_text("acpitz\n")
    (other / "temp1_input").write_text("31000\n")
    if not loaded:
        return root
    hw = root / "sys" / "class" / "hwmon" / "hwmon3"
    hw.mkdir(exist_ok=True)
    (hw / "name").write_text("spbm\n")
    w = {**IDLE_W, **(watts or {})}
    for i, label in enumerate(POWER, 1):
        (hw / f"power{i}_label").write_text(label + "\n")
        (hw / f"power{i}_input").write_text(f"{int(w[label] * 1e6)}\n")
        if label in MAX_W:
            (hw / f"power{i}_max").write_text(f"{MAX_W[label] * 1_000_000}\n")
            (hw / f"power{i}_min").write_text("10000000\n")
            (hw / f"power{i}_cap").write_text(f"{int((caps or {}).get(label, MAX_W[label]) * 1e6)}\n")
    for i, label in enumerate(ENERGY, 1):
        (hw / f"energy{i}_label").write_text(label + "\n")
        (hw / f"energy{i}_input").write_text(f"{123_456 * 1000}\n")
    for i, label in enumerate(TEMPS, 1):
        (hw / f"temp{i}_label").write_text(label + "\n")
        (hw / f"temp{i}_input").write_text("31000\n")
    (hw / "prochot").write_text(f"{prochot}\n")
    (hw / "pl_level").write_text(f"{pl_level}\n")
    (hw / "tj_max_c").write_text("40\n")
    return root


def test_read_finds_the_spbm_device_by_name_and_converts_units(tmp_path):
    r = spark_hwmon.read(str(sys_tree(tmp_path)))
    assert r["loaded"] and r["hwmon"].endswith("hwmon3") and r["errors"] == {}
    assert r["power_w"]["sys_total"] == 25.0 and r["power_w"]["dc_input"] == 26.0 and r["power_w"]["gpu"] == 5.0
    assert r["cap_w"]["syspl1"] == 300.0 and r["max_w"]["pl1"] == 250.0 and r["min_w"]["pl1"] == 10.0
    assert r["energy_j"]["gpu"] == 123.456 and r["temp_c"]["soc"] == 31.0
    assert (r["prochot"], r["pl_level"], r["tj_rise_c"]) == (0, 0, 4.0)


def test_without_the_module_it_says_not_loaded_never_zero(tmp_path):
    r = spark_hwmon.read(str(sys_tree(tmp_path, loaded=False)))
    assert r == {"loaded": False, "why": "spark_hwmon not loaded (no hwmon device named spbm)"}
    assert spark_hwmon.read(str(tmp_path / "nothing")) == r


def test_a_file_that_does_not_parse_is_unread_with_its_reason(tmp_path):
    root = sys_tree(tmp_path)
    (root / "sys/class/hwmon/hwmon3/power7_input").write_text("garbage\n")
    r = spark_hwmon.read(str(root))
    assert r["power_w"]["dc_input"] is None and "power7_input" in r["errors"]


def test_the_sampler_reader_reads_the_sampled_files_and_looks_again_while_absent(tmp_path):
    now = [0.0]
    reader = spark_hwmon.SpbmReader(str(sys_tree(tmp_path, loaded=False)), clock=lambda: now[0])
    assert reader.read() == (None, None)
    sys_tree(tmp_path, caps={"syspl1": 240})  # the module is loaded later
    assert reader.read() == (None, None)  # not looked for again yet
    now[0] = spark_hwmon.SpbmReader.REDISCOVER_S
    got, why = reader.read()
    assert why is None and got == {"sys_w": 25.0, "dc_input_w": 26.0, "gpu_w": 5.0, "pl1_w": 18.0, "syspl1_w": 26.0,
                                   "pl1_cap_w": 250.0, "pl1_max_w": 250.0, "syspl1_cap_w": 240.0, "syspl1_max_w": 300.0,
                                   "prochot": 0, "pl_level": 0}


def test_samples_carry_the_board_readings_through_the_history(tmp_path):
    root = sys_tree(tmp_path, prochot=1)
    with fake_nvml.installed(fake_nvml.gb10_loaded()):
        s = Sampler(Config(), interval_s=1.0, sys_root=str(root), meminfo_path=str(root / "meminfo"))
        smp = s.sample_once()
        s.close()
    assert smp["spbm"]["prochot"] == 1 and smp["spbm"]["sys_w"] == 25.0
    h = History(10)
    h.append(smp)
    assert h.samples()[-1]["spbm"] == smp["spbm"]


def _board(**kw):
    b = {"sys_w": 95.0, "dc_input_w": 110.0, "gpu_w": 80.0, "pl1_w": 60.0, "pl1_cap_w": 250.0, "pl1_max_w": 250.0,
         "syspl1_w": 100.0, "syspl1_cap_w": 300.0, "syspl1_max_w": 300.0, "prochot": 0, "pl_level": 0}
    return {**b, **kw}


def _judge(board_fn, static=GB10, **gpu_kw):
    smp = samples(lambda i, t: gpu(temp=80, power=80.0, **gpu_kw))
    for i, s in enumerate(smp):
        b = board_fn(i)
        if b is not None:
            s["spbm"] = b
    return judge(readings_of(telemetry={"samples": smp, "static": static}), Config())


def test_prochot_explains_a_slowdown_nvml_does_not_show():
    v = _judge(lambda i: _board(prochot=1 if i >= 60 else 0), sm=1800)
    assert v.status.value == "warn", v.summary
    assert v.summary == ("the board limited the GPU where NVML's counters show nothing (spark_hwmon): "
                         "PROCHOT asserted in 61 of 121 samples (the SoC throttled for heat)")
    ev = {e.what: e.value for e in v.evidence}
    assert "PROCHOT in 61/121" in ev["SPBM board readings (spark_hwmon)"]


def test_a_lowered_system_power_limit_holding_the_power_warns():
    v = _judge(lambda i: _board(syspl1_w=99.0, syspl1_cap_w=100.0))
    assert v.status.value == "warn"
    assert "the system power limit (SysPL1) held the power at its 100 W cap in 121 of 121 samples, lowered from " \
           "its 300 W ceiling" in v.summary


def test_dc_input_at_the_brick_warns():
    v = _judge(lambda i: _board(dc_input_w=230.0 if i % 2 else 120.0))
    assert v.status.value == "warn"
    assert "DC input up to 230 W of the 240 W brick in 60 of 121 samples" in v.summary


def test_quiet_board_readings_are_ok_and_shown():
    v = _judge(lambda i: _board(prochot=1 if i == 3 else 0))  # one sample: a snapshot, not held
    assert v.status.value == "ok", v.summary
    ev = {e.what: e.value for e in v.evidence}
    assert ev["SPBM board readings (spark_hwmon)"] == (
        "system 95-95 W; DC input (of the 240 W brick) 110-110 W; GPU 80-80 W; PROCHOT in 1/121; PL level 0; "
        "syspl1 cap 300 W, max 300 W, at it in 0/121; pl1 cap 250 W, max 250 W, at it in 0/121 (121 samples)")


def test_a_spark_without_the_module_is_not_a_clean_bill():
    v = _judge(lambda i: None)
    assert v.status.value == "ok"
    assert "the board's own readings (PROCHOT, power limits) not read: spark_hwmon not loaded" in v.summary
    ev = {e.what: e.value for e in v.evidence}
    assert ev["SPBM board readings (spark_hwmon)"].startswith("not read (spark_hwmon not loaded)")
    # a data-centre GPU has no such board: nothing said about it
    h100 = {"devices": [{"index": 0, "name": {"value": "NVIDIA H100 80GB HBM3"}, "compute_capability": {"value": [9, 0]}}]}
    other = _judge(lambda i: None, static=h100)
    assert "SPBM board readings (spark_hwmon)" not in {e.what for e in other.evidence}
    assert "spark_hwmon" not in other.summary


def test_the_dashboard_path_judges_the_board_readings(tmp_path):
    """Sampler -> samples -> readings_from_samples (what the dashboard judges), on the stand-in tree."""
    root = sys_tree(tmp_path, prochot=1)
    (root / "meminfo").write_text("MemTotal: 127535672 kB\nMemAvailable: 100000000 kB\n")
    t = [1000.0]

    def clock():
        t[0] += 5.0
        return t[0]

    with fake_nvml.installed(fake_nvml.gb10_loaded()):
        s = Sampler(Config(), interval_s=5.0, sys_root=str(root), meminfo_path=str(root / "meminfo"), clock=clock)
        static = s.static()
        for _ in range(122):
            s.sample_once()
        smp = s.history.samples()
        s.close()
    v = judge(readings_from_samples(smp, static=static, window_s=600.0, source="live"), Config())
    assert v.status.value == "warn" and "PROCHOT asserted in 121 of 121 samples" in v.summary, v.summary


def test_the_board_thresholds_at_their_boundaries():
    """BRICK_NEAR x BRICK_W = 216 W of DC input counts, 215 W does not; an EWMA power at LIMIT_NEAR
    (95%) of its cap counts, 94.9% does not; a board reading held in exactly SLOWDOWN_SHARE (1%) of
    200 samples (2, = REASON_MIN_SAMPLES) counts."""
    assert _judge(lambda i: _board(dc_input_w=216.0)).status.value == "warn"
    assert _judge(lambda i: _board(dc_input_w=215.0)).status.value == "ok"
    assert _judge(lambda i: _board(pl1_w=95.0, pl1_cap_w=100.0, pl1_max_w=250.0)).status.value == "warn"
    assert _judge(lambda i: _board(pl1_w=94.9, pl1_cap_w=100.0, pl1_max_w=250.0)).status.value == "ok"
    smp = samples(lambda i, t: gpu(temp=80, power=80.0), seconds=995.0)
    assert len(smp) == 200
    for i, s in enumerate(smp):
        s["spbm"] = _board(prochot=1 if i in (10, 20) else 0)
    cfg = Config().with_overrides(thermal={"window_min": 995.0 / 60})
    v = judge(readings_of(telemetry={"samples": smp, "static": GB10}), cfg)
    assert v.status.value == "warn" and "PROCHOT asserted in 2 of 200 samples" in v.summary, v.summary
