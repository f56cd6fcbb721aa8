"""Accuracy of `envdoctor diagnose` on real posted failure texts (tests/diagnose/corpus).

Each case's text goes through the use case `envdoctor.usecases.diagnose_text.diagnose_text` in-process (or,
when that cannot be imported, or with --cli, through `python -m envdoctor diagnose --json FILE`). The result
is an `envdoctor.diagnose/1` document whose `findings` are ranked, most likely cause first.

Scoring: a case is right at top-1 when `findings[0]["category"]` is in its `expect` list, at top-3 when one
of the first three is; a negative control (the environment was fine) is right when no finding has severity
"error". Dev and validation are printed separately, with the figures by kind of text and by mechanism, and
written to bench/results/diagnose_accuracy.json. Per-case results are written for dev only: validation is
quoted in aggregate and never tuned on (tests/diagnose/corpus/README.md).

    python bench/diagnose_bench.py [--cli] [--out FILE] [CASE_ID ...]

Exit status: 0 when the corpus was measured, 2 when `envdoctor diagnose` is missing (or a case id unknown).
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "diagnose" / "corpus"))
sys.path.insert(0, str(ROOT / "tests" / "corpus"))

import build  # noqa: E402  (tests/corpus/build.py: the machine corpus, and mechanisms.json)
import corpus  # noqa: E402  (tests/diagnose/corpus/corpus.py)

DEV, VALIDATION = "dev", "validation"
OUT = ROOT / "bench" / "results" / "diagnose_accuracy.json"
SCHEMA = "envdoctor.bench.diagnose/1"


class DiagnoseMissing(RuntimeError):
    """`envdoctor diagnose` (the use case and the CLI command) is not there to measure."""


# --- running the command ---------------------------------------------------------------------------------

def _as_document(result: Any) -> Dict[str, Any]:
    """The JSON document of whatever the use case returned (a dict, a JSON string, or a typed value)."""
    if isinstance(result, dict):
        return result
    if isinstance(result, (str, bytes)):
        return json.loads(result)
    for name in ("to_document", "to_json", "as_json", "to_dict", "as_dict", "document"):
        attr = getattr(result, name, None)
        if callable(attr):
            return _as_document(attr())
    if dataclasses.is_dataclass(result):
        return dataclasses.asdict(result)
    raise TypeError(f"cannot read a document from {type(result).__name__}")


def in_process_runner() -> Optional[Callable[[str, Path], Dict[str, Any]]]:
    """A runner calling the use case directly, or None when it cannot be imported."""
    try:
        from envdoctor.usecases.diagnose_text import diagnose_text  # type: ignore[import-not-found]
    except ImportError:
        return None
    params = list(inspect.signature(diagnose_text).parameters.values())
    first = params[0].name if params else ""
    wants_paths = first in ("paths", "files", "sources", "inputs", "path", "file")

    def run(text: str, path: Path) -> Dict[str, Any]:
        if wants_paths:
            arg: Any = [str(path)] if first in ("paths", "files", "sources", "inputs") else str(path)
            return _as_document(diagnose_text(arg))
        return _as_document(diagnose_text(text))

    return run


def cli_available() -> bool:
    """Whether `python -m envdoctor diagnose` exists (its --help exits 0)."""
    proc = subprocess.run([sys.executable, "-m", "envdoctor", "diagnose", "--help"], capture_output=True,
                          text=True, env=_env(), timeout=120)
    return proc.returncode == 0


def _env() -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def cli_run(text: str, path: Path) -> Dict[str, Any]:
    """Run `python -m envdoctor diagnose --json FILE` (exit 0: nothing recognisable, 1: a diagnosis)."""
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([sys.executable, "-m", "envdoctor", "diagnose", "--json", str(path)],
                              capture_output=True, text=True, env=_env(), cwd=tmp, timeout=300)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
    return json.loads(proc.stdout)


def _answers(runner: Callable[[str, Path], Dict[str, Any]]) -> bool:
    """Whether the use case can be called the way this bench calls it: one probe on a text with nothing in it.
    A signature or result this bench cannot read (TypeError, AttributeError, ValueError) sends it to the CLI."""
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "probe.txt"
        probe.write_text("nothing to see here\n", encoding="utf-8")
        try:
            doc = runner(probe.read_text(encoding="utf-8"), probe)
        except (TypeError, AttributeError, ValueError):
            return False
    return isinstance(doc, dict) and isinstance(doc.get("findings", []), list)


def pick_runner(force_cli: bool = False) -> Callable[[str, Path], Dict[str, Any]]:
    """The in-process runner, else the CLI; raises DiagnoseMissing when neither exists."""
    if not force_cli:
        runner = in_process_runner()
        if runner is not None and _answers(runner):
            return runner
    if cli_available():
        return cli_run
    raise DiagnoseMissing("envdoctor diagnose is missing: envdoctor.usecases.diagnose_text cannot be imported "
                          "and `python -m envdoctor diagnose --help` fails")


# --- scoring ---------------------------------------------------------------------------------------------

RULE_MECHANISMS = build.rule_mechanisms()


def labels(finding: Dict[str, Any], strict: bool = False) -> List[str]:
    """What a finding names: its category; the mechanism a signature finding's id is made from (TXT-X-Y and
    NCCL-X-Y name x_y, reported under a machine rule's broader category); unless `strict`, the mechanisms
    tests/corpus/mechanisms.json says its rule names (as bench/accuracy.py scores machines)."""
    out = [str(finding.get("category"))]
    fid = str(finding.get("id") or "")
    for prefix in ("TXT-", "NCCL-"):
        if fid.startswith(prefix):
            out.append(fid[len(prefix):].lower().replace("-", "_"))
    out += [] if strict else RULE_MECHANISMS.get(fid, [])
    return list(dict.fromkeys(out))


def score_case(case: Dict[str, Any], doc: Dict[str, Any], strict: bool = False) -> Dict[str, Any]:
    """Score one `envdoctor.diagnose/1` document against a case's labels: a finding is the settled cause when
    any of its `labels` is one the case expects."""
    findings = [f for f in (doc.get("findings") or []) if isinstance(f, dict)]
    ranked = [labels(f, strict) for f in findings]
    errors = sorted({str(f.get("category")) for f in findings if f.get("severity") == "error"})
    top = findings[0] if findings else {}
    row: Dict[str, Any] = {"id": case["id"], "got": [f.get("category") for f in findings][:3],
                           "top_confidence": top.get("confidence")}
    if case.get("negative_control"):
        row.update(right=not errors, false_errors=errors, top1=None, top3=None)
        return row
    expect = set(case["expect"])
    top1 = bool(ranked) and bool(set(ranked[0]) & expect)
    top3 = any(set(names) & expect for names in ranked[:3])
    row.update(right=top1, top1=top1, top3=top3,
               also_ok_top1=bool(ranked) and bool(set(ranked[0]) & set(case["also_ok"])))
    return row


def _tally(pairs: Iterable[tuple]) -> Dict[str, Any]:
    """Counts over (case, row) pairs: causes (top-1, top-3), controls, calibration of a 'high' top finding."""
    t = {"cases": 0, "causes": 0, "top1": 0, "top3": 0, "controls": 0, "controls_right": 0,
         "high": 0, "high_right": 0, "failures": 0}
    for case, row in pairs:
        t["cases"] += 1
        if row.get("failure"):
            t["failures"] += 1
        if case.get("negative_control"):
            t["controls"] += 1
            t["controls_right"] += bool(row.get("right"))
        else:
            t["causes"] += 1
            t["top1"] += bool(row.get("top1"))
            t["top3"] += bool(row.get("top3"))
            if row.get("top_confidence") == "high":
                t["high"] += 1
                t["high_right"] += bool(row.get("top1"))
    return t


def summarise(cases: List[Dict[str, Any]], rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Per split: the totals, and the same counts by kind of text (a case counts under each of its kinds)
    and by mechanism."""
    out: Dict[str, Any] = {}
    by_id = {r["id"]: r for r in rows}
    for side in (DEV, VALIDATION):
        pairs = [(c, by_id[c["id"]]) for c in cases if c["split"] == side and c["id"] in by_id]
        kinds: Dict[str, list] = defaultdict(list)
        mechs: Dict[str, list] = defaultdict(list)
        for case, row in pairs:
            for kind in case["kinds"]:
                kinds[kind].append((case, row))
            mechs[case["mechanism"]].append((case, row))
        out[side] = {"total": _tally(pairs),
                     "by_kind": {k: _tally(v) for k, v in sorted(kinds.items())},
                     "by_mechanism": {k: _tally(v) for k, v in sorted(mechs.items())}}
    return out


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100.0 * n / d:.0f}%)" if d else "-"


