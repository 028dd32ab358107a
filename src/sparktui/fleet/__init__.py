"""Beyond one box: peers over SSH, their comparison, Prometheus export, Markdown reports.

- ``peers``: fetch a peer's snapshot through the system's ``ssh`` and judge it here.
- ``compare``: pure comparison of machines' readings (what must match for DDP/FSDP).
- ``exporter``: ``sparktui export``, Prometheus metrics for telemetry and verdicts.
- ``report``: ``sparktui report``, a Markdown report safe to paste into an issue.
"""
