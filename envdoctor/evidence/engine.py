"""The one evidence engine: any failure text (an NCCL or torch.distributed log, a traceback, a build log, a
pasted issue) -> ranked root causes.

One pass over each input: a union of every fact pattern and a union of every signature find the few
lines worth a closer look; those lines alone are matched one pattern at a time. Signatures add weight
to categories, context rules (data, `rules/nccl/context.json`) then raise or lower categories from
what else the text, its NCCL INFO facts or the machine snapshot show. The highest score is the most
likely root cause; evidence ranks by specificity (`rank`). The signatures are data in the one format
`envdoctor.signatures/1` (`envdoctor.evidence.signatures`); `envdoctor nccl diagnose` reads the NCCL ones,
`envdoctor diagnose` every one.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from dataclasses import dataclass, field
from itertools import compress
from operator import not_
from typing import Any, BinaryIO, Callable, Dict, List, Optional, Sequence, Set, Tuple

from envdoctor.evidence.needles import Prefilter, Verdict
from envdoctor.evidence.reader import CHUNK_BYTES, MAX_LINE, blocks_keeping_tails, decode_line, iter_blocks
from envdoctor.evidence.shapes import has_whole_mark, line_keys, line_shapes
from envdoctor.evidence.signatures import SPECIFICITIES, RuleSet
from envdoctor.findings import Finding
from envdoctor.fixes import manual
from envdoctor.nccl.facts import (
    FACT_NEEDLES,
    FACT_PATTERNS,
    LAST_WINS_FACTS,
    REPEATABLE_FACTS,
    STAMP_BYTES,
    STAMP_WITHIN,
    NcclFacts,
    Stamp,
    first_failure_line,
    line_origin,
    timestamp,
)
from envdoctor.rules.conditions import PREDICATES, Context, Found, holds
from envdoctor.snapshot import Snapshot

LOOKBACK = 64  # lines before an error line searched for its timestamp
ENTRY_BYTES = 120  # what one remembered key or shape costs beyond its bytes (object, table slot, value)


@dataclass
class SignalHit:
    """One signature's matches: how many, the first line's number, and the first few lines."""

    count: int = 0
    first: Tuple[int, int] = (0, 0)  # (input index, line number): the order lines were read in
    lines: List[str] = field(default_factory=list)


class Scanner:
    """Accumulates signals and facts over any number of inputs, block by block.

    A line is parsed once per shape (shapes.py) when every pattern its needles name is a fact that a
    repeat cannot change; `shaped=False` parses every line (the reference the shaped scan must equal).
    """

    MEMO_BYTES = 8 << 20  # what the keys and shapes remembered may hold; past that they start afresh
    MISS_BYTES = 8 << 20  # the same for the shapes that hold no gate (cheap to classify again: classify's loose forms)

    def __init__(self, rules: RuleSet, max_line: int = MAX_LINE, shaped: bool = True,
                 chunk_bytes: int = CHUNK_BYTES, watch: Sequence[str] = (),
                 watch_test: Optional[Callable[[bytes], bool]] = None) -> None:
        """`watch` (lower-case literals) and `watch_test` (a line -> may it matter?): a report reader's triggers; each
        block is handed to `scan`'s on_block with whether a line of it passed `watch_test` (None: not known)."""
        self.rules = rules
        self.max_line = max_line
        self.chunk_bytes = chunk_bytes
        self.max_evidence = int(rules.settings["max_evidence"])
        self.prefilter = prefilter_for(rules, tuple(watch) if watch_test is not None else ())
        self.watch_test = watch_test if self.prefilter.watched else None
        self._watching: Set[bytes] = set()  # shapes whose lines may hold a watched literal
        self._watched_block: Optional[bool] = None
        self.shaped = shaped
        self.signals: Dict[str, SignalHit] = {}
        self.facts = NcclFacts()
        self.inputs: List[str] = []
        self.lines = 0
        self.bytes = 0
        # what the reading of each key and shape found so far, per input (see shapes.py)
        self._hits: Dict[bytes, Verdict] = {}  # shapes that may hold a gate -> what classify said of them
        self._misses: Set[bytes] = set()  # shapes that hold none
        self._found: Dict[bytes, List] = {}  # key -> the patterns to try on its lines
        self._done: Set[bytes] = set()  # keys whose lines can add nothing more
        # key -> (all changes when read, its last-wins kinds' changes then, the signatures it matched): see
        # _shaped_block
        self._settled: Dict[bytes, Tuple[int, Tuple[Tuple[str, int], ...], Tuple[str, ...]]] = {}
        self._memo_bytes = self._miss_bytes = 0
        self._joined: Set[Tuple[int, int]] = set()  # (input, line) pairs already tried joined
        self._block_bytes = b""  # the block being read
        self._stamped: Optional[bool] = None  # does it hold a timestamp? (None: not looked yet)
        self._joinable_now = False  # did the line _line last read end or continue a split message?
        cats = rules.categories
        # the signatures whose lines are an origin's first error (a generic line, an abort or a final RuntimeError,
        # does not say which rank failed first: every rank ends in one)
        self._error_sig = [not sig.generic and any(w > 0 and c in cats and cats[c].severity == "error"
                                                   for c, w in sig.weights.items())
                           for sig in rules.signatures]

    def scan(self, label: str, stream: BinaryIO, cuts: Optional[List[int]] = None,
             on_block: Optional[Callable[..., None]] = None) -> None:
        """Read one input. `cuts`: collect the numbers of lines longer than the cap there, each read as its head and
        its tail (reader.iter_blocks); `on_block(first line number, block)` sees every block read (one reading
        feeds both the signatures and a report reader), with `watched=` True or False when the scanner was given a
        `watch_test` and could tell whether a line of the block passes it."""
        index = len(self.inputs)
        self.inputs.append(label)
        self.facts.files.append(label)
        for memo in (self._hits, self._misses, self._found, self._done, self._settled, self._watching):
            memo.clear()
        self._memo_bytes = self._miss_bytes = 0
        first, block = 1, None
        blocks = blocks_keeping_tails(stream, self.max_line, self.chunk_bytes, cuts) if cuts is not None else \
            ((first, block, None) for first, block in iter_blocks(stream, self.max_line, self.chunk_bytes))
        for first, block, lines in blocks:
            self._block_bytes, self._stamped, self._watched_block = block, None, None
            if not self.shaped or not self._prefiltered or not self._shaped_block(index, label, first, block, lines):
                self._block(index, label, first, block)
            if on_block is not None:
                if self.watch_test is None:
                    on_block(first, block)
                else:
                    on_block(first, block, watched=self._watched_block)
            self.bytes += len(block) + 1
        if block is not None:
            self.lines += first + block.count(b"\n")  # the number of the last line

    def findings(self, snapshot: Optional[Snapshot] = None) -> List[Finding]:
        """The ranked causes of everything read so far (`rank`)."""
        return rank(self.rules, self.signals, self.facts, snapshot)

    _prefiltered = True  # False: every pattern is tried on every line (the reference tests hold the prefilter to)

    def _block(self, index: int, label: str, first: int, block: bytes) -> None:
        raw = block.split(b"\n")
        if not self._prefiltered:
            every = [*self.prefilter.always, *(("f", k) for k in FACT_PATTERNS),
                     *(("s", i) for i in range(len(self.rules.signatures)))]
            for i, line in enumerate(raw):
                self._line(index, label, first, i, raw, decode_line(line, self.max_line), every)
            return
        counted, i = 0, 0
        for start, end in self.prefilter.lines(block, self.max_line):
            i += block.count(b"\n", counted, start)
            counted = start
            keys = self.prefilter.candidates(block[start:end])
            if keys:
                self._line(index, label, first, i, raw, decode_line(raw[i], self.max_line), keys)

    def _shaped_block(self, index: int, label: str, first: int, block: bytes,
                      lines: Optional[List[bytes]] = None) -> bool:
        """Scan a block reading each key once (see shapes.py); False when it cannot be keyed (nothing done).
        `lines`: the block's lines where the reader split it already (then none is longer than the cap)."""
        if has_whole_mark(block):
            return False
        cap = self.max_line
        if lines is not None:
            raw, long = lines, False
        else:
            raw = block.split(b"\n")
            long = max(map(len, raw), default=0) > cap
        shapes = line_shapes(block, raw, cap, long)
        hits, misses, done, found_for, settled = self._hits, self._misses, self._done, self._found, self._settled
        facts = self.facts
        changes = facts.changes
        # `_watching` holds every watched shape of hits and misses: each is forgotten with the memo that held it
        if self._memo_bytes > self.MEMO_BYTES:
            for memo in (hits, done, found_for, settled):
                memo.clear()
            self._watching.intersection_update(misses)
            self._memo_bytes = 0
        if self._miss_bytes > self.MISS_BYTES:  # apart: lines seen once (progress bars) must not clear the keys
            self._watching.difference_update(misses)
            misses.clear()
            self._miss_bytes = 0
        fresh = list(set(shapes).difference(hits, misses))
        watching = self._watching if self.watch_test is not None else None
        if fresh:
            # a shape whose lines can have no candidate at all is a miss: its lines are never keyed
            for shape, verdict in zip(fresh, self.prefilter.classify(fresh, watching)):
                if verdict is None:
                    misses.add(shape)
                    self._miss_bytes += len(shape) + ENTRY_BYTES
                else:
                    hits[shape] = verdict
                    self._memo_bytes += len(shape) + ENTRY_BYTES
        if watching is not None:
            self._watched_block = False
            if not watching.isdisjoint(shapes):
                marked = compress(range(len(shapes)), map(watching.__contains__, shapes))
                self._watched_block = any(map(self.watch_test, (raw[i][:cap] for i in marked)))  # type: ignore[arg-type]
        rows = list(compress(range(len(shapes)), map(hits.__contains__, shapes)))  # lines that may hold a gate
        if not rows:
            return True
        keys = line_keys(list(map(raw.__getitem__, rows)), self.prefilter.unsafe_literals or None, cap,
                         fold_case=self.prefilter.unsafe_cased, may_be_long=long)
        candidates = self.prefilter.candidates_given
        for n in compress(range(len(rows)), map(not_, map(done.__contains__, keys))):  # lazy, in C
            i, key = rows[n], keys[n]
            read = settled.get(key)
            if read is not None and (read[0] == facts.changed or all(changes.get(k, 0) == c for k, c in read[1])) \
                    and (not read[2] or all(len(self.signals[sig].lines) >= self.max_evidence for sig in read[2])):
                for sig in read[2]:  # read before; no value of its kinds has changed since, its evidence is full
                    self.signals[sig].count += 1
                continue
            found = found_for.get(key)
            # a line holding a hex id (a communicator's, a pointer) is seldom seen again: its key is not remembered,
            # so that a 512-rank job's init lines do not push out the keys that do repeat
            keep = b"0x" not in key
            if found is None:
                found = candidates(raw[i][:cap], hits[shapes[i]])
                if keep:
                    found_for[key] = found
                    self._memo_bytes += len(key) + ENTRY_BYTES
            if not found:
                if keep:
                    done.add(key)
                continue
            line = decode_line(raw[i], cap)
            signalled, told, matched = self._line(index, label, first, i, raw, line, found)
            if keep and (key == raw[i] or not signalled and all(kind == "f" for kind, _ in found)) \
                    and not self._joinable_now:  # (a signature might read a canonical key's numbers)
                if told.issubset(REPEATABLE_FACTS) and not signalled:
                    done.add(key)  # lines of this key add nothing now
                elif told.issubset(REPEATABLE_FACTS | LAST_WINS_FACTS):
                    settled[key] = (facts.changed, tuple((kind, changes.get(kind, 0)) for kind in told & LAST_WINS_FACTS),
                                    tuple(matched))
                    self._memo_bytes += len(key) + ENTRY_BYTES
        return True

    def _line(self, index: int, label: str, first: int, i: int, raw: List[bytes], line: str,
              keys: List) -> Tuple[bool, Set[str], List[str]]:
        """Try the patterns `keys` on line i of a block (`raw`, its first line numbered `first`): (did a signature
        match, the kinds of fact the line told, the signatures it matched alone). A message split over this line
        and a neighbour is tried joined too."""
        sigs = self.rules.signatures
        touched = signalled = False
        told: Set[str] = set()
        matched: List[str] = []
        for kind, key in keys:
            if kind == "f":
                if self.facts.feed(key, line, label):
                    touched = True
                    told.add(key)
                continue
            sig = sigs[key]
            if sig.regex.search(line) is None:
                continue
            touched = signalled = True
            matched.append(sig.id)
            self._signal(index, label, first, i, raw, line, key)
        if touched:
            self.facts.origin(label, line)  # note the host that printed it
        cap = self.max_line
        here, before = opens(raw[i][:cap]), i > 0 and opens(raw[i - 1][:cap])
        self._joinable_now = here or before  # _joinable(i, raw), for the caller
        if here and i + 1 < len(raw):
            signalled = self._join(index, label, first, i, raw, line, decode_line(raw[i + 1], cap)) or signalled
        if before:
            signalled = self._join(index, label, first, i - 1, raw, decode_line(raw[i - 1], cap), line) or signalled
        return signalled, told, matched

    def _joinable(self, i: int, raw: List[bytes]) -> bool:
        """Does line i end a message the next line continues, or continue the previous one's?"""
        cap = self.max_line
        return opens(raw[i][:cap]) or (i > 0 and opens(raw[i - 1][:cap]))

    def _join(self, index: int, label: str, first: int, i: int, raw: List[bytes], head: str, tail: str) -> bool:
        """Signatures that match lines i and i+1 joined (and neither alone); True when one did."""
        if (index, first + i) in self._joined:
            return False
        if len(self._joined) > 4096:
            self._joined.clear()
        self._joined.add((index, first + i))
        text = head.rstrip() + " " + continuation(head, tail)
        signalled = False
        for kind, key in self.prefilter.candidates(text.encode("utf-8", errors="replace")[: self.max_line]):
            if kind != "s":
                continue
            rx = self.rules.signatures[key].regex
            if rx.search(text) is not None and rx.search(head) is None and rx.search(tail) is None:
                self._signal(index, label, first, i, raw, text, key)
                signalled = True
        return signalled

    def _signal(self, index: int, label: str, first: int, i: int, raw: List[bytes], line: str, key: int) -> None:
        sig = self.rules.signatures[key]
        lineno = first + i
        hit = self.signals.get(sig.id)
        if hit is None:
            hit = self.signals[sig.id] = SignalHit(first=(index, lineno))
        hit.count += 1
        if len(hit.lines) < self.max_evidence:
            hit.lines.append(f"{label}:{lineno}\t{line.strip()}")
        if self._error_sig[key]:
            origin = line_origin(label, line)
            seen = self.facts.first_errors.get(origin)
            where = f"{label}:{lineno}"
            if seen is None:
                self.facts.error_seen(origin, self._stamp(label, origin, i, raw, line), line, where, label, sig.id)
            elif seen.location == where:
                self.facts.error_seen(origin, seen.stamp, line, where, label, sig.id)

    def _stamp(self, label: str, origin: str, i: int, raw: List[bytes], line: str) -> Optional[Stamp]:
        """The time of line i: its own timestamp, else that of the nearest line before it from the same origin
        (or from no origin but the file), else that of the nearest timed line before it in the input (the
        rank's torch and NCCL lines carry different prefixes): a lower bound."""
        stamp = timestamp(line)
        if stamp is not None:
            return stamp
        if self._stamped is None:
            self._stamped = STAMP_BYTES.search(self._block_bytes) is not None
        if not self._stamped:
            return None
        nearest: Optional[Stamp] = None
        for j in range(i - 1, max(0, i - LOOKBACK) - 1, -1):
            if STAMP_BYTES.search(raw[j], 0, STAMP_WITHIN) is None:
                continue
            before = decode_line(raw[j][:STAMP_WITHIN + 128], self.max_line)
            stamp = timestamp(before)
            if stamp is None:
                continue
            if line_origin(label, before) in (origin, label):
                return stamp
            nearest = nearest or stamp
        return nearest


