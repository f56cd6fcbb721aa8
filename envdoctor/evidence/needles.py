"""Literal prefilter: find the few lines worth matching, with the strings a pattern cannot match without.

Python's `re` has no multi-pattern search, so a union of ~100 signatures costs ~100 attempts per
character. Instead each pattern declares its needles: lower-case literals, one of which every match
must contain (`needles` in rules/nccl/signatures.json, FACT_NEEDLES beside the fact patterns). A block
is scanned once for all needles (a trie-shaped regex over the lower-cased text) and only the patterns
whose needles occur run on it.
"""

from __future__ import annotations

import re
from typing import Dict, Hashable, Iterable, Iterator, List, Sequence, Tuple

from envdoctor.evidence.shapes import FOLD, prefix_unsafe_gates, shape_gates, unsafe_gates

MIN_NEEDLE = 3
SHAPE_CACHE_BYTES = 2 << 20  # about: the shapes kept with their gates, for candidates_of_shape
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

    def __init__(self, entries: Iterable[Tuple[Hashable, Sequence[str]]]) -> None:
        """`entries`: (key, needles); a pattern without needles is tried on every scanned line."""
        self.by_gate: Dict[bytes, List[Hashable]] = {}
        self.always: List[Hashable] = []
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
        folded = shape_gates(gates, lambda c: _RANK.get(chr(c), len(_RANK)))
        self.shape_re = re.compile(_trie_pattern(_trie(folded))) if folded else None
        # For candidates_of_shape: gates without a digit are found alike in a line and in its shape, so once
        # per shape; those with one only in the line, and only where the shape holds their folded form.
        plain = [g for g in gates if not any(c in _DIGITS for c in g)]
        digital = [g for g in gates if any(c in _DIGITS for c in g)]
        self._plain_re = re.compile(b"(?=(" + _trie_pattern(_trie(plain)) + b"))") if plain else None
        self._digit_re = re.compile(b"(?=(" + _trie_pattern(_trie(digital)) + b"))") if digital else None
        self._digit_shape_re = re.compile(_trie_pattern(_trie(sorted({g.translate(FOLD) for g in digital})))) \
            if digital else None
        self._by_shape: Dict[bytes, Tuple[Tuple[Tuple[int, bytes], ...], bool]] = {}
        self._by_shape_bytes = 0

    def shape_hits(self, shapes: Iterable[bytes]) -> List[bytes]:
        """The shapes (see shapes.py) that may hold a gate."""
        if self.shape_re is None:
            return []
        shapes = list(shapes)
        joined = b"\n".join(shapes)
        out: List[bytes] = []
        search = self.shape_re.search
        pos = counted = line = 0
        while True:
            m = search(joined, pos)
            if m is None:
                return out
            line += joined.count(b"\n", counted, m.start())
            counted = m.start()
            out.append(shapes[line])
            end = joined.find(b"\n", m.end())
            if end < 0:
                return out
            pos = end + 1

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

    def candidates_of_shape(self, raw_line: bytes, shape: bytes) -> List[Hashable]:
        """`candidates(raw_line)`, given the line's shape (shapes.py): the same patterns in the same order,
        with the gates that hold no digit looked for once per shape rather than once per line."""
        if self.line_re is None:
            return self.always
        found, maybe = self._of_shape(shape)
        if maybe:  # at one position, the longest gate of each kind; the shorter is a prefix of the longer
            digital = ((m.start(), m.group(1)) for m in self._digit_re.finditer(raw_line.lower()))  # type: ignore[union-attr]
            found = tuple(sorted((*found, *digital), key=lambda hit: (hit[0], len(hit[1]))))
        return self._keys(tuple(g for _, g in found))

    def _of_shape(self, shape: bytes) -> Tuple[Tuple[Tuple[int, bytes], ...], bool]:
        """(the gates without a digit found in a shape, with their positions; may the line hold a gate with one?)"""
        cached = self._by_shape.get(shape)
        if cached is None:
            plain = tuple((m.start(), m.group(1)) for m in self._plain_re.finditer(shape)) if self._plain_re else ()
            maybe = self._digit_shape_re is not None and self._digit_shape_re.search(shape) is not None
            if self._by_shape_bytes > SHAPE_CACHE_BYTES:  # bounded: the rule set, and this cache, live on
                self._by_shape.clear()
                self._by_shape_bytes = 0
            cached = self._by_shape[shape] = (plain, maybe)
            self._by_shape_bytes += len(shape) + 64 * (1 + len(plain))
        return cached

    def shape_is_empty(self, shape: bytes) -> bool:
        """Is `candidates_of_shape(line, shape)` empty for every line of this shape (no gate without a digit in
        the shape, none with one possible, no pattern tried everywhere)?"""
        if self.line_re is None or self.always:
            return not self.always
        plain, maybe = self._of_shape(shape)
        return not plain and not maybe

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
