"""A partial snapshot (what a report states) made into a complete, schema-valid one, and merged with a probed one.

`complete_document` is the one way a partial snapshot in the corpus-case form (tests/corpus/README.md) becomes a
whole `envdoctor.snapshot/1` document: every field the schema names and the partial one leaves out is a bare null
(unknown); the probe that would have read an unstated section is recorded `skipped` ("not in the report"), so an
empty GPU list never reads as "no GPUs"; every stated list or map in `PARTIAL_LISTS` is marked partial unless
`full_lists` names it (a whole `pip list`), so a package the report leaves out is unknown, not "not installed".
The corpus builder (tests/corpus/build.py) and `snapshot_from_report` both use it.

`snapshot_from_report(facts, base)` merges a report into a probed or given snapshot: the base's known facts win;
the report fills only what the base leaves unknown (a bare null, or an `unknown:`/`failed:` reason); where the
report states otherwise than the base, the base's value stays and the disagreement is recorded in the snapshot's
`report.disagreements` (see `report_notes`).
"""

from __future__ import annotations

import copy
from typing import Any, Dict, Iterable, List, Optional

from envdoctor.jsonschema_lite import load_schema
from envdoctor.snapshot import SCHEMA, Snapshot, now_iso, snapshot_from_json
from envdoctor.text.facts import ReportFacts

# Lists and maps a report states in part (a pip list filtered to torch's packages, the variables it quotes, the
# library copies its error names): a stated one is partial unless `full_lists` names it. Not `gpus`: nvidia-smi
# and collect_env list every GPU, and an unstated list is already unknown (nvml skipped).
PARTIAL_LISTS = (
    "python.packages", "env", "extensions", "requirement_conflicts", "libraries.cudnn", "libraries.nccl",
    "libraries.cudart", "libraries.cublas", "torch.nvidia_wheels", "torch.companions", "torch.loaded_libraries",
    "torch.mapped_cuda_libraries",
)
PARTIAL_WHY = "rebuilt from a public report, which names only part of it"
NOT_IN_REPORT = "not in the report"
GPUS_UNSTATED = "the report states the driver but not its GPUs"
# Which probe reads which top-level section: a section the report does not state was "not probed".
PROBE_OF = {
    "nvml": ("driver", "gpus"),
    "torch": ("torch",),
    "python": ("python",),
    "system": ("host",),
    "cuda_libraries": ("libraries",),
    "cuda_toolkit": ("cuda_toolkit",),
    "network": ("network",),
    "env": ("env",),
}
COMPANIONS = ("torchvision", "torchaudio")
# What the schema requires that a report may not state: the value used, said so in `report.assumed`.
REQUIRED_DEFAULTS = (("host.os", "other"), ("host.arch", "unknown"), ("python.version", "unknown"))


def _resolve(node: Dict[str, Any], schema: Dict[str, Any]) -> Dict[str, Any]:
    while "$ref" in node:
        target: Any = schema
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        node = target
    return node


def _nullable(node: Dict[str, Any]) -> bool:
    types = node.get("type")
    names = [types] if isinstance(types, str) else (types or [])
    return "null" in names or None in node.get("enum", ())


def _fill(value: Any, node: Dict[str, Any], schema: Dict[str, Any]) -> Any:
    """`value` with every nullable property the schema names and the value lacks set to None."""
    node = _resolve(node, schema)
    if isinstance(value, dict) and "properties" in node:
        out = dict(value)
        for name, sub in node["properties"].items():
            sub = _resolve(sub, schema)
            if name in out:
                out[name] = _fill(out[name], sub, schema)
            elif _nullable(sub):
                out[name] = None
        return out
    if isinstance(value, list) and isinstance(node.get("items"), dict):
        return [_fill(v, node["items"], schema) for v in value]
    return value


