"""Headless command line: check, snapshot, explain (and the dashboard entry point)."""
