"""The one registry of everything envdoctor can find, read from one Knowledge value: machine rules (rules/*.json),
NCCL root causes (rules/nccl/categories.json, with the signatures and context rules that point at them) and the
drift and fleet checks (rules/checks/*.json). `envdoctor rules list/explain` and docs/rules.md are rendered from it.

It sits above rules, nccl and fleet (it reads all three), so none of them imports another upward."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

from envdoctor.findings import current_id
from envdoctor.fixes import render_argv
from envdoctor.nccl.rules import RuleSet
from envdoctor.rules.checks import Checks
from envdoctor.rules.drift import DRIFT, FLEET
from envdoctor.rules.fixtures import label
from envdoctor.rules.registry import Rulebook
from envdoctor.rules.rule_fix import rule_fix
from envdoctor.rules.tables import Tables

KINDS = ("machine", "nccl", "drift")


@dataclass(frozen=True)
class Entry:
    id: str  # the id its findings carry: ED101, NCCL-SHM-EXHAUSTED, ED901
    name: str  # ED rules: kebab-case; NCCL: the category id
    kind: str  # one of KINDS
    severity: str
    category: str
    what: str
    why: str
    fix: str
    fix_safety: str = "display_only"
    status: str = ""  # ED rules: "stable since 0.1.0"
    # (heading, lines) shown by `rules explain` after what/why/fix
    sections: Tuple[Tuple[str, Tuple[str, ...]], ...] = field(default_factory=tuple)
    references: Tuple[str, ...] = ()
    fixtures: str = ""  # ED rules: where the rule fires and stays quiet

    def matches(self, wanted: str) -> bool:
        w = current_id(wanted).lower()
        return w in (self.id.lower(), self.name.lower())


def _table_sections(tables: Tables, named: Sequence[str]) -> List[Tuple[str, Tuple[str, ...]]]:
    """The compatibility tables an entry reads or quotes (`named`: "shm", "nccl_min_for_feature.wsl2"; from the
    predicates' `reads` and the files' table references), so `explain` shows the facts and their sources."""
    read = {ref.partition(".")[0] for ref in named}
    out = []
    if "nccl_min_for_gpu" in read:
        out.append(("Table nccl_min_for_gpu (rules/tables/nccl_min_for_gpu.json)", tuple(
            f"{r.generation} (compute capability >= {r.min_cc}): NCCL >= {r.nccl}  [{r.source}]"
            for r in tables.nccl_min_for_gpu)))
    features = [tables.nccl_min_for_feature[k] for t, _, k in (ref.partition(".") for ref in named)
                if t == "nccl_min_for_feature" and k in tables.nccl_min_for_feature]
    if features:
        out.append(("Table nccl_min_for_feature (rules/tables/nccl_min_for_feature.json)",
                    tuple(f"NCCL >= {f.nccl} {f.feature}  [{f.source}]" for f in features)))
    if "shm" in read:
        out.append(("Table shm (rules/tables/shm.json)", (
            f"/dev/shm needs >= {tables.shm_min_mib} MiB, and {tables.shm_per_gpu_mib} MiB per local GPU",)))
    if "triton_pins" in read:
        out.append(("Table triton_pins (rules/tables/triton_pins.json)", tuple(
            f"torch {t}: triton {v}" for t, v in tables.triton_pins.items())))
    return out


def _machine(book: Rulebook) -> List[Entry]:
    out = []
    for r in book.rules:
        ex = r.explanation
        sections: List[Tuple[str, Tuple[str, ...]]] = []
        if ex.get("example"):
            sections.append(("Example", (ex["example"],)))
        sections.append(("Message", (r.title, r.detail)))
        runs = render_argv(rule_fix(r))
        if runs:
            sections.append(("Runs", (" && ".join(" ".join(c) for c in runs),)))
        sections.append(("Condition", (json.dumps(r.when),)))
        sections += _table_sections(book.tables, r.tables)
        out.append(Entry(
            id=r.id, name=r.name, kind="machine", severity=r.severity, category=r.category, what=ex["what"],
            why=ex["why"], fix=r.fix, fix_safety=r.fix_safety, status=f"{r.status} since {r.since}",
            sections=tuple(sections),
            references=tuple(r.references),
            fixtures=f"fires on {', '.join(map(label, r.fixtures['fires']))}; "
                     f"quiet on {', '.join(map(label, r.fixtures['quiet']))}",
        ))
    return out


# Where an NCCL root cause sits (the layers of the NCCL failure taxonomy), in words a user reads.
NCCL_AREAS = {"A": "the host's or the container's resources (shared memory, memory, limits)",
              "B": "the GPU-to-GPU transport inside one node (P2P, NVLink, PCIe, the platform)",
              "C": "the network between nodes (interfaces, InfiniBand/RoCE, firewalls)",
              "D": "the rendezvous that starts the job (the c10d store, MASTER_ADDR/PORT)",
              "E": "which process drives which GPU",
              "F": "the versions of the libraries (NCCL, CUDA, the driver, plugins)",
              "G": "the NCCL configuration (NCCL_* variables, topology files)",
              "H": "the application's collectives (mismatched calls, a rank that crashed or lags)"}


def _nccl_why(layer: str) -> str:
    """Why an NCCL root cause matters, and where it sits in plain words."""
    area = NCCL_AREAS.get(layer)
    return ("It makes the distributed job fail or hang until it is fixed" + (f"; the cause lies in {area}." if area else "."))


def _nccl(rules: RuleSet, tables: Tables) -> List[Entry]:
    out = []
    for cat in rules.categories.values():
        sigs = [f"{s.id} ({'+' if w >= 0 else ''}{w:g}): {s.means}" for s in rules.signatures
                for c, w in s.weights.items() if c == cat.id]
        ctx = [f"{r.id} ({_effect(r.boost.get(cat.id), r.scale.get(cat.id))}): {r.note}" for r in rules.rules
               if cat.id in r.boost or cat.id in r.scale]
        sections: List[Tuple[str, Tuple[str, ...]]] = [("Signatures (log lines that point here, with weight)",
                                                        tuple(sigs) or ("none",))]
        if ctx:
            sections.append(("Context rules (log facts or the machine snapshot raise or lower it)", tuple(ctx)))
        if cat.test:
            sections.append(("Discriminating test (tells it apart from the other causes)",
                             (f"run: {cat.test['run']}", f"it is this cause if {cat.test['confirms']}")))
        sections += _table_sections(tables, cat.tables)
        out.append(Entry(
            id=cat.finding_id, name=cat.id, kind="nccl", severity=cat.severity, category=cat.id,
            what=f"{cat.title} (from an NCCL / torch.distributed log: `envdoctor nccl diagnose`)",
            why=_nccl_why(cat.layer),
            fix=cat.fix, sections=tuple(sections),
        ))
    return sorted(out, key=lambda e: e.id)


def _effect(boost: Optional[float], scale: Optional[float]) -> str:
    parts = ([f"+{boost:g}" if boost >= 0 else f"{boost:g}"] if boost is not None else [])
    parts += [f"x{scale:g}"] if scale is not None else []
    return ", ".join(parts)


def _checks(checks: Checks) -> List[Entry]:
    """The drift and fleet checks as declared; the two that compare facts list them with their severities."""
    drift = tuple(f"{f.what}: {f.drift}" for f in checks.facts if f.drift)
    fleet = tuple(f"{f.what}: {f.fleet}; align: {f.align.format(what=f.what)}" for f in checks.facts if f.fleet)
    sections = {DRIFT: (("Facts compared with the baseline (severity when changed)", drift),),
                FLEET: (("Facts every node must share (severity when they differ)", fleet),)}
    return [Entry(id=c.id, name=c.name, kind="drift", severity=c.severity, category=c.category, what=c.what,
                  why=c.why, fix=c.fix, sections=sections.get(c.id, ())) for c in checks.checks]


def catalog(book: Rulebook, nccl: RuleSet, checks: Checks) -> List[Entry]:
    """Every entry: machine rules by id, then the drift and fleet checks, then the NCCL root causes."""
    return _machine(book) + _checks(checks) + _nccl(nccl, book.tables)


def find(entries: Sequence[Entry], wanted: str) -> Optional[Entry]:
    return next((e for e in entries if e.matches(wanted)), None)
