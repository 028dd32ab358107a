"""A kept G5 result shown as a skip keeps every evidence row: the figure, how it was measured, its
age and the expected range (a mutation run on 2026-12-05 could drop them all unnoticed)."""

from __future__ import annotations

from tests.test_g05_rules import GB10, kept


def test_a_kept_result_skip_carries_its_figures_age_and_range():
    v = kept({**GB10})
    assert v.status.value == "skip"
    assert v.summary == "intrusive, not rerun; last measured 201 GB/s copy, 240 GB/s read (10 min ago)"
    rows = [(e.what, e.source, e.value) for e in v.evidence]
    assert rows[:6] == [
        ("device", "torch.cuda", "NVIDIA GB10"),
        ("copy bandwidth (bytes read + written per s)", "CUDA events over a device copy loop", 201.3),
        ("read-only bandwidth", "CUDA events over a reduction", 240.2),
        ("buffer / iterations / repeats", "probe", "4.00 GiB / 12 / 5"),
        ("spread across repeats", "probe", "1.2%"),
        ("measured", "kept result", "10 min ago"),
    ]
    assert rows[6][0] == "expected range" and rows[6][2] == "copy 180-220 GB/s, read 231-253 GB/s"
    assert v.fix == ""


def test_a_fresh_figure_far_below_range_warns_with_its_evidence():
    from tests.test_g05_rules import fresh
    v = fresh(copy_gbs=120.0)
    assert v.status.value == "warn" and v.summary.startswith("measured 120 GB/s copy, 240 GB/s read, far below")
    rows = {e.what: e.value for e in v.evidence}
    assert rows["copy bandwidth (bytes read + written per s)"] == 120.0 and rows["device"] == "NVIDIA GB10"
    assert rows["expected range"] == "copy 180-220 GB/s, read 231-253 GB/s"
