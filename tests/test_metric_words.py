"""A self-test's numbers read as words in the TUI detail (issue 31): no raw keys such as `busbw gbps.1048576`."""

from __future__ import annotations

import pytest

from envdoctor.present.metric_words import metric_label, metric_value


@pytest.mark.parametrize("key, value, expected", [
    ("busbw_gbps.1048576", 12.345, "bus bandwidth at 1 MiB: 12.35 GB/s"),
    ("algbw_gbps.4194304", 3.0, "algorithm bandwidth at 4 MiB: 3 GB/s"),
    ("step_seconds", 0.01234, "step: 0.01234 s"),
    ("looped_peak_bytes", 3 * 2 ** 30, "looped peak: 3.0 GiB"),
    ("max_rel_loss_diff", 1e-07, "largest relative loss difference: 1e-07"),
    ("deepspeed.status", "skipped", "DeepSpeed status: skipped"),
    ("devices[0]", "cpu", "devices #0: cpu"),
])
def test_a_metric_reads_as_words_with_its_unit(key, value, expected):
    label, unit = metric_label(key)
    assert f"{label}: {metric_value(value, unit)}" == expected
    assert "_" not in label and "gbps" not in label
