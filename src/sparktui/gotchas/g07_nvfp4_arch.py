"""(stub, being written) G7."""

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.verdict import Status, Verdict
from sparktui.gotchas.base import Gotcha


def judge(r: Readings, cfg: Config) -> Verdict:
    return Verdict("G7", Status.UNKNOWN, "not implemented yet")


GOTCHA = Gotcha(
    id="G7", slug="nvfp4-arch", title="nvfp4-arch", symptom="", cause="", check="", fix="", intrusive=False,
    cadence_s=None, probes=(), judge=judge,
)