def report(summary: Dict[str, Any]) -> str:
    """The printed table: each split's totals, then by kind and by mechanism."""
    lines: List[str] = []
    for side in (DEV, VALIDATION):
        s = summary[side]
        t = s["total"]
        lines.append(f"== {side}: {t['cases']} cases; cause first {_pct(t['top1'], t['causes'])}, in top 3 "
                     f"{_pct(t['top3'], t['causes'])}; controls without an error {_pct(t['controls_right'], t['controls'])}; "
                     f"'high' right {_pct(t['high_right'], t['high'])}; failures {t['failures']}")
        for title, key in (("by kind", "by_kind"), ("by mechanism", "by_mechanism")):
            lines.append(f"  -- {title}")
            for name, v in s[key].items():
                parts = []
                if v["causes"]:
                    parts.append(f"first {_pct(v['top1'], v['causes'])}, top3 {_pct(v['top3'], v['causes'])}")
                if v["controls"]:
                    parts.append(f"controls {_pct(v['controls_right'], v['controls'])}")
                lines.append(f"     {name:38s} {'; '.join(parts)}")
    return "\n".join(lines)


def measure(cases: List[Dict[str, Any]], runner: Callable[[str, Path], Dict[str, Any]],
            strict: bool = False) -> List[Dict[str, Any]]:
    """One scored row per case; a case whose run fails is wrong, with the failure recorded."""
    rows = []
    for case in cases:
        path = corpus.TEXTS / f"{case['id']}.txt"
        try:
            doc = runner(path.read_text(encoding="utf-8"), path)
            row = score_case(case, doc, strict)
        except Exception as exc:  # a crash on one text is a wrong answer, not the end of the run
            row = {"id": case["id"], "right": False, "top1": False, "top3": False, "got": [],
                   "failure": f"{type(exc).__name__}: {str(exc)[:300]}"}
        rows.append(row)
    return rows


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ids", nargs="*", help="case ids (default: all)")
    ap.add_argument("--cli", action="store_true", help="run the CLI even when the use case imports")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--strict", action="store_true",
                    help="a finding names only its category and its signature's mechanism, not the mechanisms "
                         "tests/corpus/mechanisms.json says its rule names")
    args = ap.parse_args(argv)
    cases = corpus.cases()
    if args.ids:
        known = {c["id"] for c in cases}
        unknown = sorted(set(args.ids) - known)
        if unknown:
            print(f"unknown case ids: {', '.join(unknown)}", file=sys.stderr)
            return 2
        cases = [c for c in cases if c["id"] in set(args.ids)]
    try:
        runner = pick_runner(args.cli)
    except DiagnoseMissing as exc:
        print(str(exc), file=sys.stderr)
        return 2
    rows = measure(cases, runner, args.strict)
    summary = summarise(cases, rows)
    print(report(summary))
    if not args.strict:  # the same run scored without the rule table, beside it, so the table's credit shows
        strict = summarise(cases, measure(cases, runner, True))
        summary["strict_totals"] = {side: strict[side]["total"] for side in (DEV, VALIDATION)}
        print("strict (a finding names its category and its signature's mechanism only): " + "; ".join(
            f"{side} cause first {_pct(t['top1'], t['causes'])}" for side, t in summary["strict_totals"].items()))
    dev_ids = {c["id"] for c in cases if c["split"] == DEV}
    doc = {"schema": SCHEMA, "runner": "cli" if runner is cli_run else "in-process", "cases": len(cases),
           "labels": "strict" if args.strict else "category, signature mechanism, mechanisms.json",
           "summary": summary, "dev_cases": [r for r in rows if r["id"] in dev_ids]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