def opens(raw: bytes) -> bool:
    """Does the line end before its message does ("Last error:", an unclosed parenthesis)?"""
    text = raw.rstrip()
    return text.endswith(b":") or (b"(" in text and text.count(b"(") > text.count(b")"))


def continuation(head: str, tail: str) -> str:
    """The next line without the prefix it shares with the line it continues ("[rank0]: ", "host:pid:tid [0] ...")."""
    n = len(os.path.commonprefix([head, tail]))
    cut = max(tail.rfind(" ", 0, n), tail.rfind(":", 0, n), tail.rfind("]", 0, n)) + 1 if n >= 4 else 0
    return tail[cut:].strip()


_PREFILTERS: Dict[Tuple[int, Tuple[str, ...]], Tuple[RuleSet, Prefilter]] = {}


def prefilter_for(rules: RuleSet, watch: Tuple[str, ...] = ()) -> Prefilter:
    """The literal prefilter over every fact pattern and signature of a rule set, and the literals `watch` (built
    once per set and literals)."""
    cached = _PREFILTERS.get((id(rules), watch))
    if cached is None or cached[0] is not rules:
        entries = [(("f", k), FACT_NEEDLES[k]) for k in FACT_PATTERNS]
        entries += [(("s", i), s.needles) for i, s in enumerate(rules.signatures)]
        cached = _PREFILTERS[(id(rules), watch)] = (rules, Prefilter(entries, watch))
    return cached[1]


