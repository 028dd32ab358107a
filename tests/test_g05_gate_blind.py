"""G5's gate (intrusive means opt-in): a process view that failed, or a GPU process whose memory
NVML reports N/A, can never read as an idle machine."""

from __future__ import annotations

from sparktui.flows.bandwidth import blockers, competitors, decide
from sparktui.core.readings import Reading, Readings
from sparktui.gotchas.g05_bandwidth import GIB, gate

HOST = {"inside": False, "markers": [], "pid1": "systemd"}


def readings(processes: dict) -> Readings:
    r = Readings()
    r.add(Reading("processes", processes, error=processes.get("scan_error"), source="test"))
    r.add(Reading("meminfo", {"MemTotal": 121 * GIB, "MemAvailable": 100 * GIB}, source="test"))
    return r


def test_a_failed_scan_is_a_blind_view_not_an_empty_machine():
    r = readings({"scan_error": "process scan failed: PermissionError", "nvml": {"ok": True, "count": 0},
                  "container": HOST})
    rows, blind = competitors(r)
    assert rows == [] and blind and "process scan failed" in blind
    d = decide(r, 4 * GIB, force=False)
    assert not d.allowed and "cannot confirm the machine is idle" in d.reasons[0]
    assert any("blind process view" in b for b in blockers(r))


def test_a_reading_without_rows_is_blind_too():
    rows, blind = competitors(readings({"nvml": {"ok": True, "count": 1}, "container": HOST}))
    assert rows == [] and blind and "no process rows" in blind


def test_an_nvml_process_with_na_memory_blocks():
    row = {"pid": 4242, "name": "python3", "kind": "gpu-process", "gpu_mem_bytes": None, "on_gpu": True}
    r = readings({"rows": [row], "nvml": {"ok": True, "count": 1}, "container": HOST})
    d = decide(r, 4 * GIB, force=False)
    assert not d.allowed and any("pid 4242" in x and "amount N/A" in x for x in d.reasons)
    assert blockers(r) == ["pid 4242 python3 (gpu-process)"]


def test_a_process_not_on_the_gpu_with_no_memory_figure_does_not_block():
    row = {"pid": 77, "name": "bash", "kind": "gpu-process", "gpu_memory_bytes": None, "on_gpu": False}
    assert gate(4 * GIB, 100 * GIB, [row], None, force=False).allowed
