"""The sampler at the NVML boundary: faults cost fields, never samples; buffers stay bounded."""

from __future__ import annotations

import itertools
import queue
import threading
import time

import pytest

from sparktui.core.config import Config
from sparktui.core.telemetry import History, decode_reasons, free_gib, render_free_g
from sparktui.gotchas import g04_throttling
from sparktui.probes import nvml, safe_read
from sparktui.probes import sampler as sampler_mod
from sparktui.probes.sampler import Sampler, gather
from tests.conftest import readings_of
from sparktui.testing import fake_nvml

MEMINFO = """\
MemTotal:       127611680 kB
MemFree:         3145728 kB
MemAvailable:   89128960 kB
Buffers:          314572 kB
Cached:         83886080 kB
SwapCached:            0 kB
SReclaimable:    1258291 kB
Shmem:            838860 kB
SwapTotal:       4194304 kB
SwapFree:        4194304 kB
"""


@pytest.fixture
def meminfo(tmp_path):
    p = tmp_path / "meminfo"
    p.write_text(MEMINFO)
    return str(p)


@pytest.fixture
def install():
    def _install(fake):
        nvml.set_backend(fake)
        return fake

    yield _install
    nvml.set_backend(None)


def test_gb10_sample_reads_what_works_and_names_what_does_not(install, meminfo):
    install(fake_nvml.gb10_loaded())
    s = Sampler(meminfo_path=meminfo).sample_once()
    g = s["gpus"][0]
    assert (g["temp_c"], g["power_w"], g["sm_mhz"], g["util_gpu"], g["util_mem"]) == (72, 80.0, 2405, 97, 0)
    # FIELD-FACTS: every reason "Not Active" while the counters held 165687 us / 903158 us
    assert g["sw_thermal_ns"] == 903_158_000 and g["sw_power_cap_ns"] == 165_687_000 and g["reasons"] == []
    assert (g["hw_thermal_ns"], g["hw_power_brake_ns"], g["sync_boost_ns"]) == (0, 0, 0)
    assert "thermal_policy_ns" not in g  # field 269 answers: the older field 75 is not read
    for field in ("power_limit_w", "mem_mhz", "mem_used", "mem_total"):
        assert g[field] is None and g["errors"][field].startswith("NOT_SUPPORTED"), field
    assert s["mem"]["MemAvailable"] == 89128960 * 1024 and "errors" not in s


def test_library_missing_costs_the_gpu_fields_not_the_sample(install, meminfo):
    install(fake_nvml.gb10(library_missing=True))
    s = Sampler(meminfo_path=meminfo).sample_once()
    assert s["gpus"] == [] and "LIBRARY_NOT_FOUND" in s["errors"]["nvml"]
    assert s["mem"]["MemTotal"] == 127611680 * 1024  # host side still read
    v = g04_throttling.judge(readings_of(telemetry={"samples": [s]}), Config())
    assert v.status.value == "unknown" and "LIBRARY_NOT_FOUND" in v.summary


@pytest.mark.parametrize("field,key", [("temp_c", "temp_c"), ("power_w", "power_w"), ("sm_mhz", "sm_mhz"),
                                       ("util", "util_gpu"), ("reasons", "reasons_mask"),
                                       ("sw_thermal_ns", "sw_thermal_ns"), ("sw_power_cap_ns", "sw_power_cap_ns"),
                                       ("hw_thermal_ns", "hw_thermal_ns"), ("hw_power_brake_ns", "hw_power_brake_ns"),
                                       ("sync_boost_ns", "sync_boost_ns")])
def test_not_supported_per_field_costs_only_that_field(install, meminfo, field, key):
    fake = install(fake_nvml.gb10_loaded())
    fake.fail(field)
    g = Sampler(meminfo_path=meminfo).sample_once()["gpus"][0]
    assert g[key] is None and g["errors"][key] == "NOT_SUPPORTED (Not Supported)"  # None with the reason, never 0
    others = {"temp_c": 72, "power_w": 80.0, "sm_mhz": 2405, "util_gpu": 97, "sw_thermal_ns": 903_158_000,
              "sw_power_cap_ns": 165_687_000, "hw_power_brake_ns": 0}
    for k, v in others.items():
        if k != key:
            assert g[k] == v, k


