"""The model every layer shares: verdicts, probe readings, snapshots and config."""
