"""rated_power: the one rating G4 judges power against and the dashboard scales its plot by."""

from __future__ import annotations

import math

from sparktui.core.config import Config
from sparktui.gotchas.g04_throttling import rated_power


def test_the_newest_valid_nvml_limit_wins_over_the_config():
    cfg = Config()
    assert rated_power([None, 600.0, 700.0, None], cfg) == (700.0, True)  # an H200's enforced limit
    assert rated_power([700.0, math.nan, -1, 0, None], cfg) == (700.0, True)  # invalid newer ones skipped


def test_a_gb10_without_a_limit_uses_the_configured_rating():
    cfg = Config()
    assert rated_power([None, None], cfg) == (cfg.hardware.rated_power_w, False)
    assert rated_power([], cfg) == (cfg.hardware.rated_power_w, False)
    assert rated_power([True, "700"], cfg) == (cfg.hardware.rated_power_w, False)
