"""`fix` gathers every applicable fix of the diagnosis into steps of one plan (recorded environments): torch's own
requirements with torch held, a NumPy pin under a NumPy-1 torch, the companion of the installed torch's release and
build, an extension's release or its unsafe rebuild; --only/--skip; a step planned on one that does not run is
skipped with it; the verifier's comparison; the refusal of unsafe steps."""

from __future__ import annotations

import dataclasses

import pytest

from envdoctor.errors import InputError
from envdoctor.install.installer import HELD, build_commands, held_text
from envdoctor.usecases.apply_fix import refuse_unsafe, still_found
from envdoctor.usecases.plan_fix import FixSetup, FixWishes, plan_fix
from envdoctor.wheels.index import load_index
from envdoctor.wheels.steps import make_rebuild, make_release, select, settle
from tests.conftest import bundled_knowledge, diagnose_bundled
from tests.json_schemas import assert_valid


def _setup(tmp_path, knowledge=True) -> FixSetup:
    know = bundled_knowledge()
    return FixSetup(wheel_index=load_index, state_root=tmp_path / "state", writable_state_root=lambda: tmp_path / "state",
                    use_uv=False, knowledge=(lambda: know) if knowledge else None)


def _plan(snapshot_of, tmp_path, name, **wishes):
    result = plan_fix(snapshot_of(name), _setup(tmp_path), FixWishes(**wishes), None)
    assert_valid(result.to_json())
    return result


def _step(result, sid):
    [s] = [s for s in result.plan.steps if s.id == sid]
    return s


def test_torch_own_requirements_are_one_step_with_torch_held(snapshot_of, tmp_path):
    result = _plan(snapshot_of, tmp_path, "eco_sympy_old")
    s = _step(result, "ED503")
    assert (s.kind, s.status, s.findings, s.applicability) == ("requirements", "planned", ["ED503"], "safe")
    assert s.installs == ["sympy==1.13.1"]  # the marker dropped: the diagnosis found it applies here
    doc = result.to_json()
    assert doc["status"] == "planned" and doc["requirements"] == ["sympy==1.13.1"] and doc["packages"] == []
    [download, install] = doc["commands"]
    assert download[-1] == install[-1] == "sympy==1.13.1"
    assert "--constraint" in install and install[install.index("--constraint") + 1].endswith(HELD)


def test_without_the_rules_the_plan_is_the_torch_plan_alone(snapshot_of, tmp_path):
    result = plan_fix(snapshot_of("eco_sympy_old"), _setup(tmp_path, knowledge=False), FixWishes(), None)
    assert result.status == "nothing_to_do" and "steps" not in result.to_json()


def test_a_numpy_pin_under_a_torch_built_against_numpy_1(snapshot_of, tmp_path):
    result = _plan(snapshot_of, tmp_path, "eco_numpy2_old_torch")
    assert _step(result, "ED501").installs == ["numpy<2"]
    assert "numpy<2" in result.plan.requirements
    unexercised = _plan(snapshot_of, tmp_path, "eco_numpy2_unexercised")
    assert _step(unexercised, "ED513").installs == ["numpy<2"]


def test_the_companion_of_the_installed_release_and_build_from_the_torch_index(snapshot_of, tmp_path):
    result = _plan(snapshot_of, tmp_path, "eco_torchvision_mismatch", index_base="https://mirror.example/whl")
    s = _step(result, "ED502:torchvision")
    assert (s.kind, s.status, s.subject) == ("companion", "planned", "torchvision")
    [p] = result.plan.packages
    assert (p.name, p.variant, p.index_url) == ("torchvision", "cu124", "https://mirror.example/whl/cu124")
    assert p.pin.startswith("torchvision==0.20") and p.pin.endswith("+cu124")


def test_a_companion_of_a_torch_the_index_does_not_know_cannot_be_planned_and_says_why(snapshot_of, tmp_path):
    snap = snapshot_of("eco_torchvision_mismatch")
    snap = dataclasses.replace(snap, torch=dataclasses.replace(snap.torch, version="1.0.0+cu124"))
    result = plan_fix(snap, _setup(tmp_path), FixWishes(), None)
    steps = [s for s in result.plan.steps if s.kind == "companion"]
    assert steps and all(s.status == "cannot_plan" and "not in the wheel index" in s.why for s in steps)


