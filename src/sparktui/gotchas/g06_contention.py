"""(stub, being written) G6."""

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.verdict import Status, Verdict
from sparktui.gotchas.base import Gotcha


def judge(r: Readings, cfg: Config) -> Verdict:
    return Verdict("G6", Status.UNKNOWN, "not implemented yet")


GOTCHA = Gotcha(
    id="G6", slug="contention", title="contention", symptom="", cause="", check="", fix="", intrusive=False,
    cadence_s=None, probes=(), judge=judge,
)
