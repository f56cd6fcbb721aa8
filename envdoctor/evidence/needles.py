"""Literal prefilter: find the few lines worth matching, with the strings a pattern cannot match without.

Python's `re` has no multi-pattern search, so a union of ~100 signatures costs ~100 attempts per
character. Instead each pattern declares its needles: lower-case literals, one of which every match
must contain (`needles` in rules/nccl/signatures.json, FACT_NEEDLES beside the fact patterns). A block
is scanned once for all needles (a trie-shaped regex over the lower-cased text) and only the patterns
whose needles occur run on it.
"""

from __future__ import annotations

import re
from typing import Dict, Hashable, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from envdoctor.evidence.shapes import (
    FOLD,
    HEX_MARK,
    LOOSE_DELETE,
    hex_unsafe,
    loose_forms,
    prefix_unsafe_gates,
    unsafe_gates,
)

MIN_NEEDLE = 3
SHAPE_CACHE_BYTES = 2 << 20  # about: the loose forms kept with their gates (classify)
# what classify says of a shape: None (no line of it holds a gate), else (the gates without a digit, each
# with its first position; the gates with one, to look for in each line)
Verdict = Optional[Tuple[Tuple[Tuple[int, bytes], ...], Tuple[bytes, ...]]]
_DIGITS = frozenset(b"0123456789")


# Characters from common to rare in logs (lower-cased). A gate starts at a needle's rarest character,
# so the scanning regex's first-character test rejects most positions without trying any branch.
_COMMON = " etaoinsrlcdhu0123456789mpf.:-=[]gbw,y/v_()k'x\"jqz"
_RANK = {c: i for i, c in enumerate(_COMMON)}
GATE_LEN = 6  # long enough to stay specific


def gate(needle: str) -> str:
    """The suffix of a needle (at least GATE_LEN long, or all of it) that starts at its rarest character."""
    if len(needle) <= GATE_LEN:
        return needle
    best = max(range(len(needle) - GATE_LEN + 1), key=lambda i: (_RANK.get(needle[i], len(_RANK)), -i))
    return needle[best:]


