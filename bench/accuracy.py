"""Accuracy of `envdoctor check` on machines rebuilt from real public reports (tests/corpus/cases).

Each case is built into a complete snapshot (tests/corpus/build.py) and diagnosed the way a user runs it:
`python -m envdoctor check --snapshot FILE --json`. A case is right when every category in its `expect`
list appears at error or warning severity and every error's category is in `expect` + `also_ok`; for a
healthy case (a negative control) that means no error outside `also_ok`.

    python bench/accuracy.py [--out bench/results/accuracy.json] [CASE_ID ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "corpus"))

import build  # noqa: E402
from split import DEV, VALIDATION, split_of  # noqa: E402

FLAGGED = ("error", "warning")


def diagnose(snapshot: Dict[str, Any]) -> Dict[str, Any]:
    """Run the CLI on `snapshot`; returns its check document, or {"failure": message}."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "snapshot.json"
        path.write_text(json.dumps(snapshot), encoding="utf-8")
        proc = subprocess.run(
            [sys.executable, "-m", "envdoctor", "check", "--snapshot", str(path), "--json"],
            capture_output=True, text=True, env=env, cwd=tmp, timeout=300,
        )
    if proc.returncode not in (0, 1):
        return {"failure": f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}"}
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        return {"failure": f"unreadable JSON: {exc}"}


NAMES = build.rule_mechanisms()  # a survey case labelled with a slug is matched by a rule naming it


def score(case: Dict[str, Any], findings: List[Dict[str, Any]]) -> Dict[str, Any]:
    def labels(f: Dict[str, Any]) -> set:
        return {f["category"], *NAMES.get(f["id"], ())}

    flagged = set().union(*(labels(f) for f in findings if f["severity"] in FLAGGED))
    allowed = set(case["expect"]) | set(case["also_ok"])
    errors = sorted({f["category"] for f in findings if f["severity"] == "error" and not labels(f) & allowed})
    missing = sorted(set(case["expect"]) - flagged)
    unexpected = errors
    return {
        "right": not missing and not unexpected,
        "missing": missing,
        "unexpected_errors": unexpected,
        "findings": [f"{f['severity']}:{f['category']}:{f['id']}" for f in findings],
    }


def run(only: List[str]) -> Dict[str, Any]:
    schema = build.load_schema()
    results = []
    for path in build.case_files():
        case = build.load_case(path)
        if only and case["id"] not in only:
            continue
        doc = diagnose(build.build_snapshot(case, schema))
        if "failure" in doc:
            result = {"right": False, "missing": list(case["expect"]), "unexpected_errors": [],
                      "findings": [], "failure": doc["failure"]}
        else:
            result = score(case, doc.get("findings", []))
        results.append({"id": case["id"], "category": case["category"], "split": split_of(case), **result})
    out = summarize(results)
    # Rules are tuned on dev only; validation is what a closing note quotes (tests/corpus/split.py).
    out["splits"] = {side: {k: v for k, v in summarize([r for r in results if r["split"] == side]).items()
                            if k != "results"} for side in (DEV, VALIDATION)}
    return out


def summarize(results: List[Dict[str, Any]]) -> Dict[str, Any]:
    by_category: Dict[str, List[bool]] = defaultdict(list)
    for r in results:
        by_category[r["category"]].append(r["right"])
    healthy = [r for r in results if r["category"] == build.HEALTHY]
    right = sum(r["right"] for r in results)
    return {
        "cases": len(results),
        "right": right,
        "accuracy": round(right / len(results), 3) if results else None,
        "by_category": {cat: {"cases": len(v), "right": sum(v)} for cat, v in sorted(by_category.items())},
        "negative_controls": len(healthy),
        "false_errors_on_negative_controls": sum(len(r["unexpected_errors"]) for r in healthy),
        "negative_controls_with_false_error": sum(bool(r["unexpected_errors"]) for r in healthy),
        "results": results,
    }


def report(summary: Dict[str, Any], show_validation: bool = False) -> str:
    """The text report: one line per dev case; validation cases only as counts by category (their ids and
    findings are in the JSON result), so that whoever reads it to write rules never learns which validation case
    failed. `show_validation` lists them too, for an audit."""
    lines = []
    hidden: Dict[str, List[int]] = defaultdict(lambda: [0, 0])
    for r in summary["results"]:
        if r["split"] == VALIDATION and not show_validation:
            hidden[r["category"]][0] += r["right"]
            hidden[r["category"]][1] += 1
            continue
        mark = "RIGHT" if r["right"] else "WRONG"
        why = []
        if r.get("failure"):
            why.append(f"failed: {r['failure']}")
        if r["missing"]:
            why.append("missing " + ",".join(r["missing"]))
        if r["unexpected_errors"]:
            why.append("unexpected error " + ",".join(r["unexpected_errors"]))
        lines.append(f"{mark}  {r['id']:<48} {r['category']:<28} {r['split']:<10} {'; '.join(why)}")
    if hidden:
        wrong = {cat: n - ok for cat, (ok, n) in sorted(hidden.items()) if n - ok}
        lines.append(f"validation: {sum(n for _ok, n in hidden.values())} cases, not listed (--show-validation); "
                     f"wrong by category: {wrong or 'none'}")
    lines.append("")
    lines.append(f"accuracy: {summary['right']}/{summary['cases']} = {summary['accuracy']:.1%}"
                 if summary["cases"] else "accuracy: no cases")
    for cat, v in summary["by_category"].items():
        lines.append(f"  {cat:<28} {v['right']}/{v['cases']}")
    lines.append(f"negative controls: {summary['negative_controls']}, false errors: "
                 f"{summary['false_errors_on_negative_controls']} "
                 f"(on {summary['negative_controls_with_false_error']} controls)")
    for side, sub in summary.get("splits", {}).items():
        if sub["cases"]:
            lines.append(f"{side}: {sub['right']}/{sub['cases']} = {sub['accuracy']:.1%}, negative controls "
                         f"{sub['negative_controls']}, with a false error {sub['negative_controls_with_false_error']}")
    return "\n".join(lines)


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "accuracy.json"))
    parser.add_argument("--show-validation", action="store_true",
                        help="list the validation cases one by one too (an audit; never while writing rules)")
    parser.add_argument("cases", nargs="*", help="case ids to run (default: all)")
    args = parser.parse_args(argv)
    summary = run(args.cases)
    print(report(summary, args.show_validation))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not args.show_validation:  # the committed result holds validation as counts only, as the report does
        summary = dict(summary, results=[r for r in summary["results"] if r["split"] != VALIDATION])
    out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
