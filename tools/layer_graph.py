"""envdoctor's layers, and which package imports which (every import, function-level ones included).

    python tools/layer_graph.py          # the package graph, by layer
    python tools/layer_graph.py --check  # also list the imports the contract forbids (exit 1 if any)

Data flows one way: probe -> snapshot -> diagnose/plan -> act -> present, with the CLI and the TUI at the
edges. A module may import its own layer and the layers below, never above; `FORBIDDEN` names the imports
that are ruled out even so (sideways within a layer, or knowledge reaching into the probes).
`tests/test_layers.py` holds the package to this contract.
"""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "envdoctor"

# The package's own __init__: named alone, so it is no catch-all for the modules beside it.
ROOT_MODULE = "envdoctor"

# Lowest first. A module belongs to the entry with the longest matching prefix; every top-level module is named.
LAYERS: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    ("base", (ROOT_MODULE, "envdoctor.errors", "envdoctor.fix_journal", "envdoctor.versions", "envdoctor.fixes",
              "envdoctor.findings", "envdoctor.snapshot", "envdoctor.snapshot_codec", "envdoctor.snapshot_decoders",
              "envdoctor.byte_sizes", "envdoctor.data", "envdoctor.data_files", "envdoctor.data_schemas",
              "envdoctor.redact", "envdoctor.jsonschema_lite", "envdoctor.validation_cache",
              "envdoctor.atomic_write", "envdoctor.cpulist", "envdoctor.processes", "envdoctor.process_guard",
              "envdoctor.lost_output", "envdoctor.bounded_read")),
    ("probes", ("envdoctor.probes", "envdoctor.text")),  # text: the facts a pasted report states
    ("knowledge", ("envdoctor.compat", "envdoctor.wheels", "envdoctor.rules", "envdoctor.evidence", "envdoctor.nccl",
                   "envdoctor.diagnose",
                   "envdoctor.knowledge", "envdoctor.catalog", "envdoctor.fleet")),
    # fleet: the checks are knowledge; meeting the other nodes and measuring them is acting
    ("act", ("envdoctor.install", "envdoctor.selftest", "envdoctor.fleet.collect", "envdoctor.fleet.measure",
             "envdoctor.fleet.endpoint", "envdoctor.fleet.report")),
    # use cases: functions over plain values that orchestrate knowledge and acts, returning typed results
    ("usecases", ("envdoctor.usecases",)),
    ("present", ("envdoctor.present",)),
    ("edges", ("envdoctor.settings", "envdoctor.commands", "envdoctor.tui", "envdoctor.cli", "envdoctor.__main__")),
)

# Scripts run by the target interpreter (which may not have envdoctor installed): they import no envdoctor module.
STANDALONE = ("envdoctor.probes.children", "envdoctor.selftest.workers")

# (importer, imported) package prefixes that the layer order alone would allow.
FORBIDDEN: Tuple[Tuple[str, str], ...] = (
    ("envdoctor.commands", "envdoctor.tui"),  # the CLI and the TUI are both thin shells over the core
    ("envdoctor.tui", "envdoctor.commands"),
    ("envdoctor.commands", "envdoctor.cli"),
    ("envdoctor.tui", "envdoctor.cli"),
    ("envdoctor.settings", "envdoctor.commands"),
    ("envdoctor.settings", "envdoctor.tui"),
    ("envdoctor.settings", "envdoctor.cli"),
    ("envdoctor.compat", "envdoctor.wheels"),  # the compatibility rules take the index's tables as arguments
    ("envdoctor.compat", "envdoctor.rules"),
    ("envdoctor.compat", "envdoctor.nccl"),
    ("envdoctor.wheels", "envdoctor.rules"),
    ("envdoctor.wheels", "envdoctor.nccl"),
    ("envdoctor.wheels", "envdoctor.diagnose"),
    # the catalog reads rules, NCCL signatures and fleet checks: they never read it (nor each other upward)
    *((k, "envdoctor.catalog") for k in ("envdoctor.rules", "envdoctor.nccl", "envdoctor.fleet")),
    ("envdoctor.rules", "envdoctor.nccl"),
    ("envdoctor.rules", "envdoctor.fleet"),
    ("envdoctor.install", "envdoctor.selftest"),
    ("envdoctor.selftest", "envdoctor.install"),
    # Diagnosis and planning are pure functions of the snapshot: the knowledge never runs a probe.
    *((k, "envdoctor.probes") for k in ("envdoctor.compat", "envdoctor.wheels", "envdoctor.rules", "envdoctor.nccl",
                                         "envdoctor.diagnose")),
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> Dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(path: Path, name: str, known: Set[str]) -> Iterator[Tuple[str, int]]:
    """(imported module, line) for every import statement in the file, at any depth, and every string that names
    a known module exactly (what `importlib.import_module` is given)."""
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in known:
            yield node.value, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_pkg else 0)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield target, node.lineno
            for alias in node.names:  # `from envdoctor import compat` imports the module envdoctor.compat
                yield f"{target}.{alias.name}", node.lineno


