"""The packages around torch, read in the target interpreter by torch_child.py. Stdlib only, 3.8+.

`before_import()` reads only metadata and files (so a torch that crashes on import still gets it);
`after_import(torch)` exercises what needs torch loaded. Every item is guarded on its own.
"""
import json
import os
import re
import site
import sys
import sysconfig
import time
import warnings

AROUND = ("torch", "torchvision", "torchaudio", "sympy", "typing-extensions", "numpy", "triton", "pytorch-triton",
          "deepspeed")
COMPANIONS = {"torchvision": "torchvision", "torchaudio": "torchaudio"}
# distribution -> module; DeepSpeed is imported by deepspeed_child.py.
EXTENSIONS = {"flash-attn": "flash_attn", "xformers": "xformers", "vllm": "vllm", "bitsandbytes": "bitsandbytes",
              "apex": "apex", "flashinfer-python": "flashinfer", "flashinfer": "flashinfer"}
CUDA_LIB_PREFIXES = ("libcuda", "libcudart", "libcublas", "libcudnn", "libnccl", "libnvrtc", "libnvJitLink", "libcufft",
                     "libcurand", "libcusolver", "libcusparse", "libcupti", "libnvToolsExt", "libnvshmem", "libcufile",
                     "libnvidia-ml")
IMPORT_BUDGET_S = 30.0  # companions and extensions are imported until this much time has gone


def norm(name):
    return re.sub(r"[-_.]+", "-", name or "").lower()


def guard(out, key, fn, *args):
    try:
        out[key] = fn(*args)
    except Exception as exc:
        out[key] = None
        out.setdefault("errors", {})[key] = "%s: %s" % (type(exc).__name__, exc)


class Headers(object):
    """A distribution whose METADATA headers are parsed once, and its description (often a whole README)
    never: `importlib.metadata` parses the whole file again for each `version` and `requires`."""

    def __init__(self, dist):
        self._dist = dist
        self._headers = None

    def __getattr__(self, name):  # files, locate_file, read_text: the distribution's own
        return getattr(self._dist, name)

    @property
    def metadata(self):
        if self._headers is None:
            import email.parser
            # as importlib.metadata looks: a one-file .egg-info (distutils) is read by its own name
            text = self._dist.read_text("METADATA") or self._dist.read_text("PKG-INFO") or self._dist.read_text("") or ""
            self._headers = email.parser.HeaderParser().parsestr(re.split(r"\r?\n\r?\n", text, maxsplit=1)[0])
        return self._headers

    @property
    def version(self):
        return self.metadata["Version"]

    @property
    def requires(self):
        found = self.metadata.get_all("Requires-Dist")
        if found is None and self._dist.read_text("requires.txt") is not None:  # an egg-info install
            return self._dist.requires
        return found


def installed_dists():
    """normalised name -> distribution, first on sys.path wins (as import does)."""
    from importlib import metadata
    found = {}
    for dist in metadata.distributions():
        dist = Headers(dist)
        try:
            # 3.10+: the name from the .dist-info folder, without parsing every METADATA file
            name = norm(getattr(dist._dist, "_normalized_name", None) or dist.metadata["Name"])
        except Exception:
            continue
        if name and name not in found:
            found[name] = dist
    return found


# --- requirements, as `pip check` reads them ------------------------------------------------

_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*?)\s*(?:;\s*(.*))?$")
_CLAUSE = re.compile(r"""^\s*(\w+)\s*(==|!=|<=|>=|<|>|~=|not in|in)\s*["']([^"']*)["']\s*$""")
_RCLAUSE = re.compile(r"""^\s*["']([^"']*)["']\s*(==|!=|not in|in)\s*(\w+)\s*$""")
_VERSION = re.compile(r"^v?(\d+(?:\.\d+)*)(?:\+[A-Za-z0-9.]+)?$")


