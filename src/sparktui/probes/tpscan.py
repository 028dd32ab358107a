"""(stub, being written) probe 'tpscan'."""

from sparktui.core.config import Config
from sparktui.core.readings import Reading


def read(cfg: Config) -> Reading:
    return Reading("tpscan", None, error="not implemented yet")
