"""(stub, being written) pinned training-stack versions for G9."""

from sparktui.core.config import Config
from sparktui.core.readings import Reading


def pinned_names(cfg: Config) -> list[str]:
    return []


def read(cfg: Config) -> Reading:
    return Reading("pins", None, error="not implemented yet")
