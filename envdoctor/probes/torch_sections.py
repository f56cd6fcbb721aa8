"""What the torch child printed, as snapshot sections: torch, DeepSpeed, the packages around them.

Each line the child managed to print is used, so a child that crashed or timed out half-way still
gives what it learnt before; what it never said is unknown, with the reason."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from envdoctor.probes.base import ProbeContext, ProbeOutput
from envdoctor.probes.children_run import ChildError
from envdoctor.processes import CommandResult
from envdoctor.snapshot import (
    NOT_RECORDED,
    Companion,
    DeepSpeed,
    MappedLibrary,
    NumpyBridge,
    NvidiaWheel,
    ProbeFailed,
    RequirementConflict,
    Torch,
    TorchOrigin,
    Unavailable,
)

_FIELDS = ("version", "cuda", "hip", "cudnn", "nccl", "arch_list", "cuda_available", "device_count",
           "distributed_backends", "loaded_libraries", "cuda_init_error", "path")


def sections_from_child(ctx: ProbeContext, objects: List[Dict[str, Any]], res: CommandResult) -> ProbeOutput:
    """The torch child's lines, as the snapshot sections the torch probe owns."""
    eco = next((o["ecosystem"] for o in objects if isinstance(o.get("ecosystem"), dict)), None)
    imports = [o["import"] for o in objects if isinstance(o.get("import"), dict)]
    torch_data = next((o for o in objects if "installed" in o), None)
    ds_data = next((o["deepspeed"] for o in objects if isinstance(o.get("deepspeed"), dict)), None)
    ds_import = next((o["deepspeed_import"] for o in objects if isinstance(o.get("deepspeed_import"), dict)), None)
    if ds_data is not None and ds_import is not None:
        ds_data = {**ds_data, **ds_import}
    timed_out = bool(res.error and res.error.startswith("timed out"))
    problem = res.describe() if (res.error or res.returncode != 0) else None
    stderr_tail = " ".join(res.stderr.strip().splitlines()[-3:])[:500]
    if torch_data is None:
        if timed_out:
            # a slow import is not a broken one: torch's state is unknown, and the probe's record says why
            torch: Any = ProbeFailed(f"import torch did not finish: {res.error} (--timeout or "
                                     "ENVDOCTOR_TORCH_TIMEOUT gives it longer)")
        elif res.error or res.returncode == 0:  # the interpreter could not run, or ran but said nothing
            raise ChildError(f"{ctx.python}: {res.error or 'the torch probe printed nothing'}", res)
        else:  # died while importing torch (segfault, abort): torch is installed but broken
            torch = Torch(importable=False, error=f"{problem}{': ' + stderr_tail if stderr_tail else ''}")
        if isinstance(torch, Torch):
            add_ecosystem(torch, eco, imports, problem, res.stderr)
        sections = {"torch": torch, "deepspeed": ProbeFailed(f"not probed: {problem}"),
                    "requirement_conflicts": requirement_conflicts(eco, problem)}
        return ProbeOutput(sections, note=problem, status="timeout" if timed_out else "ok")
    torch = torch_from_child(torch_data)
    if isinstance(torch, Torch):
        add_ecosystem(torch, eco, imports, problem, res.stderr, torch_data)
    sections = {"torch": torch, "deepspeed": deepspeed_from_child(ds_data, problem),
                "requirement_conflicts": requirement_conflicts(eco, problem)}
    shared = {"extension_imports": extension_imports(eco, imports, problem, getattr(torch, "importable", False))}
    return ProbeOutput(sections, note=problem, status="timeout" if timed_out else "ok", shared=shared)


_NUMPY_ABI = "compiled using NumPy 1.x cannot be run in"


def requirement_conflicts(eco: Any, problem: Any) -> Any:
    if eco is None:
        return ProbeFailed(f"not reported: {problem or 'the torch probe printed nothing'}")
    raw = eco.get("requirement_conflicts")
    if raw is None:
        return ProbeFailed((eco.get("errors") or {}).get("requirement_conflicts")
                           or (eco.get("errors") or {}).get("distributions") or "not reported")
    return [RequirementConflict(package=str(c.get("package")), requirement=str(c.get("requirement")),
                                installed=c["installed"] if c.get("installed") is not None
                                else Unavailable("not installed"))
            for c in raw if isinstance(c, dict)]


