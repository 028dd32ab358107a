"""(stub, being written) G8."""

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.verdict import Status, Verdict
from sparktui.gotchas.base import Gotcha


def judge(r: Readings, cfg: Config) -> Verdict:
    return Verdict("G8", Status.UNKNOWN, "not implemented yet")


GOTCHA = Gotcha(
    id="G8", slug="stale-playbooks", title="stale-playbooks", symptom="", cause="", check="", fix="", intrusive=False,
    cadence_s=None, probes=(), judge=judge,
)
