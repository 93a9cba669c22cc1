"""ONNX node conformance: onnx's own backend test cases, imported and run in the interpreter.

    python -m nnlayout.scripts.conformance_report        # prints a per-operator table
    python -m nnlayout.scripts.conformance_report -v     # ... and why each refused case is

The cases come from `onnx.backend.test.case.node.collect_testcases()` (about 15 s to build,
cached per process). In scope are the cases made only of operators the importer supports. Each
case is either expected to import and match the stored outputs, or expected to be refused
with a clean `UserError` for a reason decided here, independently of the importer, from the
model itself (`expected_refusals`): tensors of types nn does not hold, a 3-D
MaxPool's Indices output, Dropout's mask output, training-mode BatchNormalization, empty
tensors. The pytest suite (`tests/frontends/test_onnx_conformance.py`) asserts exactly that
for every case; this script tallies it.

Inputs that nn needs at compile time (Reshape's shape, Clip's bounds, Squeeze's axes) are graph
inputs in these cases; `freeze_constant_inputs` turns them into initializers with the case's
values first.

Operators the importer does not translate but folds at import (evaluates with onnx's reference
implementation when their inputs are known) are checked the way a model uses them: the cases of
the shape operators (`FOLDED`: Shape, Gather, ConstantOfShape, Range, ... and the arithmetic on
shapes), made of those and supported operators, run once more with every input frozen to an
initializer, so that the whole graph folds and the importer's constants are compared with the
stored outputs (integer and boolean outputs through a Cast to float32 appended to the graph,
exact for these small values, since nn's graph outputs are float32). They are reported as
"Op (folded)". Operators outside `FOLDED` that fold (any the reference implements) are
not listed: their cases would only compare onnx's reference with its own stored outputs. Not
is not listed either: its only cases are opset 1's, whose boolean outputs no Cast of that
opset that the reference evaluator runs can make float32 (the importer's tests fold it).
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
from nnlayout.frontends.onnx.checks import NARROW_FLOATS
from nnlayout.frontends.onnx.reduction import REDUCTIONS
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.ir.printer import print_module
from nnlayout.runtime.interpreter import run_function
from nnlayout.tools.driver import description, parse_pipeline, run_pipeline
from nnlayout.transforms import get_all_passes

#: Operators the tally reports (Constant only feeds the others).
OPS = sorted(SUPPORTED_OPS - {"Constant"})
#: The shape operators whose cases also run folded (see the module docstring).
FOLDED = frozenset(
    {
        *("Shape", "Size", "Gather", "Unsqueeze", "Squeeze", "Concat", "Slice", "Split"),
        *("Expand", "ConstantOfShape", "Range", "Cast", "Equal", "Where", "Mod"),
        *("ScatterND", "Reshape", "Add", "Sub", "Mul", "Div", "Less", "Greater"),
        *("ReduceProd", "Tile", "Transpose", "Identity", "GatherElements", "CumSum"),
    }
)
#: What the tally reports of the folded runs.
FOLDED_OPS = sorted(FOLDED)
#: |ours - expected| <= RELATIVE_TOLERANCE * max|expected| (or ABSOLUTE_FLOOR near zero).
RELATIVE_TOLERANCE = 1e-4
ABSOLUTE_FLOOR = 1e-6
#: The relative tolerance of float16 and bfloat16 results: two steps of their 11-bit and 8-bit
#: significands.
NARROW_TOLERANCES = {"float16": 2 * 2.0**-10, "bfloat16": 2 * 2.0**-7}
#: Cases whose stored outputs are rounded (to 4 decimals): their own relative tolerance.
_ROUNDED_REFERENCE = {"test_averagepool_2d_ceil_last_window_starts_on_pad": 5e-4}
#: Inputs nn takes as compile-time values: operator -> input positions.
_COMPILE_TIME_INPUTS = {
    "Reshape": (1,),
    "Clip": (1, 2),
    "Squeeze": (1,),
    "Unsqueeze": (1,),
    **dict.fromkeys(REDUCTIONS, (1,)),
    "Slice": (1, 2, 3, 4),
    "Split": (1,),
    "Gather": (1,),
    "Pad": (1, 2, 3),
    "Resize": (1, 2, 3),
    "Upsample": (1,),
    "Expand": (1,),
    "Pow": (1,),
    "CumSum": (1,),
    "ScatterND": (1,),
    "ScatterElements": (1,),
    "TopK": (1,),
    "Tile": (1,),
    "Trilu": (1,),
    "OneHot": (1, 2),
    **dict.fromkeys(("LSTM", "GRU", "RNN"), (1, 2, 3, 4)),
}
#: The name of the Casts `cast_outputs_to_float` appends (not counted as the case's operators).
_OUTPUT_CAST = "conformance_output_cast"
#: Element types a Cast to float32 gives exactly (for the small values of these cases).
_CAST_TO_FLOAT = {
    TensorProto.BOOL,
    *(TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64),
    *(TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64),
}


@dataclass(frozen=True, eq=False)
class Case:
    """One data set of an ONNX node test case, ready to import."""

    name: str
    model: onnx.ModelProto
    inputs: tuple[np.ndarray, ...]
    outputs: tuple[np.ndarray, ...]
    folded: bool = False

    @property
    def ops(self) -> frozenset[str]:
        """What the tally counts the case under: its operators, "Op (folded)" if folded."""
        ops = frozenset(n.op_type for n in self.model.graph.node if n.name != _OUTPUT_CAST)
        if self.folded:
            return frozenset(f"{op} (folded)" for op in ops & FOLDED)
        return ops & set(OPS)


def _array(value: object) -> np.ndarray:
    return numpy_helper.to_array(value) if isinstance(value, TensorProto) else np.asarray(value)


def freeze_constant_inputs(
    model: onnx.ModelProto, inputs: Sequence[np.ndarray], everything: bool = False
) -> tuple[onnx.ModelProto, tuple[np.ndarray, ...]]:
    """Moves graph inputs used as compile-time operands (or `everything`) into initializers."""
    frozen = {
        node.input[i]
        for node in model.graph.node
        for i in _COMPILE_TIME_INPUTS.get(node.op_type, ())
        if len(node.input) > i and node.input[i]
    } | ({info.name for info in model.graph.input} if everything else set())
    model = onnx.ModelProto.FromString(model.SerializeToString())
    kept_info, kept_values = [], []
    for info, value in zip(list(model.graph.input), inputs, strict=True):
        if info.name in frozen:
            model.graph.initializer.append(numpy_helper.from_array(value, info.name))
            if model.ir_version < 4:  # an initializer is a graph input too, then
                kept_info.append(info)
        else:
            kept_info.append(info)
            kept_values.append(value)
    del model.graph.input[:]
    model.graph.input.extend(kept_info)
    return model, tuple(kept_values)


def cast_outputs_to_float(
    model: onnx.ModelProto, outputs: Sequence[np.ndarray]
) -> tuple[onnx.ModelProto, tuple[np.ndarray, ...]]:
    """`model` with a Cast to float32 after each integer or boolean graph output, and the
    expected `outputs` cast alike."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    # Before opset 6, Cast's `to` is a string, which onnx's reference evaluator does not take:
    # the outputs stay as they are (and are refused, unless float32).
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    cast = []
    for info in model.graph.output:
        if info.type.tensor_type.elem_type in _CAST_TO_FLOAT and opset >= 6:
            model.graph.node.append(
                onnx.helper.make_node(
                    "Cast", [info.name], [f"{info.name}_f32"], _OUTPUT_CAST, to=TensorProto.FLOAT
                )
            )
            info.name = f"{info.name}_f32"
            info.type.tensor_type.elem_type = TensorProto.FLOAT
            cast.append(True)
        else:
            cast.append(False)
    expected = tuple(o.astype(np.float32) if c else o for o, c in zip(outputs, cast, strict=True))
    return model, expected


