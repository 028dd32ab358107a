"""The telemetry panel: temperature, power, clocks, memory as `free -g` sees it, bandwidth."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Label

from sparktui.core.telemetry import History, free_gib
from sparktui.ui.format import duration, short_reason
from sparktui.ui.widgets.meter import Meter
from sparktui.ui.widgets.text import set_content


class TelemetryPanel(Vertical):
    """Temperature, power, SM clock, memory as `free -g` sees it, and the last measured bandwidth."""

    def compose(self) -> ComposeResult:
        # Held, not queried each tick (cheaper, and safe while the app shuts down).
        self.temp, self.power = Meter("temp", "m-temp"), Meter("power", "m-power")
        self.clock, self.mem, self.avail = Meter("SM clk", "m-clock"), Meter("memory", "m-mem"), Meter("avail", "m-avail")
        self.bandwidth = Label("bandwidth: not measured (b)", id="bandwidth")
        self.note = Label("", id="telemetry-note")  # styled (dim): a Label draws that as the theme wants
        yield from (self.temp, self.power, self.clock, self.mem, self.avail, self.bandwidth, self.note)

    def show(self, history: History, rated_w: float, span_s: float | None) -> None:
        s = history.latest
        if not s or not self.is_attached:
            return  # nothing yet, or a sample that arrived while the app shuts down
        g0 = (s.get("gpus") or [{}])[0] if s.get("gpus") else {}
        errs = (g0.get("errors") or {}) if g0 else {}

        def val(key: str, fmt: str, unit: str) -> str:
            v = g0.get(key) if g0 else None
            if v is None:
                why = errs.get(key) or (s.get("errors") or {}).get("nvml") or "unavailable"
                return f"n/a ({short_reason(why)})"
            return f"{v:{fmt}} {unit}"

        self.temp.show(val("temp_c", ".0f", "°C"), history.plotted("g0.temp_c"))
        power = val("power_w", ".1f", "W")
        if g0 and g0.get("power_w") is not None:
            power += f" / {rated_w:.0f}"
        self.power.show(power, history.plotted("g0.power_w"))
        self.clock.show(val("sm_mhz", ".0f", "MHz"), history.plotted("g0.sm_mhz"))
        f = free_gib(s.get("mem") or {})
        if f.get("total") is not None:
            mem = f"{f['used']:.0f}/{f['total']:.0f}G used {f['buff_cache'] or 0:.0f}G cache"
        else:
            mem = "n/a (/proc/meminfo)"
        total = (s.get("mem") or {}).get("MemTotal")
        available = history.plotted("mem.MemAvailable")  # one series feeds both memory meters
        self.mem.show(mem, available if total is not None else [], below=total)
        avail = f"{f['available']:.1f} GiB" if f.get("available") is not None else "n/a"
        self.avail.show(avail, available)
        reasons = [r for r in (g0.get("reasons") or []) if r != "gpu_idle"] if g0 else []
        if history.wrapped and history.trend.first_t is not None and s.get("t") is not None:
            note = f"history: {duration(s['t'] - history.trend.first_t)} (a point a minute)"
        else:
            note = f"history: {span_s / 60:.0f} min" if span_s else ""
        if reasons:
            note = f"clock events: {', '.join(reasons)}  " + note
        set_content(self.note, Text(note, style="yellow" if reasons else "dim"))

    def show_bandwidth(self, text: str) -> None:
        if self.is_attached:
            set_content(self.bandwidth, text)
