"""ONNX node conformance: onnx's own backend test cases, imported and run in the interpreter.

    python -m nnlayout.scripts.conformance_report        # prints a per-operator table
    python -m nnlayout.scripts.conformance_report -v     # ... and why each refused case is

The cases come from `onnx.backend.test.case.node.collect_testcases()` (about 15 s to build,
cached per process). In scope are the cases made only of operators the importer supports. Each
case is either expected to import and match the stored outputs, or expected to be refused
with a clean `UserError` for a reason decided here, independently of the importer, from the
model itself (`expected_refusals`): non-float32 tensors, 3-D windows, MaxPool's Indices output,
Dropout's mask output, training-mode BatchNormalization, empty tensors. The pytest suite
(`tests/frontends/test_onnx_conformance.py`) asserts exactly that for every case; this script
tallies it.

Inputs that nn needs at compile time (Reshape's shape, Clip's bounds) are graph inputs in these
cases; `freeze_constant_inputs` turns them into initializers with the case's values first.
"""

from __future__ import annotations

import argparse
import functools
import io
import sys
import warnings
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

from nnlayout.diagnostics import UserError
from nnlayout.frontends.onnx import SUPPORTED_OPS, import_model
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.ir.printer import print_module
from nnlayout.runtime.interpreter import run_function
from nnlayout.tools.driver import parse_pipeline, run_pipeline
from nnlayout.transforms import get_all_passes

#: Operators the tally reports (Constant only feeds the others).
OPS = sorted(SUPPORTED_OPS - {"Constant"})
#: |ours - expected| <= RELATIVE_TOLERANCE * max|expected| (or ABSOLUTE_FLOOR near zero).
RELATIVE_TOLERANCE = 1e-4
ABSOLUTE_FLOOR = 1e-6
#: Cases whose stored outputs are rounded (to 4 decimals): their own relative tolerance.
_ROUNDED_REFERENCE = {"test_averagepool_2d_ceil_last_window_starts_on_pad": 5e-4}
#: Inputs nn takes as compile-time values: operator -> input positions.
_COMPILE_TIME_INPUTS = {"Reshape": (1,), "Clip": (1, 2), "Pow": (1,)}


@dataclass(frozen=True, eq=False)
class Case:
    """One data set of an ONNX node test case, ready to import."""

    name: str
    model: onnx.ModelProto
    inputs: tuple[np.ndarray, ...]
    outputs: tuple[np.ndarray, ...]

    @property
    def ops(self) -> frozenset[str]:
        return frozenset(node.op_type for node in self.model.graph.node) & set(OPS)


def _array(value: object) -> np.ndarray:
    return numpy_helper.to_array(value) if isinstance(value, TensorProto) else np.asarray(value)


def freeze_constant_inputs(
    model: onnx.ModelProto, inputs: Sequence[np.ndarray]
) -> tuple[onnx.ModelProto, tuple[np.ndarray, ...]]:
    """Moves graph inputs used as compile-time operands into initializers."""
    frozen = {
        node.input[i]
        for node in model.graph.node
        for i in _COMPILE_TIME_INPUTS.get(node.op_type, ())
        if len(node.input) > i and node.input[i]
    }
    model = onnx.ModelProto.FromString(model.SerializeToString())
    kept_info, kept_values = [], []
    for info, value in zip(list(model.graph.input), inputs, strict=True):
        if info.name in frozen:
            model.graph.initializer.append(numpy_helper.from_array(value, info.name))
        else:
            kept_info.append(info)
            kept_values.append(value)
    del model.graph.input[:]
    model.graph.input.extend(kept_info)
    return model, tuple(kept_values)


