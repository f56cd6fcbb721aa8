"""The failure survey as a table: mechanisms by frequency, and which of them envdoctor can name.

    python tools/survey_table.py            # write docs/survey.md from tests/corpus/survey.jsonl
    python tools/survey_table.py --check    # exit 1 if docs/survey.md is not current

Inputs: `tests/corpus/survey.jsonl` (one sampled thread a line, see tests/corpus/README.md) and
`tests/corpus/mechanisms.json` (each mechanism once: its definition and the envdoctor rule or NCCL cause ids
that name it somewhere). Each thread lists the ids that name ITS failure (`envdoctor`; empty where the
mechanism's rules do not reach it, e.g. a driver too old for onnxruntime rather than torch). Coverage is the
share of settled threads (an environment failure whose cause a maintainer, a confirmed fix or a documented
requirement settled) that envdoctor can name, on each side of the dev / validation split; the corpus column
counts the labelled cases (tests/corpus/cases, tests/nccl/corpus) of that category.
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Dict, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
SURVEY = ROOT / "tests" / "corpus" / "survey.jsonl"
MECHANISMS = ROOT / "tests" / "corpus" / "mechanisms.json"
OUT = ROOT / "docs" / "survey.md"
sys.path.insert(0, str(ROOT / "tests" / "corpus"))

from split import DEV, VALIDATION, split_of_url  # noqa: E402

FIELDS = ("url", "repo", "title", "query", "rank", "kind", "mechanism", "settled", "settled_by", "evidence", "envdoctor")
KINDS = ("machine", "build", "runtime", "distributed", "compile", "other")
SETTLED = ("maintainer", "fix_confirmed", "documented", "unsettled")
NOT_A_MECHANISM = ("not_environment", "undetermined")


def load(survey: Path = SURVEY, mechanisms: Path = MECHANISMS) -> Tuple[List[Dict[str, Any]], Dict[str, Any]]:
    """The survey rows and the mechanism table; ValueError naming every bad row at once."""
    rows: List[Dict[str, Any]] = []
    problems: List[str] = []
    table = json.loads(mechanisms.read_text(encoding="utf-8"))
    seen = set()
    for n, line in enumerate(survey.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        where = f"{survey.name}:{n}"
        missing = [f for f in FIELDS if f not in row]
        if missing:
            problems.append(f"{where}: missing {', '.join(missing)}")
            continue
        if row["kind"] not in KINDS:
            problems.append(f"{where}: kind {row['kind']!r} is not one of {', '.join(KINDS)}")
        if row["settled"] not in SETTLED:
            problems.append(f"{where}: settled {row['settled']!r} is not one of {', '.join(SETTLED)}")
        if row["mechanism"] not in table and row["mechanism"] not in NOT_A_MECHANISM:
            problems.append(f"{where}: mechanism {row['mechanism']!r} is not in {mechanisms.name}")
        unknown = [i for i in row.get("envdoctor", []) if i not in table.get(row["mechanism"], {}).get("envdoctor", [])]
        if unknown:
            problems.append(f"{where}: {', '.join(unknown)} not listed for {row['mechanism']!r} in {mechanisms.name}")
        if row["url"] in seen:
            problems.append(f"{where}: {row['url']} is surveyed twice")
        seen.add(row["url"])
        rows.append(row)
    if problems:
        raise ValueError("\n".join(problems))
    return rows, table


def settled(row: Dict[str, Any]) -> bool:
    return row["settled"] != "unsettled" and row["mechanism"] not in NOT_A_MECHANISM


def coverage(rows: List[Dict[str, Any]], table: Dict[str, Any]) -> Dict[str, Any]:
    """Settled threads and the share whose mechanism envdoctor names: all, dev, validation."""
    out = {}
    for side in ("all", DEV, VALIDATION):
        sel = [r for r in rows if settled(r) and (side == "all" or split_of_url(r["url"]) == side)]
        named = sum(bool(r["envdoctor"]) for r in sel)
        out[side] = {"settled": len(sel), "named": named, "coverage": round(named / len(sel), 3) if sel else None}
    return out


def corpus_categories() -> Dict[str, int]:
    """How many labelled corpus cases (machines and NCCL logs) each category has."""
    counts: Counter = Counter()
    for path in sorted((ROOT / "tests" / "corpus" / "cases").glob("*.json")):
        counts[json.loads(path.read_text(encoding="utf-8"))["category"]] += 1
    for path in sorted((ROOT / "tests" / "nccl" / "corpus").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                counts[json.loads(line)["category"]] += 1
    return dict(counts)


def render(rows: List[Dict[str, Any]], table: Dict[str, Any]) -> str:
    cov = coverage(rows, table)
    repos = Counter(r["repo"] for r in rows)
    states = Counter(r["settled"] for r in rows)
    by_mech: Dict[str, List[Dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_mech[r["mechanism"]].append(r)
    lines = [
        "# What breaks: a survey of real failure threads",
        "",
        "Generated by `python tools/survey_table.py` from `tests/corpus/survey.jsonl` and "
        "`tests/corpus/mechanisms.json`; a test keeps it current.",
        "",
        "Threads were sampled from the stored GitHub issue index by failure-signature queries (the `query` of each "
        "row), every result taken in the order it came, and classified by mechanism: what physically went wrong. "
        "A thread is *settled* when a maintainer named the cause, a confirmed fix identifies it, or the stated facts "
        "plainly meet a documented requirement.",
        "",
        f"- threads: {len(rows)}, from {len(repos)} repositories; settled: "
        + ", ".join(f"{k} {states[k]}" for k in SETTLED),
        f"- not an environment failure: {len(by_mech.get('not_environment', []))}; cause undetermined: "
        f"{len(by_mech.get('undetermined', []))}",
    ]
    for side in ("all", DEV, VALIDATION):
        c = cov[side]
        if c["settled"]:
            lines.append(f"- coverage ({side}): envdoctor names the mechanism of {c['named']} of {c['settled']} settled "
                         f"threads ({c['coverage']:.0%})")
    corpus = corpus_categories()
    lines += ["", "## Mechanisms by frequency", "",
              "Ordered by settled threads. *named*: settled threads whose failure envdoctor names; *corpus*: labelled "
              "cases of this category that the accuracy benches run.", "",
              "| mechanism | threads | settled | named | envdoctor | corpus | what went wrong |",
              "|---|---|---|---|---|---|---|"]
    order = sorted((m for m in by_mech if m not in NOT_A_MECHANISM),
                   key=lambda m: (-sum(settled(r) for r in by_mech[m]), -len(by_mech[m]), m))
    for m in order:
        ids = table[m]["envdoctor"]
        done = [r for r in by_mech[m] if settled(r)]
        lines.append(f"| `{m}` | {len(by_mech[m])} | {len(done)} | {sum(bool(r['envdoctor']) for r in done)} | "
                     f"{', '.join(ids) if ids else '**none**'} | {corpus.get(m, 0)} | "
                     f"{table[m]['definition'].replace('|', '/')} |")
    lines += ["", "## Repositories", "", "| repository | threads |", "|---|---|"]
    lines += [f"| {repo} | {n} |" for repo, n in sorted(repos.items(), key=lambda kv: (-kv[1], kv[0]))]
    return "\n".join(lines) + "\n"


def main(argv: List[str]) -> int:
    rows, table = load()
    text = render(rows, table)
    if "--check" in argv:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            sys.stdout.write("docs/survey.md is not current: run python tools/survey_table.py\n")
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    sys.stdout.write(f"wrote {OUT.relative_to(ROOT)}: {len(rows)} threads\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
