"""What people read in place of the core's identifiers (text output and the TUI; JSON keeps the identifiers)."""

from __future__ import annotations

WORDS = {
    # plan status (wheels.planner.Plan) and install outcome (install.installer.Outcome)
    "planned": "ready to install",
    "nothing_to_do": "nothing to do",
    "impossible": "not possible",
    "installed": "installed and verified",
    "rolled_back": "failed, rolled back",
    "undone": "undone",
    # how safe a finding's fix is to apply unattended
    "safe": "safe to apply",
    "unsafe": "unsafe to apply unattended",
    "display_only": "shown only, apply by hand",
    # wheel evidence
    "verified": "verified",
    "secondary": "from a secondary source",
    "UNVERIFIED": "not verified",
    "assumed": "assumed from the previous release",
}


def word(identifier: str) -> str:
    """The words for an identifier; one not in the table reads with spaces for underscores."""
    return WORDS.get(identifier, identifier.replace("_", " "))
