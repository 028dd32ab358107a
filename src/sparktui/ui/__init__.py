"""The Textual dashboard: it only shows what the runner and sampler produce."""
