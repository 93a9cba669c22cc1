"""The ONNX node cases that import and match (tests/frontends/test_onnx_conformance.py) keep matching
their stored outputs after the whole default pipeline — dispatch, layouts, propagation,
weight packing, bufferization (halos, in-place concats) — for the blocked targets with
channel padding on and off, and for the reference target.

The cases that import are those with no expected refusal (`expected_refusals`, decided from the
model alone, which test_onnx_conformance holds the importer to), so that collecting this module
runs no case. The default tier runs a representative subset on all three pipelines: the first
case of each set of operators, every case of a windowed operator (convolutions and pooling:
strides, dilations, pads, auto_pad and ceil_mode meet channel padding and halos there) and one
folded case; the full tier (--runslow) all of them.
"""

import pytest

from nnlayout.scripts.conformance_report import (
    Case,
    collect_cases,
    expected_refusals,
    import_and_run,
    mismatch,
    tolerance,
)

PASSING = [case for case in collect_cases() if not expected_refusals(case)]
PIPELINES = [
    "default-pipeline{target=avx512}",
    "default-pipeline{target=avx2 padding=false}",
    "default-pipeline{target=ref}",
]
WINDOWED = {"Conv", "ConvTranspose", "MaxPool", "AveragePool"}


def representative(cases: list[Case]) -> set[str]:
    """The names of the default tier's cases (module doc)."""
    names: set[str] = set()
    seen: set[tuple[bool, frozenset[str]]] = set()
    for case in cases:
        key = (case.folded, frozenset() if case.folded else frozenset(case.ops))
        if key not in seen or (not case.folded and case.ops & WINDOWED):
            names.add(case.name)
        seen.add(key)
    return names


DEFAULT_TIER = representative(PASSING)
CASES = [
    pytest.param(case, id=case.name, marks=() if case.name in DEFAULT_TIER else pytest.mark.slow)
    for case in PASSING
]


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("case", CASES)
def test_case_survives_the_default_pipeline(case: Case, pipeline: str) -> None:
    ours = import_and_run(case, pipeline)
    problem = mismatch(ours, case.outputs, tolerance(case))
    assert problem is None, problem


def test_the_default_tier_covers_every_operator() -> None:
    """Every operator a passing case brings to the pipeline (its folded cases bring none:
    the importer folds them away) is in some case of the default tier."""
    chosen = [case for case in PASSING if case.name in DEFAULT_TIER]
    every = {op for case in PASSING if not case.folded for op in case.ops}
    assert every == {op for case in chosen if not case.folded for op in case.ops}
    assert len(chosen) < len(PASSING) / 3
