"""How a probe is declared: once, in its own module, as ``PROBES = (Probe(shapes.KEY, read), ...)``.

The declaration names the reading it fills (a typed key of core/shapes.py, which also gives the
reading's name and data shape), the function that reads it, and whether that function takes
``cancel``. probes/__init__.py derives the registry, ``names()``, the cancellable set and
``safe_read`` from the declarations; nothing else lists probes.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass
from typing import Any, Protocol

from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.shapes import Key


class Reader(Protocol):
    """``read(cfg) -> Reading``: must not raise (``safe_read`` still catches what it does)."""

    def __call__(self, cfg: Config) -> Reading[Any]: ...


class CancellableReader(Protocol):
    """A reader that runs subprocesses, samples or scans for a while, and stops when ``cancel`` is set."""

    def __call__(self, cfg: Config, cancel: threading.Event | None = None) -> Reading[Any]: ...


@dataclass(frozen=True)
class Probe:
    """One probe: the reading it fills, its reader, whether the reader takes ``cancel``, and
    whether a long-lived caller reads it in a child process (``isolated``: what it allocates while
    it works would otherwise stay in the dashboard's heap; probes/isolated.py)."""

    key: Key[Any]
    read: Reader  # a CancellableReader is one too (``cancel`` has a default); say so with ``cancellable``
    cancellable: bool = False
    isolated: bool = False

    @property
    def name(self) -> str:
        return self.key.name

    @property
    def reader(self) -> Reader:
        """The reader as its module holds it now: a test that replaces ``tpscan.read`` on the
        module replaces the probe, as when the registry named ``tpscan.read`` itself."""
        module = sys.modules.get(self.read.__module__)
        current = getattr(module, getattr(self.read, "__name__", ""), None) if module is not None else None
        return current if callable(current) else self.read