def test_an_extension_gets_its_release_or_an_unsafe_rebuild(snapshot_of, tmp_path):
    result = _plan(snapshot_of, tmp_path, "eco_xformers_old_torch")
    s = _step(result, "ED508:xformers")
    assert s.kind == "extension" and s.applicability == "safe" and s.requirements == ["xformers"]
    make_release(s, "0.0.33")
    settle(result.plan)
    assert result.plan.requirements == ["xformers==0.0.33"] and not result.plan.rebuilds
    make_rebuild(s, "0.0.28", "no xformers wheel for the torch in place")
    settle(result.plan)
    assert s.applicability == "unsafe" and result.plan.rebuilds == ["xformers==0.0.28"]
    with pytest.raises(InputError) as exc:
        refuse_unsafe(result, unsafe=False)
    assert "--unsafe" in str(exc.value) and "ED508:xformers" in str(exc.value) and "nothing was changed" in str(exc.value)
    refuse_unsafe(result, unsafe=True)
    commands = build_commands(result.plan, "/v/bin/python", "/wh", None, [])
    assert commands[-1][:5] == ["/v/bin/python", "-m", "pip", "install", "--no-build-isolation"]
    assert commands[-1][-1] == "xformers==0.0.28" and "--force-reinstall" in commands[-1]


def test_only_and_skip_name_steps_or_findings(snapshot_of, tmp_path):
    both = _plan(snapshot_of, tmp_path, "eco_numpy2_old_torch")
    assert {s.id for s in both.plan.steps} == {"ED501", "ED313:triton"}
    only = _plan(snapshot_of, tmp_path, "eco_numpy2_old_torch", only=("ED501",))
    assert only.plan.requirements == ["numpy<2"] and _step(only, "ED313:triton").status == "skipped"
    skip = _plan(snapshot_of, tmp_path, "eco_numpy2_old_torch", skip=("ED501", "ED313"))
    assert skip.status == "nothing_to_do" and {s.status for s in skip.plan.steps} == {"skipped"}
    with pytest.raises(InputError) as exc:
        plan_fix(snapshot_of("eco_numpy2_old_torch"), _setup(tmp_path), FixWishes(only=("ED999",)), None)
    assert "ED999" in str(exc.value) and "ED501" in str(exc.value)


def test_a_step_planned_on_torch_does_not_run_without_it(snapshot_of, tmp_path):
    result = _plan(snapshot_of, tmp_path, "rtx5090_old_torch")
    assert result.plan.torch is not None and result.plan.steps[0].id == "torch"
    assert result.plan.steps[0].findings  # the finding the new torch answers
    skipped = _plan(snapshot_of, tmp_path, "rtx5090_old_torch", skip=("torch",))
    assert skipped.plan.torch is None and skipped.status == "nothing_to_do"
    # a step planned on torch, and one a torch change covers (torch's own requirements), go when torch goes
    plan = result.plan
    plan.steps.append(dataclasses.replace(plan.steps[0], id="ED502:torchvision", kind="companion", findings=["ED502"],
                                          depends_on=["torch"], packages=[], requirements=["torchvision==0.1"]))
    plan.steps.append(dataclasses.replace(plan.steps[0], id="ED503", kind="requirements", findings=["ED503"],
                                          depends_on=["torch"], packages=[], status="covered"))
    settle(plan)
    assert plan.requirements == ["torchvision==0.1"]
    select(plan, skip=("torch",))
    assert [s.status for s in plan.steps[1:]] == ["skipped", "skipped"]
    assert "depends on step torch" in plan.steps[1].why and plan.requirements == [] and plan.status == "nothing_to_do"