def test_not_supported_is_asked_once_other_errors_every_time(install, meminfo):
    fake = install(fake_nvml.gb10_loaded())
    fake.fail("temp_c", code=fake_nvml.pynvml.NVML_ERROR_UNKNOWN)
    s = Sampler(meminfo_path=meminfo)
    for _ in range(5):
        s.sample_once()
    assert fake.calls["nvmlDeviceGetMemoryInfo"] == 1  # NOT_SUPPORTED on GB10: a device property
    assert fake.calls["nvmlDeviceGetEnforcedPowerLimit"] == 1
    assert fake.calls["nvmlDeviceGetTemperature"] == 5  # a transient error is retried
    fake.heal("temp_c")
    assert s.sample_once()["gpus"][0]["temp_c"] == 72


def test_gpu_lost_mid_run_keeps_sampling(install, meminfo):
    fake = install(fake_nvml.gb10_loaded())
    fake.script([{"temp_c": 70}, {"temp_c": 71}, {"lost": True}, {}])
    s = Sampler(meminfo_path=meminfo)
    samples = []
    for _ in range(5):
        fake.tick()
        samples.append(s.sample_once())
    assert [x["gpus"][0]["temp_c"] for x in samples[:2]] == [70, 71]
    for x in samples[2:]:  # an outage: no GPU reading at all (a gap), why and since when
        assert x["gpus"] == [] and x["errors"]["nvml"].startswith("GPU_IS_LOST")
        assert x["nvml_down_since"] == samples[2]["t"] and x["mem"]["MemAvailable"]  # host memory still sampled
    v = g04_throttling.judge(readings_of(telemetry={"samples": samples}), Config())
    assert v.status.value == "unknown"  # 0 of 10 min, and no reason to claim anything


def test_events_function_missing_falls_back_to_throttle_reasons(install, meminfo):
    fake = install(fake_nvml.gb10_loaded())
    fake.set(reasons=0x20)
    fake.nvmlDeviceGetCurrentClocksEventReasons = None  # an older nvidia-ml-py without it
    g = Sampler(meminfo_path=meminfo).sample_once()["gpus"][0]
    assert g["reasons"] == ["sw_thermal_slowdown"] and fake.calls["nvmlDeviceGetCurrentClocksThrottleReasons"] == 1


def clocked(install, meminfo, profile):
    """(the fake, an opened Sampler whose first GPU reader reads the clock ``now[0]``, now)."""
    fake = install(profile)
    now = [100.0]
    s = Sampler(meminfo_path=meminfo)
    s.open()
    s.readers[0].clock = lambda: now[0]
    return fake, s, now


def test_clock_event_counters_come_in_one_field_values_call_every_ten_seconds(install, meminfo):
    """FIELD-FACTS: one field-values call for 9 fields ~1.7 ms on a real H200, the rest of a sample
    ~85 us: the five counters are read on their own cadence, in one call, and carried in between."""
    fake, s, now = clocked(install, meminfo, fake_nvml.gb10_loaded())
    seen = []
    for i in range(12):  # 1 s apart
        fake.set(sw_thermal_ns=1_000 * i, sw_power_cap_ns=7 + i, hw_power_brake_ns=3 * i)
        g = s.sample_once()["gpus"][0]
        seen.append((g["sw_thermal_ns"], g["sw_power_cap_ns"], g["hw_power_brake_ns"]))
        now[0] += 1.0
    assert seen == [(0, 7, 0)] * 10 + [(10_000, 17, 30)] * 2
    assert fake.calls["nvmlDeviceGetFieldValues"] == 2 and "nvmlDeviceGetViolationStatus" not in fake.calls
    # nvidia-smi's five (74, 76, 269, 270, 271); field 75 is asked on the first call only, in case 269 fails
    assert fake.field_ids_asked == [[74, 76, 269, 270, 271, 75], [74, 76, 269, 270, 271]]


