"""onnx's node test cases for the operators nnlayout imports: each one either imports, runs in
the interpreter and matches the stored outputs (1e-4 of their largest magnitude), or is refused
with a clean UserError for a reason the model itself shows (non-float32, a 3-D MaxPool's
Indices, training-mode BatchNormalization, empty tensors). Nothing is
skipped. The cases of the shape operators run folded too (every input an initializer: the
importer evaluates the graph).

`python -m nnlayout.scripts.conformance_report` prints the per-operator tally.
"""

import pytest

from nnlayout.scripts.conformance_report import (
    FOLDED_OPS,
    OPS,
    Case,
    check_case,
    collect_cases,
    expected_refusals,
)

CASES = collect_cases()


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_case_matches_or_is_refused_cleanly(case: Case) -> None:
    status, detail = check_case(case)
    assert status != "fail", detail


@pytest.mark.parametrize("op", [*OPS, *(f"{op} (folded)" for op in FOLDED_OPS)])
def test_every_operator_has_passing_cases(op: str) -> None:
    """Each supported operator is exercised by at least one case that imports and matches,
        and each folded shape operator by one that folds and matches, unless onnx ships no
        float32 case of it (Einsum's are all double or bfloat16: its own tests,
        tests/frontends/test_matmul_patterns.py, check it against onnxruntime; ReduceLogSumExp's are
        double or empty: tests/frontends/test_integer_reductions.py). Cast's converter
        takes only float32 to float32, of which the suite has no case: its folded cases count.
        The
    suite's QuantizeLinear, DequantizeLinear and QLinear* cases pass their scales as graph inputs,
    which nnlayout needs constant (tests/kernels/test_quantized_kernels.py checks those ops)."""
    if op == "ReduceLogSumExp":  # every case double or empty: test_integer_reductions.py
        return
    names = [op, f"{op} (folded)"] if op == "Cast" else [op]
    cases = [case for case in CASES if case.ops & set(names)]
    unimportable = {"float32 tensors only", "must be a constant"}
    if cases and all(unimportable & set(expected_refusals(case)) for case in cases):
        return
    passing = [case.name for case in cases if check_case(case)[0] == "pass"]
    assert passing, f"no conformance case for {op} imports and matches"
