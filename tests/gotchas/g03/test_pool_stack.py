"""pool_stack: G3's attribution of the unified pool as parts that add up to MemTotal (the
dashboard stacks them over time)."""

from __future__ import annotations

import json

from sparktui.gotchas.g03_unified_memory import pool_stack
from tests.gotchas.builders import DEMO as DEMO_RECORDING

GIB = 2**30


def test_the_parts_sum_to_memtotal_on_every_demo_sample():
    seen = 0
    for line in DEMO_RECORDING.read_text().splitlines():
        d = json.loads(line)
        if d.get("type") == "sample" and d.get("mem"):
            parts = pool_stack(d["mem"])
            assert [k for k, _ in parts] == ["kernel", "anon", "shmem", "huge", "cache", "free"]
            over = sum(v for _, v in parts) - d["mem"]["MemTotal"]
            # the kernel's share is the remainder, never below 0: where the fields disagree (read at
            # slightly different moments), the parts overshoot by that much, never undershoot
            assert -4096 < over and (over < 4096 or dict(parts)["kernel"] == 0)
            assert all(v >= 0 for _, v in parts)
            seen += 1
    assert seen > 100


def test_a_loaded_spark_attributes_driver_memory_and_hugepages():
    # FACTS.md's loaded Spark: MemTotal 121.7 GiB, 98.2 GiB held by the driver beside 16.3 GiB of processes
    mem = {"MemTotal": int(121.7 * GIB), "MemFree": int(2.0 * GIB), "Buffers": int(0.2 * GIB), "Cached": int(4.9 * GIB),
           "Shmem": int(0.8 * GIB), "KReclaimable": int(0.3 * GIB), "AnonPages": int(16.3 * GIB),
           "HugePages_Total": 512, "Hugepagesize": 2 * 2**20}
    parts = dict(pool_stack(mem))
    assert parts["huge"] == 1 * GIB and parts["anon"] == int(16.3 * GIB) and parts["shmem"] == int(0.8 * GIB)
    assert round(parts["kernel"] / GIB, 1) == 97.0 and round(parts["cache"] / GIB, 1) == 4.6


def test_unread_holder_fields_give_none_not_zeros():
    assert pool_stack({"MemTotal": 128 * GIB, "MemFree": GIB}) is None
