"""The diagnose corpus (tests/diagnose/corpus): real posted failure texts with their settled causes.

A test-only helper: it loads `index.jsonl` and the texts, and names the labels a case may use. The bench
(bench/diagnose_bench.py) and tests/test_diagnose_corpus.py read the corpus through it; no rule or envdoctor
module imports it, and nobody tunes on it (README.md: the validation side is measured, never tuned on).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Set

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
INDEX = HERE / "index.jsonl"
TEXTS = HERE / "texts"
README = HERE / "README.md"

sys.path.insert(0, str(ROOT / "tests" / "corpus"))
import split  # noqa: E402

# The kinds of text a case may hold (often several in one post). `other` is text of none of these kinds
# (a dmesg excerpt, prose around an error).
KINDS = ("traceback", "build_log", "compile_error", "cuda_error", "nccl_log", "collect_env", "pip_list",
         "pip_freeze", "nvidia_smi", "ds_report", "vllm_env", "startup_log", "other")
SETTLED = ("maintainer", "fix_confirmed", "documented")
KEYS = ("id", "source", "date", "kinds", "mechanism", "expect", "also_ok", "negative_control", "settled",
        "settled_by", "query", "rank", "split", "notes")


def cases() -> List[Dict[str, Any]]:
    """Every index line, in file order."""
    return [json.loads(line) for line in INDEX.read_text(encoding="utf-8").splitlines() if line.strip()]


def text_of(case: Dict[str, Any]) -> str:
    """The posted text of a case."""
    return (TEXTS / f"{case['id']}.txt").read_text(encoding="utf-8")


def readme_mechanisms() -> Dict[str, str]:
    """The mechanism slugs README.md's `mechanisms` section defines (`- \\`slug\\`: definition`)."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Mechanisms", 1)[1] if "## Mechanisms" in text else ""
    section = section.split("\n## ", 1)[0]
    return dict(re.findall(r"^- `([a-z0-9_]+)`: (.+)$", section, flags=re.M))


def _category_names(path: Path) -> Iterator[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    cats = data.get("categories", data) if isinstance(data, dict) else data
    if isinstance(cats, dict):
        yield from cats
    else:
        for item in cats:
            yield item.get("id") or item.get("category") if isinstance(item, dict) else item


def known_labels() -> Set[str]:
    """Every label an `expect`/`also_ok` entry may name: envdoctor's machine categories (tests/corpus/build.py),
    the NCCL/Gloo/torch.distributed categories (rules/nccl/*categories.json, names only), the survey's mechanism
    slugs (tests/corpus/mechanisms.json) and the slugs this corpus's README defines."""
    import build  # tests/corpus/build.py

    labels: Set[str] = set(build.CATEGORIES) | set(build.OTHER_CATEGORIES) | set(build.SURVEY_MECHANISMS)
    for path in sorted((ROOT / "rules" / "nccl").glob("*categories.json")):
        labels.update(name for name in _category_names(path) if name)
    labels.update(readme_mechanisms())
    return labels


def split_of(case: Dict[str, Any]) -> str:
    """The side of a case by its thread URL (tests/corpus/split.py)."""
    return split.split_of_url(case["source"]["url"])