def rank(rules: RuleSet, signals: Dict[str, SignalHit], facts: NcclFacts,
         snapshot: Optional[Snapshot] = None) -> List[Finding]:
    """Score every category from the signals, apply the context rules, and rank.

    Evidence ranks by specificity (each signature's `specificity`): a category backed by a decisive or supporting
    line (or a context rule that holds without a generic signal) is ranked by that evidence alone, above every
    category backed only by generic lines (an abort, a final RuntimeError, "unhandled cuda error"), so that adding
    generic lines to a log never moves a cause a specific line backs. A generic-only cause is `low` confidence and
    says which check would decide it.

    Every finding but the first is an alternative: each carries what speaks against it (the evidence it does not
    explain, the rules that made it less likely) and the one check that tells it apart (its category's
    `discriminating_test`); the first carries the runner-up's evidence it does not explain.
    """
    scores: Dict[str, float] = {}  # everything that points at a category
    specific: Dict[str, float] = {}  # the same without what generic lines added
    backed: Dict[str, int] = {}  # category -> the most specific class of its positive support (index in SPECIFICITIES)
    sigs_for: Dict[str, List[str]] = {}
    why: Dict[str, List[str]] = {}
    extra: Dict[str, List[str]] = {}
    support: Dict[str, Dict[str, Tuple[float, str]]] = {}  # category -> source -> (weight, what it means)
    generic_seen: List[str] = []  # the generic signatures that matched

    def add(cat: str, w: float, cls: str) -> None:
        scores[cat] = scores.get(cat, 0.0) + w
        if cls != "generic":
            specific[cat] = specific.get(cat, 0.0) + w
        if w > 0:
            backed[cat] = min(backed.get(cat, len(SPECIFICITIES)), SPECIFICITIES.index(cls))

    for sig in rules.signatures:
        if sig.id not in signals:
            continue
        if sig.generic:
            generic_seen.append(sig.id)
        for cat, w in sig.weights.items():
            add(cat, w, sig.specificity)
            sigs_for.setdefault(cat, []).append(sig.id)
            if w > 0:
                why.setdefault(cat, []).append(sig.means)
                support.setdefault(cat, {})[sig.id] = (w, sig.means)
    ctx = Context(snapshot, {"log": facts.as_dict()}, tables=rules.tables, signals=signals, log=facts)
    generic_ids = {s.id for s in rules.signatures if s.generic}
    specific_ctx: Optional[Context] = None
    scales: List[Tuple[str, float, str, List[str], str]] = []
    for rule in rules.rules:
        found = Found()
        if not holds(rule.when, ctx, PREDICATES, found):
            continue
        cls = rule.specificity
        if generic_ids & set(signals) and _names_signal(rule.when, generic_ids) and not _tests_facts(rule.when):
            if specific_ctx is None:
                specific_ctx = dataclasses.replace(ctx, signals={k: v for k, v in signals.items() if k not in generic_ids})
            if not holds(rule.when, specific_ctx, PREDICATES, Found()):
                cls = "generic"  # it holds only thanks to a generic line, and says nothing of its own
        ev = found.evidence
        for cat, w in rule.boost.items():
            add(cat, w, cls)
            why.setdefault(cat, []).append(rule.note)
            extra.setdefault(cat, []).extend(ev)
            sigs_for.setdefault(cat, []).extend(s for s in rule.evidence if s in signals)
            if w > 0:
                support.setdefault(cat, {})[f"rule:{rule.id}"] = (w, rule.note)
        scales.extend((cat, f, rule.note, ev, cls) for cat, f in rule.scale.items())
    _first_failure(rules, signals, facts, scores, why, extra, support, add)
    lowered: Dict[str, List[str]] = {}
    for cat, factor, note, ev, cls in scales:
        if cat in scores:
            scores[cat] *= factor
            if cls != "generic" and cat in specific:
                specific[cat] *= factor
            why.setdefault(cat, []).append(note if factor >= 1 else f"less likely: {note}")
            if factor >= 1:
                extra.setdefault(cat, []).extend(ev)
            else:
                lowered.setdefault(cat, []).append(note)

    by_sig = {s.id: s for s in rules.signatures}
    settings = rules.settings
    high, medium = float(settings["confidence"]["high"]), float(settings["confidence"]["medium"])
    generic_tier = SPECIFICITIES.index("generic")
    cands = []
    for cat, full in scores.items():
        generic_only = backed.get(cat, generic_tier) >= generic_tier
        # a specific cause ranks by its specific evidence; the score said (and its confidence) is all that points at it
        key = full if generic_only else specific.get(cat, 0.0)
        if full < float(settings["report_min_score"]) or cat not in rules.categories:
            continue
        used = sorted(dict.fromkeys(s for s in sigs_for.get(cat, []) if s in by_sig and s in signals),
                      key=lambda s: signals[s].first)
        first = signals[used[0]].first if used else (sys.maxsize, 0)
        cands.append((generic_only, -key, -full, first, cat, used))
    cands.sort()
    out: List[Finding] = []
    for n, (generic_only, neg_key, neg, _first, cat, used) in enumerate(cands[: int(settings["max_findings"])]):
        score = -neg
        c = rules.categories[cat]
        lines: List[str] = []
        for s in used:
            for ln in signals[s].lines:
                if ln not in lines:
                    lines.append(ln)
        lines = sorted(lines, key=_line_order)[:8]
        conf = "high" if score >= high else "medium" if score >= medium else "low"
        if generic_only:
            conf = "low"  # nothing in the log but lines every cause ends in
        rival_close = len(cands) > 1 and cands[1][0] == generic_only and -cands[1][1] >= 0.8 * -neg_key
        if n == 0 and conf == "high" and rival_close:
            conf = "medium"  # a close runner-up: the log cannot tell them apart well
        if n > 0 and _CONFIDENCE.index(conf) < _CONFIDENCE.index(out[0].confidence or "low"):
            conf = out[0].confidence or "low"  # an alternative is never surer than the cause ranked above it
        evidence = [ln.split("\t", 1)[1] for ln in lines] + list(dict.fromkeys(extra.get(cat, [])))
        locations = [ln.split("\t", 1)[0] for ln in lines]
        reasons = list(dict.fromkeys(why.get(cat, [])))
        if generic_only:
            reasons.append(_undecided(c.test, [s for s in generic_seen if s in used] or generic_seen))
        rival = cands[0][4] if n > 0 else cands[1][4] if len(cands) > 1 else None
        against = _against(cat, rival, support, lowered.get(cat, []))
        detail = "\n".join([*reasons, *(f"log: {e}" for e in evidence)])
        subjects = ["nccl"] if c.finding_id.startswith("NCCL-") else ["text"]
        out.append(Finding(
            id=c.finding_id, category=c.reported or cat, title=c.title, severity=c.severity,
            detail=f"[{conf} confidence] {detail}".strip(), remedy=manual(c.fix), subjects=subjects,
            confidence=conf, score=score, evidence=evidence, locations=locations, why=reasons,
            against=against, test=dict(c.test) if c.test else None,
        ))
    return out