def _marker_env():
    import platform
    return {"python_version": "%d.%d" % sys.version_info[:2], "python_full_version": platform.python_version(),
            "sys_platform": sys.platform, "platform_system": platform.system(), "platform_machine": platform.machine(),
            "os_name": os.name, "implementation_name": sys.implementation.name,
            "platform_python_implementation": platform.python_implementation(), "platform_release": platform.release(),
            "extra": ""}


def _release(text):
    m = _VERSION.match(text.strip())
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


def _cmp(a, b):
    n = max(len(a), len(b))
    a, b = a + (0,) * (n - len(a)), b + (0,) * (n - len(b))
    return (a > b) - (a < b)


def _spec_ok(op, want, have):
    """One specifier clause on plain release versions; None when it cannot be decided here."""
    if op in ("==", "!=") and want.endswith(".*"):
        w, h = _release(want[:-2]), _release(have)
        if w is None or h is None:
            return None
        hit = h[:len(w)] + (0,) * max(0, len(w) - len(h)) == w
        return hit if op == "==" else not hit
    if op == "===":
        return want == have
    w, h = _release(want), _release(have)
    if w is None or h is None or "+" in want:
        return None
    c = _cmp(h, w)
    if op == "~=":
        return c >= 0 and len(w) > 1 and h[:len(w) - 1] == w[:-1]
    return {"==": c == 0, "!=": c != 0, ">=": c >= 0, "<=": c <= 0, ">": c > 0, "<": c < 0}.get(op)


def _fallback_marker(text, env):
    if "(" in text:
        return None
    result = False
    for alt in re.split(r"\s+or\s+", text):
        value = True
        for clause in re.split(r"\s+and\s+", alt):
            m, r = _CLAUSE.match(clause), _RCLAUSE.match(clause)
            if m:
                var, op, lit = m.groups()
                left, right = env.get(var), lit
            elif r:
                lit, op, var = r.groups()
                left, right = lit, env.get(var)
            else:
                return None
            if left is None or right is None:
                return None
            if op == "in":
                ok = left in right
            elif op == "not in":
                ok = left not in right
            elif var in ("python_version", "python_full_version"):
                ok = _spec_ok(op, right, left) if m else _spec_ok(op, left, right)
                if ok is None:
                    return None
            else:
                ok = {"==": left == right, "!=": left != right}.get(op)
                if ok is None:
                    return None
            value = value and ok
        result = result or value
    return result


def _fallback_contains(spec, version):
    spec = spec.strip().strip("()")
    if not spec:
        return True
    for part in spec.split(","):
        m = re.match(r"^\s*(===|==|!=|<=|>=|~=|<|>)\s*(\S+)\s*$", part)
        if not m:
            return None
        ok = _spec_ok(m.group(1), m.group(2), version)
        if ok is not True:
            return ok
    return True


def requirement_checker():
    """(name, check) where check(text, installed) -> (dist name, applies, satisfied) with None for undecidable."""
    try:
        from packaging.requirements import Requirement
        from packaging.version import Version

        def with_packaging(text, installed):
            req = Requirement(text)
            applies = req.marker.evaluate({"extra": ""}) if req.marker is not None else True
            if installed is None or not applies:
                return norm(req.name), applies, None
            try:
                Version(installed)
            except Exception:
                return norm(req.name), applies, None
            return norm(req.name), applies, req.specifier.contains(installed, prereleases=True)
        return "packaging", with_packaging
    except Exception:
        pass
    env = _marker_env()

    def with_stdlib(text, installed):
        m = _REQ.match(text)
        if not m or m.group(3).startswith("@"):
            return None, None, None
        applies = _fallback_marker(m.group(4), env) if m.group(4) else True
        if installed is None or not applies:
            return norm(m.group(1)), applies, None
        return norm(m.group(1)), applies, _fallback_contains(m.group(3), installed)
    return "stdlib", with_stdlib


def watched(dists):
    names = [n for n in AROUND if n in dists]
    names += sorted(n for n in dists if n.startswith("nvidia-"))
    names += [n for n in EXTENSIONS if n in dists]
    return names