def test_the_verifier_names_each_finding_a_step_promised_to_remove(snapshot_of, tmp_path):
    result = _plan(snapshot_of, tmp_path, "eco_sympy_old")
    again = diagnose_bundled(snapshot_of("eco_sympy_old"))
    [problem] = still_found(result.plan.steps, again)
    assert problem.startswith("step ED503: ED503 is still found after the install")
    assert still_found(result.plan.steps, diagnose_bundled(snapshot_of("h200_8x_healthy"))) == []
    comp = _plan(snapshot_of, tmp_path, "eco_torchvision_mismatch")
    assert still_found(comp.plan.steps, diagnose_bundled(snapshot_of("eco_torchvision_mismatch")))


def test_held_constraints_hold_torch_at_the_planned_or_installed_version():
    assert held_text({"torch": "2.13.0+cpu", "sympy": "1.12"}, []) == "torch==2.13.0+cpu\n"
    assert held_text({"torch": "2.13.0+cpu"}, ["torch==2.14.1+cpu", "torchvision==0.29.*"]) == "torch==2.14.1+cpu\n"


def test_the_torchvision_build_is_read_from_its_version_file(snapshot_of):
    snap = snapshot_of("eco_torchvision_ok")
    tv = snap.torch.companions["torchvision"]
    torch_cpu = dataclasses.replace(snap.torch, version="2.5.1+cpu", cuda=None,
                                    companions={"torchvision": dataclasses.replace(tv, version="0.20.1",
                                                                                   build_version="0.20.1+cu124")})
    [f] = [f for f in diagnose_bundled(dataclasses.replace(snap, torch=torch_cpu)) if f.id == "ED502"]
    assert "the build, not the release, is wrong" in f.detail and "0.20.1+cu124 (torchvision/version.py)" in f.detail
    assert "CPU torch with torchvision's CPU build (+cpu)" in f.fix
    same = dataclasses.replace(torch_cpu, companions={"torchvision": dataclasses.replace(tv, version="0.20.1",
                                                                                          build_version="0.20.1+cpu")})
    assert not [f for f in diagnose_bundled(dataclasses.replace(snap, torch=same)) if f.id == "ED502"]


def test_the_companion_probe_reads_the_build_from_the_package_version_file(tmp_path):
    from importlib import metadata

    from envdoctor.probes.children import torch_ecosystem as eco

    (tmp_path / "torchvision").mkdir()
    (tmp_path / "torchvision" / "version.py").write_text("__version__ = '0.28.0+cu130'\ngit_version = 'abc'\n")
    di = tmp_path / "torchvision-0.28.0.dist-info"
    di.mkdir()
    (di / "METADATA").write_text("Metadata-Version: 2.1\nName: torchvision\nVersion: 0.28.0\nRequires-Dist: torch (==2.13.0)\n")
    (di / "RECORD").write_text("torchvision/version.py,,\ntorchvision-0.28.0.dist-info/METADATA,,\n")
    dist = eco.Headers(metadata.PathDistribution(di))
    [(name, item)] = eco.companions({"torchvision": dist}).items()
    assert (name, item["version"], item["build_version"]) == ("torchvision", "0.28.0", "0.28.0+cu130")
    (di / "RECORD").write_text("torchvision-0.28.0.dist-info/METADATA,,\n")  # no version file: nothing to read
    assert eco.companions({"torchvision": eco.Headers(metadata.PathDistribution(di))})["torchvision"]["build_version"] is None


def test_apply_fix_hands_the_installer_a_fresh_check_of_what_each_step_promised(snapshot_of, tmp_path, monkeypatch):
    from envdoctor.install import installer
    from envdoctor.install.installer import Outcome
    from envdoctor.usecases.apply_fix import apply_fix

    snap = snapshot_of("eco_sympy_old")
    probed = []
    setup = dataclasses.replace(_setup(tmp_path), probe=lambda python: probed.append(python) or snap)
    planned = dataclasses.replace(plan_fix(snap, setup, FixWishes(), None), python="/envs/x/bin/python")
    heard = []

    def execute(plan, python, ccs, progress, state_root, use_uv, break_system_packages=False, live=None, promised=None):
        heard.append(promised())  # the installer asks after its own verification, inside the transaction
        return Outcome("rolled_back", "verification failed: " + "; ".join(heard[0]), rollback_ok=True)

    monkeypatch.setattr(installer, "execute", execute)
    result = apply_fix(planned, setup, print)
    assert probed == ["/envs/x/bin/python"]  # the target interpreter, probed again
    assert heard[0] and heard[0][0].startswith("step ED503: ED503 is still found after the install")
    assert result.exit_code() == 3