def test_the_energy_counter_is_read_on_the_counters_cadence_and_carried_between(install, meminfo):
    """nvmlDeviceGetTotalEnergyConsumption took ~4 ms on the lent H100: read each second it was 87 %
    of the sampler thread's CPU (benchmarks/results/profile-dashboard-h100-2026-12-05.txt). A
    cumulative counter read every 10 s and carried between is still a counter (it never goes back),
    at most one read period stale for the DCGM-named export scraped every ~15 s."""
    fake, s, now = clocked(install, meminfo, fake_nvml.h200())
    seen = []
    for i in range(21):  # 1 s apart
        fake.set(energy_mj=1_000_000 + 700 * i)
        seen.append(s.sample_once()["gpus"][0]["energy_mj"])
        now[0] += 1.0
    assert seen == [1_000_000] * 10 + [1_007_000] * 10 + [1_014_000]
    assert fake.calls["nvmlDeviceGetTotalEnergyConsumption"] == 3
    assert seen == sorted(seen)


def test_without_field_269_the_older_field_75_is_kept_as_thermal_evidence(install, meminfo):
    fake = install(fake_nvml.gb10_loaded())
    fake.fail("sw_thermal_ns").set(thermal_policy_ns=42_000_000)
    now = [100.0]
    s = Sampler(meminfo_path=meminfo)
    s.open()
    s.readers[0].clock = lambda: now[0]
    for _ in range(2):
        g = s.sample_once()["gpus"][0]
        now[0] += 10.0
    assert g["sw_thermal_ns"] is None and g["errors"]["sw_thermal_ns"] == "NOT_SUPPORTED (Not Supported)"
    assert g["thermal_policy_ns"] == 42_000_000
    assert fake.field_ids_asked == [[74, 76, 269, 270, 271, 75], [74, 76, 270, 271, 75]]  # 269 not asked again


def test_numeric_field_ids_when_the_binding_lacks_the_constants(install, meminfo):
    fake = install(fake_nvml.gb10_loaded())
    for name in ("NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN", "NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN",
                 "NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN"):
        delattr(fake, name)  # an nvidia-ml-py older than these
    g = Sampler(meminfo_path=meminfo).sample_once()["gpus"][0]
    assert g["sw_thermal_ns"] == 903_158_000 and fake.field_ids_asked[0][2:5] == [269, 270, 271]


@pytest.mark.parametrize("code", [fake_nvml.NOT_SUPPORTED, fake_nvml.FUNCTION_NOT_FOUND])
def test_without_field_values_the_slow_counter_call_runs_every_ten_seconds(install, meminfo, code):
    """nvmlDeviceGetViolationStatus costs ~0.7 ms a policy on a real H200: read on the counters' own
    cadence and carried between reads. It gives SW power capping, sync boost and the field-75 thermal
    policy counter; the HW counters and SW thermal slowdown have no such call and say so."""
    fake = install(fake_nvml.gb10_loaded())
    fake.fail("field_values", code=code)
    now = [100.0]
    s = Sampler(meminfo_path=meminfo)
    s.open()
    for r in s.readers:
        r.clock = lambda: now[0]
    seen = []
    for step in range(25):  # 1 s apart
        fake.set(thermal_policy_ns=step * 500_000_000)
        g = s.sample_once()["gpus"][0]
        seen.append(g["thermal_policy_ns"])
        now[0] += 1.0
    assert fake.calls["nvmlDeviceGetViolationStatus"] == 3 * 3  # three policies at t=0, 10, 20 s
    assert fake.calls["nvmlDeviceGetFieldValues"] == 1  # tried once, then never again
    assert seen == [0] * 10 + [5_000_000_000] * 10 + [10_000_000_000] * 5
    assert g["sw_power_cap_ns"] == 165_687_000 and g["sync_boost_ns"] == 0
    for key in ("sw_thermal_ns", "hw_thermal_ns", "hw_power_brake_ns"):
        assert g[key] is None and g["errors"][key].startswith("not readable without nvmlDeviceGetFieldValues"), key
    rows = [{"t": 100.0 + i, "gpus": [{"thermal_policy_ns": v, "util_gpu": 97}]} for i, v in enumerate(seen)]
    v = g04_throttling.judge(readings_of(telemetry={"samples": rows}), Config())
    assert v.summary.startswith("thermal throttling: thermal policy counter +10.0 s (42% of the window) (NVML "
                                "field 75, weaker evidence than field 269)"), v.summary


