"""Hostile inputs for envdoctor's commands, made from the recorded ones, and an in-process runner that tallies how
each ended (issue 30): the exit code, an internal error (exit 70, with its exception), a hang (past a per-input
deadline), a leak (a planted secret reaching the output) and a raw escape (a control or reordering character
reaching the output). `tests/test_fuzz_inputs.py` runs a bounded number of them; `bench/fuzz_bench.py` 100,000+.

Each case is a seeded, pure function of (family, seed): the same seed makes the same input, so a failure is
reproduced with `python bench/fuzz_bench.py --family F --seed N --show`."""

from __future__ import annotations

import copy
import io
import itertools
import json
import os
import random
import re
import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOTS = sorted((ROOT / "tests" / "fixtures" / "snapshots").glob("*.json"))
LOGS = sorted((ROOT / "tests" / "fixtures" / "nccl").glob("*.log"))
INDEX = ROOT / "wheels_index.json"
RULES = ROOT / "rules"

# The planted secrets: none may reach the output. Put together at run time (no scanner mistakes this file).
CANARY = "FuzzCanary" + "Q7x9Z2"
PLANTED = ["hf_" + CANARY + "abcdefghij", "ghp_" + CANARY + "abcdefghijklmnopqrst",
           f"https://fuzzuser:{CANARY}upw@mirror.example/simple", f"HF_TOKEN={CANARY}tok",
           f"--password {CANARY}pw", f"Authorization: Bearer {CANARY}bearer",
           "nvapi-" + CANARY + "abcdefghijklmnop", f"https://h/b?X-Amz-Signature={CANARY}sig&a=1",
           f"wandb login {CANARY}0123456789abcdef0123456789"]
# The secret part of each planted secret; none holds another's. A leak is a secret part in the output whose planted
# secret is whole in the input (see judged_parts: the mutators may cut a planted secret apart, and what is left of
# it is no secret of any shape a scanner knows).
SECRET_PARTS = {p: re.search(r"[\w-]*" + CANARY + r"\w*", p).group(0) for p in PLANTED}
assert not any(a in b for a, b in itertools.permutations(SECRET_PARTS.values(), 2)), "a secret part holds another"
# Secrets one after another: a redaction must not consume the next one's name (`Authorization: --password X`).
CHAINED = ["Authorization: " + PLANTED[4], PLANTED[8] + PLANTED[3], PLANTED[5] + " " + PLANTED[4],
           "HF_TOKEN=" + PLANTED[4], PLANTED[0] + PLANTED[5], PLANTED[4] + PLANTED[8]]
ESCAPES = ["\x1b]0;fuzz-title\x07", "\x1b[2J", "\x1b[31m", "\u202e", "\u2066", "\x9b31m", "\x07", "\x1b]52;c;eA==\x07"]
RAW_ESCAPE = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
BIG = "1" * 5000
HOSTILE: List[Any] = [
    "@BIGINT@", "@NAN@", "@INF@", "@-INF@", -1, 0, 2 ** 64, 1e308, None, True, False, "", "\ud800", "x" * 20000,
    "\u0662.\u0661\u0664", "\u0661\u0662.\u0660", "12.0", "2.18." + BIG[:60], "../../../../etc/passwd", "/dev/zero",
    [], {}, [1, 2, 3], {"a": None}, "@DEEP@", "NaN", "1e309", "-0", " ", "\x00", *ESCAPES, *PLANTED, *CHAINED,
]


class Hang(BaseException):
    """Raised in the input's thread once its deadline passes (BaseException: envdoctor's handlers let it by)."""


@dataclass
class Case:
    family: str
    seed: int
    argv: List[str]
    env: Dict[str, str] = field(default_factory=dict)
    files: Dict[str, bytes] = field(default_factory=dict)  # relative name -> content, written under the work dir
    dirs: Dict[str, Dict[str, bytes]] = field(default_factory=dict)  # a directory copied from a source, files changed
    stdin: Optional[bytes] = None


@dataclass
class Outcome:
    code: Optional[int]
    hang: bool = False
    leak: bool = False
    escape: bool = False
    internal: str = ""  # the exception of an exit 70
    crash_mode: Optional[int] = None  # the mode of the traceback file an exit 70 wrote
    text: str = ""  # stdout and stderr


