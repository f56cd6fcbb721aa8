"""Apply a fix: carry out a plan in its interpreter, verified in a fresh one, rolled back on any failure.
`ApplyResult.to_json()` is the `envdoctor.plan/1` document with the installer's status, commands and message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from envdoctor.errors import InputError
from envdoctor.install.state import EnvStateError
from envdoctor.snapshot import known_list, present

if TYPE_CHECKING:
    from envdoctor.install.installer import Outcome
    from envdoctor.usecases.plan_fix import FixSetup, PlanResult

__all__ = ["ApplyResult", "EnvStateError", "apply_fix", "verified_capabilities"]


@dataclass(frozen=True)
class ApplyResult:
    """The plan carried out: what the installer did (`outcome`: before and after versions too)."""

    planned: PlanResult
    outcome: Outcome

    @property
    def status(self) -> str:
        """installed | rolled_back | nothing_to_do"""
        return self.outcome.status

    @property
    def commands(self) -> List[List[str]]:
        return self.outcome.commands

    @property
    def message(self) -> str:
        return self.outcome.message

    @property
    def rollback_ok(self) -> Optional[bool]:
        return self.outcome.rollback_ok

    def exit_code(self) -> int:
        """3 when the install failed and was rolled back, else 0."""
        return 3 if self.status == "rolled_back" else 0

    def to_json(self) -> Dict[str, Any]:
        doc = self.planned.to_json()
        doc["status"] = self.status
        doc["commands"] = self.commands
        doc["message"] = self.message
        doc["rollback_ok"] = self.rollback_ok
        return doc


def verified_capabilities(planned: PlanResult) -> List[str]:
    """The compute capabilities torch is verified on after the install: this machine's GPUs, none for a plan made
    for another machine (its GPUs are not here)."""
    if planned.target is not None:
        return []
    return [str(g.compute_capability) for g in known_list(planned.snapshot.gpus) if present(g.compute_capability)]


def apply_fix(planned: PlanResult, setup: FixSetup, progress: Callable[[str], None],
              break_system_packages: bool = False, live: Optional[Callable[[str], None]] = None) -> ApplyResult:
    """Install `planned` into its interpreter; `progress` hears each step (and pip's output), `live` the
    download's progress line. EnvStateError (an InputError): busy or half-changed, nothing was done."""
    from envdoctor.install.installer import execute

    if not planned.python:
        raise InputError("this plan is for a snapshot taken elsewhere: it cannot be applied here")
    outcome = execute(planned.plan, planned.python, verified_capabilities(planned), progress,
                      setup.writable_state_root(), setup.use_uv, break_system_packages=break_system_packages, live=live)
    return ApplyResult(planned, outcome)