def conflicts(dists, check):
    out = []
    for name in watched(dists):
        dist = dists[name]
        for text in dist.requires or []:
            try:
                dep, applies, ok = check(text, None)
                if dep is None or not applies:
                    continue
                have = dists.get(dep)
                if have is None:
                    out.append({"package": name, "requirement": text, "installed": None})
                    continue
                dep, applies, ok = check(text, have.version)
                if ok is False:
                    out.append({"package": name, "requirement": text, "installed": have.version})
            except Exception:
                continue  # an unreadable requirement is not a conflict
    return out


def torch_requires(dists, check):
    """What torch's Requires-Dist asks for: normalised name -> requirement text (markers that apply)."""
    torch = dists.get("torch")
    out = {}
    for text in (torch.requires or []) if torch is not None else []:
        try:
            dep, applies, _ = check(text, None)
        except Exception:
            continue
        if dep and applies:
            out[dep] = text
    return out


def nvidia_wheels(dists, pins):
    out = {}
    for name in sorted(set(n for n in dists if n.startswith("nvidia-")) | set(n for n in pins if n.startswith("nvidia-"))):
        out[name] = {"required": pins.get(name), "installed": dists[name].version if name in dists else None}
    return out


# --- where torch comes from ------------------------------------------------------------------

def _real(path):
    try:
        return os.path.realpath(path)
    except Exception:
        return path


def site_dirs():
    dirs = []
    try:
        dirs += site.getsitepackages()
    except Exception:
        pass
    paths = sysconfig.get_paths()
    dirs += [paths.get("purelib"), paths.get("platlib")]
    return sorted(set(_real(d) for d in dirs if d))


