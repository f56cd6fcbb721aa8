"""Describe the target Python environment; prints one JSON object. Stdlib only, Python 3.8+."""
import json
import os
import platform
import re
import struct
import sys
import sysconfig
import time

# Distributions that matter for a GPU training stack.
WATCH = (
    "torch", "torchvision", "torchaudio", "triton", "pytorch-triton", "deepspeed", "flash-attn",
    "flash_attn", "xformers", "bitsandbytes", "apex", "transformer-engine", "transformer_engine",
    "vllm", "accelerate", "transformers", "numpy", "ninja", "nvidia-ml-py", "pynvml", "jax", "jaxlib",
    "mamba-ssm", "causal-conv1d", "torchao", "megatron-core", "cupy", "onnxruntime-gpu", "tensorrt",
    "flashinfer-python", "flashinfer", "sympy", "typing-extensions", "pytorch-triton",
)
# Distributions whose binaries carry CUDA kernels worth checking against the GPUs.
EXTENSIONS = (
    "flash-attn", "flash_attn", "xformers", "bitsandbytes", "apex", "deepspeed", "transformer-engine",
    "transformer_engine", "mamba-ssm", "causal-conv1d", "vllm", "torchao", "flashinfer-python", "flashinfer",
)


def _norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _build(name, dist):
    """The torch an extension was built for, from its own record (see torch_ecosystem.extension_build)."""
    try:
        if name == "deepspeed":
            import deepspeed_child
            info = (deepspeed_child.build_record() or {}).get("torch_info") or {}
            if info.get("version"):
                cuda = info.get("cuda_version")
                return {"torch_version": str(info["version"]), "source": "build record",
                        "cuda_version": str(cuda) if cuda and cuda != "0.0" else None}
            return None
        import torch_ecosystem
        found = torch_ecosystem.extension_build(name, dist) or {}
        found["requires_torch"] = torch_ecosystem._torch_pin(dist)
        return found
    except Exception as exc:
        return {"error": "%s: %s" % (type(exc).__name__, exc)}


def env_kind():
    prefix = sys.prefix
    if os.path.isdir(os.path.join(prefix, "conda-meta")):
        return "conda"
    cfg = os.path.join(prefix, "pyvenv.cfg")
    if os.path.isfile(cfg):
        try:
            with open(cfg) as fh:
                text = fh.read()
        except OSError:
            text = ""
        return "uv" if re.search(r"^uv\s*=", text, re.M) else "venv"
    if getattr(sys, "base_prefix", prefix) != prefix:
        return "venv"
    return "system"


def externally_managed():
    if sys.prefix != getattr(sys, "base_prefix", sys.prefix):
        return False  # a venv is never externally managed
    stdlib = sysconfig.get_path("stdlib")
    return bool(stdlib) and os.path.isfile(os.path.join(stdlib, "EXTERNALLY-MANAGED"))


def _budget():
    """Seconds the listing may take (ENVDOCTOR_LIST_SECONDS, set by the probe below its own deadline)."""
    try:
        return float(os.environ.get("ENVDOCTOR_LIST_SECONDS") or "inf")
    except ValueError:
        return float("inf")


def _where(dist):
    path = getattr(dist, "_path", None)
    return str(path) if path is not None else "a distribution"


def main():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    cut = []  # why the lists below are partial: what could not be read
    try:
        from importlib import metadata
        dists = []
        try:
            for dist in metadata.distributions():
                dists.append(dist)
        except Exception as exc:  # a site-packages entry that cannot be listed
            cut.append("listing the installed distributions failed after %d: %s: %s" % (len(dists), type(exc).__name__, exc))
    except ImportError:  # Python < 3.8: still say which Python this is, so the doctor can say why
        dists = None

    packages = {}
    extensions = []
    wanted = set(_norm(n) for n in WATCH)
    ext_wanted = set(_norm(n) for n in EXTENSIONS)
    deadline = time.monotonic() + _budget()
    unreadable = []
    for n, dist in enumerate(dists or []):
        if time.monotonic() > deadline:
            cut.append("the listing ran out of time after %d of %d distributions" % (n, len(dists)))
            break
        try:
            name = _norm(dist.metadata["Name"] or "")
        except Exception:
            name = ""
        if not name:  # an unreadable or nameless dist-info: it could be any package
            unreadable.append(_where(dist))
            continue
        if name in wanted or name.startswith("nvidia-"):
            packages.setdefault(name, dist.version)
        if name in ext_wanted:
            files = []
            try:
                listed = dist.files or []
            except Exception:  # a malformed RECORD
                listed = []
            for f in listed:
                s = str(f)
                if s.endswith(".so") or ".so." in s or s.endswith(".pyd"):
                    try:
                        files.append(str(dist.locate_file(f)))
                    except Exception:
                        pass
            extensions.append({"name": name, "version": dist.version, "files": files[:400], "build": _build(name, dist)})
    if unreadable:
        cut.append("%d distribution(s) with unreadable metadata (%s)" % (len(unreadable), ", ".join(unreadable[:3])))
    include = sysconfig.get_paths().get("include") or ""
    out = {
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
        "prefix": sys.prefix,
        "env_kind": env_kind(),
        "externally_managed": externally_managed(),
        "packages": dict(sorted(packages.items())) if dists is not None else None,
        "python_headers": bool(include) and os.path.isfile(os.path.join(include, "Python.h")),
        "extensions": extensions,
        "packages_partial": "; ".join(cut) or None,
        "gil_disabled": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
        "pointer_bits": struct.calcsize("P") * 8,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
