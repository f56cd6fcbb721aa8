"""A plan as a lock for provisioning (`fix --format`): a pip requirements file, a PEP 751 `pylock.toml`, or the
`[tool.uv.sources]`/`[[tool.uv.index]]` snippet of a uv project.

Pure: the exact files come from `installs`, what pip resolved for the plan (envdoctor.install.preview), each
{name, version, url, hashed, requested, hashes}. Index URLs are written without their credentials (pip and uv
take them from netrc, keyring or their environment)."""

from __future__ import annotations

import copy
import json
import re
import urllib.parse
from typing import Any, Dict, List, Optional, Sequence

from envdoctor.wheels.planner import Plan, PlannedPackage

FORMATS = ("requirements", "pylock", "uv")
PYLOCK_NAME = re.compile(r"pylock(\.[^.\s/\\]+)?\.toml")  # PEP 751's file name
_MARKER = {"linux_x86_64": ("linux", "x86_64"), "linux_aarch64": ("linux", "aarch64"), "win_amd64": ("win32", "AMD64")}


class LockError(ValueError):
    """The plan cannot be written in this format (a file without a hash for pylock.toml)."""


def public_url(url: str) -> str:
    """The URL without user name and password."""
    parts = urllib.parse.urlsplit(url)
    if not (parts.username or parts.password):
        return url
    host = parts.hostname or ""
    netloc = (f"[{host}]" if ":" in host else host) + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def lock_plan(plan: Plan, index_base: str) -> Plan:
    """The plan with the packages it keeps pinned too ('torch 2.9.1+cu128' from `index_base`/cu128): a lock
    names everything the environment needs, not only what changes."""
    locked = copy.deepcopy(plan)
    for kept in plan.kept:
        name, _, version = kept.partition(" ")
        if not version or any(p.name == name for p in plan.packages):
            continue
        variant = version.partition("+")[2]
        url = f"{index_base.rstrip('/')}/{variant}" if variant else None
        locked.packages.append(PlannedPackage(name, version.partition("+")[0], variant, url, "installed and kept",
                                              f"{name}=={version}"))
    locked.kept = []
    return locked


def _indexes(plan: Plan) -> List[str]:
    return list(dict.fromkeys(public_url(p.index_url) for p in plan.packages if p.index_url))


def _pins(plan: Plan) -> List[str]:
    """Every pin of the plan's install steps: the exact packages, the requirements pip resolves with torch held, then
    the release files (`flash-attn @ URL`)."""
    return list(dict.fromkeys([p.pin for p in plan.packages] + list(plan.requirements)
                              + [release_pin(u) for u in plan.files]))


def release_pin(url: str) -> str:
    """A release file as a requirement: 'flash-attn @ https://...whl'."""
    from envdoctor.wheels.release_files import name_and_version

    name, version = name_and_version(url)
    return f"{name} @ {public_url(url)}" if version != "?" else public_url(url)


def not_lockable(plan: Plan) -> List[str]:
    """One line per rebuild step: it compiles against the torch in place, so no lock can name its file."""
    return [f"{pin}: built from source, not lockable (compiled against the torch in place; after installing the "
            f"lock: pip install --no-build-isolation --no-deps --force-reinstall {pin})" for pin in plan.rebuilds]


def _header(plan: Plan, fmt: str, comment: str = "#") -> List[str]:
    """What the lock is for; the same for the same pins, so a lock regenerated unchanged does not differ."""
    pins = ", ".join(_pins(plan)) or "nothing to install"
    lines = [f"{comment} envdoctor fix --format {fmt}: {pins} for Python {plan.python} on {plan.platform}"]
    if plan.env:
        lines.append(f"{comment} install with: " + " ".join(f"{k}={v}" for k, v in plan.env.items()))
    lines += [f"{comment} {line}" for line in not_lockable(plan)]
    return lines


def _is_local(url: str) -> bool:
    """A link only this machine can follow: file:// or a bare path (pip's find-links or index from its config)."""
    return url.startswith("file:") or url.startswith("/") or bool(re.match(r"[A-Za-z]:[\\/]", url))


def local_links(installs: Sequence[Dict[str, Any]], pip_index: Optional[str] = None) -> List[str]:
    """The file:// (or path) links a lock would carry from this machine's pip configuration: another machine
    cannot follow them."""
    urls = [pip_index] if pip_index and _is_local(pip_index) else []
    urls += [i["url"].split("#", 1)[0].rsplit("/", 1)[0] for i in installs if _is_local(i.get("url") or "")]
    return list(dict.fromkeys(public_url(u) for u in urls))


def local_warning(links: Sequence[str]) -> str:
    """The one line that says a lock holds links that work only here."""
    return (f"WARNING: this lock names local links from this machine's pip configuration ({', '.join(links)}): "
            "they will not work on another machine; point pip at an index that machine reaches (PIP_INDEX_URL, "
            "no PIP_FIND_LINKS) and write the lock again")


