"""The prefilter drops no line a pattern matches: on every corpus text and every signature's own examples, with the
signatures of rules/ (all of them, and the NCCL ones), the scanner finds exactly what it finds when every pattern is
tried on every line (`Scanner._prefiltered = False`, the reference)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, Iterator, List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envdoctor.evidence.engine import Scanner, prefilter_for
from envdoctor.evidence.shapes import FOLD
from envdoctor.evidence.signatures import default_signatures_dirs, load_rules

ROOT = Path(__file__).resolve().parents[2]
RULE_SETS = {"every signature": load_rules(default_signatures_dirs()), "nccl": load_rules()}


def _examples() -> Iterator[Tuple[str, bytes]]:
    """Each signature's example lines, as one text per file, with NCCL prefixes and hex ids around them."""
    for path in sorted((ROOT / "rules").glob("**/*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        lines: List[str] = []
        for n, entry in enumerate(doc.get("signatures", []) if isinstance(doc, dict) else []):
            for text in [entry.get("example"), *entry.get("more_examples", [])]:
                if isinstance(text, str):
                    lines += [text, f"node-{n}:{1000 + n}:{2000 + n} [{n % 8}] {text} comm 0x{n:x}f{n:x}ab", ""]
        if lines:
            yield str(path.relative_to(ROOT)), "\n".join(lines).encode("utf-8")


def _texts() -> List[Tuple[str, bytes]]:
    out = list(_examples())
    out += [(p.name, p.read_bytes()) for p in sorted((ROOT / "tests" / "diagnose" / "corpus" / "texts").iterdir())]
    for path in sorted((ROOT / "tests" / "nccl" / "corpus").glob("*.jsonl")):
        for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if raw.strip():
                case = json.loads(raw)
                out.append((f"{path.name}:{case.get('id', n)}", str(case.get("log", "")).encode("utf-8")))
    return out


TEXTS = _texts()


def _scan(rules: Any, data: bytes, prefiltered: bool, shaped: bool = True) -> Any:
    s = Scanner(rules, shaped=shaped)
    s._prefiltered = prefiltered
    s.scan("log", io.BytesIO(data))
    return ([f.to_json() for f in s.findings()], s.facts.as_dict(),
            {sig: (hit.count, hit.first, hit.lines) for sig, hit in sorted(s.signals.items())})


@pytest.mark.parametrize("name", sorted(RULE_SETS))
def test_the_prefilter_drops_no_line_a_pattern_matches(name: str) -> None:
    rules = RULE_SETS[name]
    matched = set()
    for label, data in TEXTS:
        every = _scan(rules, data, prefiltered=False)
        assert _scan(rules, data, prefiltered=True) == every, label
        assert _scan(rules, data, prefiltered=True, shaped=False) == every, label
        matched |= set(every[2])
    # every signature met a line it matches (its examples): the comparison covered each of them
    assert matched == {s.id for s in rules.signatures}


def test_the_reference_tries_every_pattern_on_every_line() -> None:
    """A line no needle gates is still read by the reference: the comparison above can fail."""
    rules = RULE_SETS["nccl"]
    sig = next(s for s in rules.signatures if s.id == "topo-xml-warn")
    line = b"graph/xml.cc:12 NCCL WARN Topology broken"
    assert sig.regex.search(line.decode())
    unfiltered = _scan(rules, line, prefiltered=False)
    assert "topo-xml-warn" in unfiltered[2] and _scan(rules, line, prefiltered=True) == unfiltered


_HEX = st.builds(lambda n, x: f"0x{n:x}{x}".encode(), st.integers(0, 2**64), st.sampled_from(["", " ", ",", "z", "_1"]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(sorted({g for r in RULE_SETS.values() for g in prefilter_for(r).by_gate})),
                          _HEX, st.sampled_from([b"0", b"7", b"12", b" ", b"x", b"0x", b"\xe2\x96\x88", b"\r", b"-"]),
                          st.binary(max_size=4)), max_size=12), st.booleans())
def test_a_shape_with_hex_ids_bars_and_numbers_gives_the_candidates_of_its_line(parts: List[bytes], upper: bool) -> None:
    """A shape's loose form drops digits, blanks, progress bars and hex ids: the candidates stay those of the line."""
    line = b"".join(parts).replace(b"\n", b" ")
    line = line.upper() if upper else line
    for rules in RULE_SETS.values():
        pf = prefilter_for(rules)
        assert pf.candidates_of_shape(line, line.translate(FOLD)) == pf.candidates(line)


def test_blocks_without_a_report_trigger_are_not_searched_again() -> None:
    """With a report reader's triggers, the scanner says which blocks hold a line that passes their test."""
    seen: List[Any] = []
    watch = ("nvidia-smi", "pytorch version")
    s = Scanner(RULE_SETS["every signature"], chunk_bytes=64, watch=watch,
                watch_test=lambda line: b"NVIDIA-SMI 5" in line)
    lines = [b"[rank0]: step 1 | loss 0.5"] * 4 + [b"| NVIDIA-SMI 550.54 Driver Version: 550.54"] \
        + [b"nvidia-smi not here"] + [b"[rank0]: step 2 | loss 0.4"] * 4
    s.scan("log", io.BytesIO(b"\n".join(lines)), on_block=lambda first, block, watched: seen.append((block, watched)))
    assert [w for b, w in seen if b"NVIDIA-SMI 5" in b] == [True]
    assert {w for b, w in seen if b"NVIDIA-SMI 5" not in b} == {False}


@pytest.mark.parametrize("forget", ["keys", "misses"])
@pytest.mark.parametrize("trigger", [b"| NVIDIA-SMI 550.54 Driver", b"| NVIDIA-SMI 550.54 Bootstrap : Using eth0:1<0>"])
def test_a_trigger_is_seen_in_every_block_whatever_the_memos_forget(forget: str, trigger: bytes) -> None:
    """Shapes and keys are forgotten when their budgets are spent (here: one of them at every block); a watched
    line still marks its block, whether its shape holds a gate (a hit) or not (a miss)."""
    s = Scanner(RULE_SETS["every signature"], chunk_bytes=256, watch=("nvidia-smi",),
                watch_test=lambda line: b"NVIDIA-SMI 5" in line)
    if forget == "keys":
        s.MEMO_BYTES = 1
    else:
        s.MISS_BYTES = 1
    lines: List[bytes] = []
    for n in range(40):
        lines += [f"[rank{n}]: step {n} |{'#' * (n % 7)}| loss 0.{n}".encode(), trigger
                  if n % 3 == 0 else b"gpu-node-1:22:33 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>"]
    seen: List[Any] = []
    s.scan("log", io.BytesIO(b"\n".join(lines)), on_block=lambda first, block, watched: seen.append((block, watched)))
    assert len(seen) > 10
    assert all(w == (b"NVIDIA-SMI 5" in b) for b, w in seen)