def _eco_field(eco: Any, name: str, problem: Any) -> Any:
    """A fact from the metadata line: its value, or why it is unknown."""
    if eco is None:
        return ProbeFailed(f"not reported: {problem or 'no answer'}")
    if eco.get(name) is None:
        errors = eco.get("errors") or {}
        return ProbeFailed(errors.get(name) or errors.get("distributions") or "not reported")
    return eco[name]


def add_ecosystem(torch: Torch, eco: Any, imports: List[Dict[str, Any]], problem: Any, stderr: str,
                  data: Optional[Dict[str, Any]] = None) -> None:
    """The facts around torch: where it came from, its NumPy bridge, companions, nvidia wheels, loaded libraries."""
    origin = _eco_field(eco, "origin", problem)
    if isinstance(origin, dict):
        torch.origin = TorchOrigin(**{k: origin.get(k) if origin.get(k) is not None else Unavailable("not found")
                                      for k in ("file", "kind", "outside_site_packages", "site_packages",
                                                "dist_location")})
    elif eco is not None and "origin" in eco and not (eco.get("errors") or {}).get("origin"):
        torch.origin = Unavailable("torch cannot be found on sys.path")
    else:
        torch.origin = origin
    cwd = _eco_field(eco, "cwd_torch", problem)
    torch.cwd_torch = cwd if isinstance(cwd, str) else (
        Unavailable("no torch package in the current directory") if eco is not None and "cwd_torch" in eco
        and not (eco.get("errors") or {}).get("cwd_torch") else cwd)
    wheels = _eco_field(eco, "nvidia_wheels", problem)
    torch.nvidia_wheels = {
        name: NvidiaWheel(required=w.get("required") or Unavailable("torch does not require it"),
                          installed=w.get("installed") or Unavailable("not installed"))
        for name, w in wheels.items()} if isinstance(wheels, dict) else wheels
    comps = _eco_field(eco, "companions", problem)
    if isinstance(comps, dict):
        torch.companions = {name: _companion(name, c, imports, torch.importable, problem) for name, c in comps.items()}
    else:
        torch.companions = comps
    if data is None or not torch.importable:  # the rest needs torch loaded
        not_loaded = Unavailable("torch does not import")
        torch.cxx11_abi = torch.numpy = torch.mapped_cuda_libraries = not_loaded
        missing = (data or {}).get("missing_files")
        torch.missing_files = ProbeFailed("not reported") if missing is None else missing
        return
    errors = data.get("errors") or {}
    abi = data.get("cxx11_abi")
    torch.cxx11_abi = abi if isinstance(abi, bool) else ProbeFailed(errors.get("cxx11_abi") or "not reported")
    torch.numpy = _numpy(data.get("numpy"), errors, stderr)
    libs = data.get("mapped_cuda_libraries")
    torch.mapped_cuda_libraries = [
        MappedLibrary(path=str(lib.get("path")), **{k: lib.get(k) if lib.get(k) is not None else Unavailable(why)
                                                    for k, why in (("file_version", "no version in its file name"),
                                                                   ("dist", "not from a wheel"),
                                                                   ("dist_version", "not from a wheel"))})
        for lib in libs if isinstance(lib, dict)] if isinstance(libs, list) else ProbeFailed(
            errors.get("mapped_cuda_libraries") or "not reported")


def _numpy(raw: Any, errors: Dict[str, str], stderr: str) -> Any:
    if not isinstance(raw, dict):
        return ProbeFailed(errors.get("numpy") or "not reported")
    bridge = NumpyBridge(version=raw.get("version") or Unavailable("numpy is not installed"))
    works = raw.get("works")
    bridge.works = works if isinstance(works, bool) else Unavailable(raw.get("error") or "not tried")
    bridge.error = raw.get("error") if works is False else None
    line = next((ln.strip() for ln in stderr.splitlines() if _NUMPY_ABI in ln), None)
    if line and works is False:  # import torch printed NumPy's own diagnosis: keep it beside the failure
        bridge.error = f"{bridge.error}; {line}"
    return bridge


def _companion(name: str, raw: Dict[str, Any], imports: List[Dict[str, Any]], torch_ok: bool, problem: Any) -> Companion:
    comp = Companion(version=raw.get("version") or Unavailable("no version in its metadata"),
                     requires_torch=raw.get("requires_torch") or Unavailable("no torch requirement in its metadata"))
    errors = raw.get("errors") or {}
    comp.build_version = raw.get("build_version") or (
        ProbeFailed(str(errors["build_version"])) if "build_version" in errors else
        Unavailable(f"no __version__ in {name}/version.py"))
    result = next((i for i in imports if i.get("name") == name), None)
    if not torch_ok:
        comp.importable = comp.nms_op = Unavailable("torch does not import")
    elif result is None:
        comp.importable = ProbeFailed(f"import {name} crashed or was not reached: {problem or 'no answer'}")
        comp.nms_op = comp.importable
    elif result.get("skipped"):
        comp.importable = comp.nms_op = ProbeFailed(str(result["skipped"]))
    else:
        comp.importable = bool(result.get("importable"))
        comp.error = result.get("error")
        comp.warnings = list(result.get("warnings") or [])
        comp.nms_op = result["op_nms"] if "op_nms" in result else Unavailable("not torchvision")
    return comp


