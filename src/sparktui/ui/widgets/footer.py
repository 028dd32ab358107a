"""The footer: the keys that work in the focused view, each shown whole or not at all.

Textual's Footer lays its keys out in a row and the terminal's edge cuts the last one mid-word
(`k sign`, `m peer` at 80 columns). This one keeps Textual's keys (clickable, styled by the theme)
and composes only those that fit the width it has, in priority order: the focused widget's and
the view's own keys first, then the app's in the order its BINDINGS declare them; `? help` is
always kept, since help lists every key the footer had no room for. It recomposes when its width
changes.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Footer as TextualFooter

HELP_ACTIONS = ("help", "app.help")


class FooterKey(Widget):
    """One key of the footer, built on Textual's public Widget API (Textual's own key widget lives
    in a private module). Named FooterKey so that Footer's CSS (``FooterKey``, ``.-compact``,
    ``.-command-palette``) styles it as Textual's; same look, same click (the key is pressed)."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"footer-key--key", "footer-key--description"}
    DEFAULT_CSS = """
    FooterKey {
        width: auto;
        height: 1;
        text-wrap: nowrap;
        background: $footer-item-background;
        .footer-key--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
            padding: 0 1;
        }
        .footer-key--description {
            padding: 0 1 0 0;
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        &:hover {
            pointer: pointer;
            color: $footer-key-foreground;
            background: $block-hover-background;
        }
        &.-disabled {
            text-style: dim;
        }
        &.-compact {
            .footer-key--key {
                padding: 0;
            }
            .footer-key--description {
                padding: 0 0 0 1;
            }
        }
    }
    """

    compact = reactive(True)

    def __init__(self, key: str, key_display: str, description: str, action: str, disabled: bool = False,
                 tooltip: str = "", classes: str = "") -> None:
        self.key, self.key_display, self.description, self.action = key, key_display, description, action
        self.refused = disabled  # shown dim and rings the bell; not Widget.disabled, which takes no clicks
        super().__init__(classes=classes + (" -disabled" if disabled else ""))
        self.set_reactive(Widget.shrink, False)
        if tooltip:
            self.tooltip = tooltip

    def render(self) -> Text:
        key_style = self.get_component_rich_style("footer-key--key")
        description_style = self.get_component_rich_style("footer-key--description")
        key_pad = self.get_component_styles("footer-key--key").padding
        desc_pad = self.get_component_styles("footer-key--description").padding
        if self.description:
            text = Text.assemble((" " * key_pad.left + self.key_display + " " * key_pad.right, key_style),
                                 (" " * desc_pad.left + self.description + " " * desc_pad.right, description_style))
        else:
            text = Text.assemble((self.key_display, key_style))
        text.stylize_before(self.rich_style)
        return text

    def on_mouse_down(self) -> None:
        if self.refused:
            self.app.bell()
        else:
            self.app.simulate_key(self.key)

    def watch_compact(self, compact: bool) -> None:
        self.set_class(compact, "-compact")


class Footer(TextualFooter):
    """A drop-in Footer (the same constructor) that drops keys rather than cutting them."""

    _fitted_width = 0
    keys_known = False  # the screen has said its bindings once (Textual's footer waits for that too)

    def bindings_changed(self, screen) -> None:
        self.keys_known = True
        super().bindings_changed(screen)

    def _order(self, binding: Binding, index: int) -> tuple[int, int]:
        """The view's own keys (focused widget, screen) first, as listed; then the app's by
        declaration order."""
        declared = [b.action for b in getattr(type(self.app), "BINDINGS", []) if isinstance(b, Binding)]
        if binding.action in declared:
            return (1, declared.index(binding.action))
        return (0, index)

    def _width_of(self, key: str, description: str, palette: bool = False) -> int:
        if self.compact:
            # key, a space, the description; a margin of 1 after each
            w = cell_len(key) + (1 + cell_len(description) if description else 0) + 1
        else:
            # " key " then "description " (Textual's padding), no margin
            w = cell_len(key) + 2 + (cell_len(description) + 1 if description else 0)
        return w + (1 if palette else 0)  # the palette key's border

    def compose(self) -> ComposeResult:
        if not self.keys_known:
            return
        width = self.size.width or self.app.size.width
        self._fitted_width = width
        active = self.screen.active_bindings
        seen: set[str] = set()
        candidates = []
        for index, (_node, binding, enabled, tooltip) in enumerate(active.values()):
            if not binding.show or binding.action in seen or binding.action == "command_palette":
                continue
            seen.add(binding.action)
            candidates.append((self._order(binding, index), binding, enabled, tooltip))
        candidates.sort(key=lambda c: c[0])
        room = width
        palette = None
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
            try:
                _n, binding, enabled, tooltip = active[self.app.COMMAND_PALETTE_BINDING]
            except KeyError:
                pass
            else:
                palette = (binding, enabled, tooltip)
                room -= self._width_of(self.app.get_key_display(binding), binding.description, palette=True)
        widths = [self._width_of(self.app.get_key_display(b), b.description) for _, b, _, _ in candidates]
        helps = [i for i, (_, b, _, _) in enumerate(candidates) if b.action in HELP_ACTIONS]
        if helps:
            room -= widths[helps[0]]  # help is always shown: it lists what had no room
        keep = set(helps[:1])
        for i, w in enumerate(widths):
            if i in keep:
                continue
            if w <= room:
                keep.add(i)
                room -= w
        for i, (_, binding, enabled, tooltip) in enumerate(candidates):
            if i in keep:
                yield FooterKey(binding.key, self.app.get_key_display(binding), binding.description, binding.action,
                                disabled=not enabled, tooltip=tooltip).data_bind(compact=TextualFooter.compact)
        if palette is not None and room >= 0:
            binding, enabled, tooltip = palette
            yield FooterKey(binding.key, self.app.get_key_display(binding), binding.description, binding.action,
                            classes="-command-palette", disabled=not enabled,
                            tooltip=binding.tooltip or binding.description)

    def on_resize(self, event) -> None:
        if event.size.width != self._fitted_width and self.keys_known:
            self.call_after_refresh(self.recompose)
