"""The ONNX node cases that import and match (tests/frontends/test_onnx_conformance.py) keep matching
their stored outputs after the whole default pipeline — dispatch, layouts, propagation,
weight packing, bufferization (halos, in-place concats) — for the blocked targets with
channel padding on and off, and for the reference target."""

import pytest

from nnlayout.scripts.conformance_report import (
    Case,
    check_case,
    collect_cases,
    import_and_run,
    mismatch,
    tolerance,
)

PASSING = [case for case in collect_cases() if check_case(case)[0] == "pass"]
PIPELINES = [
    "default-pipeline{target=avx512}",
    "default-pipeline{target=avx2 padding=false}",
    "default-pipeline{target=ref}",
]


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("case", PASSING, ids=[case.name for case in PASSING])
def test_case_survives_the_default_pipeline(case: Case, pipeline: str) -> None:
    ours = import_and_run(case, pipeline)
    problem = mismatch(ours, case.outputs, tolerance(case))
    assert problem is None, problem