# --- keys the cases were written with before the probes named them -------------------------------
# The cases keep the facts exactly as their reports state them; this step copies each onto the field the
# probes settled on, beside the case's own key (tests/corpus/README.md: "Snapshot keys the cases use"). Nothing
# is derived beyond what the key says.
#   torch.numpy_error                -> torch.numpy {works: false, error, version: python.packages.numpy}
#   python.import_errors[torchvision|torchaudio]   -> torch.companions[name] {importable: false, error}
#   python.import_errors[torchvision.<sub>]        -> torch.companions[torchvision].warnings (import went on)
#   torch.path                       -> torch.origin.file; a relative path -> torch.cwd_torch (the current
#                                       directory's torch/); a path under python.user_site -> origin.kind
#                                       user-site, outside_site_packages true
#   extensions[].error               -> extensions[].import_error, importable false
#   extensions[].requires_dist       -> extensions[].requires_torch (the specifier of its torch requirement)
def _translate(body: Dict[str, Any]) -> None:
    py = body.get("python") or {}
    torch = body.get("torch")
    packages = {k.lower().replace("_", "-"): v for k, v in (py.get("packages") or {}).items()}
    if isinstance(torch, dict):
        if "numpy_error" in torch:
            torch["numpy"] = {"version": packages.get("numpy"), "works": False, "error": torch["numpy_error"]}
        errors = py.get("import_errors") or {}
        comps: Dict[str, Dict[str, Any]] = {}
        for module, error in errors.items():
            root = module.split(".")[0]
            if root not in COMPANIONS:
                continue
            comp = comps.setdefault(root, {"version": packages.get(root)})
            if module == root:
                comp.update(importable=False, error=error)
            else:
                comp.setdefault("warnings", []).append(error)
        if comps:
            torch["companions"] = comps
        path = torch.get("path")
        if isinstance(path, str) and path:
            origin: Dict[str, Any] = {"file": path}
            user_site = py.get("user_site")
            if not (path.startswith("/") or path.startswith("\\\\") or (len(path) > 1 and path[1] == ":")):
                torch["cwd_torch"] = path.split("__init__")[0]
            elif isinstance(user_site, str) and user_site and path.startswith(user_site.rstrip("/") + "/"):
                origin.update(kind="user-site", outside_site_packages=True)
            torch["origin"] = origin
    for ext in body.get("extensions") or []:
        if "error" in ext:
            ext["import_error"] = ext["error"]
            ext["importable"] = False
        for req in ext.get("requires_dist") or []:
            name, _, spec = req.replace(" ", "").partition("torch")
            if name == "" and spec[:1] in "=<>!~":
                ext["requires_torch"] = spec


def at(body: Dict[str, Any], path: str) -> Any:
    """The value at dotted `path` of a JSON document (None where there is none)."""
    value: Any = body
    for part in path.split("."):
        if isinstance(value, list) and part.isdigit():
            value = value[int(part)] if int(part) < len(value) else None
        else:
            value = value.get(part) if isinstance(value, dict) else None
    return value


