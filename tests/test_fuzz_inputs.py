"""The CI tier of the fuzz harness (issue 30): a bounded number of seeded hostile inputs per family, run in-process
through `envdoctor.cli.main`. None may end in an internal error (exit 70), pass its deadline, print a planted
secret or a raw control or reordering character, or leave a crash file other users can read.
`bench/fuzz_bench.py` runs 100,000+ of the same cases and tallies them; a failing seed here is reproduced with
`python bench/fuzz_bench.py --family FAMILY --seed SEED --show`."""

from __future__ import annotations

import pytest

from tests.fuzz_cases import FAMILIES, make_case, run_case

PER_FAMILY = 24  # ~120 inputs: about 15 s on a quiet core
SEEDS = {"snapshot": 0, "nccl": 0, "index": 0, "rules": 0, "args": 0}


@pytest.mark.parametrize("family", [pytest.param(f, marks=pytest.mark.slow) if f == "rules" else f for f in FAMILIES])
def test_hostile_inputs_end_in_a_verdict_or_exit_2(family, tmp_path):
    bad = []
    for seed in range(SEEDS[family], SEEDS[family] + PER_FAMILY):
        case = make_case(family, seed)
        o = run_case(case, tmp_path / "w", deadline_s=60.0)
        problems = [name for name, hit in (("exit 70 " + o.internal, o.code == 70), ("hang", o.hang),
                                           ("leak", o.leak), ("raw escape", o.escape),
                                           ("crash file not 0600", o.crash_mode not in (None, 0o600))) if hit]
        assert o.code in (0, 1, 2, 3) or o.hang, (seed, o.code)
        if problems:
            bad.append((seed, case.argv[:4], problems))
    assert not bad, bad


def test_the_cases_are_a_function_of_their_seed():
    a, b = make_case("snapshot", 7), make_case("snapshot", 7)
    assert a.argv == b.argv and a.files == b.files
    assert make_case("nccl", 1).files != make_case("nccl", 2).files or make_case("nccl", 1).stdin != make_case("nccl", 2).stdin


def test_a_leak_is_a_whole_planted_secret_in_the_output_not_a_cut_remnant():
    from tests.fuzz_cases import CANARY, planted_values

    password = f"--password {CANARY}pw"
    # fuzz nccl/8068901: a chained secret inserted into `--password`, glued to its tail: the whole secret there is
    # `{CANARY}pwrd`, and the remnant `rd {CANARY}pw` is no secret.
    given = f"--passwoAuthorization: Bearer {CANARY}bearer {password}rd {CANARY}pw/dev/zero"
    assert sorted(planted_values(given)) == sorted([f"{CANARY}bearer", f"{CANARY}pwrd"])
    # fuzz nccl/8019547: a whole URL password and a cut `--password` no longer share a secret part
    given = f"https://fuzzuser:{CANARY}upw@mirror.example/simple --pas\u2066sword {CANARY}pw"
    assert planted_values(given) == [f"{CANARY}upw"]
    assert planted_values(f"x {password}\n") == [f"{CANARY}pw"]
