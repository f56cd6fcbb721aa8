"""A finding's fix as a value: what to do (an action from a closed set, its arguments), how safe it is to apply
unattended, what it changes, and the prose that explains it. The text, the argv and the JSON are rendered from it;
the interpreter the commands act on is an argument of the renderers (`check --python`), never edited into text.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

APPLICABILITIES = ("safe", "unsafe", "display_only")  # ruff's Applicability: may `envdoctor fix` apply it unattended

# What the rules and verdicts ask for today:
#   envdoctor_fix      `envdoctor fix --yes`, arguments: the wishes beyond torch ("deepspeed", "torch=SPEC", ...)
#   envdoctor_command  another envdoctor command, arguments: the subcommand and its arguments ("undo")
#   pip_install        `python -m pip install`, arguments: requirement specs ("ninja", "numpy<2")
#   manual             prose only: what a person does (a driver, a BIOS setting, an environment variable)
ACTIONS = ("envdoctor_fix", "envdoctor_command", "pip_install", "manual")
WISHES = ("torch", "deepspeed")  # what `envdoctor fix` can be asked for (`--torch SPEC`, `--deepspeed [SPEC]`)

# The envdoctor commands that act on one interpreter, so take `--python`.
AIMED = ("fix", "undo", "check", "report", "snapshot", "selftest")


@dataclass(frozen=True)
class Quoted:
    """A command the prose quotes (a `code span`) that runs in some interpreter's environment: `envdoctor SUB ...`
    (gets `--python P`), `pip ...` (becomes `P -m pip ...`) or `python ...` (becomes `P ...`)."""

    program: str  # "envdoctor" | "pip" | "python"
    head: str  # the words that name it, as written: "envdoctor fix", "pip3", "python -m pip", "python3"
    rest: str  # the rest of the span, as written

    def render(self, python: Optional[str]) -> str:
        if not python:
            return self.head + self.rest
        quoted = shlex.quote(python)
        if self.program == "envdoctor":
            return f"{self.head} --python {quoted}{self.rest}"
        return quoted + (" -m pip" if self.program == "pip" else "") + self.rest


Part = Union[str, Quoted]


def _quoted(span: str) -> Part:
    """A code span's command, when it is one that acts on an interpreter (else the span as text)."""
    words = span.split(" ")
    if words[0] == "envdoctor" and len(words) > 1:
        sub = words[1]
        cut = len(sub)
        for i, ch in enumerate(sub):  # `envdoctor check,` names check: the subcommand ends at a non-word character
            if not (ch.isalnum() or ch == "_"):
                cut = i
                break
        if sub[:cut] in AIMED and "--python" not in span:
            head = f"envdoctor {sub[:cut]}"
            return Quoted("envdoctor", head, span[len(head):])
        return span
    for head, program in (("python3 -m pip", "pip"), ("python -m pip", "pip"), ("pip3", "pip"), ("pip", "pip"),
                          ("python3", "python"), ("python", "python")):
        if span.startswith(head + " "):
            return Quoted(program, head, span[len(head):])
    return span


def read_prose(text: str) -> Tuple[Part, ...]:
    """The parts of a fix's text, between and inside its backticks; the quoted commands become values.
    Done once, when the fix is made; rendering joins the parts with backticks again."""
    return tuple(_quoted(p) if i % 2 else p for i, p in enumerate(text.split("`")))


