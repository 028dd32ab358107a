"""The one-line header bar."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.widget import Widget

from sparktui.core.inert import visible


def fit_words(t: Text, width: int) -> Text:
    """``t`` within ``width`` cells, never cut inside a word: what does not fit goes from the end,
    at a space, and ``…`` says something was left out."""
    if width <= 0 or cell_len(t.plain) <= width:
        return t
    plain = t.plain
    best = 0
    for i, ch in enumerate(plain):
        if ch == " ":
            kept = plain[:i].rstrip(" ·")
            if cell_len(kept) + 1 <= width:
                best = len(kept)
            else:
                break
    out = t[:best]
    out.append("…", style="dim")
    return out


class HeaderBar(Widget):
    """Host, GPU, driver, CUDA, source, and how long sparktui has been watching (a replay: where
    it is in the recording). Built at paint time, so the short form (a tmux pane at 80 columns) or
    the long one always fits the width the bar has then, including the first frames before the
    terminal reported its size. Nothing is cut inside a word: what does not fit ends in ``…``."""

    _args: tuple = ()

    def show(self, host: str, gpu: str, driver: str, cuda: str, watching: str, source: str, paused: bool,
             badges: tuple[tuple[str, str], ...] = (), *, replay: str | None = None, short_source: str | None = None) -> None:
        """``badges``: (text, style) pairs that must be seen from across the desk (new worsening
        events, peers that differ), placed before the source label so 80 columns keep them.
        ``replay``: where a replay is ("REPLAY 16:25 / 16:28 · ended"), shown instead of how long
        sparktui has watched; ``short_source``: the source's label for a narrow bar."""
        args = (host, gpu, driver, cuda, watching, source, paused, badges, replay, short_source)
        if args != self._args:
            self._args = args
            self.refresh()

    # parts dropped first when the bar is too narrow (the last resort is a cut at a word, with …)
    DROP_ORDER = ("name", "long source", "driver", "gpu")

    def render(self) -> Text:
        if not self._args:
            return Text()
        host, gpu, driver, cuda, watching, source, paused, badges, replay, short_source = self._args
        width = self.size.width
        narrow = 0 < width < 110
        # host, GPU, driver and the source's label come from the machine or a recording: made visible
        host, gpu, driver, cuda, source = (visible(x) for x in (host, gpu, driver, cuda, source))
        parts: list[tuple[str, str, str]] = []  # (what, text, style)
        if paused:  # first: the one thing that must not be cut off at 80 columns
            parts.append(("paused", " ⏸ PAUSED ", "bold reverse yellow"))
        if not narrow:
            parts.append(("name", " sparktui ", "bold reverse"))
        parts.append(("host", f" {host} ", "bold"))
        parts.append(("gpu", f"· {gpu.replace('NVIDIA ', '') if narrow else gpu} ", ""))
        parts.append(("driver", f"· {driver} · CUDA {cuda} " if narrow else f"· driver {driver} · CUDA {cuda} ", ""))
        parts.append(("sep", "· ", ""))
        if replay:
            parts.append(("where", replay, "bold reverse cyan"))
        else:
            parts.append(("where", f"{'' if narrow else 'watching '}{watching}", "bold"))
        for text, style in badges:  # a peer's badge names that peer
            parts.append(("badge", " · ", ""))
            parts.append(("badge", visible(text), style))
        short = visible(short_source) if short_source else source
        parts.append(("source", f" · {short if narrow else source}", "dim"))
        for drop in self.DROP_ORDER:
            if not width or sum(cell_len(text) for _, text, _ in parts) <= width:
                break
            if drop == "long source":  # the source's short label (a replay: the file's name) first
                parts = [("source", f" · {short}", "dim") if p[0] == "source" else p for p in parts]
            else:
                parts = [p for p in parts if p[0] != drop]
        t = Text(no_wrap=True, overflow="crop")
        for _, text, style in parts:
            t.append(text, style=style)
        return fit_words(t, width)
