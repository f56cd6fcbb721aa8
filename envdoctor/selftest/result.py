"""A self-test's verdict, and the `envdoctor.selftest/1` document."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from envdoctor.findings import Finding

SCHEMA = "envdoctor.selftest/1"
STATUSES = ("passed", "failed", "skipped")
WORKERS = Path(__file__).parent / "workers"


@dataclass
class TestResult:
    __test__ = False  # not a pytest test class, despite the name

    name: str
    status: str
    seconds: float = 0.0
    metrics: Dict[str, Any] = field(default_factory=dict)
    error: Optional[str] = None  # failed: what went wrong; skipped: why
    findings: List[Finding] = field(default_factory=list)
    log: Optional[str] = None  # kept log file of a failed run (NCCL_DEBUG output included)

    def to_json(self) -> Dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "seconds": round(self.seconds, 3),
            "metrics": self.metrics,
            "error": self.error,
            "findings": [f.to_json() for f in self.findings],
            "log": self.log,
        }


def document(results: Sequence[TestResult]) -> Dict[str, Any]:
    return {"schema": SCHEMA, "tests": [r.to_json() for r in results]}


def exit_code(results: Sequence[TestResult]) -> int:
    return 1 if any(r.status == "failed" for r in results) else 0


def read_json(path: Path) -> Optional[Dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
