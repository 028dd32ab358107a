"""Test support, shipped with the package so the tests, ``benchmarks/`` and ``tools/`` share one copy.

Never imported by product code (an import-linter contract in pyproject.toml forbids it):

- ``fake_nvml``: a stand-in for ``pynvml`` at sparktui's NVML boundary (the only fake the tests use;
  GB10 and H200 profiles), and ``subprocess_env`` to put it behind a real ``python -m sparktui``.
- ``github_server``: a real HTTP server on 127.0.0.1 that answers like GitHub's issues API (G8).
- ``http_load``: many concurrent raw HTTP requests from one asyncio loop (the exporter under load).
- ``spoil``: stored readings with one field replaced by a wrong value, and the judges run on them
  with a hang limit (the never-lie property tests and ``tools/exhaustive_fields.py``).
"""