@functools.cache
def collect_cases() -> tuple[Case, ...]:
    """Every in-scope node test case (one per data set), in onnx's order, each case of the
    shape operators once more folded."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx.backend.test.case.node import collect_testcases

        test_cases = collect_testcases()
    cases = []
    for test_case in test_cases:
        ops = {n.op_type for n in test_case.model.graph.node}
        if not ops <= SUPPORTED_OPS | FOLDED:
            continue
        for index, (inputs, outputs) in enumerate(test_case.data_sets):
            inputs, outputs = [_array(i) for i in inputs], [_array(o) for o in outputs]
            suffix = f"[{index}]" if len(test_case.data_sets) > 1 else ""
            if ops <= SUPPORTED_OPS:
                model, kept = freeze_constant_inputs(test_case.model, inputs)
                cases.append(Case(test_case.name + suffix, model, kept, tuple(outputs)))
            if ops & FOLDED:
                model, _ = freeze_constant_inputs(test_case.model, inputs, everything=True)
                model, expected = cast_outputs_to_float(model, outputs)
                name = f"{test_case.name}{suffix}[folded]"
                cases.append(Case(name, model, (), expected, folded=True))
    return tuple(cases)


def _rank(model: onnx.ModelProto, name: str) -> int | None:
    for info in (*model.graph.input, *model.graph.value_info, *model.graph.output):
        if info.name == name and info.type.tensor_type.HasField("shape"):
            return len(info.type.tensor_type.shape.dim)
    return None


def _elem_type(graph: onnx.GraphProto, name: str) -> int:
    """The element type of an initializer or graph input."""
    for init in graph.initializer:
        if init.name == name:
            return init.data_type
    return next((i.type.tensor_type.elem_type for i in graph.input if i.name == name), 0)


def _constant_size(case: Case, name: str) -> int | None:
    """The element count of initializer or Constant node `name` (None if it is neither)."""
    graph = case.model.graph
    found = [init for init in graph.initializer if init.name == name] + [
        attr.t
        for node in graph.node
        if node.op_type == "Constant" and name in node.output
        for attr in node.attribute
        if attr.name == "value"
    ]
    return int(np.prod(found[0].dims)) if found else None


#: The element types of graph inputs and outputs nnlayout imports; the integer ones.
GRAPH_TYPES = (
    TensorProto.FLOAT,
    TensorProto.FLOAT16,
    TensorProto.BFLOAT16,
    TensorProto.UINT8,
    TensorProto.INT8,
    TensorProto.BOOL,
    TensorProto.INT64,
    TensorProto.INT32,
)
QUANTIZED_TYPES = (TensorProto.UINT8, TensorProto.INT8)
#: Refusals of a case with integer graph data: a float op given it, or quantization
#: parameters that are graph inputs (the suite's QLinear cases); such a case may also import.
INTEGER_DATA = [
    "computes on floats",
    "compares two floats",
    "must be a constant",
    "nnlayout computes on float32 (quantized data",  # a Cast to u8/s8 at run time
]
#: Refusals of a case with a bool graph input or output: an op other than nn.where given a
#: mask, or a mask where nn needs a constant (Dropout's training_mode).
MASK_DATA = ["does not take i1 (mask) or i64 (index) data", "must be a constant"]
#: Refusals of a case with an int64 graph input or output: an op other than nn.gather,
#: nn.cast and the moves given indices, or int64 data where nn needs a constant.
INDEX_DATA = [
    "does not take i1 (mask) or i64 (index) data",
    "must be a constant",
    "computes on floats",
    "compares two floats",
    "computed at run time, from i64",
]


def expected_refusals(case: Case) -> list[str]:
    """Message fragments the importer may refuse `case` with (each reason that applies);
    empty if the case must import."""
    graph = case.model.graph
    reasons = []
    tensors = [*graph.input, *graph.output]
    if any(not info.type.HasField("tensor_type") for info in tensors):
        reasons.append("not a tensor")
    if any(info.type.tensor_type.elem_type not in GRAPH_TYPES for info in tensors) or (
        not case.folded  # (folding takes any type)
        and any(
            init.data_type
            not in (*NARROW_FLOATS, TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32)
            for init in graph.initializer
        )
    ):
        reasons += [
            "float32 tensors only",
            "float32, float16 and bfloat16, uint8 and int8 tensors, bool masks and int64 and int32",
            "nnlayout imports float32 tensors (float16 and bfloat16 ones computed in float32)",
            "nnlayout computes on float32 (quantized data",
        ]
    if any(info.type.tensor_type.elem_type in QUANTIZED_TYPES for info in tensors):
        reasons += INTEGER_DATA
    if any(info.type.tensor_type.elem_type == TensorProto.BOOL for info in tensors):
        reasons += MASK_DATA
    if any(
        info.type.tensor_type.elem_type in (TensorProto.INT64, TensorProto.INT32)
        for info in tensors
    ):
        reasons += INDEX_DATA
    if any(0 in array.shape for array in (*case.inputs, *case.outputs)):
        reasons.append("zero-size")
        reasons.append("empty tensors are not supported")
    for node in graph.node:
        if (
            case.folded
            and node.op_type == "Range"
            and _elem_type(graph, node.input[0]) in (TensorProto.FLOAT16, TensorProto.BFLOAT16)
        ):  # onnx's shape inference does not size a Range of these types
            reasons.append("does not tell the size of its result")
        if (
            node.op_type == "MaxPool"
            and len(node.output) > 1
            and node.output[1]
            and _rank(case.model, node.input[0]) == 5
        ):
            reasons.append("Indices output of a 3-D pool")
        if node.op_type == "Dropout" and len(node.output) > 1 and node.output[1]:
            reasons.append("mask output")
        if node.op_type == "BatchNormalization" and (
            len(node.output) > 1 or any(a.name == "training_mode" and a.i for a in node.attribute)
        ):
            reasons.append("training-mode")
        reasons.extend(_movement_refusals(node))
        if any(a.name == "block_size" and a.i for a in node.attribute):
            reasons.append("block-wise quantization is not supported")
        if node.op_type == "Pow" and _constant_size(case, node.input[1]) != 1:
            reasons.append("must be a constant scalar")
        if node.op_type == "GridSample" and _rank(case.model, node.input[0]) == 5:
            reasons.append("rank-5 data")
        if node.op_type == "LSTM" and len(node.input) > 7 and node.input[7]:
            reasons.append("peepholes")
        if node.op_type == "OneHot" and _elem_type(graph, node.input[0]) == TensorProto.FLOAT:
            reasons.append("OneHot of f32 indices")
    return reasons


def _movement_refusals(node: onnx.NodeProto) -> list[str]:
    """What the importer lacks of Resize: antialiasing and the tf_crop_and_resize and
    tf_half_pixel_for_nn coordinates."""
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    reasons = []
    if node.op_type == "Resize":
        if attrs.get("antialias", 0):
            reasons.append("antialias=1")
        coordinates = attrs.get("coordinate_transformation_mode")
        if coordinates in (b"tf_crop_and_resize", b"tf_half_pixel_for_nn"):
            reasons.append(f"'{coordinates.decode()}'")
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
        if a.dtype.name == "bfloat16":  # compared in float32 (ml_dtypes' arithmetic rounds)
            a, b = a.astype(np.float32), b.astype(np.float32)
        if a.dtype == np.bool_:  # a mask: exact
            if not np.array_equal(a, b):
                return f"result {index}: {int((a != b).sum())} mask entries differ"
            continue
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
    if expected and any(
        reason not in (*INTEGER_DATA, *MASK_DATA, *INDEX_DATA) for reason in expected
    ):
        return "fail", f"imported, but should be refused ({', '.join(expected)})"
    problem = mismatch(ours, case.outputs, tolerance(case))
    return ("fail", problem) if problem else ("pass", "")


def tolerance(case: Case) -> float:
    """The relative tolerance a case's stored outputs allow: float16 and bfloat16 ones,
    computed by nn in float32 and rounded once, two of their steps (onnx's reference rounds
    between its ops)."""
    narrow = [
        NARROW_TOLERANCES[o.dtype.name] for o in case.outputs if o.dtype.name in NARROW_TOLERANCES
    ]
    if narrow:
        return max(narrow)
    return _ROUNDED_REFERENCE.get(case.name, RELATIVE_TOLERANCE)


def tally(results: dict[Case, tuple[str, str]]) -> dict[str, Counter[str]]:
    """Per operator: how many of the cases using it passed, were refused, failed."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for case, (status, _) in results.items():
        for op in case.ops:
            counts[op][status] += 1
    return counts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
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
    for op in [*OPS, *(f"{op} (folded)" for op in FOLDED_OPS)]:
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