# --- making inputs -------------------------------------------------------------------------------------------


def _paths(doc: Any, prefix: Tuple = ()) -> List[Tuple]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:20]):
            out += _paths(v, prefix + (i,))
    return out


def _set(doc: Any, path: Tuple, value: Any, delete: bool = False) -> Any:
    if not path:
        return value
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    if delete and isinstance(parent, dict):
        parent.pop(path[-1], None)
    elif delete and isinstance(parent, list) and parent:
        parent.pop(path[-1])
    else:
        parent[path[-1]] = value
    return doc


def _hostile(rng: random.Random) -> Any:
    v = copy.deepcopy(rng.choice(HOSTILE))  # a shared [] or {} put in twice would make the document circular
    if isinstance(v, str) and rng.random() < 0.3:
        v = rng.choice(PLANTED + ESCAPES) + v
    return v


def _dump(doc: Any) -> bytes:
    text = json.dumps(doc, allow_nan=True)
    text = (text.replace('"@BIGINT@"', BIG).replace('"@NAN@"', "NaN").replace('"@INF@"', "Infinity")
            .replace('"@-INF@"', "-Infinity").replace('"@DEEP@"', "[" * 600 + "]" * 600))
    return text.encode("utf-8", "surrogatepass")


def mutate_json(rng: random.Random, doc: Any, edits: int = 0) -> bytes:
    """The document with a few values replaced by hostile ones, keys deleted or added; sometimes its bytes damaged."""
    doc = json.loads(json.dumps(doc))
    for _ in range(edits or rng.randint(1, 4)):
        paths = _paths(doc)
        path = rng.choice(paths)
        r = rng.random()
        if r < 0.15 and path:
            doc = _set(doc, path, None, delete=True)
        elif r < 0.25 and isinstance(_get(doc, path), dict):
            _get(doc, path)[rng.choice(["gpus", "x", "version", "\u202ekey", PLANTED[0]])] = _hostile(rng)
        elif r < 0.32 and isinstance(_get(doc, path), list):
            value = _get(doc, path)
            value.extend(value[:1] * rng.choice([2, 50, 500]))
        else:
            doc = _set(doc, path, _hostile(rng))
    data = _dump(doc)
    r = rng.random()
    if r < 0.06:
        data = data[:rng.randrange(len(data) + 1)]
    elif r < 0.10:
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            if b:
                b[rng.randrange(len(b))] = rng.randrange(256)
        data = bytes(b)
    elif r < 0.12:
        data = rng.choice([b"", b"\xef\xbb\xbf" + data, data.decode("utf-8", "replace").encode("utf-16"), b"\x00" * 64])
    return data


def _get(doc: Any, path: Tuple) -> Any:
    for p in path:
        doc = doc[p]
    return doc


_CACHE: Dict[Path, Any] = {}


def _load(path: Path) -> Any:
    if path not in _CACHE:
        _CACHE[path] = json.loads(path.read_text(encoding="utf-8"))
    return _CACHE[path]


def snapshot_case(rng: random.Random, seed: int) -> Case:
    snap = mutate_json(rng, _load(rng.choice(SNAPSHOTS)))
    other = rng.choice(SNAPSHOTS).read_bytes()
    argv = rng.choice([
        ["check", "--snapshot", "s.json"], ["check", "--snapshot", "s.json", "--json"],
        ["check", "--snapshot", "s.json", "--facts"], ["check", "--snapshot", "b.json", "--baseline", "s.json"],
        ["check", "--snapshot", "s.json", "--baseline", "b.json", "--json"], ["fix", "--snapshot", "s.json", "--dry-run"],
        ["fix", "--snapshot", "s.json", "--dry-run", "--json"], ["fix", "--snapshot", "s.json", "--dry-run", "--deepspeed"],
        ["report", "--snapshot", "s.json"], ["fleet", "s.json", "b.json"], ["fleet", "s.json", "b.json", "--json"],
        ["snapshot", "--snapshot", "s.json"] if False else ["check", "--snapshot", "s.json", "--strict"],
    ])
    return Case("snapshot", seed, argv, files={"s.json": snap, "b.json": other})


