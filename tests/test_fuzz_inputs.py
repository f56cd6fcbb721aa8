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
    from tests.fuzz_cases import CANARY, judged_parts, leaked_from

    password = f"--password {CANARY}pw"
    # fuzz nccl/8068901: a chained secret inserted into `--password`, glued to its tail: the whole secret there is
    # `{CANARY}pwrd` (redacted), and the remnant `rd {CANARY}pw` is no secret, but holds the same value
    given = f"--passwoAuthorization: Bearer {CANARY}bearer {password}rd {CANARY}pw/dev/zero"
    assert judged_parts(given) == [f"{CANARY}bearer"]
    assert not leaked_from(given, f"--passwoAuthorization: Bearer <redacted> <redacted> {CANARY}pw/dev/zero")
    assert leaked_from(given, f"Bearer {CANARY}bearer")
    # fuzz nccl/8019547: a whole, redacted secret and a cut copy of the same value
    given = f"{password} --pas\u2066sword {CANARY}pw"
    assert judged_parts(given) == [] and not leaked_from(given, f"<redacted> --pas\u2066sword {CANARY}pw")
    # a whole secret whose value goes on, printed cut short or JSON-escaped, is a leak
    given = f"x {password}" + "x" * 20000
    assert leaked_from(given, f"x --password {CANARY}pw" + "x" * 280 + "...")
    given = f"{password}\u0661\u0662.\u0660"
    assert leaked_from(given, '{"evidence": "--password ' + CANARY + 'pw\\u0661\\u0662.\\u0660"}')
    assert not leaked_from(given, '{"evidence": "--password <redacted>"}')


@pytest.mark.parametrize("seed", [8019547, 8068901])
def test_the_harness_counts_no_leak_in_what_it_cut_apart_itself(seed, tmp_path):
    from tests.fuzz_cases import make_case, run_case

    out = run_case(make_case("nccl", seed), tmp_path / "w")
    assert not out.leak and out.code in (0, 1, 2), out


def test_a_secret_in_utf16_without_a_byte_order_mark_is_judged():
    from tests.fuzz_cases import CANARY, Case, _input_text, judged_parts

    case = Case("nccl", 0, ["nccl", "diagnose", "r0.log"], files={"r0.log": f"NCCL WARN x --password {CANARY}pw\n"
                                                                            .encode("utf-16-le")})
    assert judged_parts(_input_text(case)) == [f"{CANARY}pw"]
