"""``python -m sparktui``."""

from sparktui.cli.main import main

raise SystemExit(main())
