"""The gotchas in a fixed order: the ten, G1-G10, then the field reports' G11 onward. Ids never
change: scripts refer to checks by number."""

from __future__ import annotations

import re

from sparktui.gotchas.base import Gotcha
from sparktui.gotchas import (
    g01_cuda_abi,
    g02_flash_attn,
    g03_unified_memory,
    g04_throttling,
    g05_bandwidth,
    g06_contention,
    g07_nvfp4_arch,
    g08_stale_playbooks,
    g09_container_drift,
    g10_tensor_parallel,
    g11_kernel_log,
    g12_two_spark_link,
    g13_driver_flavour,
)

REGISTRY: dict[str, Gotcha] = {
    m.GOTCHA.id: m.GOTCHA
    for m in (
        g01_cuda_abi,
        g02_flash_attn,
        g03_unified_memory,
        g04_throttling,
        g05_bandwidth,
        g06_contention,
        g07_nvfp4_arch,
        g08_stale_playbooks,
        g09_container_drift,
        g10_tensor_parallel,
        g11_kernel_log,
        g12_two_spark_link,
        g13_driver_flavour,
    )
}
IDS: tuple[str, ...] = tuple(REGISTRY)


class UnknownGotcha(KeyError):
    pass


def normalize_id(text: str) -> str:
    """'g4', 'G04', '4' -> 'G4'. Raises UnknownGotcha for anything else."""
    t = text.strip().upper()
    if t.startswith("G"):
        t = t[1:]
    # ASCII digits only: str.isdigit() accepts '²' and other digits that int() rejects
    if re.fullmatch(r"[0-9]{1,4}", t) and f"G{int(t)}" in REGISTRY:
        return f"G{int(t)}"
    raise UnknownGotcha(f"unknown gotcha {text!r}: ids are G1 to {IDS[-1]}")


def get(text: str) -> Gotcha:
    return REGISTRY[normalize_id(text)]