def _undecided(test: Optional[Dict[str, str]], generic: List[str]) -> str:
    """What a generic-only answer says: it rests on lines any cause ends in, and the check that would decide it."""
    head = (f"only generic lines point here ({', '.join(generic)}): every cause of this kind ends in them, so the log "
            "does not decide it")
    if test:
        return f"{head}; to decide, run `{test['run']}`: it is this cause if {test['confirms']}"
    return f"{head}; rerun with NCCL_DEBUG=INFO and read the NCCL WARN lines"


def _tests_facts(cond: Any) -> bool:
    """Does a condition test anything but signals (a predicate, a comparison over the log's facts or the snapshot)?
    Such a rule joins a generic line with evidence of its own (/dev/shm is 64 MiB on this machine)."""
    if isinstance(cond, dict):
        for op, arg in cond.items():
            if op in ("all", "any", "not"):
                if _tests_facts(arg):
                    return True
            elif op != "signal":
                return True
    elif isinstance(cond, list):
        return any(_tests_facts(c) for c in cond)
    return False


def _names_signal(cond: Any, ids: Set[str]) -> bool:
    """Does a condition name one of the signatures `ids` anywhere (in a `signal` test)?"""
    if isinstance(cond, dict):
        for op, arg in cond.items():
            if op == "signal" and any(a in ids for a in (arg if isinstance(arg, list) else [arg])):
                return True
            if _names_signal(arg, ids):
                return True
    elif isinstance(cond, list):
        return any(_names_signal(c, ids) for c in cond)
    return False