def requirements_unhashed(plan: Plan, pip_index: Optional[str], why: str) -> str:
    """The plan's pins without the files pip would resolve (it could not: `why`, e.g. offline): no --hash lines,
    and pip resolves the dependencies when it installs."""
    lines = _header(plan, "requirements")
    lines.append(f"# hashes left out: pip could not resolve the files ({why}); the pins below are the plan's, and "
                 "pip resolves their dependencies at install time")
    if pip_index:
        lines.append(f"--index-url {public_url(pip_index)}")
    lines += [f"--extra-index-url {u}" for u in _indexes(plan)]
    lines += _pins(plan)
    return "\n".join(lines) + "\n"


def requirements(plan: Plan, installs: Sequence[Dict[str, Any]], pip_index: Optional[str]) -> str:
    """Every file pinned; `--hash` on all of them when the index gave a hash for each (pip's hash-checking mode
    takes all or none), else on none, saying which lack one."""
    lines = _header(plan, "requirements")
    local = local_links(installs, pip_index)
    if local:
        lines.append(f"# {local_warning(local)}")
    if pip_index:
        lines.append(f"--index-url {public_url(pip_index)}")
    lines += [f"--extra-index-url {u}" for u in _indexes(plan)]
    unhashed = [i["name"] for i in installs if not i.get("hashes")]
    if unhashed:
        lines.append(f"# no --hash lines: no hash is published for {', '.join(unhashed)} (pip's hash-checking mode "
                     "takes all or none)")
    for i in sorted(installs, key=lambda i: (not i["requested"], i["name"])):
        pin = f"{i['name']} @ {public_url(i['url'])}" if i.get("release_file") else f"{i['name']}=={i['version']}"
        if not unhashed:
            pin += "".join(f" \\\n    --hash={algo}:{digest}" for algo, digest in sorted(i["hashes"].items()))
        lines.append(pin)
    return "\n".join(lines) + "\n"


_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped, everything else as itself
    (JSON's surrogate-pair escapes for characters beyond the BMP are not TOML)."""
    out = []
    for ch in text:
        if ch in _TOML_ESCAPES:
            out.append(_TOML_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        elif 0xD800 <= ord(ch) <= 0xDFFF:  # a lone surrogate (undecodable bytes) is no character TOML can hold
            out.append("\ufffd")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _toml(value: Any) -> str:
    """A TOML value: a string is a basic string, a dict an inline table, a list an array."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)


def pylock(plan: Plan, installs: Sequence[Dict[str, Any]], created_by: str = "envdoctor") -> str:
    """A PEP 751 lock (lock-version 1.0): one wheel or sdist per package, each with its index's hash."""
    unhashed = [i["name"] for i in installs if not i.get("hashes")]
    if unhashed:
        files = [i["name"] for i in installs if i.get("release_file")]
        whose = "the index gives" if not files else "the release host of " + ", ".join(files) + " publishes"
        raise LockError(f"{whose} no hash for {', '.join(unhashed)}, and pylock.toml needs one for every file; use "
                        "--format requirements")
    lines = _header(plan, "pylock")
    local = local_links(installs)
    if local:
        lines.append(f"# {local_warning(local)}")
    lines += ['lock-version = "1.0"', f"created-by = {_toml(created_by)}"]
    if plan.python and not plan.python.endswith("t"):
        lines.append(f"requires-python = {_toml('==' + plan.python + '.*')}")
    marker = _MARKER.get(plan.platform or "")
    if marker and plan.python:
        env = f"python_version == '{plan.python.rstrip('t')}' and sys_platform == '{marker[0]}' and " \
              f"platform_machine == '{marker[1]}'"
        lines.append(f"environments = [{_toml(env)}]")
    index_of = {p.name: public_url(p.index_url) for p in plan.packages if p.index_url}
    for i in installs:
        url = public_url(i["url"])
        filename = urllib.parse.unquote(url.split("#", 1)[0].rsplit("/", 1)[-1])
        lines += ["", "[[packages]]", f"name = {_toml(i['name'])}", f"version = {_toml(i['version'])}"]
        if i["name"] in index_of:
            lines.append(f"index = {_toml(index_of[i['name']])}")
        file_entry = {"name": filename, "url": url.split("#", 1)[0], "hashes": dict(sorted(i["hashes"].items()))}
        if filename.endswith(".whl"):
            lines.append(f"wheels = [{_toml(file_entry)}]")
        else:
            lines.append(f"sdist = {_toml(file_entry)}")
    return "\n".join(lines) + "\n"


def uv_snippet(plan: Plan) -> str:
    """What a uv project's pyproject.toml needs: the pins, each torch package from its own explicit index."""
    lines = _header(plan, "uv")
    deps = ", ".join(_toml(p) for p in _pins(plan))
    lines.append(f"# [project] dependencies: {deps}" if deps else "# [project] dependencies: nothing to add")
    names: Dict[str, str] = {}
    for p in plan.packages:
        if p.index_url:
            names.setdefault(public_url(p.index_url), f"pytorch-{p.variant}" if p.variant else f"pytorch-{len(names)}")
    if names:
        lines += ["", "[tool.uv.sources]"]
        by_url = {p.name: names[public_url(p.index_url)] for p in plan.packages if p.index_url}
        lines += [f"{name} = {_toml({'index': index})}" for name, index in by_url.items()]
        for url, name in names.items():
            lines += ["", "[[tool.uv.index]]", f"name = {_toml(name)}", f"url = {_toml(url)}", "explicit = true"]
    return "\n".join(lines) + "\n"
