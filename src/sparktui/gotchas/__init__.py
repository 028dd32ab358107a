"""The gotchas in a fixed order: the ten, G1-G10, then the field reports' G11 onward. Ids never
change: scripts refer to checks by number."""

from __future__ import annotations

import re
from types import ModuleType

from sparktui.gotchas.base import Gotcha

# The registry: one line per check. A module named gNN_<slug> declares ``GOTCHA`` with id "GNN";
# adding a check is its module and its line here (docs/architecture.md, "Adding a check").
from sparktui.gotchas import (  # noqa: E402 (after the base it builds on)
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
    g14_run_progress,
)


def _registered(namespace: dict[str, object]) -> dict[str, Gotcha]:
    """The checks imported above, in the order of their numbers (the ten, then G11 onward). A
    module whose number and id disagree is a mistake that must not renumber a check."""
    modules = sorted((m for name, m in namespace.items() if isinstance(m, ModuleType) and re.fullmatch(r"g[0-9]{2}_\w+", name)),
                     key=lambda m: m.__name__)
    out: dict[str, Gotcha] = {}
    for m in modules:
        g: Gotcha = m.GOTCHA
        number = int(m.__name__.rsplit(".", 1)[1][1:3])
        if g.id != f"G{number}" or g.id in out:
            raise ValueError(f"{m.__name__} declares {g.id}: a gNN module declares GNN, once")
        out[g.id] = g
    return out


REGISTRY: dict[str, Gotcha] = _registered(globals())
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
