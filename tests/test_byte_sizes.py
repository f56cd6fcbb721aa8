"""One byte formatter: it writes what each of the six it replaced wrote (their code is kept here to compare)."""

from __future__ import annotations

import pytest

from envdoctor.byte_sizes import format_bytes


def bandwidth_size(nbytes):  # selftest/bandwidth.py
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift and nbytes % (1 << shift) == 0:
            return f"{nbytes >> shift} {unit}"
    return f"{nbytes} B"


def selftest_size(n):  # present/selftest.py
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):g} {unit}"
    return f"{n} B"


def chart_size_label(nbytes):  # tui/charts.py
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if nbytes >= 1 << shift and nbytes % (1 << shift) == 0:
            return f"{nbytes >> shift}{unit}"
    return f"{nbytes}B"


def human_bytes(n):  # install/download_progress.py
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


def facts_gib(n):  # present/facts.py, for a present value
    n = float(n)
    if n >= 1 << 30:
        return f"{n / (1 << 30):.1f} GiB"
    return f"{n / (1 << 20):.0f} MiB"


SIZES = sorted({0, 1, 7, 512, 999, 1000, 1023, 1024, 1025, 1536, 4096, 65536, 10 ** 6, 1 << 20, (1 << 20) + 1,
                3 << 19, 10 ** 9, 1 << 30, (1 << 30) + 1, 3 << 29, 80 * (1 << 30), 2 << 40, 10 ** 12, 5 * 10 ** 12})


@pytest.mark.parametrize("n", SIZES)
def test_it_writes_what_each_old_formatter_wrote(n):
    assert format_bytes(n, exact=True) == bandwidth_size(n)
    assert format_bytes(n) == selftest_size(n)
    assert format_bytes(n, exact=True, compact=True) == chart_size_label(n)
    assert format_bytes(n, decimal=True, digits=1) == human_bytes(n)
    assert format_bytes(float(n), decimal=True, digits=1) == human_bytes(float(n))
    assert format_bytes(n, smallest="MiB", digits={"GiB": 1, "MiB": 0}) == facts_gib(n)
    assert format_bytes(n, unit="GiB", digits=1) == f"{n / (1 << 30):.1f} GiB"  # rules/engine.py "gib"
    assert format_bytes(n, unit="MiB", digits=0) == f"{n / (1 << 20):.0f} MiB"  # rules/engine.py "mib"


def test_examples():
    assert format_bytes(64 << 20) == "64 MiB"
    assert format_bytes(3 << 29) == "1.5 GiB"
    assert format_bytes(64 << 20, exact=True, compact=True) == "64M"
    assert format_bytes(3_200_000, decimal=True, digits=1) == "3.2 MB"
