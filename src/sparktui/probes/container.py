"""(stub, being written) probe 'container'."""

from sparktui.core.config import Config
from sparktui.core.readings import Reading


def read(cfg: Config) -> Reading:
    return Reading("container", None, error="not implemented yet")
