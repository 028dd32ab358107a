"""The kernel-log parser is linear in each line (issue 22, "Seen" 6: 4 KB lines holding `AER` without
blanks cost 137 ms each, 300 of them 39 s). Every line is cut to MAX_PARSE before matching; each
adversarial shape below (built against one pattern or prefix of probes/kernel_log.py) is parsed at
256 bytes and 4 KB (MAX_PARSE) a line: the cost per line stays small and grows about 16 times, not
256 (quadratic). The wide step keeps the two apart under load (a CI run beside other work): timer
noise and a preempted batch move a ratio by 2-3x, not by 16x."""

from __future__ import annotations

import time

import pytest

from sparktui.probes import kernel_log as kl

SHAPES = {
    "AER without blanks": lambda n: "AER" * (n // 3),
    "a device's AER: repeated": lambda n: "pcieport " + "AER:" * (n // 4),
    "error received repeated": lambda n: "x " + "error received" * (n // 14),
    "PCIe Bus Error repeated": lambda n: "PCIe Bus Error: severity=" * (n // 25),
    "Xid address without its end": lambda n: "NVRM: Xid (PCI:" + "0" * n,
    "NVRM GPU GPU GPU": lambda n: "NVRM: " + "GPU " * (n // 4),
    "Killed process open parentheses": lambda n: "Killed process 1 (" + "(" * n,
    "Kill process without score": lambda n: "Kill process 1 (" + "a) " * (n // 3),
    "oom-kill pid after pid": lambda n: "oom-kill:" + ",pid=1" * (n // 6),
    "oom-kill task after task": lambda n: "oom-kill:" + ",task=" * (n // 6) + ",pid=1,uid=0",
    "oom-kill memcg fields": lambda n: "oom-kill:" + ",task_memcg=" * (n // 12),
    "Task in without limit": lambda n: "Task in " + "a" * n,
    "soft lockup task without end": lambda n: "BUG: soft lockup - CPU#1 stuck for 1s! [" + "a:" * (n // 2),
    "hard LOCKUP repeated": lambda n: "LOCKUP" + " hard LOCKUP on cpu" * (n // 19),
    "syslog stamp then no blank": lambda n: "Jan  1 00:00:00 " + "a" * n,
    "syslog host then no kernel": lambda n: "Jan  1 00:00:00 " + "a " * (n // 2),
    "dmesg bracket of blanks": lambda n: "[" + " " * n,
    "ISO time of digits": lambda n: "2024-01-01T00:00:00." + "0" * n,
    "kmsg-like numbers": lambda n: "1," * (n // 2),
    "device prefixes repeated": lambda n: "nvidia " + "0000:01:00.0: " * (n // 14),
    "rss fields with commas": lambda n: "Out of memory: Killed process 1 (x) anon-rss:" + "1," * (n // 2),
    "blanks then text": lambda n: " " * n + "x",
    "kmsg escapes": lambda n: "3,1,1,-;" + "\\x0a" * (n // 4),
}


def cost_per_line(shape, n: int, lines: int = 40) -> float:
    batch = [shape(n) for _ in range(lines)]
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ev in kl.parse_lines(batch):
            pass
        best = min(best, time.perf_counter() - t0)
    return best / lines


@pytest.mark.parametrize("name", list(SHAPES))
def test_each_adversarial_shape_costs_linear_time(name):
    shape = SHAPES[name]
    assert kl.MAX_PARSE == 4096  # past it a line is cut: a longer one would measure the cut, not the patterns
    small, big = cost_per_line(shape, 256), cost_per_line(shape, 4096)
    assert big < 0.002, f"{name}: {big * 1e3:.2f} ms for a 4 KB line"
    # linear: about 16x from 256 B to 4 KB; quadratic would be 256x (a floor for timer noise on tiny costs)
    assert big < 48 * max(small, 2e-5), f"{name}: 256 B {small * 1e6:.0f} us, 4 KB {big * 1e6:.0f} us a line"


def test_a_line_longer_than_max_parse_costs_no_more_than_one_of_max_parse():
    huge = "AER" * 100_000
    t0 = time.perf_counter()
    for _ in range(20):
        list(kl.parse_lines([huge]))
    assert (time.perf_counter() - t0) / 20 < 0.005
