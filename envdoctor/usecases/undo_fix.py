"""Undo a fix: put back the packages that the last `fix --yes` replaced in an environment.
`UndoResult.to_json()` is the `envdoctor.undo/1` document."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict

from envdoctor.install.state import EnvStateError

if TYPE_CHECKING:
    from envdoctor.install.installer import Outcome

__all__ = ["EnvStateError", "UNDO_SCHEMA", "UndoResult", "undo_fix"]
UNDO_SCHEMA = "envdoctor.undo/1"


@dataclass(frozen=True)
class UndoResult:
    outcome: Outcome

    @property
    def status(self) -> str:
        return self.outcome.status

    @property
    def message(self) -> str:
        return self.outcome.message

    def exit_code(self) -> int:
        """0 when the previous packages are back, else 3."""
        return 0 if self.status == "undone" else 3

    def to_json(self) -> Dict[str, Any]:
        return {"schema": UNDO_SCHEMA, "status": self.status, "message": self.message,
                "before": self.outcome.before, "after": self.outcome.after}


def undo_fix(python: str, progress: Callable[[str], None], state_root: Path) -> UndoResult:
    """Revert the last fix in `python`'s environment (or finish an interrupted rollback). EnvStateError: busy, or a
    damaged backup; nothing was changed."""
    from envdoctor.install.installer import undo

    return UndoResult(undo(python, progress, state_root))