@functools.cache
def collect_cases() -> tuple[Case, ...]:
    """Every in-scope node test case (one per data set), in onnx's order."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx.backend.test.case.node import collect_testcases

        test_cases = collect_testcases()
    cases = []
    for test_case in test_cases:
        if not {n.op_type for n in test_case.model.graph.node} <= SUPPORTED_OPS:
            continue
        for index, (inputs, outputs) in enumerate(test_case.data_sets):
            model, kept = freeze_constant_inputs(test_case.model, [_array(i) for i in inputs])
            suffix = f"[{index}]" if len(test_case.data_sets) > 1 else ""
            cases.append(
                Case(test_case.name + suffix, model, kept, tuple(_array(o) for o in outputs))
            )
    return tuple(cases)


def _rank(model: onnx.ModelProto, name: str) -> int | None:
    for info in (*model.graph.input, *model.graph.value_info, *model.graph.output):
        if info.name == name and info.type.tensor_type.HasField("shape"):
            return len(info.type.tensor_type.shape.dim)
    return None


def _constant_size(case: Case, name: str) -> int | None:
    """The element count of initializer `name` (None if it is not one)."""
    found = [init for init in case.model.graph.initializer if init.name == name]
    return int(np.prod(found[0].dims)) if found else None


def expected_refusals(case: Case) -> list[str]:
    """Message fragments the importer may refuse `case` with (each reason that applies);
    empty if the case must import."""
    graph = case.model.graph
    reasons = []
    tensors = [*graph.input, *graph.output]
    if any(not info.type.HasField("tensor_type") for info in tensors):
        reasons.append("not a tensor")
    if any(info.type.tensor_type.elem_type != TensorProto.FLOAT for info in tensors) or any(
        init.data_type not in (TensorProto.FLOAT, TensorProto.INT64) for init in graph.initializer
    ):
        reasons.append("float32 tensors only")
    if any(0 in array.shape for array in (*case.inputs, *case.outputs)):
        reasons.append("zero-size")
    for node in graph.node:
        if node.op_type == "MaxPool" and len(node.output) > 1 and node.output[1]:
            reasons.append("Indices output")
        if node.op_type == "Dropout" and len(node.output) > 1 and node.output[1]:
            reasons.append("mask output")
        if node.op_type == "BatchNormalization" and (
            len(node.output) > 1 or any(a.name == "training_mode" and a.i for a in node.attribute)
        ):
            reasons.append("training-mode")
        if node.op_type == "Pow" and _constant_size(case, node.input[1]) != 1:
            reasons.append("must be a constant scalar")
        if node.op_type in ("Conv", "ConvTranspose", "MaxPool", "AveragePool") and (
            _rank(case.model, node.input[0]) == 5
        ):
            reasons.append("3-D")
    return reasons


def import_and_run(case: Case, pipeline: str = "") -> tuple[np.ndarray, ...]:
    """Imports the case (constants inline), prints and re-parses the IR, compiles it with
    `pipeline` (if any), and runs it."""
    imported = import_model(case.model, inline_limit=sys.maxsize)
    text = io.StringIO()
    print_module(imported.module, text)
    ctx = make_context()
    module = parse_module(ctx, text.getvalue(), case.name)
    module.verify()
    if pipeline:
        run_pipeline(parse_pipeline(pipeline, get_all_passes()), ctx, module)
    return run_function(module, case.inputs)


def mismatch(
    ours: Sequence[np.ndarray],
    expected: Sequence[np.ndarray],
    tolerance: float = RELATIVE_TOLERANCE,
) -> str | None:
    """Why `ours` differs from `expected` beyond the tolerance, or None if they agree."""
    if len(ours) != len(expected):
        return f"{len(ours)} results, expected {len(expected)}"
    for index, (a, b) in enumerate(zip(ours, expected, strict=True)):
        if a.shape != b.shape:
            return f"result {index} has shape {list(a.shape)}, expected {list(b.shape)}"
        b = b.astype(a.dtype)
        special = ~np.isfinite(b)
        if not np.array_equal(a[special], b[special], equal_nan=True):
            return f"result {index}: inf/nan entries differ"
        finite = ~special
        if not finite.any():
            continue
        error = float(np.max(np.abs(a[finite] - b[finite]), initial=0.0))
        scale = float(np.max(np.abs(b[finite]), initial=0.0))
        if error > max(tolerance * scale, ABSOLUTE_FLOOR):
            return f"result {index}: max abs diff {error:.3g}, max |expected| {scale:.3g}"
    return None


@functools.cache
def check_case(case: Case) -> tuple[str, str]:
    """('pass' | 'refused' | 'fail', detail) for one case, as the conformance test judges it."""
    expected = expected_refusals(case)
    try:
        ours = import_and_run(case)
    except UserError as error:
        if any(reason in error.message for reason in expected):
            return "refused", error.message
        return "fail", f"refused: {error.message}"
    if expected:
        return "fail", f"imported, but should be refused ({', '.join(expected)})"
    problem = mismatch(ours, case.outputs, tolerance(case))
    return ("fail", problem) if problem else ("pass", "")


def tolerance(case: Case) -> float:
    """The relative tolerance a case's stored outputs allow."""
    return _ROUNDED_REFERENCE.get(case.name, RELATIVE_TOLERANCE)


def tally(results: dict[Case, tuple[str, str]]) -> dict[str, Counter[str]]:
    """Per operator: how many of the cases using it passed, were refused, failed."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for case, (status, _) in results.items():
        for op in case.ops:
            counts[op][status] += 1
    return counts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also list each refused case with the importer's message",
    )
    args = parser.parse_args(argv)
    results = {case: check_case(case) for case in collect_cases()}
    counts = tally(results)
    print(f"{'operator':<20} {'passed':>7} {'refused':>8} {'failed':>7} {'total':>6}")
    for op in OPS:
        c = counts.get(op, Counter())
        print(f"{op:<20} {c['pass']:>7} {c['refused']:>8} {c['fail']:>7} {sum(c.values()):>6}")
    statuses = Counter(status for status, _ in results.values())
    print(
        f"{'cases':<20} {statuses['pass']:>7} {statuses['refused']:>8} {statuses['fail']:>7} "
        f"{len(results):>6}"
    )
    for case, (status, detail) in results.items():
        if status == "fail" or (status == "refused" and args.verbose):
            print(f"{status.upper()} {case.name}: {detail}")
    return 1 if statuses["fail"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
