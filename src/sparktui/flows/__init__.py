"""Flows that both the CLI and the dashboard follow (gate, ask, run): one place, so ui never imports cli."""