def test_a_companion_of_a_torch_whose_build_is_unknown_cannot_be_planned_and_the_rest_runs(snapshot_of, tmp_path):
    """torch 2.5.1 without a local label (PyPI's Linux wheels carry none) and torch.version.cuda unread: a CPU or a
    CUDA build. The companion step says so and how to find out, instead of planning +cpu; the torch in place is
    not replaced on that guess; torch's own requirements still run."""
    from envdoctor.snapshot import ProbeFailed

    snap = snapshot_of("eco_torchvision_mismatch")
    snap = dataclasses.replace(snap, torch=dataclasses.replace(snap.torch, version="2.5.1",
                                                               cuda=ProbeFailed("torch.version.cuda raised")),
                               requirement_conflicts=snapshot_of("eco_sympy_old").requirement_conflicts)
    result = plan_fix(snap, _setup(tmp_path), FixWishes(), None)
    assert_valid(result.to_json())
    assert result.plan.torch is None
    [comp] = [s for s in result.plan.steps if s.kind == "companion"]
    assert comp.status == "cannot_plan" and not comp.installs
    assert comp.why.startswith("torch's build variant is unknown") and "torch.version.cuda" in comp.why
    assert "torch.version.cuda raised" in comp.why and "print(torch.version.cuda)" in comp.why
    assert not [p for p in result.plan.packages if p.name == "torchvision"]
    assert _step(result, "ED503").status == "planned" and result.plan.requirements == ["sympy==1.13.1"]
    # read from torch itself, the same version is a known build: a CUDA 12.4 one
    known = dataclasses.replace(snap, torch=dataclasses.replace(snap.torch, cuda="12.4"))
    [p] = plan_fix(known, _setup(tmp_path), FixWishes(), None).plan.packages
    assert (p.name, p.variant) == ("torchvision", "cu124")


def test_the_nvidia_wheels_torch_pins_are_a_requirements_step_with_torch_held(snapshot_of, tmp_path):
    """ED507: torch's own Requires-Dist pins nvidia-nccl-cu12==2.21.5 (read from its installed metadata), 2.26.2
    is installed: pip's resolver installs the pin with torch held by the constraints file, like sympy/networkx."""
    result = _plan(snapshot_of, tmp_path, "eco_nccl_wheel_mismatch")
    s = _step(result, "ED507")
    assert (s.kind, s.status, s.findings, s.applicability) == ("requirements", "planned", ["ED507"], "safe")
    assert s.installs == ["nvidia-nccl-cu12==2.21.5"]  # torch's pin, its marker dropped
    assert result.plan.torch is None and result.plan.requirements == ["nvidia-nccl-cu12==2.21.5"]
    install = result.plan.commands[-1]
    assert install[-1] == "nvidia-nccl-cu12==2.21.5" and install[install.index("--constraint") + 1].endswith(HELD)


def test_a_missing_nvidia_wheel_torch_pins_is_found_and_installed(snapshot_of, tmp_path):
    from envdoctor.snapshot import NvidiaWheel, ProbeFailed, Unavailable

    snap = snapshot_of("eco_nccl_wheel_mismatch")
    [(name, w)] = snap.torch.nvidia_wheels.items()
    gone = dataclasses.replace(snap, torch=dataclasses.replace(
        snap.torch, nvidia_wheels={name: NvidiaWheel(required=w.required, installed=Unavailable("not installed"))}))
    [f] = [f for f in diagnose_bundled(gone) if f.id == "ED507"]
    assert "nvidia-nccl-cu12 is not installed, torch requires ==2.21.5" in f.detail
    result = plan_fix(gone, _setup(tmp_path), FixWishes(), None)
    assert _step(result, "ED507").status == "planned" and result.plan.requirements == ["nvidia-nccl-cu12==2.21.5"]
    unknown = dataclasses.replace(snap, torch=dataclasses.replace(
        snap.torch, nvidia_wheels={name: NvidiaWheel(required=w.required, installed=ProbeFailed("not read"))}))
    assert not [f for f in diagnose_bundled(unknown) if f.id == "ED507"]  # unknown is not missing


