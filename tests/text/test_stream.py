"""Reading a stream: a mixed paste, arbitrary block boundaries, and a big log with no section."""

from __future__ import annotations

import random

from envdoctor.text import ReportReader, may_hold_section
from tests.text.helpers import read, text

TRACEBACK = """Traceback (most recent call last):
  File "/home/u/train.py", line 3, in <module>
    import flash_attn
  File "/home/u/venv/lib/python3.10/site-packages/flash_attn/__init__.py", line 3, in <module>
    from flash_attn.flash_attn_interface import (
ImportError: /home/u/venv/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: \
undefined symbol: _ZN3c104cuda9SetDeviceEi"""
XFORMERS = """WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:
    PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.2.2+cu121)"""
PIP_LIST = """Package                  Version
------------------------ ------------
flash-attn               2.5.8
numpy                    1.26.4
torch                    2.3.0
triton                   2.3.0"""


def mixed() -> str:
    return "\n".join([text("collect_env_a100_vllm4066.txt").rstrip("\n"), "", "Here is the error:", TRACEBACK,
                      "", "and pip list:", PIP_LIST, "", "Any idea?"])


def test_mixed_paste_sections_and_line_ranges() -> None:
    body = mixed()
    lines = body.split("\n")
    facts = read(body)
    kinds = [(s.kind, s.start, s.end) for s in facts.sections]
    tb = lines.index("Traceback (most recent call last):") + 1
    pip = lines.index(PIP_LIST.split("\n")[0]) + 1
    assert kinds == [("collect_env", 2, 30), ("pip_list", pip, pip + 5)]
    # the traceback (the engine's to read) lies in neither section
    assert all(not (s.start <= tb <= s.end) and not (s.start <= tb + 5 <= s.end) for s in facts.sections)
    # a whole pip list makes python.packages whole, whatever collect_env said of it
    assert facts.whole == ["python.packages"]
    assert facts.doc["python"]["packages"]["torch"] == "2.3.0"
    assert facts.doc["torch"]["version"] == "1.12.1+cu113"  # torch.version is collect_env's, packages pip list's
    assert facts.doc["extensions"] == [{"name": "flash-attn", "version": "2.5.8"}]


def _blocks(lines, cuts):
    out, start = [], 0
    for cut in sorted(set(cuts)) + [len(lines)]:
        if cut > start:
            out.append(("\n".join(lines[start:cut]), start + 1))
            start = cut
    return out


def _read_blocks(blocks):
    reader = ReportReader()
    for block, first in blocks:
        reader.feed_block(block, first)
    return reader.finish()


def test_any_block_boundaries_give_the_same_result() -> None:
    body = "\n".join([mixed(), text("nvidia_smi_p4_wyoming20.txt"), text("ds_report_full_green_ai.txt"),
                      text("comfyui_log_5278.txt"), text("vllm_env_banners_vllm24063.txt"), XFORMERS])
    lines = body.split("\n")
    whole = _read_blocks([(body, 1)])
    assert len(whole.sections) >= 6
    rng = random.Random(26)
    for trial in range(40):
        cuts = rng.sample(range(1, len(lines)), rng.randint(1, 30)) if trial else list(range(1, len(lines)))
        split = _read_blocks(_blocks(lines, cuts))
        assert split.sections == whole.sections, trial
        assert split.doc == whole.doc, trial
        assert split.evidence == whole.evidence, trial
        assert split.whole == whole.whole and split.conflicts == whole.conflicts, trial


def test_big_log_without_sections_is_never_parsed() -> None:
    line = ("2026-12-01 10:00:00,123 INFO worker.py:88 step=1234 loss=0.4321 lr=3e-4 tokens/s=51234 "
            "gpu_mem=22.1GiB grad_norm=1.02 File /data/shards/part-00042.parquet read in 0.12s\n")
    block = line * (1024 * 1024 // len(line))  # about 1 MiB of whole lines
    reader = ReportReader()
    first = 1
    size = 0
    while size < 50 * 1024 * 1024:
        reader.feed_block(block, first)
        first += block.count("\n")
        size += len(block)
    facts = reader.finish()
    assert reader.stats["blocks"] >= 50 and reader.stats["parsed_blocks"] == 0 and reader.stats["lines"] == 0
    assert facts.sections == [] and facts.doc == {}


def test_the_cheap_test_sees_every_opening_line() -> None:
    for name in ("collect_env_a100_vllm4066.txt", "pip_list_cut_pt167242.txt", "pip_freeze_rocm5778.txt",
                 "nvidia_smi_p4_wyoming20.txt", "nvidia_smi_q_gtx1650_nvct169.txt", "ds_report_ops_dsexamples147.txt",
                 "comfyui_log_5278.txt", "webui_launch_16501.txt", "vllm_env_topology_vllm19607.txt"):
        facts = read(name)
        for section in facts.sections:
            opening = text(name).split("\n")[section.start - 1]
            assert may_hold_section(opening), (name, opening)
    assert not may_hold_section("INFO step=1 loss=0.5\nWARNING slow data loader\n")
