"""sparktui: keeps a DGX Spark (GB10) honest during long training runs.

Layers: ``probes`` read the machine and return plain data, ``gotchas`` judge that data (pure
functions, one module per gotcha G1-G10), ``core`` holds the verdict model, config and snapshot
format, ``cli`` and ``ui`` only show.
"""

__version__ = "0.1.0"
