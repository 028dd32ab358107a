"""sparktui: keeps a DGX Spark (GB10) honest during long training runs.

Layers (docs/architecture.md): ``probes`` read the machine and return plain data, ``gotchas`` judge
that data (pure functions, one module per check), the ``runner`` joins them, ``live`` is where
readings come from over time, ``core`` holds the verdict model, config and snapshot format, and
``cli``, ``ui`` and ``fleet`` only show.
"""

__version__ = "0.1.0"
