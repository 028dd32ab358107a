"""Fakes used at the hardware boundary only (NVML). Everything else in tests is real."""