def test_a_cuda_library_loaded_from_outside_the_wheels_is_no_step_pip_can_run(snapshot_of, tmp_path):
    """ED507 also fires for a system libnccl loaded instead of torch's wheel: installing wheels cannot change what
    the loader finds first, so its step cannot be planned and says why; nothing is installed for it."""
    from envdoctor.snapshot import MappedLibrary, NvidiaWheel, Unavailable

    snap = snapshot_of("eco_nccl_wheel_mismatch")
    [(name, w)] = snap.torch.nvidia_wheels.items()
    system = MappedLibrary(path="/usr/lib/x86_64-linux-gnu/libnccl.so.2.26.2", file_version="2.26.2",
                           dist=Unavailable("not from a wheel"), dist_version=Unavailable("not from a wheel"))
    loader = dataclasses.replace(snap, torch=dataclasses.replace(
        snap.torch, nvidia_wheels={name: NvidiaWheel(required=w.required, installed="2.21.5")},
        mapped_cuda_libraries=[system]))
    [f] = [f for f in diagnose_bundled(loader) if f.id == "ED507"]
    assert "is loaded instead of nvidia-nccl-cu12 2.21.5" in f.detail and f.remedy.requirements == ()
    result = plan_fix(loader, _setup(tmp_path), FixWishes(), None)
    s = _step(result, "ED507")
    assert s.status == "cannot_plan" and "loader path" in s.why and result.plan.requirements == []


def _with_conflicts(snap, *conflicts):
    from envdoctor.snapshot import RequirementConflict

    return dataclasses.replace(snap, requirement_conflicts=[RequirementConflict(package=p, requirement=r, installed=i)
                                                     for p, r, i in conflicts])


def test_triton_comes_from_the_index_torch_came_from(snapshot_of, tmp_path):
    """ED313: torch 2.5.1+cu124 with Triton 3.3.1; torch 2.5 pins 3.1. The step installs the exact pin the wheel
    index read from torch's metadata, from the torch index of its build (the mirror of --index-base), not from
    the user's own index as a bare requirement."""
    result = _plan(snapshot_of, tmp_path, "triton_mismatch", index_base="https://mirror.example/whl")
    s = _step(result, "ED313:triton")
    assert (s.kind, s.status, s.subject, s.installs) == ("companion", "planned", "triton", ["triton==3.1.0"])
    [p] = result.plan.packages
    assert (p.name, p.pin, p.index_url) == ("triton", "triton==3.1.0", "https://mirror.example/whl/cu124")
    assert p.status == "verified"  # one exact release, read from torch's wheel
    assert result.plan.requirements == []
    [download, _install] = result.plan.commands
    assert download[download.index("--extra-index-url") + 1] == "https://mirror.example/whl/cu124"
    # torch 2.14 pins triton~=3.8.0 (the wheel index read it): the pin pip and the constraints files read, 3.8.*
    snap = snapshot_of("triton_mismatch")
    newer = dataclasses.replace(snap, torch=dataclasses.replace(snap.torch, version="2.14.1+cu126", cuda="12.6"))
    [p] = plan_fix(newer, _setup(tmp_path), FixWishes(), None).plan.packages
    assert (p.pin, p.index_url) == ("triton==3.8.*", "https://download.pytorch.org/whl/cu126")
    assert p.status == "UNVERIFIED"  # a series, not one release


