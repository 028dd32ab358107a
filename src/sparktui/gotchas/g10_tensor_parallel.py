"""(stub, being written) G10."""

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.verdict import Status, Verdict
from sparktui.gotchas.base import Gotcha


def judge(r: Readings, cfg: Config) -> Verdict:
    return Verdict("G10", Status.UNKNOWN, "not implemented yet")


GOTCHA = Gotcha(
    id="G10", slug="tensor-parallel", title="tensor-parallel", symptom="", cause="", check="", fix="", intrusive=False,
    cadence_s=None, probes=(), judge=judge,
)
