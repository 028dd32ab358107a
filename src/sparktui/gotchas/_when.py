"""When something happened in a recording, said the same way by every judge in review mode.

The formatting lives in ``sparktui.core.units`` (one meaning of a time for every layer); this
module keeps the names the judges import.
"""

from __future__ import annotations

from sparktui.core.units import offset_text, when_text

__all__ = ["offset_text", "when_text"]