def test_a_counter_no_device_answers_is_none_with_its_reason_and_not_asked_again(install, meminfo):
    fake = install(fake_nvml.gb10_loaded())
    fake.fail("hw_power_brake_ns")
    now = [100.0]
    s = Sampler(meminfo_path=meminfo)
    s.open()
    s.readers[0].clock = lambda: now[0]
    for _ in range(2):
        g = s.sample_once()["gpus"][0]
        now[0] += 10.0
    assert g["sw_thermal_ns"] == 903_158_000 and g["hw_power_brake_ns"] is None
    assert g["errors"]["hw_power_brake_ns"] == "NOT_SUPPORTED (Not Supported)"
    assert 271 not in fake.field_ids_asked[-1]


def test_every_counter_failing_on_the_first_call_falls_back_to_violation_status(install, meminfo):
    fake = install(fake_nvml.gb10_loaded())
    fake.fail("sw_power_cap_ns", "sync_boost_ns", "sw_thermal_ns", "hw_thermal_ns", "hw_power_brake_ns")
    g = Sampler(meminfo_path=meminfo).sample_once()["gpus"][0]
    assert g["thermal_policy_ns"] == 0 and fake.calls["nvmlDeviceGetViolationStatus"] == 3
    assert "no counter answered" in g["errors"]["sw_thermal_ns"]


def test_mem_reader_keeps_proc_meminfo_open_and_matches_a_full_parse():
    from sparktui.core.telemetry import MEM_FIELDS
    from sparktui.probes.host import read_meminfo_bytes
    from sparktui.probes.sampler import MemReader

    r = MemReader("/proc/meminfo")
    try:
        a, err = r.read()
        fd = r._fd
        b, _ = r.read()
        assert err is None and fd is not None and r._fd == fd  # same descriptor, re-read with pread
        full = read_meminfo_bytes("/proc/meminfo")
        assert set(a) == {k for k in MEM_FIELDS if k in full} and a["MemTotal"] == full["MemTotal"]
        assert abs(b["MemAvailable"] - full["MemAvailable"]) < full["MemTotal"] // 10
    finally:
        r.close()


def test_mem_reader_parses_only_whole_keys(tmp_path):
    from sparktui.probes.sampler import MemReader

    p = tmp_path / "meminfo"
    p.write_text(MEMINFO.replace("Cached:         83886080 kB\n", ""))
    got, err = MemReader(str(p)).read()
    assert err is None and "Cached" not in got  # SwapCached is not Cached
    assert got["SwapTotal"] == 4194304 * 1024


def test_h200_profile_reports_device_memory_and_limit(install, meminfo):
    install(fake_nvml.h200())
    g = Sampler(meminfo_path=meminfo).sample_once()["gpus"][0]
    assert g["power_limit_w"] == 700.0 and g["mem_total"] == 143_771 * 1024 * 1024 and g["mem_mhz"] == 3201
    assert g["errors"] == {}


def test_meminfo_unreadable_is_an_error_not_a_crash(install, tmp_path):
    install(fake_nvml.gb10())
    s = Sampler(meminfo_path=str(tmp_path / "nope")).sample_once()
    assert s["mem"] == {} and "cannot read" in s["errors"]["meminfo"]
    assert s["gpus"][0]["temp_c"] == 41


def test_ring_buffers_stay_bounded_and_round_trip(install, meminfo):
    fake = install(fake_nvml.gb10_loaded())
    ticks = iter(range(100))
    s = Sampler(history=5, meminfo_path=meminfo, clock=lambda: 1000.0 + next(ticks))
    taken = []
    for i in range(20):
        fake.set(temp_c=60 + i, reasons=0x20 if i % 2 else 0)
        taken.append(s.sample_once())
    h = s.history
    assert len(h) == 5 and h.appended == 20
    assert all(len(d) == 5 for d in h.series.values()) and len(h._errors) == 5
    assert h.values("g0.temp_c") == [75, 76, 77, 78, 79]
    assert h.samples() == taken[-5:]  # rebuilt samples equal what was taken
    assert [x["t"] for x in h.samples(last_s=0.0)] == [taken[-1]["t"]]


