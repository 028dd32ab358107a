"""The one-line header bar."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from sparktui.core.inert import visible


class HeaderBar(Widget):
    """Host, GPU, driver, CUDA, source, and how long sparktui has been watching. Built at paint
    time, so the short form (a tmux pane at 80 columns) or the long one always fits the width the
    bar has then, including the first frames before the terminal reported its size."""

    _args: tuple = ()

    def show(self, host: str, gpu: str, driver: str, cuda: str, watching: str, source: str, paused: bool,
             badges: tuple[tuple[str, str], ...] = ()) -> None:
        """``badges``: (text, style) pairs that must be seen from across the desk (new worsening
        events, peers that differ), placed before the source label so 80 columns keep them."""
        args = (host, gpu, driver, cuda, watching, source, paused, badges)
        if args != self._args:
            self._args = args
            self.refresh()

    def render(self) -> Text:
        t = Text(no_wrap=True, overflow="ellipsis")
        if not self._args:
            return t
        host, gpu, driver, cuda, watching, source, paused, badges = self._args
        narrow = 0 < self.size.width < 110
        if paused:  # first: the one thing that must not be cut off at 80 columns
            t.append(" ⏸ PAUSED ", style="bold reverse yellow")
        if not narrow:
            t.append(" sparktui ", style="bold reverse")
        # host, GPU, driver and the source's label come from the machine or a recording: made visible
        host, gpu, driver, cuda, source = (visible(x) for x in (host, gpu, driver, cuda, source))
        t.append(f" {host} ", style="bold")
        if narrow:
            t.append(f"· {gpu.replace('NVIDIA ', '')} · {driver} · CUDA {cuda} · ")
        else:
            t.append(f"· {gpu} · driver {driver} · CUDA {cuda} · ")
        t.append(f"{'' if narrow else 'watching '}{watching}", style="bold")
        for text, style in badges:  # a peer's badge names that peer
            t.append(" · ")
            t.append(visible(text), style=style)
        t.append(f" · {source}", style="dim")
        return t
