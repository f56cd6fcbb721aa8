"""The signature database of the evidence engine: categories, signatures and context rules, in the one format
`envdoctor.signatures/1`, read from `rules/nccl/*.json` (the NCCL / torch.distributed / Gloo ones) and
`rules/signatures/*.json` (every other failure text: tracebacks, build logs, CUDA runtime errors).

Every file is validated on load, its shape against envdoctor/data/inputs/signatures.schema.json and then what a
schema cannot say (patterns compile and match their examples, needles, known categories and signatures,
conditions); all problems of all files are reported at once, each naming its file and entry, as one
InputError (exit 2). Compiled rule sets are cached by each file's (path, mtime_ns, size).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import envdoctor.nccl.predicates  # noqa: F401  (registers the predicates the context rules name)
from envdoctor import data_schemas
from envdoctor.data_files import data_path, files_key, read_json
from envdoctor.errors import InputError
from envdoctor.evidence.needles import MIN_NEEDLE
from envdoctor.nccl import dist_predicates  # noqa: F401  (registers the torch.distributed predicates)
from envdoctor.rules.conditions import check_condition, predicates_for, tables_read
from envdoctor.rules.tables import Tables, load_tables

FORMAT = "envdoctor.signatures/1"  # a file of any of the three lists (and settings)
SCHEMAS = {  # the older headers: one list per file, the same entries
    "envdoctor.nccl-categories/1": "categories",
    "envdoctor.nccl-signatures/1": "signatures",
    "envdoctor.nccl-context/1": "rules",
}
SCHEMA = "signatures.schema.json"  # envdoctor/data/: each file's shape and each entry's
_FILE_DEF = {"categories": "categories_file", "signatures": "signatures_file", "rules": "context_file"}
# The sentence each field of an entry has always been named with when it is missing or malformed.
MESSAGES = {
    "category": {"title": "'title' must be a non-empty string", "fix": "'fix' must be a non-empty string",
                 "severity": "'severity' must be one of ['error', 'warning']",
                 "discriminating_test": "'discriminating_test' must be {'run': the check, 'confirms': what it shows "
                                        "when this is the cause}"},
    "signature": {"pattern": "'pattern' must be a non-empty string", "means": "'means' must say what the line means",
                  "needles": "'needles' must list the literals every match contains (lower case, one of them per match)",
                  "more_examples": "'more_examples' must be a list of lines",
                  "weights": "'weights' must map categories to numbers", "example": "'example' must be a line"},
    "context_rule": {"when": "'when' is required", "boost": "'boost' must map categories to numbers",
                     "scale": "'scale' must map categories to numbers",
                     "evidence": "'evidence' must be a list of signature ids", "note": "'note' must say why the rule holds"},
}
SEVERITIES = ("error", "warning")
# How much a line says about the cause, most first (the schema's `specificity`); a signature that does not say is
# `supporting`. A cause backed only by `generic` lines never outranks one backed by a more specific line.
SPECIFICITIES = ("decisive", "supporting", "generic")
DEFAULT_SPECIFICITY = "supporting"
DEFAULT_SETTINGS: Dict[str, Any] = {
    "report_min_score": 1.0,
    "confidence": {"high": 9.0, "medium": 5.0},
    "max_evidence": 4,
    "max_findings": 5,
    "first_failure_weight": 0.0,  # added to the causes only the error of the rank that failed first points to
    "first_failure_min_lead_s": 1.0,  # a first failure of the same error as the others' is said only with this lead
}
_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


@dataclass(frozen=True)
class Category:
    id: str
    title: str
    fix: str
    severity: str = "error"
    layer: str = ""  # where the cause sits (nccl-taxonomy layers A-F)
    test: Optional[Mapping[str, str]] = None  # the one check that confirms it: {"run": ..., "confirms": ...}
    tables: Tuple[str, ...] = ()  # the tables it, or a signature or context rule that points at it, reads or quotes
    own_id: str = ""  # the entry's `finding_id`, where it names one
    reported: str = ""  # the entry's `category`: what its findings report (the machine rules' name for it)

    @property
    def finding_id(self) -> str:
        """The id of its findings: its `finding_id`, else shm_exhausted -> NCCL-SHM-EXHAUSTED (nccl_oom -> NCCL-OOM:
        the prefix once)."""
        name = self.id[len("nccl_"):] if self.id.startswith("nccl_") else self.id
        return self.own_id or "NCCL-" + name.upper().replace("_", "-")


@dataclass(frozen=True)
class Signature:
    id: str
    regex: re.Pattern[str]
    weights: Mapping[str, float]
    means: str
    needles: Tuple[str, ...] = ()  # lower-case literals, one of which every match contains (the prefilter's)
    specificity: str = DEFAULT_SPECIFICITY  # one of SPECIFICITIES

    @property
    def generic(self) -> bool:
        """Any cause ends in this line (an abort, a final RuntimeError): it cannot decide between them."""
        return self.specificity == "generic"


@dataclass(frozen=True)
class ContextRule:
    id: str
    when: Mapping[str, Any]
    boost: Mapping[str, float]
    scale: Mapping[str, float]
    evidence: Tuple[str, ...]
    note: str
    specificity: str = DEFAULT_SPECIFICITY  # what it adds counts as generic when it holds only thanks to a generic signal


@dataclass
class RuleSet:
    categories: Dict[str, Category] = field(default_factory=dict)
    signatures: List[Signature] = field(default_factory=list)
    rules: List[ContextRule] = field(default_factory=list)
    settings: Dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_SETTINGS))
    files: List[str] = field(default_factory=list)
    tables: Optional[Tables] = None  # the compatibility tables its predicates read
    _union: Optional[re.Pattern[str]] = field(default=None, repr=False, compare=False)

    @property
    def union(self) -> Optional[re.Pattern[str]]:
        """Every signature at once (None without signatures): compiled when first asked for, since the scanner's
        prefilter (envdoctor.evidence.needles) finds its lines without it and compiling it costs a run ~20 ms."""
        if self._union is None and self.signatures:
            self._union = re.compile("|".join(f"(?:{_flagged(s.regex)})" for s in self.signatures))
        return self._union


def default_rules_dir() -> Path:
    """The bundled copy in an installed wheel, else `rules/nccl` of the source tree."""
    return data_path("rules/nccl")


_CACHE: Dict[Tuple[Tuple[str, int, int], ...], RuleSet] = {}


def load_rules(directory: Union[str, Path, Sequence[Union[str, Path]], None] = None,
               tables_dir: Union[str, Path, None] = None, tables: Optional[Tables] = None) -> RuleSet:
    """The signature database in `directory` (or in several directories, read as one: `envdoctor diagnose` reads
    `rules/nccl` and `rules/signatures`); `tables_dir` holds the compatibility tables its files refer to
    (default: `tables/` beside the first, else the bundled one), `tables` the same already loaded (the Knowledge's,
    so that its rules and its signatures read one value). Cached until a file changes."""
    if directory is None or isinstance(directory, (str, Path)):
        dirs = [Path(directory) if directory is not None else default_rules_dir()]
    else:
        dirs = [Path(d) for d in directory]
    files: List[Path] = []
    for base in dirs:
        if not base.is_dir():
            raise InputError(f"{base}: NCCL signature directory not found" if base.name == "nccl" or len(dirs) == 1
                             else f"{base}: signature directory not found")
        found = sorted(base.glob("*.json"))
        if not found:
            raise InputError(f"{base}: no NCCL signature files (*.json)" if len(dirs) == 1
                             else f"{base}: no signature files (*.json)")
        files.extend(found)
    base = dirs[0]
    if tables_dir is None:
        tables_dir = base.parent / "tables" if (base.parent / "tables").is_dir() else data_path("rules") / "tables"
    tables_dir = Path(tables_dir)
    key = files_key([*files, *sorted(tables_dir.glob("*.json"))])
    cached = _CACHE.get(key)
    if cached is None:
        if len(_CACHE) >= 8:
            _CACHE.clear()
        cached = _CACHE[key] = _load(files, tables if tables is not None else load_tables(tables_dir))
    return cached


def default_signatures_dirs() -> List[Path]:
    """Every bundled signature directory: the NCCL ones and the rest (`rules/signatures`)."""
    return [default_rules_dir(), data_path("rules/signatures")]


def signatures_dirs_of(rules_dir: Path) -> List[Path]:
    """The signature directories of a rules database: its `nccl/` and `signatures/`, each else the bundled one."""
    bundled = default_signatures_dirs()
    return [rules_dir / name if (rules_dir / name).is_dir() else default
            for name, default in zip(("nccl", "signatures"), bundled)]


Raw = Dict[str, List[Tuple[str, int, Any]]]  # "categories" / "signatures" / "rules" -> (file, index, entry)


def _read_files(files: Sequence[Path], tables: Tables, errors: List[str]
                ) -> Tuple[Raw, Dict[Tuple[str, str, int], List[str]], Dict[str, Any]]:
    """Every file's entries (table references resolved), the table entries each quotes, and the settings; each
    file's own shape is checked here, its entries' later, one by one."""
    raw: Raw = {"categories": [], "signatures": [], "rules": []}
    named: Dict[Tuple[str, str, int], List[str]] = {}  # (file, entry) -> the table entries it quotes
    settings: Dict[str, Any] = dict(DEFAULT_SETTINGS)
    for path in files:
        doc, error = read_json(path)
        if error:
            errors.append(error)
            continue
        if not isinstance(doc, dict) or doc.get("schema") not in (FORMAT, *SCHEMAS):
            errors.append(f"{path}: 'schema' must be one of {sorted([FORMAT, *SCHEMAS])}")
            continue
        if doc["schema"] == FORMAT:
            keys = [k for k in ("categories", "signatures", "rules") if k in doc]
            shape = data_schemas.problems(doc, SCHEMA, "document", str(path), skip=tuple(f"{k}[" for k in keys))
        else:
            keys = [SCHEMAS[doc["schema"]]]
            # each entry is checked on its own, below
            shape = data_schemas.problems(doc, SCHEMA, _FILE_DEF[keys[0]], str(path), skip=(f"{keys[0]}[",))
        lists = [(key, doc.get(key)) for key in keys]
        bad = [key for key, entries in lists if not isinstance(entries, list)]
        if bad:
            errors.extend(f"{path}: '{key}' must be a list" for key in bad)
            continue
        errors.extend(shape)
        for key, entries in lists:
            for i, e in enumerate(entries):
                named[(str(path), key, i)] = Tables.references(e)
                refs: List[str] = []
                e = tables.resolve(e, refs)
                errors.extend(f"{path}: entry #{i + 1}: {r}" for r in refs)
                raw[key].append((str(path), i, e))
        if "settings" in doc and not any(p.startswith(f"{path}: settings") for p in shape):
            settings.update(doc["settings"])
    return raw, named, settings


def _load(files: Sequence[Path], tables: Tables) -> RuleSet:
    errors: List[str] = []
    raw, named, settings = _read_files(files, tables, errors)
    rs = RuleSet(settings=settings, files=[str(f) for f in files], tables=tables)
    seen: Dict[str, str] = {}

    def where(file: str, index: int, entry: Any) -> str:
        name = entry.get("id") if isinstance(entry, dict) else None
        return f"{file}: entry {name!r} (#{index + 1})" if isinstance(name, str) else f"{file}: entry #{index + 1}"

    def take_id(file: str, index: int, entry: Any, kind: str) -> Optional[str]:
        """The entry's id once its shape is checked (the schema's `$defs/{kind}`); None when it has none to use."""
        if not isinstance(entry, dict):
            errors.append(f"{where(file, index, entry)}: must be an object")
            return None
        name = entry.get("id")
        if not isinstance(name, str) or not _ID.match(name):
            errors.append(f"{where(file, index, entry)}: 'id' must be a lower-case identifier")
            return None
        if f"{kind}:{name}" in seen:
            errors.append(f"{where(file, index, entry)}: duplicate id (first in {seen[f'{kind}:{name}']})")
            return None
        seen[f"{kind}:{name}"] = file
        shape = data_schemas.problems(entry, SCHEMA, kind, where(file, index, entry), MESSAGES[kind], own_words=True)
        errors.extend(shape)
        return None if shape else name

    for file, i, e in raw["categories"]:
        name = take_id(file, i, e, "category")
        if name is None:
            continue
        test = e.get("discriminating_test")
        rs.categories[name] = Category(name, e["title"], e["fix"], e.get("severity", "error"), str(e.get("layer", "")),
                                       dict(test) if test else None, own_id=e.get("finding_id", ""),
                                       reported=e.get("category", ""))

    for file, i, e in raw["signatures"]:
        name = take_id(file, i, e, "signature")
        if name is None:
            continue
        regex, problems = _signature(e, rs)
        errors.extend(f"{where(file, i, e)}: {p}" for p in problems)
        if not problems and regex is not None:
            rs.signatures.append(Signature(name, regex, dict(e.get("weights", {})), e["means"], tuple(e["needles"]),
                                           e.get("specificity", DEFAULT_SPECIFICITY)))

    signal_ids = {s.id for s in rs.signatures} | {
        e["id"] for _, _, e in raw["signatures"] if isinstance(e, dict) and isinstance(e.get("id"), str)}
    log_predicates = predicates_for(log=True)
    for file, i, e in raw["rules"]:
        name = take_id(file, i, e, "context_rule")
        if name is None:
            continue
        problems = _context_rule_problems(e, rs, log_predicates, signal_ids)
        errors.extend(f"{where(file, i, e)}: {p}" for p in problems)
        if not problems:
            rs.rules.append(ContextRule(name, e["when"], dict(e.get("boost", {})), dict(e.get("scale", {})),
                                        tuple(e.get("evidence", [])), e["note"],
                                        e.get("specificity", DEFAULT_SPECIFICITY)))

    _tables_of_categories(rs, raw, named)
    if not raw["categories"] and not errors:
        errors.append("no categories defined (a file with schema envdoctor.signatures/1 and categories)")
    if errors:
        head = f"invalid NCCL signatures: {len(errors)} error(s): " if len(errors) > 1 else "invalid NCCL signatures: "
        raise InputError(head + "; ".join(errors))
    return rs


def _signature(e: Mapping[str, Any], rs: RuleSet) -> Tuple[Optional[re.Pattern[str]], List[str]]:
    """A well-shaped signature's compiled pattern and what the schema cannot say about it: the pattern compiles
    and matches its examples, its needles and the categories it weighs."""
    problems: List[str] = []
    regex = None
    try:
        regex = re.compile(e["pattern"], re.IGNORECASE if e.get("ignore_case") else 0)
    except re.error as exc:
        problems.append(f"pattern does not compile: {exc}")
    problems.extend(_check_weights(e.get("weights", {}), rs, "weights"))
    if regex is not None and isinstance(e.get("example"), str) and not regex.search(e["example"]):
        problems.append("pattern does not match its own 'example'")
    else:
        problems.extend(_check_needles(e, regex))
    return regex, problems


def _context_rule_problems(e: Mapping[str, Any], rs: RuleSet, log_predicates: Mapping[str, Any],
                           signal_ids: Collection[str]) -> List[str]:
    """What the schema cannot say about a well-shaped context rule: its condition, the categories it weighs,
    the signatures it cites."""
    problems = [f"when: {p}" for p in check_condition(e["when"], {"log": Any}, log_predicates, signal_ids)]
    if "boost" not in e and "scale" not in e:
        problems.append("needs 'boost' or 'scale'")
    problems.extend(_check_weights(e.get("boost", {}), rs, "boost"))
    scale = e.get("scale", {})
    problems.extend(_check_weights(scale, rs, "scale"))
    if any(v < 0 for v in scale.values()):
        problems.append("'scale' factors must not be negative")
    problems.extend(f"'evidence': unknown signature {x!r}" for x in e.get("evidence", []) if x not in signal_ids)
    return problems


def _tables_of_categories(rs: RuleSet, raw: Raw,
                          named: Mapping[Tuple[str, str, int], List[str]]) -> None:
    """Each category's tables: quoted by it, or by a signature or context rule that points at it, or read by that
    rule's predicates (`rules explain` shows them)."""
    quoted = {(key, e.get("id")): named[(f, key, i)] for key in raw for f, i, e in raw[key]
              if isinstance(e, dict) and isinstance(e.get("id"), (str, type(None)))}
    for cat in list(rs.categories.values()):
        found = list(quoted.get(("categories", cat.id), []))
        found += [t for s in rs.signatures if cat.id in s.weights for t in quoted.get(("signatures", s.id), [])]
        for r in rs.rules:
            if cat.id in r.boost or cat.id in r.scale:
                found += quoted.get(("rules", r.id), []) + tables_read(r.when)
        rs.categories[cat.id] = dataclasses.replace(cat, tables=tuple(dict.fromkeys(found)))


