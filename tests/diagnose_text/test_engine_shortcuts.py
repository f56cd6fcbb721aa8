"""The scanner's shortcuts skip only lines that cannot matter: a shape the prefilter calls empty gives no candidate to
any line of that shape (so its lines are never keyed), with the NCCL signatures and with every signature."""

from __future__ import annotations

import io
from typing import List

from hypothesis import given, settings
from hypothesis import strategies as st

from envdoctor.evidence.engine import Scanner, prefilter_for
from envdoctor.evidence.shapes import FOLD
from envdoctor.evidence.signatures import default_signatures_dirs
from envdoctor.evidence.signatures import load_rules as load_signatures
from envdoctor.nccl.rules import load_rules as load_nccl

RULE_SETS = (load_nccl(), load_signatures(default_signatures_dirs()))
GATES = sorted({g for rules in RULE_SETS for g in prefilter_for(rules).by_gate})
PIECES = [b"0", b"7", b"12", b" ", b"X", b"H", b"-", b"(", b"0x7f3a", b"NCCL INFO ", b"Channel 03/0 : "]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(GATES), st.sampled_from(PIECES), st.binary(max_size=4)), max_size=12),
       st.booleans(), st.integers(0, len(GATES) - 1))
def test_an_empty_shape_gives_no_line_of_it_a_candidate(parts: List[bytes], upper: bool, cut: int) -> None:
    line = b"".join(parts).replace(b"\n", b" ")
    line = line.upper() if upper else line
    variants = [line, line.replace(b"1", b"9").replace(b"2", b"5"), line[: len(line) // 2] + GATES[cut][:2]]
    for rules in RULE_SETS:
        pf = prefilter_for(rules)
        for text in variants:
            if pf.shape_is_empty(text.translate(FOLD)):
                assert pf.candidates(text) == [], text
            else:
                assert pf.candidates_of_shape(text, text.translate(FOLD)) == pf.candidates(text)


def test_lines_of_empty_shapes_are_never_keyed() -> None:
    """A log of training lines whose shapes hold a folded gate but no real one: nothing is remembered per key."""
    rules = RULE_SETS[1]
    pf = prefilter_for(rules)
    lines = [f"[rank{r}]: step {r * 7} | loss 0.{r:04d} | lr 3.0e-4 | tokens/s {r * 991}".encode() for r in range(2000)]
    shapes = {ln.translate(FOLD) for ln in lines}
    assert all(pf.shape_is_empty(s) for s in shapes)
    s = Scanner(rules)
    s.scan("train.log", io.BytesIO(b"\n".join(lines)))
    assert not s._found and not s._done and s.findings() == []


def test_the_union_of_every_signature_is_compiled_only_when_asked_for() -> None:
    rules = load_signatures(default_signatures_dirs())
    assert rules._union is None  # loading does not compile it: the scanner never reads it
    union = rules.union
    assert union is not None and union is rules.union
    assert union.pattern.count("(?:") >= len(rules.signatures)
