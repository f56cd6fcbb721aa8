"""Describe the target environment for the installer; prints one JSON object. Stdlib only, Python 3.8+.

Every installed distribution with its version and files (from RECORD, as absolute paths), the
install directories, PEP 668 status and whether pip is importable.
"""
import json
import os
import re
import sys
import sysconfig


def _norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def externally_managed():
    if sys.prefix != getattr(sys, "base_prefix", sys.prefix):
        return False
    stdlib = sysconfig.get_path("stdlib")
    return bool(stdlib) and os.path.isfile(os.path.join(stdlib, "EXTERNALLY-MANAGED"))


def main():
    import importlib.util
    from importlib import metadata

    with_files = "--files" in sys.argv
    dists = []
    seen = set()
    for dist in metadata.distributions():
        try:
            name = dist.metadata["Name"] or ""
        except Exception:
            continue
        key = _norm(name)
        if not key or key in seen:  # the first on sys.path wins, as for pip
            continue
        seen.add(key)
        entry = {"name": key, "display": name, "version": dist.version}
        if with_files:
            files = []
            for f in dist.files or []:
                try:
                    files.append(os.path.normpath(str(dist.locate_file(f))))
                except Exception:
                    pass
            entry["files"] = files
            path = getattr(dist, "_path", None)
            entry["dist_info"] = str(path) if path else None
        dists.append(entry)
    paths = sysconfig.get_paths()
    out = {
        "python": "%d.%d" % sys.version_info[:2],
        "executable": sys.executable,
        "prefix": sys.prefix,
        "paths": {k: paths.get(k) for k in ("purelib", "platlib", "scripts", "data")},
        "externally_managed": externally_managed(),
        "has_pip": importlib.util.find_spec("pip") is not None,
        "dists": sorted(dists, key=lambda d: d["name"]),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
