"""The tab bar: every tab's title and the underline, drawn by one widget. Textual's Tabs is a container of a widget
per tab plus an underline widget, and the first frame pays for each of them on every layout pass before it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from rich.console import Group
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive
from textual.renderables.bar import Bar
from textual.widget import Widget


@dataclass(frozen=True)
class TabTitle:
    """A tab as the bar shows it: its id, its title and the key that opens it (underlined in the title)."""

    id: str
    title: str
    key: str = ""

    def text(self, style: Style) -> Text:
        text = Text(f" {self.title} ", style=style, end="")
        at = self.title.lower().find(self.key) if self.key else -1
        if at >= 0:
            text.stylize("underline", at + 1, at + 2)
        return text


class TabBar(Widget, can_focus=True):
    """One line of tab titles over an underline that marks the active tab. Left and right move between tabs while
    the bar has the focus; a click opens the tab under the pointer. Changing `active` posts `TabBar.Changed`."""

    DEFAULT_CSS = """
    TabBar {
        width: 1fr;
        height: 2;
        pointer: pointer;
        & > .tab-bar--tab { color: $foreground 50%; }
        & > .tab-bar--active { color: $foreground; }
        & > .tab-bar--hover { color: $foreground; }
        & > .tab-bar--underline { color: $block-cursor-background; background: $foreground 10%; }
        &:focus {
            & > .tab-bar--underline { background: $foreground 30%; }
            & > .tab-bar--active {
                color: $block-cursor-foreground;
                background: $block-cursor-background;
                text-style: $block-cursor-text-style;
            }
        }
        &:ansi {
            & > .tab-bar--tab { text-style: dim; }
            & > .tab-bar--active { text-style: not dim bold; }
            & > .tab-bar--underline { color: $block-cursor-background; background: $border-blurred; }
        }
    }
    """
    COMPONENT_CLASSES = {"tab-bar--tab", "tab-bar--active", "tab-bar--hover", "tab-bar--underline"}
    BINDINGS = [
        Binding("left", "move(-1)", "Previous tab", show=False),
        Binding("right", "move(1)", "Next tab", show=False),
    ]

    active: reactive[str] = reactive("", init=False)

    class Changed(Message):
        """The active tab changed (by a key, a click or the app). `by_arrow`: left or right on the bar, where the
        focus stays to go on moving."""

        def __init__(self, bar: TabBar, tab: str, by_arrow: bool = False) -> None:
            super().__init__()
            self.bar = bar
            self.tab = tab
            self.by_arrow = by_arrow

        @property
        def control(self) -> TabBar:
            return self.bar

    def __init__(self, tabs: Sequence[TabTitle], active: Optional[str] = None, *, id: Optional[str] = None) -> None:
        super().__init__(id=id)
        if not tabs:
            raise ValueError("a tab bar needs at least one tab")
        self.tabs: Tuple[TabTitle, ...] = tuple(tabs)
        self._spans = tuple(_columns(self.tabs))
        self.set_reactive(TabBar.active, self.validate_active(active if active is not None else self.tabs[0].id))
        self._arrowed = False  # the change under way came from left or right
        self._pointer: Optional[int] = None  # the column of the mouse pointer on the titles' row

    # --- geometry: each tab's columns on the bar, and how far the bar is scrolled ------------------

    def spans(self) -> Tuple[Tuple[TabTitle, int, int], ...]:
        """(tab, first column, column after it), unscrolled."""
        return self._spans

    def _active_span(self) -> Tuple[int, int]:
        return next((start, end) for t, start, end in self._spans if t.id == self.active)

    def _scroll(self) -> int:
        """How many columns are scrolled off the left: none, unless the active tab would end past the right edge."""
        width = self.size.width
        return max(0, self._active_span()[1] - width) if width else 0

    def tab_at(self, x: Optional[int]) -> Optional[str]:
        """The id of the tab drawn at column x of the widget, if any (x None: no column, no tab)."""
        if x is None:
            return None
        x += self._scroll()
        return next((t.id for t, start, end in self._spans if start <= x < end), None)

    # --- drawing ---------------------------------------------------------------------------------

    def render(self) -> Group:
        styles = {name: self.get_component_rich_style(f"tab-bar--{name}") for name in ("tab", "active", "hover")}
        hover = self.tab_at(self._pointer)  # now: the bar may have scrolled since the pointer moved
        line = Text(end="", no_wrap=True, overflow="crop")
        for tab in self.tabs:
            kind = "active" if tab.id == self.active else "hover" if tab.id == hover else "tab"
            line.append_text(tab.text(styles[kind]))
        scroll = self._scroll()
        start, end = self._active_span()
        start, end = start + 1, end - 1  # under the title, not its padding
        bar = self.get_component_rich_style("tab-bar--underline")
        shown = line[scroll:]
        shown.no_wrap = True  # a slice drops it: titles that do not fit are cut, not wrapped onto the underline
        return Group(shown,
                     Bar(highlight_range=(start - scroll, end - scroll), highlight_style=Style.from_color(bar.color),
                         background_style=Style.from_color(bar.bgcolor), width=self.size.width or None))

    def validate_active(self, tab: str) -> str:
        if tab not in {t.id for t in self.tabs}:
            raise ValueError(f"no tab {tab!r} on this bar")
        return tab

    def watch_active(self, tab: str) -> None:
        self.refresh()
        self.post_message(self.Changed(self, tab, by_arrow=self._arrowed))
        self._arrowed = False

    # --- input ------------------------------------------------------------------------------------

    def action_move(self, step: int) -> None:
        ids = [t.id for t in self.tabs]
        self._arrowed = True
        self.active = ids[(ids.index(self.active) + step) % len(ids)]

    def on_click(self, event: events.Click) -> None:
        tab = self.tab_at(event.x)
        if tab is not None:
            self.active = tab

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self._point_at(event.x if event.y == 0 else None)

    def on_leave(self, event: events.Leave) -> None:
        self._point_at(None)

    def _point_at(self, x: Optional[int]) -> None:
        if self.tab_at(x) != self.tab_at(self._pointer):
            self.refresh()
        self._pointer = x


def _columns(tabs: Sequence[TabTitle]) -> List[Tuple[TabTitle, int, int]]:
    """Each title's columns, padded by one on each side, left to right."""
    spans, x = [], 0
    for tab in tabs:
        spans.append((tab, x, x + len(tab.title) + 2))
        x += len(tab.title) + 2
    return spans
