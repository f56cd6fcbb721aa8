"""Line keys and shapes: how the scanner reads each kind of line once, not once per occurrence.

A log repeats itself: training steps differ only in their numbers, and a 512-rank job prints a
connection line per rank and channel (`Channel 03/0 : 17[1] -> 18[2] via P2P/IPC`). Two views of a
block's lines, both built in C over the whole block:

- the key: the line with a connection's numbers made canonical (they are read by no fact), so that two
  lines of one key yield the same facts and hold the same needles. A line whose needles could lie on
  those numbers (an "unsafe" gate), or that is longer than the scanner reads, is keyed by its own text.
- the shape: the line lower-cased with every digit made 0. Shapes with no gate (gates made the same way)
  cannot hold a needle; the scanner looks for gates once per new shape and skips the lines of the others.
  Only the lines of shapes that may hold a gate are keyed: in a training log, a few in a hundred.
"""

from __future__ import annotations

import re
from itertools import compress
from typing import Iterable, List, Sequence, Union

WHOLE_MARK = b"\x00\x03"  # starts the key of a line keyed by its own text


def _channel_pattern() -> re.Pattern[bytes]:
    """Possessive where Python has it (3.11+): the same matches (a run of digits is always followed by a
    non-digit literal) without backtracking state, about 1.6x faster on an INFO-dense log."""
    try:
        return re.compile(rb" NCCL INFO Channel \d++(?:/\d++)? : \d++\[\d++\] -> \d++\[\d++\]")
    except re.error:
        return re.compile(rb" NCCL INFO Channel \d+(?:/\d+)? : \d+\[\d+\] -> \d+\[\d+\]")


_CHANNEL = _channel_pattern()
_CANONICAL = b" NCCL INFO Channel 0/0 : 0[0] -> 0[0]"  # matches _CHANNEL: keying twice changes nothing

def _possessive(pattern: bytes, flags: int = 0) -> re.Pattern[bytes]:
    """`pattern` with its `++` possessive where Python has them (3.11+), else greedy (the same matches here)."""
    try:
        return re.compile(pattern, flags)
    except re.error:
        return re.compile(pattern.replace(b"++", b"+"), flags)


# Ring and tree lines (`Channel 05/32 : 0 1 2 ... 511`, `Trees [3] 1/2/-1->3->4 ...`) carry no cause and no fact:
# their numbers are made canonical too, so that a 512-rank job's thousands of them share one key.
_RING = _possessive(rb" NCCL INFO Channel \d++/\d++ :(?: \d++)++$", re.M)
_RING_CANONICAL = b" NCCL INFO Channel 0/0 : 0"
_TREES = _possessive(rb" NCCL INFO Trees(?: \[\d++\] -?\d++/-?\d++/-?\d++->-?\d++->-?\d++)++$", re.M)
_TREES_CANONICAL = b" NCCL INFO Trees [0] 0/0/0->0->0"
# A canonical line's per-rank prefix `host:pid:tid [local]`: its pid and tid are read by no fact (the host is:
# OriginFacts), so they are made 0 too; a 512-rank job's connection lines then share a key per host, local rank and
# transport instead of one per line.
_CHANNEL_PREFIX = re.compile(rb":\d+:\d+ (?=\[\d+\](?:" + re.escape(_CANONICAL) + rb"|" + re.escape(_RING_CANONICAL)
                             + rb"$|" + re.escape(_TREES_CANONICAL) + rb"$))", re.M)
_CANONICAL_PREFIX = b":0:0 "

# The text _CHANNEL replaces as the prefilter sees it (lower case); '#' is a run of digits.
_TEMPLATES = (" nccl info channel #/# : #[#] -> #[#]", " nccl info channel # : #[#] -> #[#]")
# The same with the connection line's prefix, whose pid and tid are made canonical too (_CHANNEL_PREFIX).
_PREFIX_TEMPLATES = (":#:# [#] nccl info channel #/# : #[#] -> #[#]", ":#:# [#] nccl info channel # : #[#] -> #[#]",
                     ":#:# [#] nccl info channel #/# : # # # # # # # # # # # # # # # #",
                     ":#:# [#] nccl info trees [#] #/#/#->#-># [#] #/#/#->#->#",
                     ":#:# [#] nccl info trees [#] -#/-#/-#->#->-# [#] -#/-#/-#->#->-#")

# lower case, and every digit a 0
FOLD = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ123456789", b"abcdefghijklmnopqrstuvwxyz000000000")


def unsafe_gates(gates: Iterable[bytes]) -> List[bytes]:
    """The gates whose digits could lie on the connection numbers a key makes canonical."""
    return [g for g in gates if any(_overlaps(g.decode("latin-1"), t) for t in _TEMPLATES)]


def prefix_unsafe_gates(gates: Iterable[bytes]) -> List[bytes]:
    """The gates whose digits could lie on the numbers of a ring or tree line, or on the pid and tid of the prefix
    of a connection, ring or tree line (all made canonical too)."""
    return [g for g in gates if any(_overlaps(g.decode("latin-1"), t) for t in _PREFIX_TEMPLATES)]


