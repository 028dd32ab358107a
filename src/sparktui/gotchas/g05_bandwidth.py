"""(stub, being written) G5."""

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.verdict import Status, Verdict
from sparktui.gotchas.base import Gotcha


def judge(r: Readings, cfg: Config) -> Verdict:
    return Verdict("G5", Status.UNKNOWN, "not implemented yet")


GOTCHA = Gotcha(
    id="G5", slug="bandwidth", title="bandwidth", symptom="", cause="", check="", fix="", intrusive=False,
    cadence_s=None, probes=(), judge=judge,
)