def complete_document(stated: Dict[str, Any], created: str, full_lists: Iterable[str] = (),
                      schema: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The complete snapshot document for a partial one: stated facts as given, everything else a bare null.

    `stated` is not changed. `created` is used unless `stated` names its own; `full_lists` names the stated lists
    that are whole."""
    schema = schema or load_schema("snapshot.schema.json")
    partial = copy.deepcopy(stated)
    sections = set(partial)
    body: Dict[str, Any] = {"schema": SCHEMA}
    body["created"] = partial.pop("created", created)
    body.update(partial)
    _translate(body)
    body.setdefault("gpus", [])
    body.setdefault("host", {})
    body.setdefault("python", {})
    if "probes" not in sections:
        body["probes"] = [
            {"name": name, "status": "ok" if sections & set(read) else "skipped",
             "seconds": None, "error": None if sections & set(read) else NOT_IN_REPORT}
            for name, read in PROBE_OF.items()
        ]
    absent = body.pop("absent", {})
    parts = dict(body.pop("partial", {}))
    whole = set(full_lists or ())
    parts.update((path, PARTIAL_WHY) for path in PARTIAL_LISTS
                 if path not in whole and path not in parts and isinstance(at(body, path), (dict, list)))
    if "driver" in sections and "gpus" not in sections and "gpus" not in absent and "gpus" not in whole:
        parts.setdefault("gpus", GPUS_UNSTATED)  # NVML's record is "ok" for the driver; its GPUs stay unknown
    full = _fill(body, schema, schema)
    if parts:
        full["partial"] = dict(sorted(parts.items()))
    full["absent"] = absent
    return full


# --- a report as a snapshot -----------------------------------------------------------------------------------
def report_document(facts: ReportFacts, created: Optional[str] = None) -> Dict[str, Any]:
    """The complete snapshot document of a report alone, with `report` notes (see `report_notes`)."""
    stated = copy.deepcopy(facts.doc)
    assumed: Dict[str, str] = {}
    for path, value in REQUIRED_DEFAULTS:
        if at(stated, path) is None:
            section, name = path.split(".")
            stated.setdefault(section, {})[name] = value
            assumed[path] = f"{value!r}: the schema requires a value and the report states none"
    if isinstance(stated.get("torch"), dict) and "importable" not in stated["torch"]:
        stated["torch"]["importable"] = False  # never reached: every reader that states torch states importable
        assumed["torch.importable"] = "false: the schema requires a value and the report states none"
    doc = complete_document(stated, created or now_iso(), full_lists=facts.whole)
    doc["report"] = {
        "sections": [{"kind": s.kind, "start": s.start, "end": s.end} for s in facts.sections],
        "assumed": assumed,
        "derived": dict(facts.derived),
        "conflicts": [{"path": c.path, "kept": c.kept, "stated": c.stated, "line": c.line, "line_no": c.line_no}
                      for c in facts.conflicts],
        "disagreements": [],
        "truncated": list(facts.truncated),
    }
    return doc


def snapshot_from_report(facts: ReportFacts, base: Optional[Snapshot] = None, created: Optional[str] = None) -> Snapshot:
    """The snapshot a report states (everything else unknown), or `base` with the report filling what `base`
    leaves unknown. Disagreements and assumptions: `report_notes(snapshot)`."""
    if base is None:
        return snapshot_from_json(report_document(facts, created), "<report>")
    merged = merge_documents(base.to_json(), facts)
    return snapshot_from_json(merged, "<report merged into snapshot>")


def report_notes(snapshot: Snapshot) -> Dict[str, Any]:
    """What `snapshot_from_report` recorded beside the facts: `sections`, `assumed` (required values the report
    did not state), `derived` (how a value was derived), `conflicts` (the report contradicting itself: the first
    statement is kept), `disagreements` (the report contradicting the base snapshot: the base is kept), each a
    {path, kept, stated, line, line_no}, and `truncated` (the bounds the input reached)."""
    notes = snapshot.extra.get("report")
    return notes if isinstance(notes, dict) else {}


def _known(base: Dict[str, Any], path: str) -> bool:
    reason = (base.get("absent") or {}).get(path)
    if reason is not None:
        return reason.startswith("unavailable")
    return at(base, path) is not None


def merge_documents(base: Dict[str, Any], facts: ReportFacts) -> Dict[str, Any]:
    """`base` (a complete snapshot document) with the report's facts where `base` does not know them."""
    out = copy.deepcopy(base)
    disagreements: List[Dict[str, Any]] = []
    filled: set = set()
    absent = out.setdefault("absent", {})

    def line_of(path: str) -> Dict[str, Any]:
        """The line that stated `path`, or for a section the first line that stated anything in it."""
        found = facts.evidence.get(path)
        if found is None:
            inside = [v for k, v in facts.evidence.items() if k.startswith(path + ".")]
            found = min(inside, key=lambda v: v[1]) if inside else ("", 0)
        return {"line": found[0], "line_no": found[1]}

    def walk(stated: Any, holder: Dict[str, Any], path: str) -> None:
        for key, value in stated.items():
            sub = f"{path}.{key}" if path else key
            if key in ("absent", "partial"):
                continue
            current = holder.get(key)
            if isinstance(value, dict) and isinstance(current, dict):
                if sub in _PARTIAL_MAPS and sub not in (out.get("partial") or {}) and current:
                    for k, v in value.items():  # a whole map in the base: what it lacks is not there
                        if k not in current:
                            disagreements.append({"path": f"{sub}.{k}", "kept": None, "stated": v, **line_of(f"{sub}.{k}")})
                        elif current[k] != v:
                            disagreements.append({"path": f"{sub}.{k}", "kept": current[k], "stated": v,
                                                  **line_of(f"{sub}.{k}")})
                    continue
                walk(value, current, sub)
            elif isinstance(value, list) and sub == "gpus":
                merge_gpus(value, holder, sub)
            elif isinstance(value, list) and sub == "extensions":
                merge_named(value, holder, sub)
            elif _known(out, sub):
                if current != value and not isinstance(current, (dict, list)):
                    disagreements.append({"path": sub, "kept": current, "stated": value, **line_of(sub)})
            else:
                holder[key] = copy.deepcopy(value)
                filled.add(sub)
                if absent.get(sub, "").split(":")[0] in ("unknown", "failed"):
                    del absent[sub]

    def merge_gpus(stated: List[Dict[str, Any]], holder: Dict[str, Any], path: str) -> None:
        current = holder.get("gpus")
        if not isinstance(current, list) or not current:
            if not _known(out, path) or current is None or (current == [] and _probe_skipped(out, "nvml")):
                holder["gpus"] = copy.deepcopy(stated)
                filled.add(path)
            else:
                disagreements.append({"path": path, "kept": current, "stated": stated, **line_of(f"{path}.0.name")})
            return
        by_index = {g.get("index"): g for g in current}
        for gpu in stated:
            mine = by_index.get(gpu.get("index"))
            if mine is None:
                disagreements.append({"path": f"{path}.{gpu.get('index')}", "kept": None, "stated": gpu,
                                      **line_of(f"{path}.{gpu.get('index')}.name")})
                continue
            i = current.index(mine)
            walk({k: v for k, v in gpu.items() if k != "index"}, mine, f"{path}.{i}")

    def merge_named(stated: List[Dict[str, Any]], holder: Dict[str, Any], path: str) -> None:
        current = holder.get("extensions")
        if not isinstance(current, list):
            if not _known(out, path):
                holder["extensions"] = copy.deepcopy(stated)
                filled.add(path)
            return
        whole = path not in (out.get("partial") or {})
        for ext in stated:
            mine = next((e for e in current if e.get("name") == ext.get("name")), None)
            if mine is None and whole:  # the base lists every extension installed: this one is not
                disagreements.append({"path": f"{path}.{ext.get('name')}", "kept": None, "stated": ext,
                                      **line_of(f"{path}.{stated.index(ext)}.version")})
            elif mine is None:
                current.append(copy.deepcopy(ext))
            else:
                walk({k: v for k, v in ext.items() if k != "name"}, mine, f"{path}.{current.index(mine)}")

    walk(facts.doc, out, "")
    for path, why in (facts.doc.get("absent") or {}).items():
        if not _known(out, path) and at(out, path) is None:
            absent[path] = why
    whys = {**{p: PARTIAL_WHY for p in PARTIAL_LISTS}, **(facts.doc.get("partial") or {})}
    for path in sorted(filled & set(whys)):
        if path not in facts.whole and isinstance(at(out, path), (dict, list)):
            out.setdefault("partial", {}).setdefault(path, whys[path])
    out["report"] = {
        "sections": [{"kind": s.kind, "start": s.start, "end": s.end} for s in facts.sections],
        "derived": dict(facts.derived),
        "conflicts": [{"path": c.path, "kept": c.kept, "stated": c.stated, "line": c.line, "line_no": c.line_no}
                      for c in facts.conflicts],
        "disagreements": disagreements,
        "truncated": list(facts.truncated),
    }
    return out


_PARTIAL_MAPS = ("python.packages", "python.conda_packages", "env")


def _probe_skipped(doc: Dict[str, Any], name: str) -> bool:
    return any(p.get("name") == name and p.get("status") != "ok" for p in doc.get("probes") or [])