def test_a_missing_triton_is_installed_at_torchs_pin_or_said_unplannable(snapshot_of, tmp_path):
    """ED310: torch 2.5.1+cu124 and no Triton at all. The step installs the Triton torch 2.5.1 pins (the wheel index
    read triton==3.1.0 from its metadata) from the index of its build; for a torch release triton_pins.json does not
    know, the finding stays and its step says it cannot be planned, and why."""
    result = _plan(snapshot_of, tmp_path, "h100_no_triton", index_base="https://mirror.example/whl")
    s = _step(result, "ED310:triton")
    assert (s.kind, s.status, s.applicability, s.installs) == ("companion", "planned", "safe", ["triton==3.1.0"])
    assert [(p.pin, p.index_url) for p in result.plan.packages] == [("triton==3.1.0", "https://mirror.example/whl/cu124")]
    snap = snapshot_of("h100_no_triton")
    unknown = dataclasses.replace(snap, torch=dataclasses.replace(snap.torch, version="2.11.0+cu128", cuda="12.8"))
    assert "ED310" in {f.id for f in diagnose_bundled(unknown)}
    s = _step(plan_fix(unknown, _setup(tmp_path), FixWishes(), None), "ED310:triton")
    assert s.status == "cannot_plan" and "which Triton torch 2.11.0+cu128 pins is unknown" in s.why


def test_ninja_for_deepspeed_is_a_step_that_a_new_torch_does_not_cover(snapshot_of, tmp_path):
    """ED307 (DeepSpeed without ninja): ninja through pip's resolver with torch held. A new torch brings its own
    requirements, not ninja: with a torch step the ninja step still runs, after it."""
    result = _plan(snapshot_of, tmp_path, "a100_sxm_shadowed_cudnn")
    s = _step(result, "ED307")
    assert (s.kind, s.status, s.applicability, s.installs, s.depends_on) == ("requirements", "planned", "safe",
                                                                             ["ninja"], [])
    assert result.plan.requirements == ["ninja"]
    moved = _plan(snapshot_of, tmp_path, "a100_sxm_shadowed_cudnn", torch="2.5.1")
    assert moved.plan.torch is not None
    s = _step(moved, "ED307")
    assert (s.status, s.depends_on) == ("planned", ["torch"]) and "ninja" in moved.plan.requirements


def _rule_fixture_at(rule_id: str, n: int = 0):
    """The n-th snapshot a rule's own fixtures say it fires on (a derived one in the rule file, as written there)."""
    from envdoctor.rules.registry import load_rules
    from tests.rules.test_rules_fixtures import fixture_snapshot

    [rule] = [r for r in load_rules() if r.id == rule_id]
    return fixture_snapshot(rule.fixtures["fires"][n])


@pytest.mark.parametrize("rule_id,step_id,installs", [
    ("ED517", "ED517", ["bitsandbytes>=0.43.0"]),  # bitsandbytes before Windows CUDA binaries
    ("ED318", "ED318:triton-windows", ["triton-windows==3.2.*"]),  # torch 2.6 on Windows pins Triton 3.2
])
def test_windows_installs_are_steps_through_the_users_index_with_torch_held(tmp_path, rule_id, step_id, installs):
    snap = _rule_fixture_at(rule_id)
    result = plan_fix(snap, _setup(tmp_path), FixWishes(), None)
    assert_valid(result.to_json())
    s = _step(result, step_id)
    assert (s.status, s.applicability, s.installs) == ("planned", "safe", installs)
    assert result.plan.requirements == installs and result.plan.packages == []


def test_an_extension_of_the_other_abi_gets_the_release_file_of_pytorchs(tmp_path):
    """ED518: flash-attn built cxx11abiFALSE beside torch 2.7.1+cu126, whose own ABI was not read; PyTorch's binaries
    of 2.7 use the new ABI (torch_cxx11_abi.json), so the step installs the file built for it (a file is found
    before any index is asked: no interpreter runs here)."""
    from envdoctor.usecases.plan_fix import choose_extension_builds

    snap = _rule_fixture_at("ED518", 1)
    result = plan_fix(snap, _setup(tmp_path), FixWishes(), None)
    choose_extension_builds(result.plan, "/nonexistent/bin/python", snap, bundled_knowledge().tables)
    s = _step(result, "ED518:flash-attn")
    assert (s.kind, s.status, s.applicability) == ("extension", "planned", "safe")
    assert s.installs == ["https://github.com/Dao-AILab/flash-attention/releases/download/v2.8.3/"
                          "flash_attn-2.8.3+cu12torch2.7cxx11abiTRUE-cp310-cp310-linux_x86_64.whl"]