def _check_needles(entry: Mapping[str, Any], regex: Optional[re.Pattern[str]]) -> List[str]:
    """Needles are lower-case literals, each shown in an example the pattern matches: a needle that is in no
    matching line would make the prefilter skip the lines the signature is for."""
    needles, more = entry["needles"], entry.get("more_examples", [])
    if not needles:
        return [MESSAGES["signature"]["needles"]]
    examples = [x for x in [entry.get("example"), *more] if isinstance(x, str)]
    out = [f"'more_examples': pattern does not match {x!r}" for x in more if regex is not None and not regex.search(x)]
    for n in needles:
        if n != n.lower() or len(n) < MIN_NEEDLE:
            out.append(f"needle {n!r} must be lower case and at least {MIN_NEEDLE} characters")
        elif n.strip().isdigit():  # the line scan reads digits as one class: this would gate every number
            out.append(f"needle {n!r} is digits only: add the text around them")
        elif not any(n in x.lower() for x in examples):
            out.append(f"needle {n!r} occurs in no example (add the line it is for to 'more_examples')")
    return out


def _flagged(regex: re.Pattern[str]) -> str:
    return f"(?i:{regex.pattern})" if regex.flags & re.IGNORECASE else regex.pattern


def _check_weights(weights: Mapping[str, float], rs: RuleSet, key: str) -> List[str]:
    """Every category a weight names exists (the schema said they are numbers)."""
    return [f"'{key}': unknown category {cat!r}" for cat in weights if cat not in rs.categories]
