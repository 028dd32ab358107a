"""(stub, being written) G3."""

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.verdict import Status, Verdict
from sparktui.gotchas.base import Gotcha


def judge(r: Readings, cfg: Config) -> Verdict:
    return Verdict("G3", Status.UNKNOWN, "not implemented yet")


GOTCHA = Gotcha(
    id="G3", slug="unified-memory", title="unified-memory", symptom="", cause="", check="", fix="", intrusive=False,
    cadence_s=None, probes=(), judge=judge,
)