_HOSTILE_LINES = [
    "NCCL version 2.18." + BIG, "host:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks " + BIG + " cudaDev 0 busId 1000",
    "host:1:1 [0] NCCL INFO NCCL_IB_HCA set to " + BIG, "NCCL version \u0662.\u0661\u0668.\u0663",
    "host:1:1 [0] NCCL WARN \x1b[31m" + PLANTED[0] + "\x1b[0m Cuda failure 'out of memory'",
    '{"msg": "line\\n' + PLANTED[1] + '"}', "\x1b]0;fuzz-title\x07 NCCL WARN Call to ibv_create_qp failed",
    "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1, unhandled system error, NCCL version 2." + BIG,
    "x" * 300000, "\u202e NCCL WARN \u2066 Net : Connection closed by remote peer " + PLANTED[2], "\x00\xff\xfe",
    "torch.distributed.DistBackendError: NCCL error " + PLANTED[3], "[rank" + BIG + "]: Watchdog caught collective "
    "operation timeout: WorkNCCL(SeqNum=" + BIG + ", OpType=ALLREDUCE, NumelIn=" + BIG + ", Timeout(ms)=nan)",
]


def nccl_case(rng: random.Random, seed: int) -> Case:
    lines = rng.choice(LOGS).read_bytes().decode("utf-8", "replace").splitlines()
    for _ in range(rng.randint(1, 6)):
        r = rng.random()
        pos = rng.randrange(len(lines) + 1)
        if r < 0.6:
            lines.insert(pos, rng.choice(_HOSTILE_LINES))
        elif r < 0.8 and lines:
            i = rng.randrange(len(lines))
            cut = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:cut] + str(_hostile(rng)) + lines[i][cut:]
        elif lines:
            del lines[rng.randrange(len(lines))]
    data = "\n".join(lines).encode("utf-8", "surrogatepass")
    if rng.random() < 0.05:
        data = data.decode("utf-8", "replace").encode(rng.choice(["utf-16", "utf-16-le", "latin-1"]), "replace")
    if rng.random() < 0.15:
        argv = ["nccl", "diagnose", "-"] + (["--json"] if rng.random() < 0.5 else [])
        return Case("nccl", seed, argv, stdin=data)
    argv = rng.choice([["nccl", "diagnose", "r0.log"], ["nccl", "diagnose", "--json", "r0.log"],
                       ["nccl", "diagnose", "r0.log", "r1.log"], ["nccl", "diagnose", "--snapshot", "s.json", "r0.log"]])
    other = rng.choice(LOGS).read_bytes()
    return Case("nccl", seed, argv, files={"r0.log": data, "r1.log": other, "s.json": rng.choice(SNAPSHOTS).read_bytes()})


def index_case(rng: random.Random, seed: int) -> Case:
    data = mutate_json(rng, _load(INDEX), edits=rng.randint(1, 3))
    snap = rng.choice(SNAPSHOTS).read_bytes()
    argv = rng.choice([["check", "--snapshot", "s.json"], ["fix", "--snapshot", "s.json", "--dry-run"],
                       ["fix", "--snapshot", "s.json", "--dry-run", "--json"], ["check", "--snapshot", "s.json", "--json"]])
    if rng.random() < 0.5:  # the user's copy, which every check and fix reads
        return Case("index", seed, argv, files={"s.json": snap, "cache/envdoctor/wheels_index.json": data})
    return Case("index", seed, argv, env={"ENVDOCTOR_WHEELS_INDEX": "@WORK@/idx.json"},
                files={"s.json": snap, "idx.json": data})


_RULE_FILES = sorted(p.relative_to(RULES).as_posix() for p in RULES.rglob("*.json"))