def test_trailing_windows_stay_exact_while_samples_arrive_and_the_ring_wraps(install, meminfo):
    """samples(last_s) keeps what it built last time; whatever the call pattern, it must still equal
    the samples as taken (new ones, errors coming and going, the ring overwriting the oldest)."""
    fake = install(fake_nvml.gb10_loaded())
    clock = iter(range(10_000))
    s = Sampler(history=50, meminfo_path=meminfo, clock=lambda: 1000.0 + next(clock))
    h, taken = s.history, []
    for step in range(170):
        fake.set(temp_c=40 + step % 30, power_w=float(step))
        if step % 37 == 5:
            fake.fail("power_w")
        elif step % 37 == 9:
            fake.heal("power_w")
        taken.append(s.sample_once())
        if step % 3 == 0:
            window = (10.0, 10.0, 25.0, None, 10.0)[step % 5]  # mostly the dashboard's one window
            kept = taken[-len(h):]
            expect = kept if window is None else [x for x in kept if x["t"] >= kept[-1]["t"] - window]
            assert h.samples(last_s=window) == expect, step
    assert h.samples(last_s=10.0) == taken[-11:]
    assert h.samples(last_s=10.0)[0] is h.samples(last_s=10.0)[0]  # built once, then reused


def test_history_pads_series_that_appear_later():
    h = History(10)
    h.append({"t": 1.0, "gpus": [], "mem": {"MemTotal": 5}, "errors": {"nvml": "x"}})
    h.append({"t": 2.0, "gpus": [{"index": 0, "temp_c": 50, "errors": {}}], "mem": {"MemTotal": 5}})
    out = h.samples()
    assert out[0]["gpus"] == [] and out[0]["errors"] == {"nvml": "x"}
    assert out[1]["gpus"][0]["temp_c"] == 50 and "errors" not in out[1]


def test_thread_samples_pauses_resumes_and_survives_a_bad_callback(install, meminfo):
    install(fake_nvml.gb10())
    q: queue.Queue = queue.Queue(maxsize=1000)
    calls = []

    def bad_callback(sample):
        calls.append(sample["t"])
        raise RuntimeError("listener bug")

    s = Sampler(interval_s=0.01, meminfo_path=meminfo, on_sample=bad_callback, out_queue=q).start()
    try:
        for _ in range(3):
            q.get(timeout=2)
        s.pause()
        time.sleep(0.05)
        n = len(calls)
        time.sleep(0.1)
        assert len(calls) <= n + 1  # at most the one in flight when paused
        s.resume()
        deadline = time.monotonic() + 2
        while len(calls) < n + 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(calls) >= n + 3
    finally:
        s.stop()
    assert not s.running and s.callback_errors >= 3 and "listener bug" in s.last_callback_error
    assert not any(t.name == "sparktui-sampler" for t in threading.enumerate())


def test_gather_reports_its_window(install, meminfo):
    install(fake_nvml.gb10())
    data = gather(Config(), window_s=0.2, interval_s=0.1, meminfo_path=meminfo)
    assert len(data["samples"]) in (3, 4) and data["requested_window_s"] == 0.2  # 4: see the next test
    assert 0.2 <= data["window_s"] <= 1.0 and data["static"]["devices"][0]["name"]["value"] == "NVIDIA GB10"


def _stepped(step):
    """A wall clock that advances ``step`` per sample, whatever the real time."""
    ticks = itertools.count()
    return lambda: 1000.0 + step * next(ticks)


def test_gather_takes_one_sample_past_the_window_when_the_timestamps_fall_short(install, meminfo):
    """Timestamps are wall-clock, rounded to the ms, the schedule is monotonic: the recorded span can
    come out a hair short of the window (a --watch run that then ends "watching: 10 of 10 min")."""
    install(fake_nvml.gb10_loaded())
    exact = gather(Config(), window_s=0.2, interval_s=0.1, meminfo_path=meminfo, clock=_stepped(0.1))
    assert [s["t"] for s in exact["samples"]] == [1000.0, 1000.1, 1000.2]
    short = gather(Config(), window_s=0.2, interval_s=0.1, meminfo_path=meminfo, clock=_stepped(0.099))
    assert [s["t"] for s in short["samples"]] == [1000.0, 1000.099, 1000.198, 1000.297]
    assert short["window_s"] >= 0.2
    cfg = Config().with_overrides(thermal={"window_min": 0.2 / 60})
    v = g04_throttling.judge(readings_of(telemetry=short), cfg)
    assert v.status.value == "ok" and v.summary.startswith("no throttling"), v.summary


