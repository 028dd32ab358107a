"""G8's sources: the official playbooks' open issues (``github``) and what they mention (``matching``).

This package file stays import-free on purpose: ``matching`` is pure and may be imported where
httpx must not be (judges); only ``sparktui.playbooks.github`` brings in the HTTP client.
"""