def rules_case(rng: random.Random, seed: int) -> Case:
    changed: Dict[str, bytes] = {}
    for _ in range(rng.randint(1, 2)):
        name = rng.choice(_RULE_FILES)
        changed[name] = mutate_json(rng, _load(RULES / name), edits=rng.randint(1, 3))
    if rng.random() < 0.05:
        changed[rng.choice(["extra.json", "tables/extra.json", "nccl/extra.json"])] = rng.choice(
            [b"[]", b"{}", b"null", b'{"rules": 1}', BIG.encode(), b"\xff"])
    snap = rng.choice(SNAPSHOTS).read_bytes()
    ids = ["ED101", "ED150", "NCCL-OOM", "x\x1b[2J", "\u202eED1", PLANTED[0]]
    argv = rng.choice([["rules", "list"], ["rules", "explain", rng.choice(ids)], ["check", "--snapshot", "s.json"],
                       ["check", "--snapshot", "s.json", "--json"], ["nccl", "diagnose", "r0.log"]])
    return Case("rules", seed, argv, env={"ENVDOCTOR_RULES_DIR": "@WORK@/rules"}, dirs={"rules": changed},
                files={"s.json": snap, "r0.log": rng.choice(LOGS).read_bytes()})


def _value(rng: random.Random) -> str:
    return rng.choice(["nan", "inf", "-inf", "-1", "0", "1e309", BIG, "abc", "", " ", "\u0661\u0662", "12.0",
                       "2.13.0", "http://[::1", "http://[::1]:99999/x", "file:///etc", "ftp://x", "\x1b[2J", "\u202e",
                       "\x1b]0;fuzz-title\x07", *PLANTED[:3], "x" * 5000, "12.0,9.0", "8.0,,", "999.999",
                       "570.133.07", "\u0665\u0667\u0660.1"])


def args_case(rng: random.Random, seed: int) -> Case:
    snap = rng.choice(SNAPSHOTS)
    v = _value(rng)
    argv = rng.choice([
        ["check", "--snapshot", "s.json", "--timeout", v], ["fix", "--snapshot", "s.json", "--dry-run", "--torch", v],
        ["fix", "--snapshot", "s.json", "--dry-run", "--deepspeed", v],
        ["fix", "--snapshot", "s.json", "--dry-run", "--index-base", v],
        ["fix", "--gpu", v, "--driver", _value(rng), "--dry-run", "--snapshot", "s.json"],
        ["rules", "explain", v], ["rules", v], ["nccl", v], ["check", v], [v], ["check", "--snapshot", "s.json", v],
        ["fleet", v, "s.json"], ["check", "--snapshot", v], ["index", v], ["fix", "--format", v, "--snapshot", "s.json"],
    ])
    env: Dict[str, str] = {}
    r = rng.random()
    if r < 0.1:
        env["ENVDOCTOR_RULES_DIR"] = "r" * 5000
    elif r < 0.2:
        env["ENVDOCTOR_WHEELS_INDEX"] = rng.choice(["/dev/zero", "@WORK@", "@WORK@/none.json", "x" * 5000, v or "x"])
    elif r < 0.3:
        env["ENVDOCTOR_TORCH_INDEX"] = v or "x"
    elif r < 0.35:
        env["ENVDOCTOR_TORCH_TIMEOUT"] = v or "x"
    return Case("args", seed, argv, env=env, files={"s.json": snap.read_bytes()})


FAMILIES: Dict[str, Tuple[float, Callable[[random.Random, int], Case]]] = {
    "snapshot": (0.32, snapshot_case), "nccl": (0.18, nccl_case), "index": (0.12, index_case),
    "rules": (0.13, rules_case), "args": (0.25, args_case),
}


def make_case(family: str, seed: int) -> Case:
    rng = random.Random(f"{family}:{seed}")
    return FAMILIES[family][1](rng, seed)


# --- running them in this process ---------------------------------------------------------------------------


class _Stdin(io.TextIOWrapper):
    pass


def _alarm(_signum: int, _frame: Any) -> None:
    raise Hang()