def extension_imports(eco: Any, imports: List[Dict[str, Any]], problem: Any, torch_ok: bool) -> Dict[str, Dict[str, Any]]:
    """name -> {importable, import_error} for each installed extension; merged into `extensions` by the runner."""
    out: Dict[str, Dict[str, Any]] = {}
    for name in ((eco or {}).get("extensions") or {}):
        if not torch_ok:
            out[name] = {"importable": Unavailable("torch does not import")}
            continue
        result = next((i for i in imports if i.get("name") == name and i.get("kind") == "extension"), None)
        if result is None:
            out[name] = {"importable": ProbeFailed(f"import crashed or was not reached: {problem or 'no answer'}")}
        elif result.get("skipped"):
            out[name] = {"importable": ProbeFailed(str(result["skipped"]))}
        else:
            out[name] = {"importable": bool(result.get("importable")), "import_error": result.get("error")}
    return out


def torch_from_child(data: Dict[str, Any]) -> Any:
    if not data.get("installed") and data.get("importable") is not False:  # an import that raised: it is there
        return Unavailable("torch is not installed")
    torch = Torch(importable=bool(data.get("importable")))
    if not torch.importable:
        torch.error = data.get("error") or "import failed"
        torch.version = data.get("dist_version") or ProbeFailed("no version in its metadata")
        for name in _FIELDS[1:]:
            setattr(torch, name, Unavailable("torch does not import"))
        return torch
    errors = data.get("errors") or {}
    for name in _FIELDS:
        value = data.get(name)
        if value is None and name != "cuda_init_error":
            value = ProbeFailed(errors[name]) if errors.get(name) else _why_none(name, data)
        setattr(torch, name, value)
    return torch


def _why_none(name: str, data: Dict[str, Any]) -> Any:
    """A null the child printed without an error: absent where the build explains it, else unknown."""
    if name in ("cuda", "nccl", "cudnn") and not data.get("cuda") and not data.get("hip"):
        return Unavailable("CPU build")
    if name == "hip":
        return Unavailable("not a ROCm build")
    if name == "cuda":
        return Unavailable("ROCm build")
    if name == "cudnn":
        return Unavailable("cuDNN is not available in this build")
    return ProbeFailed("not reported")


def deepspeed_from_child(data: Any, problem: Any) -> Any:
    if data is None:
        return ProbeFailed(f"DeepSpeed not probed: {problem}" if problem else "not reported")
    if not data.get("installed"):
        return Unavailable("DeepSpeed is not installed")
    ds = DeepSpeed(version=data.get("version") or ProbeFailed("no version in its metadata"))
    if "importable" in data:
        ds.importable = bool(data["importable"])
        ds.error = data.get("error")
        if "ops_error" in data:
            ds.ops_error = data["ops_error"] or Unavailable("DeepSpeed's CUDA op check passed")
    else:  # the child died while importing it
        ds.importable = False
        ds.error = f"import deepspeed crashed: {problem}"
    build = data.get("build") or {}
    ds.torch_info = build.get("torch_info") or Unavailable("no build record (installed from source?)")
    if build.get("installed_ops"):
        ds.extra["installed_ops"] = build["installed_ops"]
    ds.ops = op_states(data.get("ops"), build.get("installed_ops"))
    return ds


def op_states(compatible: Any, installed: Any) -> Any:
    """DeepSpeed's op report (what `ds_report` prints): op -> {"compatible": bool, "installed": bool or None};
    `installed` is None (unknown) without a build record. Not recorded when the import gave no report."""
    if not isinstance(compatible, dict) or not compatible:
        return ProbeFailed("DeepSpeed's op builders were not read") if compatible is not None else NOT_RECORDED
    built = installed if isinstance(installed, dict) else None
    return {str(name): {"compatible": bool(ok), "installed": (bool(built.get(name)) if built is not None else None)}
            for name, ok in sorted(compatible.items())}