def _overlaps(gate: str, template: str) -> bool:
    """Could a run of digits of `gate` be one of the template's '#', at some alignment?"""
    for gs, ge in ((m.start(), m.end()) for m in re.finditer(r"\d+", gate)):
        for slot in (i for i, c in enumerate(template) if c == "#"):
            if _fits(gate[:gs][::-1], template[:slot][::-1]) and _fits(gate[ge:], template[slot + 1:]):
                return True
    return False


def _fits(side: str, template: str) -> bool:
    """Does `side` (gate text walking away from the run) agree with `template` (walking the same way)?
    Past the template's end anything goes: that is the rest of the line."""
    i = j = 0
    while i < len(side) and j < len(template):
        if template[j] == "#":
            if not side[i].isdigit():
                return False
            while i < len(side) and side[i].isdigit():
                i += 1
        elif side[i] != template[j]:
            return False
        else:
            i += 1
        j += 1
    return True


# A shape's loose form: digits, blanks, carriage returns and bytes past ASCII removed (no gate holds the last two),
# hex ids made one mark. Lines that differ only in their numbers, the bars of a progress meter or a communicator's
# id share one; it is what classify (needles.py) searches for gates, once per loose form. Removing bytes keeps
# every gate's own loose form inside the loose form of a line that holds the gate; a gate that may overlap a hex
# id (hex_unsafe) is looked for wherever a mark is.
LOOSE_DELETE = b"0 \t\r" + bytes(range(0x80, 0x100))
HEX_MARK = b"\x01"
_HEX_ID = _possessive(rb"0x[0a-f]++(?![0-9a-z_])")  # in a shape: digits are 0, letters lower case


def loose_forms(shapes: bytes) -> bytes:
    """The loose form of each shape of `shapes` (joined by newlines, which stay)."""
    if b"0x" in shapes:
        shapes = _HEX_ID.sub(b"0x" + HEX_MARK, shapes)
    return shapes.translate(None, LOOSE_DELETE)


def hex_unsafe(folded_gate: bytes) -> bool:
    """Could an occurrence of this gate (folded) lie on the digits of a hex id that loose_forms marks (`0x` stays,
    the hex digits after it, with no word character after them, become the mark)? Then the mark, not the gate, is
    in the loose form."""
    return (re.search(rb"0x[0a-f]", folded_gate) is not None  # ends inside an id, or holds one
            or re.match(rb"x?[0a-f]+(?:[^0-9a-z_]|$)", folded_gate) is not None)  # starts inside one


def line_shapes(block: bytes, raw_lines: Sequence[bytes], max_line: int, may_be_long: bool = True) -> List[bytes]:
    """The shape of each line of the block, in the order of `raw_lines` (a line past the cap: of its head).
    may_be_long=False: the caller knows no line is longer than the cap."""
    shapes = block.translate(FOLD).split(b"\n")
    if may_be_long and max(map(len, raw_lines), default=0) > max_line:
        for i in compress(range(len(raw_lines)), map(max_line.__lt__, map(len, raw_lines))):
            shapes[i] = shapes[i][:max_line]
    return shapes


def line_keys(lines: Sequence[bytes], unsafe: Union[re.Pattern[bytes], Sequence[bytes], None], max_line: int, *,
              fold_case: bool = True, may_be_long: bool = True) -> List[bytes]:
    """The key of each line (whole lines, no newline in them); the caller makes sure no line holds the
    mark of a whole-line key. `unsafe` (a pattern, or its gates as literals: found with bytes.find, much faster
    than a pattern that starts with a digit) is searched in the lower-cased lines (fold_case=False: its gates
    hold no letter, so the lines as they are); may_be_long=False: no line is longer than the cap."""
    joined = b"\n".join(lines)
    canon = _TREES.sub(_TREES_CANONICAL, _RING.sub(_RING_CANONICAL, _CHANNEL.sub(_CANONICAL, joined)))
    if canon is not joined:
        canon = _CHANNEL_PREFIX.sub(_CANONICAL_PREFIX, canon)
    keys = list(lines) if canon is joined else canon.split(b"\n")
    whole: List[int] = []
    if may_be_long and max(map(len, lines), default=0) > max_line:
        whole = list(compress(range(len(lines)), map(max_line.__lt__, map(len, lines))))
    if isinstance(unsafe, (tuple, list)):
        low = joined.lower() if fold_case else joined
        for gate in unsafe:
            at = low.find(gate)
            while at >= 0:
                whole.append(low.count(b"\n", 0, at))
                end = low.find(b"\n", at)
                at = low.find(gate, end + 1) if end >= 0 else -1
    elif unsafe is not None:
        low = joined.lower() if fold_case else joined
        pos = counted = line = 0
        while True:
            m = unsafe.search(low, pos)
            if m is None:
                break
            line += low.count(b"\n", counted, m.start())
            counted = m.start()
            whole.append(line)
            end = low.find(b"\n", m.end())
            if end < 0:
                break
            pos = end + 1
    for i in whole:
        keys[i] = WHOLE_MARK + lines[i][:max_line]
    return keys


def has_whole_mark(block: bytes) -> bool:
    """Does the block hold the mark that starts a whole-line key (then its lines cannot be keyed)?"""
    return b"\x00" in block and WHOLE_MARK in block