def run_case(case: Case, work: Path, deadline_s: float = 20.0) -> Outcome:
    """Run one case through `envdoctor.cli.main` in this process, its files under `work` (emptied first)."""
    from envdoctor import cli

    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    for name, source in case.dirs.items():
        shutil.copytree(RULES, work / name)
        for rel, data in source.items():
            (work / name / rel).parent.mkdir(parents=True, exist_ok=True)
            (work / name / rel).write_bytes(data)
    for name, data in case.files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_bytes(data)
    argv = [a.replace("s.json", str(work / "s.json")).replace("b.json", str(work / "b.json"))
            .replace("r0.log", str(work / "r0.log")).replace("r1.log", str(work / "r1.log")) for a in case.argv]
    env = {k: v.replace("@WORK@", str(work)) for k, v in case.env.items()}
    env.setdefault("XDG_CACHE_HOME", str(work / "cache"))
    saved_env = dict(os.environ)
    saved = sys.stdout, sys.stderr, sys.stdin, os.getcwd()
    out, err = io.StringIO(), io.StringIO()
    outcome = Outcome(None)
    old_handler = signal.signal(signal.SIGALRM, _alarm)
    try:
        for k in [k for k in os.environ if k.startswith(("ENVDOCTOR_", "PIP_", "UV_"))]:
            del os.environ[k]
        os.environ.update(env)
        os.environ["NO_COLOR"] = "1"
        sys.stdout, sys.stderr = out, err
        sys.stdin = io.TextIOWrapper(io.BytesIO(case.stdin or b""), encoding="utf-8")
        os.chdir(work)
        signal.setitimer(signal.ITIMER_REAL, deadline_s)
        try:
            outcome.code = cli.main(argv)
        except Hang:
            outcome.hang = True
        except SystemExit as exc:  # only argparse's, which cli catches: anything else is a finding
            outcome.code = exc.code if isinstance(exc.code, int) else 2
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, old_handler)
        sys.stdout, sys.stderr, sys.stdin = saved[0], saved[1], saved[2]
        os.chdir(saved[3])
        os.environ.clear()
        os.environ.update(saved_env)
    text = outcome.text = out.getvalue() + err.getvalue()
    outcome.leak = leaked(case, text)
    outcome.escape = bool(RAW_ESCAPE.search(text))
    if outcome.code == 70:
        m = re.search(r"internal error: ([A-Za-z_.]+)", text)
        where = re.search(r"traceback in (\S+)\)", text)
        outcome.internal = (m.group(1) if m else "?") + " " + _first_frame(where.group(1) if where else None)
        if where and os.path.exists(where.group(1)):
            outcome.crash_mode = os.stat(where.group(1)).st_mode & 0o777
    return outcome


def _decoded(blob: bytes) -> str:
    """An input file's text as envdoctor's log reader decodes it (UTF-16 with or without its byte-order mark)."""
    from envdoctor.evidence.reader import sniff_encoding

    codec, skip = sniff_encoding(blob[:4096])
    return blob[skip:].decode(codec or "utf-8", "replace")


def _input_text(case: Case) -> str:
    blobs = [*case.files.values(), case.stdin or b"", *(b for d in case.dirs.values() for b in d.values())]
    texts = [_decoded(b) for b in blobs]
    return "\n".join([*case.argv, *case.env.values(), *texts])


def leaked(case: Case, text: str) -> bool:
    """Whether the output holds the secret part of a planted secret that the input holds whole."""
    return leaked_from(_input_text(case), text)


def leaked_from(given: str, text: str) -> bool:
    """Whether `text` (an output) holds a secret part that `judged_parts(given)` judges."""
    return any(part in text for part in judged_parts(given))


def judged_parts(given: str) -> List[str]:
    """The secret parts whose reaching the output is a leak: those of the planted secrets `given` holds whole, each
    of whose occurrences in `given` lies in a whole one. Where a copy was cut apart (`--pas<x>sword VALUE`, or a
    secret inserted into another's name, which leaves `...rd VALUE`), what is left of it is no secret, and an output
    holding VALUE cannot tell which copy it came from: that part is not judged in that input."""
    parts = []
    for secret, part in SECRET_PARTS.items():
        offset = secret.index(part)
        whole = {m.start() + offset for m in re.finditer(re.escape(secret), given)}
        if whole and all(m.start() in whole for m in re.finditer(re.escape(part), given)):
            parts.append(part)
    return parts


def _first_frame(path: Optional[str]) -> str:
    """Where in envdoctor the internal error was raised (the last envdoctor frame of the traceback)."""
    if not path or not os.path.exists(path):
        return ""
    frames = re.findall(r'File "[^"]*?(envdoctor/[^"]+)", line (\d+), in (\S+)', Path(path).read_text(errors="replace"))
    return f"{frames[-1][0]}:{frames[-1][1]}:{frames[-1][2]}" if frames else ""


def scratch() -> Path:
    return Path(tempfile.mkdtemp(prefix="envdoctor-fuzz-"))
