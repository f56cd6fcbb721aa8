"""Renderables that fit the width they are given: text that wraps at path separators, the busbw-by-size chart
and the backward speed-up bars."""

from __future__ import annotations

import re
from typing import Dict, Iterable, List, Sequence

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

from envdoctor.byte_sizes import format_bytes

_CHUNK = re.compile(r"[^\s/\\,;:=]*[/\\,;:=]+\s*|[^\s/\\,;:=]+\s*|\s+")
BLOCKS = "▁▂▃▄▅▆▇█"


def wrap_at_separators(text: str, width: int) -> List[str]:
    """Lines of at most `width` columns, broken at spaces or after / \\ , ; : = (a path breaks between its parts);
    a part longer than the width is folded."""
    width = max(1, width)
    lines: List[str] = []
    for para in text.split("\n"):
        line = ""
        for chunk in _CHUNK.findall(para):
            if len((line + chunk).rstrip()) <= width:
                line += chunk
                continue
            if line.strip():
                lines.append(line.rstrip())
            line = chunk.lstrip()
            while len(line.rstrip()) > width:
                lines.append(line[:width])
                line = line[width:]
        lines.append(line.rstrip())
    return lines


class Wrapped:
    """`text` in `style`, wrapped at separators to the width it is rendered in."""

    def __init__(self, text: str, style: str = "") -> None:
        self.text, self.style = text, style

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        parts = [c.strip() for c in _CHUNK.findall(self.text)]
        longest = max((len(p) for p in parts), default=0)
        widest = max((len(ln) for ln in self.text.split("\n")), default=0)
        return Measurement(min(longest, 24, widest), widest).clamp(max_width=options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text("\n".join(wrap_at_separators(self.text, options.max_width)), style=self.style, overflow="fold")


def size_label(nbytes: int) -> str:
    return format_bytes(nbytes, exact=True, compact=True)


class BusbwChart:
    """All-reduce bus bandwidth against message size: a bar per size, drawn as each size completes; the y axis in
    GB/s, the x axis in bytes, both labelled."""

    def __init__(self, sizes: Sequence[int], points: Dict[int, float], height: int = 6,
                 what: str = "busbw") -> None:
        self.sizes = list(sizes) or sorted(points)
        self.points, self.height, self.what = points, height, what

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(20, options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.text(options.max_width)

    def text(self, width: int) -> Text:
        sizes, points, h = self.sizes, self.points, self.height
        top = max(points.values(), default=0.0) or 1.0
        ticks = {0: f"{top:.3g}", h // 2: f"{top / 2:.3g}", h - 1: "0"}
        lw = max(len(t) for t in ticks.values()) + 1
        col = max(1, min(4, (width - lw - 1) // max(1, len(sizes))))
        out = Text()
        done = len([s for s in sizes if s in points])
        out.append(f"{self.what} (GB/s) by message size", style="bold")
        out.append(f"   {done} of {len(sizes)} sizes\n" if done < len(sizes) else "\n", style="dim")
        for r in range(h):
            out.append(ticks.get(r, "").rjust(lw - 1) + " ┤" if r in ticks else " " * lw + "│", style="dim")
            for s in sizes:
                if s not in points:
                    out.append(" " * col)
                    continue
                eighths = round(points[s] / top * h * 8)
                fill = max(0, min(8, eighths - (h - 1 - r) * 8))
                bar = BLOCKS[fill - 1] if fill else (BLOCKS[0] if r == h - 1 else " ")
                out.append(bar * max(1, col - 1) + (" " if col > 1 else ""), style="cyan")
            out.append("\n")
        out.append(" " * lw + "└" + "─" * (col * len(sizes)) + "\n", style="dim")
        labels = [" "] * (col * len(sizes) + 12)
        taken: List[range] = []
        # The first and the last size always carry their label; the others where they fit between.
        for i in sorted(range(len(sizes)), key=lambda i: (0 < i < len(sizes) - 1, i)):
            label, at = size_label(sizes[i]), i * col
            span = range(at - 1, at + len(label) + 1)
            if not any(set(span) & set(t) for t in taken):
                labels[at:at + len(label)] = label
                taken.append(range(at, at + len(label)))
        out.append(" " * (lw + 1) + "".join(labels).rstrip() + "\n", style="dim")
        out.append(" " * (lw + 1) + "message size (bytes)", style="dim")
        return out


def speedup_bars(loop_s: float, batched_s: float, width: int, caption: str = "") -> Text:
    """The backward test's two timings as a labelled pair of bars."""
    names = ("per-sample loop", "one non-scalar")
    lw = max(len(n) for n in names) + 2
    room = max(4, width - lw - 10)
    longest = max(loop_s, batched_s) or 1.0
    out = Text()
    if caption:
        out.append(caption + "\n", style="bold")
    for name, secs, style in ((names[0], loop_s, "yellow"), (names[1], batched_s, "green")):
        out.append(name.ljust(lw))
        out.append("█" * max(1, round(secs / longest * room)), style=style)
        out.append(f" {secs:.3f} s\n")
    if batched_s > 0:
        out.append(f"x{loop_s / batched_s:.2f} faster as one non-scalar backward", style="bold green")
    return out


class SpeedupBars:
    def __init__(self, loop_s: float, batched_s: float, caption: str = "") -> None:
        self.loop_s, self.batched_s, self.caption = loop_s, batched_s, caption

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield speedup_bars(self.loop_s, self.batched_s, options.max_width, self.caption)


def flatten(metrics: Dict, prefix: str = "") -> Iterable[tuple]:
    """(dotted key, value) for every number and word in nested metrics."""
    for k, v in metrics.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            yield from flatten(v, key + ".")
        elif isinstance(v, list):
            for i, item in enumerate(v):
                if isinstance(item, dict):
                    yield from flatten(item, f"{key}[{i}].")
                else:
                    yield f"{key}[{i}]", item
        else:
            yield key, v


def number(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "-" if value is None else str(value)

