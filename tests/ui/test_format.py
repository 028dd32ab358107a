"""The checklist's age column is 5 wide: every age must fit it and still say its unit."""

from sparktui.ui.format import age


def test_every_age_fits_five_columns_with_its_unit():
    for s in list(range(0, 7200, 7)) + list(range(7200, 3 * 86400, 599)) + [10 * 86400, 99 * 86400]:
        text = age(s)
        assert len(text) <= 5 and text[-1] in "mh", (s, text)
    assert [age(x) for x in (30, 42 * 60, 9 * 3600 + 5 * 60, 14 * 3600 + 59 * 60, 2 * 86400 + 3 * 3600)] == \
        ["<1m", "42m", "9h05m", "14h", "2d3h"]
    assert age(None) == "—"


def test_bandwidth_line_from_a_kept_or_fresh_result():
    from sparktui.ui.format import bandwidth_line

    kept = {"status": "ok", "copy_gbs": 221.4, "read_gbs": 243.0, "measured_at": 1000.0}
    assert bandwidth_line(kept, 1000.0 + 47 * 3600) == "bandwidth 221 GB/s copy, 243 read, 1d23h ago"
    assert bandwidth_line(kept, 1010.0) == "bandwidth 221 GB/s copy, 243 read, just now"
    assert len(bandwidth_line({**kept, "copy_gbs": 4292.0, "read_gbs": 4391.3}, 1000.0 + 9 * 3600)) <= 46
    for bad in (None, {"status": "error"}, {"copy_gbs": "fast"}, {"copy_gbs": None}, [], {"copy_gbs": True}):
        assert bandwidth_line(bad, 0.0) is None, bad


def test_nvml_errors_in_a_few_words_never_an_unclosed_bracket():
    from sparktui.ui.format import short_reason

    assert short_reason("nvmlInit failed: LIBRARY_NOT_FOUND (NVML Shared Library Not Found)") == "no NVML library"
    assert short_reason("NOT_SUPPORTED (Not Supported)") == "not supported"
    assert short_reason(None) == "unavailable"
    long = short_reason("something quite unexpected happened here (details)", 20)
    assert len(long) == 20 and long.endswith("…") and "(" not in long
