"""The events log: what counts as getting worse."""

from sparktui.core.events import EventLog
from sparktui.core.verdict import Status, Verdict


def v(status, gid="G4", summary="x"):
    return Verdict(gid, status, summary)


def test_changes_are_logged_and_only_worsening_is_news():
    log = EventLog()
    first = log.observe(v(Status.WARN), 1.0)
    assert first is not None and first.old is None and not first.worse
    assert log.observe(v(Status.WARN), 2.0) is None  # same status: no event
    assert log.observe(v(Status.FAIL), 3.0).worse
    assert not log.observe(v(Status.OK), 4.0).worse
    assert log.observe(v(Status.WARN), 5.0).worse
    assert not log.observe(v(Status.UNKNOWN), 6.0).worse
    assert log.observe(v(Status.FAIL), 7.0).worse  # unknown -> fail is news
    assert [c.t for c in log] == [1.0, 3.0, 4.0, 5.0, 6.0, 7.0]


def test_log_is_bounded():
    log = EventLog(maxlen=10)
    for i in range(100):
        log.observe(v(Status.OK if i % 2 else Status.WARN), float(i))
    assert len(log) == 10 and list(log)[-1].t == 99.0
