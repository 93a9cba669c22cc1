"""Differential testing of the whole compiler on random valid programs: for each program that
`tests/random_programs.py` draws, `default-pipeline{target=T padding=P}` for every target
(ref, avx2, avx512) and padding setting must give the unoptimised interpreter's results (within
1e-4 of the output's largest magnitude; NaN and Inf exactly where they were).

The default tier runs a small fixed, derandomized sample (SMOKE_EXAMPLES programs, one of them
through the generated modules too); the full tier (pytest --runslow, CI) a larger one
(EXAMPLES, GENERATED_EXAMPLES); `python -m nnlayout.scripts.fuzz_programs --count 2000
[--generated]` runs thousands. Programs that once failed are kept in `tests/fuzz_regressions/` (one file each,
a comment saying what went wrong) and checked on plain and on NaN/Inf inputs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nnlayout.tests.random_programs import check_program, random_programs

EXAMPLES = 100
GENERATED_EXAMPLES = 15  # each also through its generated modules: 2.4x the time
SMOKE_EXAMPLES = 6  # the default tier's sample (its own, derandomized by the test's name)
REGRESSIONS = sorted((Path(__file__).parent / "fuzz_regressions").glob("*.mlir"))


@settings(
    max_examples=SMOKE_EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(random_programs(), st.booleans())
def test_a_few_random_programs_keep_results(text: str, nan_and_inf: bool) -> None:
    check_program(text, nan_and_inf=nan_and_inf, generated=nan_and_inf)


@pytest.mark.slow
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(random_programs(), st.booleans())
def test_default_pipeline_keeps_results(text: str, nan_and_inf: bool) -> None:
    check_program(text, nan_and_inf=nan_and_inf)


@pytest.mark.slow
@settings(
    max_examples=GENERATED_EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(random_programs(), st.booleans())
def test_generated_modules_keep_results(text: str, nan_and_inf: bool) -> None:
    check_program(text, nan_and_inf=nan_and_inf, generated=True)


@pytest.mark.parametrize("path", REGRESSIONS, ids=lambda p: p.stem)
def test_fuzz_regressions(path: Path) -> None:
    for nan_and_inf in (False, True):
        check_program(path.read_text(), nan_and_inf=nan_and_inf, generated=True)