class Prefilter:
    """Finds the lines of a block that may match any of many patterns, and which patterns to try there."""

    def __init__(self, entries: Iterable[Tuple[Hashable, Sequence[str]]], watch: Sequence[str] = ()) -> None:
        """`entries`: (key, needles); a pattern without needles is tried on every scanned line. `watch`: more
        lower-case literals, tried by no pattern: classify says which shapes may hold one (a report reader's)."""
        self.by_gate: Dict[bytes, List[Hashable]] = {}
        self.always: List[Hashable] = []
        self.watched = frozenset(w.encode("utf-8") for w in watch)
        for w in self.watched:
            self.by_gate.setdefault(w, [])
        for key, needles in entries:
            if not needles:
                self.always.append(key)
                continue
            for n in needles:
                g = gate(n).encode("utf-8")
                keys = self.by_gate.setdefault(g, [])
                if key not in keys:
                    keys.append(key)
        self._cache: Dict[Tuple[bytes, ...], List[Hashable]] = {}
        gates = sorted(self.by_gate)
        self.block_re = re.compile(_trie_pattern(_trie(gates))) if gates else None
        self.line_re = re.compile(b"(?=(" + _trie_pattern(_trie(gates)) + b"))") if gates else None
        unsafe = sorted(set(unsafe_gates(gates)) | set(prefix_unsafe_gates(gates)))
        # the gates a line's key may hide (see shapes.py): lines holding one are keyed by their own text
        self.unsafe_re = re.compile(_trie_pattern(_trie(unsafe))) if unsafe else None
        self.unsafe_literals = tuple(unsafe)  # the same gates, for bytes.find (shapes.line_keys)
        self.unsafe_cased = any(bytes([c]).isalpha() for g in unsafe for c in g)  # else no need to lower the text
        # For classify (see there): each gate as a line's shape holds it, and as its loose form holds it.
        self._fold = {g: g.translate(FOLD) for g in gates}
        self._digital = {g: any(c in _DIGITS for c in g) for g in gates}
        loose = {g: self._fold[g].translate(None, LOOSE_DELETE) for g in gates}
        # gates whose loose form is too short to search for: (gate, loose form), looked for with `in`
        self._weak = tuple((g, loose[g]) for g in gates if len(loose[g]) < MIN_NEEDLE)
        self._by_loose: Dict[bytes, List[bytes]] = {}
        for g in gates:
            if len(loose[g]) >= MIN_NEEDLE:
                self._by_loose.setdefault(loose[g], []).append(g)
        forms = _trie_pattern(_trie(sorted(self._by_loose))) if self._by_loose else None
        self._loose_re = re.compile(forms) if forms else None
        self._loose_all = re.compile(b"(?=(" + forms + b"))") if forms else None
        self._hex_unsafe = tuple(g for g in gates if len(loose[g]) >= MIN_NEEDLE and hex_unsafe(self._fold[g]))
        # loose form -> (folded gate, gate) of the gates its lines may hold
        self._loose_seen: Dict[bytes, Tuple[Tuple[bytes, bytes], ...]] = {}
        self._loose_seen_bytes = 0
        self._by_shape: Dict[bytes, Verdict] = {}  # for candidates_of_shape and shape_is_empty

    def classify(self, shapes: Sequence[bytes], watching: Optional[Set[bytes]] = None) -> List[Verdict]:
        """What each shape (shapes.py) says of its lines: None when no line of it can hold a gate (and no pattern
        is tried everywhere), else (the gates without a digit its lines hold, each with its first position; the
        gates with one that its lines may hold, to look for in each line).

        Shapes are many where lines differ in their numbers, progress bars and hex ids; their loose forms
        (LOOSE_DELETE removed, hex ids made one mark) are few. A loose form is searched for gates once; the gates
        it may hold are then looked for in each shape with `in`. Gates without a digit are found alike in a line
        and in its shape (FOLD keeps every other byte in place), so only those with one need the line.
        `watching`: the shapes whose lines may hold a watched literal are added to it."""
        if not shapes:
            return []
        loose = loose_forms(b"\n".join(shapes)).split(b"\n")
        seen, digital, always = self._loose_seen, self._digital, self.always
        none = ((), ()) if always else None
        out: List[Verdict] = []
        for shape, form in zip(shapes, loose):
            may = seen.get(form)
            if may is None:
                may = self._loose_gates(form)
            if not may:
                out.append(none)
                continue
            held = [g for f, g in may if f in shape]
            if self.watched and held:
                if watching is not None and not self.watched.isdisjoint(held):
                    watching.add(shape)
                held = [g for g in held if self.by_gate[g]]  # a watched literal alone is tried by no pattern
            if not held:
                out.append(none)
                continue
            plain = tuple(sorted(((shape.find(self._fold[g]), g) for g in held if not digital[g]),
                                 key=lambda hit: (hit[0], len(hit[1]))))
            out.append((plain, tuple(g for g in held if digital[g])))
        return out

    def _loose_gates(self, form: bytes) -> Tuple[Tuple[bytes, bytes], ...]:
        """(folded gate, gate) of each gate a line of this loose form may hold (remembered, bounded)."""
        may: List[bytes] = []
        if self._loose_re is not None and self._loose_re.search(form) is not None:
            for found in dict.fromkeys(self._loose_all.findall(form)):  # type: ignore[union-attr]
                for i in range(1, len(found) + 1):  # the longest form at a position; shorter ones are its prefixes
                    may.extend(self._by_loose.get(found[:i], ()))
        if HEX_MARK in form:
            may.extend(self._hex_unsafe)
        may.extend(g for g, weak in self._weak if weak in form)
        out = tuple((self._fold[g], g) for g in dict.fromkeys(may))
        if self._loose_seen_bytes > SHAPE_CACHE_BYTES:
            self._loose_seen.clear()
            self._loose_seen_bytes = 0
        self._loose_seen[form] = out
        self._loose_seen_bytes += len(form) + 64 + 8 * len(out)
        return out

    def lines(self, block: bytes, max_line: int) -> Iterator[Tuple[int, int]]:
        """(start, end) of each line of the block holding at least one gate in its first max_line bytes;
        end is at most start + max_line (the rest of a longer line is never read)."""
        if self.block_re is None:
            return
        low = block.lower()  # bytes.lower() is ASCII-only: offsets do not move
        search = self.block_re.search
        pos, n = 0, len(low)
        while pos < n:
            m = search(low, pos)
            if m is None:
                return
            start = low.rfind(b"\n", 0, m.start()) + 1
            end = low.find(b"\n", m.end())
            end = n if end < 0 else end
            pos = end + 1
            if m.end() - start <= max_line:
                yield start, min(end, start + max_line)
            else:  # a gate past the cap: look again within the kept head
                head = search(low, start, start + max_line)
                if head is not None:
                    yield start, start + max_line

    def candidates(self, raw_line: bytes) -> List[Hashable]:
        """The patterns worth trying on one line, in a fixed order."""
        if self.line_re is None:
            return self.always
        return self._keys(tuple(self.line_re.findall(raw_line.lower())))

    def candidates_given(self, raw_line: bytes, verdict: Tuple[Tuple[Tuple[int, bytes], ...], Tuple[bytes, ...]]
                         ) -> List[Hashable]:
        """`candidates(raw_line)`, given what `classify` said of its shape: the same patterns in the same order."""
        found, digital = verdict
        if digital:
            low = raw_line.lower()
            at = [(low.find(g), g) for g in digital if g in low]
            if at:
                found = tuple(sorted((*found, *at), key=lambda hit: (hit[0], len(hit[1]))))
        return self._keys(tuple(g for _, g in found))

    def candidates_of_shape(self, raw_line: bytes, shape: bytes) -> List[Hashable]:
        """`candidates(raw_line)`, given the line's shape (shapes.py)."""
        if self.line_re is None:
            return self.always
        verdict = self._verdict(shape)
        return list(self.always) if verdict is None else self.candidates_given(raw_line, verdict)

    def _verdict(self, shape: bytes) -> Verdict:
        if shape not in self._by_shape:
            if len(self._by_shape) > 4096:
                self._by_shape.clear()
            self._by_shape[shape] = self.classify([shape])[0]
        return self._by_shape[shape]

    def shape_is_empty(self, shape: bytes) -> bool:
        """Is `candidates_of_shape(line, shape)` empty for every line of this shape (no gate without a digit in
        the shape, none with one possible, no pattern tried everywhere)?"""
        if self.line_re is None or self.always:
            return not self.always
        return self._verdict(shape) is None

    def _keys(self, found: Tuple[bytes, ...]) -> List[Hashable]:
        """The patterns of the gates found on a line (in the order found)."""
        keys = self._cache.get(found)
        if keys is None:
            keys = list(self.always)
            for g in dict.fromkeys(found):
                # the trie returns the longest gate at a position; shorter gates that are its prefixes hit too
                for i in range(1, len(g) + 1):
                    for key in self.by_gate.get(g[:i], ()):
                        if key not in keys:
                            keys.append(key)
            if len(self._cache) >= 4096:  # bounded: lines with ever new gate combinations
                self._cache.clear()
            self._cache[found] = keys
        return keys


def _trie(needles: Iterable[bytes]) -> Dict:
    trie: Dict = {}
    for n in needles:
        node = trie
        for b in n:
            node = node.setdefault(bytes([b]), {})
        node[b""] = True
    return trie


def _trie_pattern(node: Dict) -> bytes:
    branches = [re.escape(ch) + _trie_pattern(node[ch]) for ch in sorted(k for k in node if k)]
    if b"" in node:
        return b"(?:" + b"|".join(branches) + b")?" if branches else b""
    return branches[0] if len(branches) == 1 else b"(?:" + b"|".join(branches) + b")"