def torch_origin(dists, environ=None, cwd=None):
    import importlib.util
    environ = os.environ if environ is None else environ
    spec = importlib.util.find_spec("torch")
    if spec is None:
        return None
    origin = spec.origin if spec.origin not in (None, "namespace") else next(iter(spec.submodule_search_locations or []), None)
    if origin is None:
        return None
    origin = _real(origin)
    parent = os.path.dirname(os.path.dirname(origin)) if os.path.basename(origin).startswith("__init__.") \
        else os.path.dirname(origin)
    sites = site_dirs()
    user = _real(site.getusersitepackages()) if getattr(site, "ENABLE_USER_SITE", False) else None
    pythonpath = [_real(p) for p in environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    here = _real(cwd or os.getcwd())
    dist = dists.get("torch")
    editable = False
    if dist is not None:
        try:
            direct = json.loads(dist.read_text("direct_url.json") or "{}")
            editable = bool((direct.get("dir_info") or {}).get("editable"))
        except Exception:
            pass
    if parent in sites:
        kind = "site-packages"
    elif user and parent == user:
        kind = "user-site"
    elif parent in pythonpath:
        kind = "pythonpath"
    elif parent == here:
        kind = "cwd"
    elif editable:
        kind = "editable"
    else:
        kind = "other"
    dist_dir = None
    if dist is not None:
        try:
            dist_dir = _real(str(dist.locate_file("")))
        except Exception:
            pass
    return {"file": origin, "kind": kind, "outside_site_packages": kind != "site-packages",
            "site_packages": sites, "dist_location": dist_dir}


def cwd_torch(cwd=None):
    """A `torch` package or module in the current directory shadows the installed one for scripts run here."""
    here = cwd or os.getcwd()
    for name in (os.path.join("torch", "__init__.py"), "torch.py"):
        if os.path.isfile(os.path.join(here, name)):
            return _real(os.path.join(here, name))
    return None


def broken_files(dists):
    """torch's own shared libraries that its RECORD lists but the disk lacks (a damaged install)."""
    dist = dists.get("torch")
    if dist is None or not dist.files:
        return None
    missing = []
    for f in dist.files:
        s = str(f)
        if (s.endswith(".so") or ".so." in s or s.endswith(".dll") or s.endswith(".pyd")) and \
                not os.path.exists(str(dist.locate_file(f))):
            missing.append(s)
    return missing


# --- companions and extensions ----------------------------------------------------------------

def _torch_pin(dist):
    for text in dist.requires or []:
        m = _REQ.match(text)
        if m and norm(m.group(1)) == "torch" and not (m.group(4) or "").strip().startswith("extra"):
            return (m.group(3) or "").strip().strip("()") or None
    return None


_VERSION_LINE = re.compile(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", re.M)


def build_version(name, dist):
    """__version__ in the package's own version file (torchvision/version.py), read without importing it: PyPI's
    torchvision 0.28.0 says 0.28.0+cu130 there, and only there."""
    want = COMPANIONS[name] + "/version.py"
    for f in dist.files or []:
        if str(f).replace("\\", "/") == want:
            with open(str(dist.locate_file(f)), encoding="utf-8", errors="replace") as fh:
                m = _VERSION_LINE.search(fh.read(65536))
            return m.group(1).strip() if m else None
    return None


def companions(dists):
    out = {}
    for name in COMPANIONS:
        if name in dists:
            item = {"version": dists[name].version, "requires_torch": _torch_pin(dists[name])}
            guard(item, "build_version", build_version, name, dists[name])
            out[name] = item
    return out


def _flash_attn_tag(text):
    """'2.5.8+cu122torch2.3cxx11abiFALSE' (the release wheel's local version) -> its torch, CUDA, C++ ABI."""
    m = re.search(r"cu(\d+)torch(\d+\.\d+)cxx11abi(TRUE|FALSE)", text or "")
    if not m:
        return None
    cu = m.group(1)
    return {"torch_version": m.group(2), "cuda_version": "%s.%s" % (cu[:-1], cu[-1]) if len(cu) > 1 else cu,
            "cxx11_abi": m.group(3) == "TRUE", "source": "wheel version"}


def extension_build(name, dist):
    """The torch an extension was built for, from its own record: None when it keeps none."""
    if name == "xformers":
        for f in dist.files or []:
            if str(f).replace("\\", "/").endswith("xformers/cpp_lib.json"):
                with open(str(dist.locate_file(f))) as fh:
                    meta = json.load(fh).get("version") or {}
                return {"torch_version": str(meta["torch"]) if meta.get("torch") else None,
                        "cuda_version": str(meta["cuda"]) if meta.get("cuda") else None, "source": "build record"}
    if name == "flash-attn":
        found = _flash_attn_tag(dist.version)
        if found is None:
            try:
                url = (json.loads(dist.read_text("direct_url.json") or "{}").get("url") or "")
            except Exception:
                url = ""
            found = _flash_attn_tag(url.rsplit("/", 1)[-1])
        if found:
            return found
    pin = _torch_pin(dist)
    if pin and re.match(r"^==\s*[^,*]+$", pin):
        return {"torch_version": pin.lstrip("=").strip(), "source": "requires-dist"}
    return None


def extensions(dists):
    out = {}
    for name in EXTENSIONS:
        if name in dists:
            item = {"version": dists[name].version, "requires_torch": _torch_pin(dists[name])}
            guard(item, "build", extension_build, name, dists[name])
            out[name] = item
    return out


# --- libraries the process really loaded -------------------------------------------------------

def _file_version(path):
    """'libcudart.so.12.4.127' -> '12.4.127'; 'libcuda.so.550.54.15' -> '550.54.15' (from the real file)."""
    name = os.path.basename(_real(path))
    m = re.search(r"\.so\.(\d+(?:\.\d+)*)$", name) or re.search(r"-(\d+(?:\.\d+)+)\.so", name)
    return m.group(1) if m else None


def mapped_cuda_libraries(dists, maps="/proc/self/maps"):
    paths = []
    with open(maps) as fh:
        for line in fh:
            parts = line.split(None, 5)
            if len(parts) < 6:
                continue
            path = parts[5].strip()
            name = os.path.basename(path)
            if ".so" in name and name.startswith(CUDA_LIB_PREFIXES) and path not in paths:
                paths.append(path)
    owners = {}
    if any(os.sep + "nvidia" + os.sep in p for p in paths):
        for dname, dist in dists.items():
            if not dname.startswith("nvidia-"):
                continue
            for f in dist.files or []:
                s = str(f)
                if ".so" in s:
                    owners[_real(str(dist.locate_file(f)))] = (dname, dist.version)
    out = []
    for path in paths:
        owner = owners.get(_real(path))
        out.append({"path": path, "file_version": _file_version(path),
                    "dist": owner[0] if owner else None, "dist_version": owner[1] if owner else None})
    return out


# --- the two phases --------------------------------------------------------------------------

def interpreter():
    import struct
    return {"implementation": sys.implementation.name, "pointer_bits": struct.calcsize("P") * 8,
            "free_threaded": bool(sysconfig.get_config_var("Py_GIL_DISABLED"))}


def before_import():
    out = {}
    try:
        dists = installed_dists()
    except Exception as exc:
        return {"errors": {"distributions": "%s: %s" % (type(exc).__name__, exc)}}, {}
    checker, check = requirement_checker()
    out["requirement_checker"] = checker
    guard(out, "requirement_conflicts", conflicts, dists, check)
    guard(out, "torch_requires", torch_requires, dists, check)
    guard(out, "nvidia_wheels", nvidia_wheels, dists, out.get("torch_requires") or {})
    guard(out, "origin", torch_origin, dists)
    guard(out, "cwd_torch", cwd_torch)
    guard(out, "companions", companions, dists)
    guard(out, "extensions", extensions, dists)
    out.pop("torch_requires", None)
    return out, dists


def numpy_bridge(torch, dists):
    """numpy's version, and whether torch really hands a tensor to numpy (NumPy 2 under a NumPy-1 torch does not)."""
    out = {"version": dists["numpy"].version if "numpy" in dists else None}
    if out["version"] is None:
        out["works"], out["error"] = None, "numpy is not installed"
        return out
    try:
        torch.zeros(1).numpy()
        out["works"], out["error"] = True, None
    except Exception as exc:
        out["works"], out["error"] = False, "%s: %s" % (type(exc).__name__, exc)
    return out


def after_import(torch, dists):
    out = {}
    guard(out, "cxx11_abi", lambda: bool(torch._C._GLIBCXX_USE_CXX11_ABI))
    guard(out, "numpy", numpy_bridge, torch, dists)
    guard(out, "mapped_cuda_libraries", mapped_cuda_libraries, dists)
    return out


def try_import(module, torch=None, op=None):
    """Import one companion or extension; its error text (an undefined c10:: symbol) is the fact."""
    import importlib
    out = {"module": module}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            importlib.import_module(module)
            out["importable"], out["error"] = True, None
        except BaseException as exc:
            out["importable"], out["error"] = False, ("%s: %s" % (type(exc).__name__, exc))[:2000]
    out["warnings"] = [str(w.message)[:500] for w in caught][:3]
    if op is not None and torch is not None:
        ns, name = op.split("::")
        try:
            getattr(getattr(torch.ops, ns), name)
            out["op_" + name] = True
        except Exception:
            out["op_" + name] = False
    return out


def import_all(torch, facts, emit, budget=IMPORT_BUDGET_S):
    """Import every installed companion and extension, one line each, within a time budget."""
    start = time.monotonic()
    todo = [(n, COMPANIONS[n], "torchvision::nms" if n == "torchvision" else None, "companion")
            for n in (facts.get("companions") or {})]
    todo += [(n, EXTENSIONS[n], None, "extension") for n in (facts.get("extensions") or {})]
    for name, module, op, kind in todo:
        if time.monotonic() - start > budget:
            emit({"import": {"name": name, "kind": kind, "skipped": "time budget of %ds spent" % budget}})
            continue
        emit({"import": dict(try_import(module, torch, op), name=name, kind=kind)})
