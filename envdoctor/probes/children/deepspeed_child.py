"""Describe DeepSpeed in the target interpreter (run by torch_child.py after torch). Stdlib only, 3.8+.

Its build record (`git_version_info_installed.py`: prebuilt ops, the torch it was built with) is
read with `ast.literal_eval` before the import, so a DeepSpeed that fails to import still tells it.
"""
import ast
import json
import os


def build_record():
    try:
        import importlib.util
        spec = importlib.util.find_spec("deepspeed")
    except Exception:
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for base in spec.submodule_search_locations:
        path = os.path.join(base, "git_version_info_installed.py")
        if not os.path.isfile(path):
            continue
        try:
            with open(path) as fh:
                tree = ast.parse(fh.read())
        except (OSError, SyntaxError, ValueError):
            return None
        out = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                try:
                    out[node.targets[0].id] = ast.literal_eval(node.value)
                except ValueError:
                    pass
        return out
    return None


def describe(try_import_it=True):
    try:
        from importlib import metadata
        version = metadata.version("deepspeed")
    except Exception:
        return {"installed": False}
    out = {"installed": True, "version": version, "build": build_record()}
    if try_import_it:
        out.update(try_import())
    return out


def try_import():
    try:
        import deepspeed  # noqa: F401
    except BaseException as exc:
        return {"importable": False, "error": "%s: %s" % (type(exc).__name__, exc)}
    out = {"importable": True}
    out.update(ops_check())
    out.update(op_report())
    return out


def op_report():
    """What `ds_report` lists: every op of this accelerator's builders and whether it can be built here
    (`is_compatible`); an op whose check raises is left out of the report (unknown). Its prints go to stderr."""
    import contextlib
    import sys
    try:
        from deepspeed.ops.op_builder.all_ops import ALL_OPS
    except BaseException:
        return {}
    ops = {}
    with contextlib.redirect_stdout(sys.stderr):
        for name, builder in sorted(ALL_OPS.items()):
            try:
                ops[str(name)] = bool(builder.is_compatible(verbose=False))
            except BaseException:
                continue
    return {"ops": ops}


def ops_check():
    """DeepSpeed's own precondition for building CUDA ops (what `ds_report` trips on): a CUDA toolkit."""
    try:
        from deepspeed.accelerator import get_accelerator
        if getattr(get_accelerator(), "_name", None) != "cuda":
            return {}
        from deepspeed.ops.op_builder.builder import installed_cuda_version
    except BaseException:
        return {}
    try:
        installed_cuda_version()
    except BaseException as exc:
        return {"ops_error": "%s: %s" % (type(exc).__name__, exc)}
    return {"ops_error": None}


def main():
    print(json.dumps(describe(), default=str))


if __name__ == "__main__":
    main()
