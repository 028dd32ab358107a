"""The events log: what counts as getting worse, and what is announced."""

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
    assert log.observe(v(Status.FAIL), 7.0).worse  # worse than the warn known before the gap
    assert [c.t for c in log] == [1.0, 3.0, 4.0, 5.0, 6.0, 7.0]


def test_unknown_is_a_gap_not_a_better_status():
    """A cancelled check or a network blip (unknown) then the same warn again is not news."""
    log = EventLog()
    log.observe(v(Status.WARN), 1.0)
    assert not log.observe(v(Status.UNKNOWN, summary="cancelled by the user"), 2.0).worse
    back = log.observe(v(Status.WARN), 3.0)
    assert back is not None and back.old is Status.UNKNOWN and not back.worse
    # the session's first known status after starting unknown is shown, not announced
    log2 = EventLog()
    log2.observe(v(Status.UNKNOWN, gid="G8"), 1.0)
    assert not log2.observe(v(Status.WARN, gid="G8"), 2.0).worse


def test_a_flapping_check_is_counted_on_one_entry_not_logged_every_time():
    log = EventLog(flap_window_s=1800)
    log.observe(v(Status.OK), 0.0)
    log.observe(v(Status.WARN, gid="G9"), 1.0)  # another check's news stays in place
    for i in range(1, 60):  # ok <-> warn every 5 s for 5 minutes
        log.observe(v(Status.WARN if i % 2 else Status.OK, summary=f"s{i}"), 5.0 * i)
    entries = [(c.id, c.old, c.new, c.repeats) for c in log]
    assert entries == [("G4", None, Status.OK, 1), ("G9", None, Status.WARN, 1),
                       ("G4", Status.WARN, Status.OK, 29), ("G4", Status.OK, Status.WARN, 30)]
    last = list(log)[-1]
    assert last.t == 5.0 and last.last_t == 295.0 and last.summary == "s59" and "(x30)" in last.line()
    # after a quiet half hour the same transition is a new entry again
    log.observe(v(Status.OK), 2400.0)
    assert list(log)[-1].t == 2400.0 and list(log)[-1].repeats == 1


def test_alerts_once_per_check_per_interval_unless_it_escalates():
    log = EventLog(alert_every_s=600)
    log.observe(v(Status.OK), 0.0)
    assert log.should_alert(log.observe(v(Status.WARN), 10.0))
    log.observe(v(Status.OK), 20.0)
    assert not log.should_alert(log.observe(v(Status.WARN), 30.0))  # the same news 20 s later: quiet
    assert log.should_alert(log.observe(v(Status.FAIL), 40.0))  # escalation always gets through
    log.observe(v(Status.OK), 50.0)
    assert not log.should_alert(log.observe(v(Status.WARN), 60.0))
    log.observe(v(Status.OK), 700.0)
    assert log.should_alert(log.observe(v(Status.WARN), 710.0))  # ten minutes on: announced again
    assert not log.should_alert(log.observe(v(Status.OK), 720.0))  # better is never announced


def test_log_is_bounded():
    log = EventLog(maxlen=10, flap_window_s=0)
    for i in range(100):
        log.observe(v(Status.OK if i % 2 else Status.WARN), float(i))
    assert len(log) == 10 and list(log)[-1].t == 99.0