@dataclass(frozen=True)
class Fix:
    """What to do about a finding."""

    action: str = "manual"  # one of ACTIONS
    arguments: Tuple[str, ...] = ()  # the action's arguments (see ACTIONS)
    applicability: str = "display_only"  # one of APPLICABILITIES
    changes: Tuple[str, ...] = ()  # what applying it changes: package names, or what else it touches
    prose: Tuple[Part, ...] = ()  # the text that explains it (read_prose)
    # envdoctor_fix: requirement specs `fix` installs through pip's resolver with torch held ("sympy>=1.13.3")
    requirements: Tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"unknown fix action {self.action!r} (one of {', '.join(ACTIONS)})")
        if self.applicability not in APPLICABILITIES:
            raise ValueError(f"unknown fix applicability {self.applicability!r}")
        if self.action == "manual" and self.arguments:
            raise ValueError("a manual fix takes no arguments")
        if self.action == "manual" and self.applicability != "display_only":
            raise ValueError(f"a {self.applicability} fix is one envdoctor can run: not a manual one")
        if self.action == "envdoctor_command" and (not self.arguments or self.arguments[0] == "fix"):
            raise ValueError("envdoctor_command names a subcommand other than fix (that is envdoctor_fix)")
        if self.requirements and self.action != "envdoctor_fix":
            raise ValueError("requirements go with envdoctor_fix (what `envdoctor fix` installs with torch held)")
        if self.action == "envdoctor_fix":
            for w in self.arguments:
                if w.split("=", 1)[0] not in WISHES:
                    raise ValueError(f"unknown envdoctor fix wish {w!r} (one of {', '.join(WISHES)}, NAME=SPEC)")


def manual(text: str, applicability: str = "display_only") -> Fix:
    """A fix that is prose only: what a person does."""
    return Fix(applicability=applicability, prose=read_prose(text))


def wishes(fix: Fix) -> Dict[str, str]:
    """An `envdoctor_fix`'s wishes: name -> spec ("" for the release that fits); {} for other actions."""
    if fix.action != "envdoctor_fix":
        return {}
    return {name: spec for name, _, spec in (w.partition("=") for w in fix.arguments)}


def render_prose(fix: Fix, python: Optional[str] = None) -> str:
    """The fix's text, its quoted commands aimed at `python` (None: as written)."""
    return "`".join(p if isinstance(p, str) else p.render(python) for p in fix.prose)


def render_argv(fix: Fix, python: Optional[str] = None) -> List[List[str]]:
    """The fix as commands to run, for the interpreter `python` (None: whichever runs them); [] when manual."""
    aim = ["--python", python] if python else []
    if fix.action == "envdoctor_fix":
        argv = ["envdoctor", "fix", *aim]
        for name, spec in wishes(fix).items():
            argv += [f"--{name}"] + ([spec] if spec else [])
        return [argv + ["--yes"]]
    if fix.action == "envdoctor_command":
        sub, *rest = fix.arguments
        return [["envdoctor", sub, *(aim if sub in AIMED else []), *rest]]
    if fix.action == "pip_install":
        return [[python or "python", "-m", "pip", "install", *fix.arguments]]
    return []


def render_json(fix: Fix) -> Dict[str, Any]:
    """The structured fix in a finding's JSON (`fix_action`); its text, safety and argv have their own keys.
    `requirements` only where the fix installs some."""
    out: Dict[str, Any] = {"action": fix.action, "arguments": list(fix.arguments), "changes": list(fix.changes)}
    if fix.requirements:
        out["requirements"] = list(fix.requirements)
    return out


def action_problems(raw: Any, applicability: str = "display_only") -> List[str]:
    """What is wrong with a declared fix action ({action, arguments, changes}); [] when it is well formed."""
    if not isinstance(raw, dict) or not set(raw) <= {"action", "arguments", "changes", "requirements"} or \
            "action" not in raw:
        return ["takes {action, arguments, changes} (and requirements)"]
    out = []
    if raw["action"] not in ACTIONS or raw["action"] == "manual":
        out.append(f"action must be one of {', '.join(a for a in ACTIONS if a != 'manual')} (a manual fix is its text)")
    for key in ("arguments", "changes", "requirements"):
        if not isinstance(raw.get(key, []), list) or not all(isinstance(a, str) for a in raw.get(key, [])):
            out.append(f"{key} must be a list of text")
    if out:
        return out
    try:
        Fix(raw["action"], tuple(raw.get("arguments", ())), applicability,
            requirements=tuple(raw.get("requirements", ())))
    except ValueError as exc:
        out.append(str(exc))
    return out


def quoted_commands(fix: Fix) -> Sequence[Quoted]:
    """The commands the prose quotes."""
    return [p for p in fix.prose if isinstance(p, Quoted)]
