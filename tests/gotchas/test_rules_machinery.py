"""gotchas/base.py's rule machinery (issue 23: one copy for every judge made of named rules): the first
rule that speaks, every finding, and the worst of them (the first of the most severe, weight breaking ties)."""

from __future__ import annotations

import pytest

from sparktui.core.verdict import Status
from sparktui.gotchas.base import Finding, all_findings, first_finding, worst_index, worst_of


def _rule(found: Finding | None, asked: list[str], name: str):
    def rule(subject: str) -> Finding | None:
        asked.append(f"{name}({subject})")
        return found
    return rule


def test_first_finding_asks_in_order_and_stops_at_the_first_that_speaks():
    asked: list[str] = []
    warn = Finding(Status.WARN, "w")
    rules = [_rule(None, asked, "a"), _rule(warn, asked, "b"), _rule(Finding(Status.FAIL, "f"), asked, "c")]
    assert first_finding(rules, "x") is warn and asked == ["a(x)", "b(x)"]
    assert first_finding([_rule(None, [], "a")], "x") is None and first_finding([], "x") is None


def test_all_findings_keeps_the_rules_order():
    a, c = Finding(Status.OK, "a"), Finding(Status.UNKNOWN, "c")
    assert all_findings([_rule(a, [], "a"), _rule(None, [], "b"), _rule(c, [], "c")], "x") == [a, c]


def test_the_worst_is_the_first_of_the_most_severe_then_the_heaviest():
    first_fail, second_fail = Finding(Status.FAIL, "1"), Finding(Status.FAIL, "2")
    found = [Finding(Status.WARN, "w", 9.0), first_fail, Finding(Status.UNKNOWN, "u"), second_fail]
    assert worst_of(found) is first_fail and worst_index(found) == 1
    light, heavy = Finding(Status.WARN, "light", 0.1), Finding(Status.WARN, "heavy", 0.5)
    assert worst_of([light, heavy]) is heavy and worst_of([heavy, light]) is heavy
    assert Finding(Status.FAIL, "x").rank() == (Status.FAIL.severity, 0.0)
    with pytest.raises(ValueError):
        worst_index([])