def _prefix(name: str, prefixes: Tuple[str, ...]) -> Optional[str]:
    hits = [p for p in prefixes if name == p or (p != ROOT_MODULE and name.startswith(p + "."))]
    return max(hits, key=len) if hits else None


def owner(name: str) -> Optional[Tuple[int, str]]:
    """(layer number, package) of an envdoctor module; None for anything else."""
    best: Optional[Tuple[int, str]] = None
    for number, (_layer, packages) in enumerate(LAYERS):
        hit = _prefix(name, packages)
        if hit and (best is None or len(hit) > len(best[1])):
            best = (number, hit)
    return best


@functools.lru_cache(maxsize=1)
def edges() -> Dict[Tuple[str, str], List[str]]:
    """(importer, imported) envdoctor module -> where ('path:line'), for every import between two known modules."""
    known = modules()
    out: Dict[Tuple[str, str], List[str]] = {}
    for name, path in known.items():
        for target, line in imports(path, name, set(known)):
            if target in known and target != name:
                out.setdefault((name, target), []).append(f"{path.relative_to(ROOT)}:{line}")
    return out


def violations() -> List[str]:
    """Every import the contract forbids, as 'importer -> imported (where): why'."""
    problems: List[str] = []
    for (src, dst), where in sorted(edges().items()):
        why = _why(src, dst)
        if why:
            problems.append(f"{src} -> {dst} ({', '.join(where)}): {why}")
    return problems


def _why(src: str, dst: str) -> Optional[str]:
    if _prefix(src, STANDALONE):
        return "a script for the target interpreter imports envdoctor"
    if _prefix(dst, STANDALONE) and not _prefix(src, STANDALONE):
        return "imports a target-interpreter script as a module"
    a, b = owner(src), owner(dst)
    if a is None or b is None:
        return f"{src if a is None else dst} is in no layer (add it to LAYERS)"
    if b[0] > a[0]:
        return f"{LAYERS[a[0]][0]} imports upward into {LAYERS[b[0]][0]}"
    for importer, imported in FORBIDDEN:
        if _prefix(src, (importer,)) and _prefix(dst, (imported,)):
            return f"{importer} may not import {imported}"
    return None


def package_of(name: str) -> str:
    """The graph's node for a module: envdoctor.X for envdoctor.X.Y..., the module itself at the top."""
    parts = name.split(".")
    return ".".join(parts[:2])


def package_graph() -> Dict[str, Set[str]]:
    graph: Dict[str, Set[str]] = {}
    for src, dst in edges():
        a, b = package_of(src), package_of(dst)
        graph.setdefault(a, set())
        if a != b and b != "envdoctor":
            graph[a].add(b)
    return graph


def render() -> str:
    graph = package_graph()
    lines = []
    for number, (layer, _packages) in reversed(list(enumerate(LAYERS))):
        members = sorted(p for p in graph if (owner(p) or (-1, ""))[0] == number)
        if not members:
            continue
        lines.append(f"{layer}:")
        for p in members:
            targets = sorted(graph[p], key=lambda t: (-(owner(t) or (0, ""))[0], t))
            short = [t.replace("envdoctor.", "") for t in targets]
            lines.append(f"  {p.replace('envdoctor.', ''):<16} -> {', '.join(short) or '(nothing)'}")
    return "\n".join(lines) + "\n"


def main(argv: List[str]) -> int:
    sys.stdout.write(render())
    if "--check" in argv:
        problems = violations()
        sys.stdout.write("".join(f"VIOLATION {p}\n" for p in problems) or "no violations\n")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
