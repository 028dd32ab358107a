"""The dashboard's domain panels. They only show: data arrives through their ``show`` methods."""

from sparktui.ui.panels.checklist import Checklist
from sparktui.ui.panels.header import HeaderBar
from sparktui.ui.panels.playbooks import PlaybookPanel
from sparktui.ui.panels.processes import ProcessTable, cap_text, process_details
from sparktui.ui.panels.telemetry import TelemetryPanel

__all__ = ["Checklist", "HeaderBar", "PlaybookPanel", "ProcessTable", "TelemetryPanel", "cap_text", "process_details"]