def test_an_extension_without_kernels_for_the_gpu_is_an_unsafe_rebuild_for_its_compute_capability(snapshot_of, tmp_path):
    """ED309: an extension without sm_120 kernels on an RTX 5090, no release known to have them: the step rebuilds
    the installed release from source (--no-binary: not its wheel again) with TORCH_CUDA_ARCH_LIST set to the GPUs'
    compute capabilities, after the torch step; unsafe, so refused without --unsafe. flash-attn's build picks its
    kernels itself (TORCH_CUDA_ARCH_LIST does nothing there): its step cannot be planned, and says why."""
    result = _plan(snapshot_of, tmp_path, "rtx5090_flash_attn")
    s = _step(result, "ED309:flash-attn")
    assert s.status == "cannot_plan" and "chooses its kernels itself" in s.why
    snap = snapshot_of("rtx5090_flash_attn")
    snap.extensions[0].name, snap.extensions[0].version = "xformers", "0.0.28"
    result = plan_fix(snap, _setup(tmp_path), FixWishes(), None)
    s = _step(result, "ED309:xformers")
    assert (s.kind, s.status, s.applicability, s.rebuilds, s.depends_on) == ("extension", "planned", "unsafe",
                                                                             ["xformers==0.0.28"], ["torch"])
    assert result.plan.env["TORCH_CUDA_ARCH_LIST"] == "12.0"
    [rebuild] = [c for c in result.plan.commands if "xformers==0.0.28" in c]
    assert rebuild[rebuild.index("--no-binary") + 1] == "xformers" and "--no-build-isolation" in rebuild
    with pytest.raises(InputError, match="ED309:xformers"):
        refuse_unsafe(result, unsafe=False)


def test_torch_own_triton_pin_names_the_package_and_the_rest_waits_for_it(snapshot_of, tmp_path):
    """torch's installed metadata pins pytorch-triton (the older CUDA builds on the PyTorch index do): that name and
    version, from torch's index; the requirements step of the same finding installs the rest and depends on it."""
    from envdoctor.snapshot import Unavailable

    snap = _with_conflicts(snapshot_of("triton_mismatch"),
                           ("torch", 'pytorch-triton==3.1.0+cf34004b8a; platform_system == "Linux"',
                            Unavailable("not installed")),
                           ("torch", 'sympy==1.13.1; python_version >= "3.9"', "1.12"))
    result = plan_fix(snap, _setup(tmp_path), FixWishes(), None)
    assert_valid(result.to_json())
    tri = _step(result, "ED313:triton")
    assert tri.status == "planned" and tri.installs == ["pytorch-triton==3.1.0+cf34004b8a"]
    [p] = result.plan.packages
    assert (p.name, p.index_url) == ("pytorch-triton", "https://download.pytorch.org/whl/cu124")
    req = _step(result, "ED503")
    assert req.installs == ["sympy==1.13.1"] and req.depends_on == ["ED313:triton"]
    assert result.plan.requirements == ["sympy==1.13.1"]
    # torch's build unknown: the Triton step cannot be planned; sympy does not need Triton, so it still runs,
    # without the Triton pin (which the user's own index would not have in torch's build)
    from envdoctor.snapshot import ProbeFailed

    blind = dataclasses.replace(snap, torch=dataclasses.replace(snap.torch, version="2.5.1",
                                                                cuda=ProbeFailed("torch.version.cuda raised")))
    result = plan_fix(blind, _setup(tmp_path), FixWishes(), None)
    tri = _step(result, "ED503:triton")  # ED313 needs torch's CUDA: the Triton pin comes from ED503 alone
    assert tri.status == "cannot_plan" and tri.why.startswith("torch's build variant is unknown")
    req = _step(result, "ED503")
    assert req.status == "planned" and req.installs == ["sympy==1.13.1"] and "ED503:triton" not in req.depends_on
    assert result.plan.requirements == ["sympy==1.13.1"]
