"""Text that wraps at path separators, the busbw chart's axes and bars, the speed-up bars."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from envdoctor.tui.charts import BusbwChart, Wrapped, speedup_bars, wrap_at_separators

PATH = "2.5.1+cu124 at /home/alice/.venv/lib/python3.11/site-packages/torch/__init__.py"
SIZES = [1024 << i for i in range(17)]  # 1K .. 64M, the default sweep


@pytest.mark.parametrize("width", [20, 31, 44, 60])
def test_paths_break_after_a_separator_never_inside_a_name(width):
    lines = wrap_at_separators(PATH, width)
    assert "".join(lines).replace(" ", "") == PATH.replace(" ", "")
    assert all(len(line) <= width for line in lines)
    for line in lines[:-1]:
        assert line.endswith(("/", " at", "+cu124")) or line[-1] in "/,;:=", lines
    assert "__init__.py" in "\n".join(lines).split("\n")[-1]


def test_a_name_longer_than_the_width_is_folded():
    assert wrap_at_separators("abcdefghij", 4) == ["abcd", "efgh", "ij"]


def test_wrapped_renders_at_the_width_it_is_given():
    console = Console(width=40, file=io.StringIO(), color_system=None)
    console.print(Wrapped(PATH))
    lines = console.file.getvalue().splitlines()
    assert lines[0].rstrip() == "2.5.1+cu124 at /home/alice/.venv/lib/"
    assert lines[1].rstrip() == "python3.11/site-packages/torch/"


def test_busbw_chart_has_labelled_axes_and_a_bar_per_finished_size():
    points = {s: 0.1 * (i + 1) for i, s in enumerate(SIZES[:5])}
    text = BusbwChart(SIZES, points, height=6).text(60).plain.splitlines()
    assert text[0] == "busbw (GB/s) by message size   5 of 17 sizes"
    assert text[1].lstrip().startswith("0.5 ┤") and text[6].lstrip().startswith("0 ┤")  # y: top and zero
    assert text[-1].strip() == "message size (bytes)"
    x_labels = text[-2].split()
    assert x_labels[0] == "1K" and x_labels[-1] == "64M"
    col = text[7].index("─")
    bars = [line[col:] for line in text[1:7]]
    assert bars[0].strip().startswith("█")  # the top bar reaches the top row at the largest value so far
    tallest = max(range(len(bars[-1])), key=lambda i: sum(b[i] != " " for b in bars if i < len(b)))
    assert tallest < len(bars[-1]) // 2  # the finished sizes are on the left; the rest are still empty


def test_speedup_bars_are_labelled_and_proportional():
    text = speedup_bars(4.0, 1.0, 60).plain.splitlines()
    loop, batched = text[0], text[1]
    assert loop.startswith("per-sample loop") and loop.endswith("4.000 s")
    assert batched.startswith("one non-scalar") and batched.endswith("1.000 s")
    assert abs(loop.count("█") - 4 * batched.count("█")) <= 4  # whole cells: within rounding
    assert text[2] == "x4.00 faster as one non-scalar backward"
