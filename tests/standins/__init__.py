"""Stand-in target interpreters: the real Python with a fake ``torch`` that fails in a chosen way."""
