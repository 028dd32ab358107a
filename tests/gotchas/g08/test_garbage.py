"""G8 on a list whose items are garbage (issue 22, Seen 9): an item with nothing of an issue but a
number (`{"number": 1}`, a null or numeric title and no other field) is not an open issue, so a list of
only such items is no evidence of "no open issue names vllm": unknown with the reason, never ok.
Garbage beside real issues is counted and said, and the real ones are judged.

End to end: the G8 probe and judge against the loopback GitHub stand-in (src/sparktui/testing/github_server.py), whose
issues carry the fields GitHub's REST API sends (number, title, body, state, html_url, created_at ...).
"""

from __future__ import annotations

import pytest

from sparktui.core.verdict import Status
from sparktui.testing.github_server import make_issue, serve_issues
from tests.gotchas.builders import g8_judged_live as _judged

GARBAGE = [
    {"number": 1},
    {"number": 1, "title": None},
    {"number": 1, "title": 5},
    {"number": "1", "title": ""},
    {"number": 1, "title": "   "},
    {"number": 1, "labels": [], "comments": 0, "garbage": True},
]


@pytest.mark.parametrize("item", GARBAGE)
def test_a_list_whose_only_item_is_garbage_is_unknown_never_ok(tmp_path, item):
    server, _ = serve_issues([item])
    with server:
        v = _judged(server.url, tmp_path)
    assert v.status is Status.UNKNOWN, v.summary
    assert "the API answered 1 items sparktui could not read" in v.summary


def test_garbage_beside_real_issues_is_counted_and_said(tmp_path):
    server, _ = serve_issues([make_issue(7, "Issue 7"), *GARBAGE])
    with server:
        v = _judged(server.url, tmp_path)
    assert v.status is Status.OK
    assert v.summary == (f"none of 1 readable ({len(GARBAGE)} more could not be read) open issues in "
                         "NVIDIA/dgx-spark-playbooks name vllm")
    left_out = {e.what: e.value for e in v.evidence}["issues left out (unreadable)"]
    assert left_out.startswith(f"{len(GARBAGE)} issue objects without a usable number or title")


def test_garbage_beside_a_matching_issue_still_warns(tmp_path):
    server, _ = serve_issues([{"number": 3}, make_issue(109, "nvidia/vllm is wrong missing Ray")])
    with server:
        v = _judged(server.url, tmp_path)
    assert v.status is Status.WARN and "#109" in v.summary


@pytest.mark.parametrize("item", [
    {"number": 1, "title": "x"},  # a title is enough
    {**make_issue(1, ""), "title": None, "body": "the nvidia/x playbook"},  # untitled, but an issue
    {"number": 1, "html_url": "https://github.com/NVIDIA/dgx-spark-playbooks/issues/1"},
    {"number": 1, "state": "open"},
])
def test_an_item_with_an_issues_fields_is_read(tmp_path, item):
    server, _ = serve_issues([item])
    with server:
        v = _judged(server.url, tmp_path)
    assert v.status is Status.OK and v.summary.startswith("none of 1 open issues"), v.summary