def test_the_judge_knows_the_samplers_counter_cadence():
    # G4 counts a flat counter over this span as read at least twice: the sampler must read that often.
    assert g04_throttling.COUNTERS_READ_WITHIN_S >= sampler_mod.COUNTERS_EVERY_S


def test_gather_reads_the_counters_again_on_its_last_sample(install, meminfo):
    """The counters are read every 10 s, so a 2 s `check` window read them once and showed "+0.0 s"
    whatever happened. gather() reads them again on its last sample."""
    fake = install(fake_nvml.gb10_loaded())
    field_values = fake.nvmlDeviceGetFieldValues

    def accumulating(h, ids):  # SW thermal slowdown: the counter grows 0.5 s between reads
        fake.set(sw_thermal_ns=fake.gpus[0].values["sw_thermal_ns"] + 500_000_000)
        return field_values(h, ids)

    fake.nvmlDeviceGetFieldValues = accumulating
    data = gather(Config(), window_s=0.2, interval_s=0.1, meminfo_path=meminfo)
    samples = data["samples"]
    assert fake.calls["nvmlDeviceGetFieldValues"] == len(data["counters_read_t"]) >= 2
    assert data["counters_read_t"][0] == samples[0]["t"] and data["counters_read_t"][-1] == samples[-1]["t"]
    v = g04_throttling.judge(readings_of(telemetry=data), Config())
    assert v.status.value == "warn" and v.summary.startswith("thermal throttling at 72 °C"), v.summary


def test_gather_can_be_cancelled_and_says_how_long_it_ran(install, meminfo):
    install(fake_nvml.gb10())
    stop = threading.Event()
    threading.Timer(0.15, stop.set).start()
    t0 = time.monotonic()
    data = gather(Config(), window_s=60.0, interval_s=0.05, meminfo_path=meminfo, stop=stop)
    assert time.monotonic() - t0 < 2.0
    assert data["requested_window_s"] == 60.0 and data["window_s"] < 1.0 and len(data["samples"]) >= 2
    assert data["counters_read_t"][-1] == data["samples"][-1]["t"]  # cut short, still read at the end


def test_telemetry_and_processes_probes_registered_and_never_raise(install):
    install(fake_nvml.gb10(library_missing=True))
    cfg = Config().with_overrides(telemetry={"check_window_s": 0.1})
    t = safe_read("telemetry", cfg)
    assert t.data["samples"] and "LIBRARY_NOT_FOUND" in t.error
    p = safe_read("processes", cfg)
    assert p.data is not None and p.data["nvml"]["ok"] is False and "LIBRARY_NOT_FOUND" in p.data["nvml"]["error"]


def test_decode_reasons_names_known_and_unknown_bits():
    assert decode_reasons(0x1 | 0x20 | 0x40) == ["gpu_idle", "sw_thermal_slowdown", "hw_thermal_slowdown"]
    assert decode_reasons(0x800) == ["bit_0x800"] and decode_reasons(0) == [] and decode_reasons(None) is None


def test_free_columns_follow_procps_4():
    from sparktui.probes.host import parse_meminfo

    f = free_gib(parse_meminfo(MEMINFO))
    kib = 1024 * 1024
    assert f["total"] == pytest.approx(127611680 / kib)
    assert f["used"] == pytest.approx((127611680 - 89128960) / kib)  # total - available
    assert f["buff_cache"] == pytest.approx((314572 + 83886080 + 1258291) / kib)
    lines = render_free_g(parse_meminfo(MEMINFO)).splitlines()
    assert lines[0].split() == ["total", "used", "free", "shared", "buff/cache", "available"]
    assert lines[1].split() == ["Mem:", "121", "36", "3", "0", "81", "85"]  # truncated like free -g