_CONFIDENCE = ("high", "medium", "low")


def told_first_failure(rules: RuleSet, facts: NcclFacts) -> Optional[Dict[str, Any]]:
    """facts.first_failure() where it says something: an error the later ranks did not report, or the same
    error at least `first_failure_min_lead_s` before the next rank's (within moments, no rank stands out)."""
    ff = facts.first_failure()
    if ff is None:
        return None
    if set(ff["signals"]) - set(ff["later_signals"]):
        return ff
    return ff if ff["lead_seconds"] >= float(rules.settings["first_failure_min_lead_s"]) else None


def _first_failure(rules: RuleSet, signals: Dict[str, SignalHit], facts: NcclFacts, scores: Dict[str, float],
                   why: Dict[str, List[str]], extra: Dict[str, List[str]],
                   support: Dict[str, Dict[str, Tuple[float, str]]], add: Callable[[str, float, str], None]) -> None:
    """The rank whose error came first, by the timestamps of the rank logs: said beside the causes its error
    points to; the causes only it points to (not the later ranks' errors: those are its consequences) gain
    the `first_failure_weight` setting."""
    ff = told_first_failure(rules, facts)
    if ff is None:
        return
    own = set(ff["signals"]) - set(ff["later_signals"])
    line = first_failure_line(ff)
    by_sig = {s.id: s for s in rules.signatures}
    mine = {c for s in ff["signals"] if s in by_sig for c, w in by_sig[s].weights.items() if w > 0}
    later = {c for s in ff["later_signals"] if s in by_sig for c, w in by_sig[s].weights.items() if w > 0}
    weight = float(rules.settings["first_failure_weight"])
    note = (f"{ff['who']} failed first; the errors of the other ranks came after it, "
            "as its consequence")
    for cat in sorted(mine):
        extra.setdefault(cat, []).insert(0, line)  # the first thing said after the log's own lines
        if own and cat not in later and cat in scores and weight > 0:
            add(cat, weight, "supporting")  # its line matched a signature that is not generic (Scanner._error_sig)
            why.setdefault(cat, []).append(note)
            support.setdefault(cat, {})["first-failure"] = (weight, note)


def _against(cat: str, rival: Optional[str], support: Dict[str, Dict[str, Tuple[float, str]]],
             lowered: List[str]) -> List[str]:
    """What speaks against `cat`: the rules that made it less likely, and the strongest evidence of its rival
    (the top cause for an alternative, the runner-up for the top cause) that `cat` does not explain."""
    out = [f"less likely: {note}" for note in dict.fromkeys(lowered)]
    if rival is not None:
        mine, theirs = support.get(cat, {}), support.get(rival, {})
        out += [f"does not explain (fits {rival}): {text}"
                for src, (_w, text) in sorted(theirs.items(), key=lambda kv: -kv[1][0]) if src not in mine][:2]
        if mine and set(mine) <= set(theirs):
            out.append(f"nothing in the log points to it alone: every line for it also fits {rival}")
    return out


def _line_order(entry: str) -> Tuple[str, int]:
    loc = entry.split("\t", 1)[0]
    label, _, num = loc.rpartition(":")
    return (label, int(num) if num.isdigit() else 0)
