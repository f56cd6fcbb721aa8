"""Check a fresh torch install from inside the target interpreter; prints one JSON object.

argv[1]: JSON {"torch": "2.9.1+cu128", "cuda": "12.8" or null, "ccs": ["9.0"], "packages": {"name": "version"}}.
Stdlib only besides the torch under test, Python 3.8+.
"""
import json
import sys


def _covers(archs, cc):
    major, minor = (int(x) for x in cc.split("."))
    for a in archs:
        kind, _, digits = a.partition("_")
        digits = digits.rstrip("af")
        if not digits.isdigit() or len(digits) < 2:
            continue
        ma, mi = int(digits[:-1]), int(digits[-1])
        if kind == "sm" and ma == major and mi <= minor and not a.endswith("a"):
            return True
        if kind == "sm" and a.endswith("a") and (ma, mi) == (major, minor):
            return True
        if kind == "compute" and (ma, mi) <= (major, minor):
            return True
    return False


def main():
    want = json.loads(sys.argv[1])
    problems = []
    out = {"problems": problems}
    from importlib import metadata

    for name, version in sorted((want.get("packages") or {}).items()):
        try:
            got = metadata.version(name)
        except Exception:
            got = None
        if got != version:
            problems.append("%s: installed %s, planned %s" % (name, got, version))
    try:
        import torch
    except BaseException as exc:
        problems.append("import torch failed: %s: %s" % (type(exc).__name__, exc))
        print(json.dumps(out))
        return
    out["version"] = str(torch.__version__)
    out["cuda"] = getattr(torch.version, "cuda", None)
    if want.get("torch") and out["version"] != want["torch"] and out["version"].split("+")[0] != want["torch"]:
        problems.append("torch.__version__ is %s, planned %s" % (out["version"], want["torch"]))
    if (want.get("cuda") or None) != (out["cuda"] or None):
        problems.append("torch.version.cuda is %s, planned %s" % (out["cuda"], want.get("cuda")))
    ccs = want.get("ccs") or []
    if ccs:
        try:
            archs = list(torch.cuda.get_arch_list())
        except Exception as exc:
            archs = []
            problems.append("torch.cuda.get_arch_list() failed: %s" % exc)
        out["arch_list"] = archs
        for cc in ccs:
            if not _covers(archs, cc):
                problems.append("no kernels for compute capability %s in %s" % (cc, archs))
        try:
            if not torch.cuda.is_available():
                problems.append("torch.cuda.is_available() is False")
            else:
                x = torch.ones(4, device="cuda") * 2
                if float(x.sum().item()) != 8.0:
                    problems.append("a tiny CUDA op gave a wrong result")
        except Exception as exc:
            problems.append("a tiny CUDA op failed: %s: %s" % (type(exc).__name__, exc))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
