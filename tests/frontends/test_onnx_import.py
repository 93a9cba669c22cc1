"""The ONNX importer, op by op against onnxruntime, plus names, weights files and errors."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from nnlayout.diagnostics import UserError
from nnlayout.dialects import nn
from nnlayout.dialects.weights import WEIGHTS_ATTR, load_weights
from nnlayout.frontends.onnx import (
    import_model,
    load_model,
    same_pads,
    sanitize_name,
    write_imported,
)
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.ir.printer import print_module
from nnlayout.runtime.interpreter import run_function
from nnlayout.tests.helpers import tool_process

F = TensorProto.FLOAT
RNG = np.random.default_rng(7)


def make_model(
    nodes: Sequence[onnx.NodeProto],
    inputs: dict[str, Sequence[int]],
    outputs: Sequence[str],
    initializers: dict[str, np.ndarray] | None = None,
    opset: int = 17,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        list(nodes),
        "test",
        [helper.make_tensor_value_info(n, F, list(s)) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, F, None) for n in outputs],
        [numpy_helper.from_array(v, n) for n, v in (initializers or {}).items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def round_trip(model: onnx.ModelProto, **kwargs: int) -> str:
    """Imports `model` (weights inline) and returns the printed IR, checked to re-parse to
    the same text."""
    imported = import_model(model, inline_limit=kwargs.get("inline_limit", sys.maxsize))
    text = io.StringIO()
    print_module(imported.module, text)
    reparsed = parse_module(make_context(), text.getvalue(), "test")
    reparsed.verify()
    again = io.StringIO()
    print_module(reparsed, again)
    assert again.getvalue() == text.getvalue()
    return text.getvalue()


def run_both(model: onnx.ModelProto, oracle: str = "ort") -> tuple[list[np.ndarray], list]:
    """Runs the model imported by nnlayout (after a print/parse round trip) and by the oracle
    (onnxruntime or onnx's reference evaluator) on the same random inputs."""
    feeds = {
        i.name: RNG.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(
            np.float32
        )
        for i in model.graph.input
        if i.name not in {t.name for t in model.graph.initializer}
    }
    module = parse_module(make_context(), round_trip(model), "test")
    ours = list(run_function(module, list(feeds.values())))
    if oracle == "ort":
        session = onnxruntime.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        expected = session.run(None, feeds)
    else:
        expected = ReferenceEvaluator(model).run(None, feeds)
    return ours, expected


def assert_matches(model: onnx.ModelProto, oracle: str = "ort") -> None:
    ours, expected = run_both(model, oracle)
    assert len(ours) == len(expected)
    for a, b in zip(ours, expected, strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-4 * max(1.0, float(np.abs(b).max())))


def weight(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def node(
    op: str, inputs: Sequence[str], outputs: Sequence[str] = ("y",), **attrs: object
) -> onnx.NodeProto:
    return helper.make_node(op, list(inputs), list(outputs), name=f"{op.lower()}_node", **attrs)


# ------------------------------------------------------------------ each op vs onnxruntime
X4 = {"x": (1, 4, 9, 9)}
CONV_W = {"w": weight(6, 4, 3, 3), "b": weight(6)}
CASES: dict[str, onnx.ModelProto] = {
    "conv": make_model(
        [node("Conv", ["x", "w", "b"], pads=[1, 0, 2, 1], strides=[2, 1], dilations=[1, 2])],
        X4,
        ["y"],
        CONV_W,
    ),
    "conv-groups-no-bias": make_model(
        [node("Conv", ["x", "w"], group=2)], X4, ["y"], {"w": weight(6, 2, 3, 3)}
    ),
    "conv-same-upper": make_model(
        [node("Conv", ["x", "w"], auto_pad="SAME_UPPER", strides=[2, 2])],
        X4,
        ["y"],
        {"w": weight(6, 4, 4, 4)},
    ),
    "conv-same-lower": make_model(
        [node("Conv", ["x", "w"], auto_pad="SAME_LOWER", strides=[2, 2])],
        X4,
        ["y"],
        {"w": weight(6, 4, 4, 4)},
    ),
    "conv-valid": make_model(
        [node("Conv", ["x", "w", "b"], auto_pad="VALID", strides=[2, 2])], X4, ["y"], CONV_W
    ),
    "conv-1d": make_model(
        [node("Conv", ["x", "w"], pads=[1, 2], strides=[2])],
        {"x": (1, 3, 10)},
        ["y"],
        {"w": weight(5, 3, 3)},
    ),
    "conv-transpose": make_model(
        [
            node(
                "ConvTranspose",
                ["x", "w", "b"],
                strides=[2, 3],
                pads=[1, 0, 0, 1],
                output_padding=[1, 2],
                dilations=[1, 1],
                group=2,
            )
        ],
        X4,
        ["y"],
        {"w": weight(4, 3, 3, 3), "b": weight(6)},
    ),
    "conv-transpose-output-shape": make_model(
        [node("ConvTranspose", ["x", "w"], strides=[2, 2], output_shape=[20, 19])],
        X4,
        ["y"],
        {"w": weight(4, 2, 3, 3)},
    ),
    "gemm": make_model(
        [node("Gemm", ["a", "b", "c"], alpha=0.5, beta=2.0, transA=1, transB=1)],
        {"a": (5, 3), "b": (4, 5)},
        ["y"],
        {"c": weight(4)},
    ),
    "gemm-no-c": make_model([node("Gemm", ["a", "b"])], {"a": (3, 5), "b": (5, 4)}, ["y"]),
    "matmul-broadcast": make_model(
        [node("MatMul", ["a", "b"])], {"a": (2, 1, 3, 5), "b": (4, 5, 2)}, ["y"]
    ),
    "matmul-1d": make_model([node("MatMul", ["a", "b"])], {"a": (5,), "b": (2, 5, 3)}, ["y"]),
    "leaky-relu": make_model([node("LeakyRelu", ["x"], alpha=0.2)], X4, ["y"]),
    "clip-opset11": make_model(
        [node("Clip", ["x", "lo", "hi"])],
        X4,
        ["y"],
        {"lo": np.array(-0.5, np.float32), "hi": np.array(0.7, np.float32)},
    ),
    "clip-max-only": make_model(
        [node("Clip", ["x", "", "hi"])], X4, ["y"], {"hi": np.array(0.1, np.float32)}
    ),
    "clip-opset6": make_model([node("Clip", ["x"], min=-0.3, max=0.4)], X4, ["y"], opset=6),
    "binary-broadcast": make_model(
        [
            node("Add", ["x", "c"], ["a"]),
            node("Sub", ["a", "x"], ["s"]),
            node("Mul", ["s", "c"], ["m"]),
            node("Div", ["m", "d"], ["y"]),
        ],
        X4,
        ["y"],
        {"c": weight(4, 1, 1), "d": np.full((9,), 2.0, np.float32)},
    ),
    "sum-three": make_model([node("Sum", ["x", "c", "x"])], X4, ["y"], {"c": weight(1, 9)}),
    "maxpool": make_model(
        [
            node(
                "MaxPool",
                ["x"],
                kernel_shape=[3, 2],
                strides=[2, 2],
                pads=[1, 1, 1, 0],
                ceil_mode=1,
                dilations=[1, 2],
            )
        ],
        X4,
        ["y"],
    ),
    "maxpool-same-lower": make_model(
        [node("MaxPool", ["x"], kernel_shape=[2, 2], strides=[2, 2], auto_pad="SAME_LOWER")],
        X4,
        ["y"],
    ),
    "avgpool-include-pad": make_model(
        [
            node(
                "AveragePool",
                ["x"],
                kernel_shape=[3, 3],
                strides=[2, 2],
                pads=[1, 1, 1, 1],
                count_include_pad=1,
            )
        ],
        X4,
        ["y"],
    ),
    "avgpool-exclude-pad-ceil": make_model(
        [
            node(
                "AveragePool",
                ["x"],
                kernel_shape=[2, 2],
                strides=[2, 2],
                pads=[1, 1, 0, 0],
                ceil_mode=1,
            )
        ],
        X4,
        ["y"],
    ),
    "avgpool-1d": make_model(
        [node("AveragePool", ["x"], kernel_shape=[3], strides=[2])], {"x": (1, 2, 11)}, ["y"]
    ),
    "global-avgpool-bn": make_model(
        [
            node("BatchNormalization", ["x", "s", "b", "m", "v"], ["n"], epsilon=1e-3),
            node("GlobalAveragePool", ["n"]),
        ],
        X4,
        ["y"],
        {"s": weight(4), "b": weight(4), "m": weight(4), "v": np.full(4, 1.5, np.float32)},
    ),
    "global-maxpool": make_model([node("GlobalMaxPool", ["x"])], X4, ["y"]),
    "global-maxpool-1d": make_model([node("GlobalMaxPool", ["x"])], {"x": (2, 3, 7)}, ["y"]),
    "dropout-inference": make_model(
        [
            node("Conv", ["x", "w", "b"], ["c"]),
            node("Dropout", ["c", "ratio", "train"], ["d"]),
            node("Relu", ["d"]),
        ],
        X4,
        ["y"],
        {**CONV_W, "ratio": np.array(0.5, np.float32), "train": np.array(False)},
    ),
    "dropout-opset11": make_model([node("Dropout", ["x"], ratio=0.3)], X4, ["y"], opset=11),
    "concat-negative-axis": make_model([node("Concat", ["x", "x"], axis=-3)], X4, ["y"]),
    "softmax-13": make_model([node("Softmax", ["x"], axis=1)], X4, ["y"]),
    "softmax-11-coerced": make_model(
        [node("Softmax", ["x"], axis=1)], {"x": (2, 3, 4)}, ["y"], opset=11
    ),
    "softmax-11-last-axis": make_model(
        [node("Softmax", ["x"], axis=-1)], {"x": (2, 3, 4)}, ["y"], opset=11
    ),
    "flatten-negative": make_model([node("Flatten", ["x"], axis=-2)], X4, ["y"]),
    "reshape-zero-minus-one": make_model(
        [node("Reshape", ["x", "shape"])], X4, ["y"], {"shape": np.array([0, -1, 3], np.int64)}
    ),
    "transpose-default": make_model([node("Transpose", ["x"])], X4, ["y"]),
    "unary-chain": make_model(
        [
            node("Relu", ["x"], ["r"]),
            node("Sigmoid", ["r"], ["s"]),
            node("Tanh", ["s"], ["t"]),
            node("Exp", ["t"], ["e"]),
            node("Neg", ["e"], ["n"]),
            node("Abs", ["n"], ["a"]),
            node("Sqrt", ["a"], ["i"]),
            node("Identity", ["i"]),
        ],
        X4,
        ["y"],
    ),
    "constant-node": make_model(
        [
            helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(weight(9))),
            helper.make_node("Constant", [], ["shape"], value_ints=[1, 36, 9]),
            node("Add", ["x", "c"], ["a"]),
            node("Reshape", ["a", "shape"]),
        ],
        X4,
        ["y"],
    ),
    "two-outputs": make_model(
        [node("Relu", ["x"], ["r"]), node("Neg", ["x"], ["n"])], X4, ["r", "n"]
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_op_matches_onnxruntime(name: str) -> None:
    assert_matches(CASES[name])


def test_conv_transpose_same_upper_odd_padding_follows_the_onnx_spec() -> None:
    """SAME_UPPER puts the odd padding at the end (onnxruntime puts it at the start; onnx's
    reference evaluator and the spec agree with us)."""
    model = make_model(
        [node("ConvTranspose", ["x", "w"], strides=[2, 2], auto_pad="SAME_UPPER")],
        X4,
        ["y"],
        {"w": weight(4, 2, 3, 3)},
    )
    assert "pads [0, 0, 1, 1]" in round_trip(model)
    assert_matches(model, oracle="reference")


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_ceil_mode_drops_a_last_window_that_starts_in_the_padding(op: str) -> None:
    """Width 6, kernel 3, stride 4, pads 1: ceil_mode's third window would start at 8, in
    the end padding; ONNX's spec, its reference evaluator and onnxruntime drop it (width 2),
    as nn does. onnx's shape inference says 3, and the importer refused the model ('nn
    computes shape [1, 4, 4, 2] ... ONNX infers [1, 4, 4, 3]'), then the Relu after it."""
    model = make_model(
        [
            node(
                op,
                ["x"],
                ["p"],
                kernel_shape=[2, 3],
                strides=[2, 4],
                pads=[0, 1, 0, 1],
                ceil_mode=1,
            ),
            node("Relu", ["p"]),
        ],
        {"x": (1, 4, 8, 6)},
        ["y"],
        opset=19,
    )
    assert_matches(model)
    assert_matches(model, oracle="reference")


def test_only_a_window_starting_in_the_padding_excuses_onnx_inference() -> None:
    """The same pool: one more window on W (it would start at 8 >= 6 + 1) is onnx's known
    overcount; one more on H (it would start at 6, inside the 8 rows) would be an nn bug."""
    from nnlayout.frontends.onnx.inference import ceil_mode_overcount

    pool = node(
        "MaxPool", ["x"], ["p"], kernel_shape=[2, 3], strides=[2, 4], pads=[0, 1, 0, 1], ceil_mode=1
    )
    assert ceil_mode_overcount(pool, [1, 4, 4, 3], [1, 4, 4, 2], (1, 4, 8, 6))
    assert not ceil_mode_overcount(pool, [1, 4, 4, 2], [1, 4, 3, 2], (1, 4, 8, 6))
    assert not ceil_mode_overcount(pool, [1, 5, 4, 3], [1, 4, 4, 2], (1, 4, 8, 6))


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
def test_conv_transpose_same_with_output_padding_is_input_times_stride(auto_pad: str) -> None:
    """The spec, onnxruntime and onnx's reference evaluator give 12 x 12 (4 x 3); onnx's
    shape inference adds output_padding (13 x 14), and the importer refused the model."""
    model = make_model(
        [
            node(
                "ConvTranspose",
                ["x", "w"],
                ["t"],
                strides=[3, 3],
                auto_pad=auto_pad,
                output_padding=[1, 2],
            ),
            node("Relu", ["t"]),
        ],
        {"x": (1, 3, 4, 4)},
        ["y"],
        {"w": weight(3, 2, 3, 3)},
    )
    ours, expected = run_both(model, oracle="reference")
    assert ours[0].shape == expected[0].shape == (1, 2, 12, 12)
    np.testing.assert_allclose(ours[0], expected[0], atol=1e-4)


@pytest.mark.parametrize(
    "outputs",
    [["y", "w"], ["y", "y"], ["x", "y"], ["w"]],
    ids=["initializer", "twice", "graph-input", "only-an-initializer"],
)
def test_outputs_declared_without_a_shape_take_the_values_shape(outputs: list[str]) -> None:
    """onnxruntime runs these; the importer refused them ("invalid ONNX model: Field 'shape'
    of 'type' is required but missing", naming no value): shape inference gives no shape to
    an initializer or input returned as an output, nor to a value's second listing."""
    nodes = [] if outputs == ["w"] else [node("Add", ["x", "w"])]
    assert_matches(make_model(nodes, {"x": (5, 5)}, outputs, {"w": weight(5, 5)}))


def test_an_output_no_node_produces_is_named_even_without_a_shape() -> None:
    model = make_model([node("Relu", ["x"])], {"x": (2, 3)}, ["y", "z"])
    with pytest.raises(UserError, match="graph output 'z' is not produced by any node$"):
        import_model(model)


@pytest.mark.parametrize(
    ("op", "attrs", "weights", "message"),
    [
        # onnxruntime and onnx's shape inference give 7 x 9, the spec 8 x 10: refused, named
        (
            "ConvTranspose",
            {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
            (2, 3, 1, 1),
            "auto_pad SAME_UPPER with kernel extent + output_padding below stride 2 on spatial "
            "axis 0: the ONNX spec makes the output input * stride (8), onnxruntime and onnx's "
            "shape inference 7; give pads or output_shape",
        ),
        # was "output_padding [2, 0] must be smaller than the stride", of a model without one
        (
            "ConvTranspose",
            {"strides": [2, 2], "output_shape": [9, 9]},
            (2, 3, 1, 1),
            "output_shape 9 on spatial axis 0 is 2 beyond the transposed convolution's size 7; "
            "ONNX allows up to stride - 1 = 1",
        ),
        # was "nn computes shape [1, 4, 4, 5] for output 'y' but ONNX infers [1, 4, 3, 4]"
        (
            "Conv",
            {"kernel_shape": [2, 2]},
            (4, 2, 1, 1),
            "kernel_shape [2, 2] is not the weight's spatial shape [1, 1]",
        ),
    ],
)
def test_transposed_and_plain_convolution_attributes_that_cannot_hold_are_named(
    op: str, attrs: dict, weights: tuple[int, ...], message: str
) -> None:
    model = make_model(
        [node(op, ["x", "w"], **attrs)], {"x": (1, 2, 4, 5)}, ["y"], {"w": weight(*weights)}
    )
    with pytest.raises(UserError, match=re.escape(message)):
        import_model(model)


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_same_pooling_whose_negative_padding_crops_the_start_is_refused(op: str) -> None:
    """kernel 1, stride 3 on 6 columns: SAME's total padding is -2. onnxruntime's
    AveragePool-19 crops one column at the start (its MaxPool, and AveragePool before opset
    19, refuse); the importer clamped the padding to 0, which crops only the end: other
    windows, other numbers."""
    model = make_model(
        [node(op, ["x"], kernel_shape=[1, 1], strides=[1, 3], auto_pad="SAME_UPPER")],
        {"x": (1, 2, 4, 6)},
        ["y"],
    )
    with pytest.raises(
        UserError,
        match=re.escape(
            "auto_pad SAME_UPPER on spatial axis 1 needs padding -2 (kernel extent 1, stride "
            "3): onnxruntime crops 1 at the start, which nn's pooling cannot; give pads"
        ),
    ):
        import_model(model)


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
def test_same_average_pooling_cropping_only_the_end_matches_onnxruntime(auto_pad: str) -> None:
    """Total padding -1 (kernel 1, stride 2 on 6 columns) or -2 with SAME_LOWER (stride 3):
    onnxruntime's AveragePool-19 crops nothing at the start, as padding clamped to 0 does
    (before opset 19, and for MaxPool, it refuses negative padding)."""
    for strides in ([1, 2], [1, 3]) if auto_pad == "SAME_LOWER" else ([1, 2],):
        assert_matches(
            make_model(
                [
                    node(
                        "AveragePool",
                        ["x"],
                        kernel_shape=[1, 1],
                        strides=strides,
                        auto_pad=auto_pad,
                    )
                ],
                {"x": (1, 2, 4, 6)},
                ["y"],
                opset=19,
            )
        )


def legacy_binary(op: str, b: np.ndarray, **attrs: object) -> onnx.ModelProto:
    return make_model(
        [node(op, ["x", "b"], **attrs)], {"x": (1, 3, 2, 4)}, ["y"], {"b": b}, opset=6
    )


LEGACY_BINARY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}


@pytest.mark.parametrize("op", sorted(LEGACY_BINARY))
@pytest.mark.parametrize(
    ("shape", "axis", "aligned"),
    [
        ((3,), 1, (1, 3, 1, 1)),
        ((3, 2), 1, (1, 3, 2, 1)),
        ((2, 4), -2, (1, 1, 2, 4)),
        ((4,), None, (1, 1, 1, 4)),
    ],
)
def test_legacy_broadcast_aligns_b_at_axis(
    op: str, shape: tuple[int, ...], axis: int | None, aligned: tuple[int, ...]
) -> None:
    """Before opset 7, broadcast=1 matches B's axes to A's from `axis` on (the spec's rule;
    onnxruntime has no such kernel and onnx's reference evaluator ignores `axis`): the
    importer applied numpy's trailing rule, so [3] at axis 1 was refused against width 4,
    and would have been added along the width had the width been 3."""
    b = RNG.standard_normal(shape).astype(np.float32)
    attrs = {"broadcast": 1} | ({} if axis is None else {"axis": axis})
    model = make_model(
        [node(op, ["x", "b"], **attrs)], {"x": (1, 3, 2, 4)}, ["y"], {"b": b}, opset=6
    )
    x = RNG.standard_normal((1, 3, 2, 4)).astype(np.float32)
    (got,) = run_function(parse_module(make_context(), round_trip(model), "test"), [x])
    np.testing.assert_allclose(got, LEGACY_BINARY[op](x, b.reshape(aligned)), rtol=1e-6)


def test_legacy_binary_without_broadcast_needs_one_shape() -> None:
    model = make_model(
        [node("Add", ["x", "b"])], {"x": (1, 3, 2, 4)}, ["y"], {"b": weight(4)}, opset=6
    )
    with pytest.raises(
        UserError,
        match=r"Add before opset 7 without broadcast=1 needs "
        r"operands of one shape, got \[1, 3, 2, 4\] and \[4\]",
    ):
        import_model(model)


def test_legacy_concat_axis_defaults_to_1_and_reshape_takes_an_attribute() -> None:
    """Concat before opset 4 defaults its axis to 1; Reshape before opset 5 reads its shape
    from an attribute (both were internal errors: KeyError, IndexError); what onnx's checker
    lets go without them gets a message."""

    def shaped(model: onnx.ModelProto, shape: list[int]) -> onnx.ModelProto:
        # onnx's checker wants a shape on old opsets' outputs
        model.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", F, shape))
        return model

    concat = make_model(
        [node("Concat", ["a", "b"])], {"a": (1, 2, 3), "b": (1, 4, 3)}, ["y"], opset=3
    )
    assert "axis 1" in round_trip(shaped(concat, [1, 6, 3]))
    reshape = make_model(
        [node("Reshape", ["a"], shape=[2, 0, -1])], {"a": (1, 6, 2)}, ["y"], opset=4
    )
    assert "-> tensor<2x6x1xf32>" in round_trip(shaped(reshape, [2, 6, 1]))
    with pytest.raises(UserError, match="Reshape before opset 5 needs a 'shape' attribute"):
        import_model(
            shaped(make_model([node("Reshape", ["a"])], {"a": (1, 6)}, ["y"], opset=4), [6])
        )
    with pytest.raises(UserError, match="Required attribute axis is missing"):
        import_model(
            make_model([node("Concat", ["a", "b"])], {"a": (1, 2), "b": (1, 2)}, ["y"], opset=13)
        )


@pytest.mark.parametrize(
    ("auto_pad", "expected"),
    [
        ("SAME_UPPER", [1, 0, 1, 1]),  # [top, left, bottom, right]: total 2 on H, 1 on W (odd)
        ("SAME_LOWER", [1, 1, 1, 0]),
    ],
)
def test_same_pads(auto_pad: str, expected: list[int]) -> None:
    assert same_pads([9, 8], [3, 3], [2, 2], [1, 1], auto_pad) == expected


def test_auto_pad_valid_and_same_appear_as_explicit_pads() -> None:
    assert "pads [0, 0, 0, 0]" in round_trip(CASES["conv-valid"])
    assert "pads [1, 1, 2, 2]" in round_trip(CASES["conv-same-upper"])
    assert "pads [2, 2, 1, 1]" in round_trip(CASES["conv-same-lower"])


# ------------------------------------------------------------------ names
def test_value_names_become_name_hints() -> None:
    model = make_model(
        [node("Relu", ["input:x"], ["layer1/relu.out"])], {"input:x": (2, 3)}, ["layer1/relu.out"]
    )
    text = round_trip(model)
    assert "func.func @main(%input_x: tensor<2x3xf32>)" in text
    assert "%layer1_relu.out = nn.relu %input_x" in text


HOSTILE = [
    'a"b',
    "new\nline",
    "ünïcødé→名前",
    "%percent",
    "@at",
    "{braces}",
    "0digit",
    "back\\slash",
    "",
    "sp ace",
    "-dash",
    "a/b",
    "a:b",
    "_1",
    "../up",
    "file",
]


def test_sanitized_names_are_valid() -> None:
    for name in HOSTILE:
        clean = sanitize_name(name)
        assert clean and not clean[0].isdigit()
        assert all(c.isascii() and (c.isalnum() or c in "_$.-") for c in clean)


# Printed IR spells NaN, ±Inf and some large floats as their bits (0xFF800000 is -inf).
NON_FINITE_CONSTANTS: dict[str, onnx.ModelProto] = {
    "softmax-with-minus-inf-mask": make_model(
        [node("Add", ["x", "mask"], ["m"]), node("Softmax", ["m"], axis=-1)],
        {"x": (2, 4)},
        ["y"],
        {"mask": np.array([0.0, 0.0, -np.inf, -np.inf], np.float32)},
    ),
    "clip-unbounded-above": make_model(
        [node("Clip", ["x", "lo", "hi"])],
        {"x": (2, 4)},
        ["y"],
        {"lo": np.float32(0.0), "hi": np.float32(np.inf)},
    ),
    "add-non-finite-and-large": make_model(
        [node("Add", ["x", "c"])],
        {"x": (6,)},
        ["y"],
        {"c": np.array([1.0, np.inf, -np.inf, np.nan, 16777216.0, -1234567.0], np.float32)},
    ),
}


@pytest.mark.parametrize("model", NON_FINITE_CONSTANTS.values(), ids=NON_FINITE_CONSTANTS)
def test_non_finite_constants_keep_their_values_through_printed_ir(model: onnx.ModelProto) -> None:
    for ours, expected in zip(*run_both(model), strict=True):
        np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-7)


@given(st.lists(st.floats(width=32), min_size=1, max_size=16))
@settings(max_examples=200, deadline=None)
def test_every_f32_constant_survives_print_and_parse(values: list[float]) -> None:
    array = np.array(values, np.float32)
    model = make_model([node("Add", ["x", "c"])], {"x": (len(values),)}, ["y"], {"c": array})
    module = parse_module(make_context(), round_trip(model), "test")
    constant = next(op for op in module.walk() if isinstance(op, nn.ConstantOp))
    parsed = np.array(constant.value.get_values(), np.float32)
    np.testing.assert_array_equal(parsed, array)  # NaN where NaN, -0.0 == 0.0 aside


def test_hostile_names_round_trip_with_weights(tmp_path: Path) -> None:
    """Every hostile name as a large initializer and (with a suffix) as a value: the IR
    prints and parses back, and the weights file maps every constant."""
    names = [n for n in HOSTILE if n] + ["allow_pickle"]  # np.savez's own parameters too
    source = '%in"put\n'
    nodes, inits, current = [], {}, source
    for name in names:
        inits[name] = weight(2, 3, 4)
        nodes.append(helper.make_node("Add", [current, name], [f"{name}\n/out"], name=f"n{name}"))
        current = f"{name}\n/out"
    nodes.append(helper.make_node("Identity", [current], ["out"]))
    model = make_model(nodes, {source: (2, 3, 4)}, ["out"], inits)
    imported = import_model(model)
    assert len(imported.weights) == len(inits)
    mlir = tmp_path / "hostile.mlir"
    write_imported(imported, mlir)
    text = mlir.read_text(encoding="utf-8")
    assert f'{WEIGHTS_ATTR} = "hostile.npz"' in text
    module = parse_module(make_context(), text, str(mlir))
    module.verify()
    again = io.StringIO()
    print_module(module, again)
    assert again.getvalue() == text
    assert 'onnx.name = "new\\0Aline"' in text  # the original ONNX name is kept, escaped
    x = weight(2, 3, 4)
    (ours,) = run_function(module, [x], source_path=str(mlir))
    np.testing.assert_allclose(ours, x + sum(inits.values()), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("opset", [6, 17])
def test_an_omitted_clip_bound_is_the_float_range(opset: int) -> None:
    """ONNX: a bound not given is the lowest or largest float, so inf becomes 3.4e38, as in
    onnxruntime (nnlayout left it unbounded)."""
    model = (
        make_model([node("Clip", ["x"], min=-0.2)], {"x": (6,)}, ["y"], opset=opset)
        if opset < 11
        else make_model([node("Clip", ["x", "lo"])], {"x": (6,)}, ["y"], {"lo": np.float32(-0.2)})
    )
    x = np.array([np.inf, -np.inf, 1.0, 5.0, -1.0, np.nan], np.float32)
    (ours,) = run_function(parse_module(make_context(), round_trip(model), "clip"), [x])
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    np.testing.assert_array_equal(ours, session.run(None, {"x": x})[0])
    assert ours[0] == np.finfo(np.float32).max


@pytest.mark.parametrize("inline_limit", [0, 16])
def test_a_scalar_initializer_stays_a_scalar(tmp_path: Path, inline_limit: int) -> None:
    """A 0-d initializer is a tensor<f32>, inline or in the weights file: it became
    tensor<1xf32> (np.ascontiguousarray makes 0-d arrays 1-d), so a scalar dot product plus
    a scalar was refused ('nn computes shape [1] ... ONNX infers []'), and with
    --inline-limit 0 a scalar bias could not be loaded (stored as [1])."""
    model = make_model(
        [node("MatMul", ["a", "b"], ["d"]), node("Add", ["d", "k"])],
        {"a": (3,), "b": (3,)},
        ["y"],
        {"k": np.array(0.5, np.float32)},
    )
    mlir = tmp_path / "dot.mlir"
    write_imported(import_model(model, inline_limit=inline_limit), mlir)
    module = parse_module(make_context(), mlir.read_text(encoding="utf-8"), str(mlir))
    a, b = weight(3), weight(3)
    (ours,) = run_function(module, [a, b], source_path=str(mlir))
    assert ours.shape == ()
    np.testing.assert_allclose(ours, float(a @ b) + 0.5, rtol=1e-5)


def test_non_ascii_names_survive_print_and_parse(tmp_path: Path) -> None:
    """xDSL prints a string's non-ASCII characters as escaped UTF-8 bytes, and read such a
    literal back as bytes: IR naming its weights file modèle.npz, or a weight wé, could not
    be read back by any tool."""
    model = make_model(
        [node("Conv", ["x", "wé", "b"])], X4, ["y"], {"wé": weight(6, 4, 3, 3), "b": weight(6)}
    )
    mlir = tmp_path / "modèle.mlir"
    write_imported(import_model(model), mlir)
    module = parse_module(make_context(), mlir.read_text(encoding="utf-8"), str(mlir))
    printed = io.StringIO()
    print_module(module, printed)
    assert '"mod\\C3\\A8le.npz"' in printed.getvalue()  # as xDSL and MLIR print it
    again = parse_module(make_context(), printed.getvalue(), str(mlir))
    assert again.attributes[WEIGHTS_ATTR].data == "modèle.npz"
    x = weight(1, 4, 9, 9)
    np.testing.assert_array_equal(
        run_function(again, [x], source_path=str(mlir))[0],
        run_function(module, [x], source_path=str(mlir))[0],
    )


# ------------------------------------------------------------------ weights
def test_large_initializers_go_to_the_weights_file(tmp_path: Path) -> None:
    big, small = weight(6, 4, 3, 3), weight(6)
    model = make_model([node("Conv", ["x", "w", "b"])], X4, ["y"], {"w": big, "b": small})
    imported = import_model(model)
    assert list(imported.weights) == ["w"]
    write_imported(imported, tmp_path / "conv.mlir")
    text = (tmp_path / "conv.mlir").read_text()
    assert 'nn.constant external "w" : tensor<6x4x3x3xf32>' in text
    assert "nn.constant dense<" in text  # the bias, inline
    module = parse_module(make_context(), text, str(tmp_path / "conv.mlir"))
    stored = load_weights(module, str(tmp_path / "conv.mlir"))
    np.testing.assert_array_equal(stored["w"], big)


def test_no_weights_file_when_everything_is_inline(tmp_path: Path) -> None:
    write_imported(import_model(CASES["leaky-relu"]), tmp_path / "a.mlir")
    assert WEIGHTS_ATTR not in (tmp_path / "a.mlir").read_text()
    assert not (tmp_path / "a.npz").exists()


def copy(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy (onnx.save with external data rewrites the model it is given)."""
    return onnx.ModelProto.FromString(model.SerializeToString())


def test_external_data_inside_the_folder_is_loaded(tmp_path: Path) -> None:
    model = copy(CASES["conv"])
    onnx.save(
        model, tmp_path / "m.onnx", save_as_external_data=True, location="m.data", size_threshold=0
    )
    loaded = load_model(tmp_path / "m.onnx")
    ours = import_model(loaded)
    np.testing.assert_array_equal(ours.weights["w"], CONV_W["w"])


# ------------------------------------------------------------------ errors (via the CLI)
def nnlayout_import(*args: str) -> subprocess.CompletedProcess[str]:
    """nnlayout-import in this process (tool_process; tests/tools/test_bad_files.py and
    test_cli.py start it as a process)."""
    return tool_process("nnlayout-import", args)


def assert_clean_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    for fragment in fragments:
        assert fragment in lines[0]


def save(model: onnx.ModelProto, path: Path) -> Path:
    path.write_bytes(model.SerializeToString())
    return path


def test_unsupported_operator(tmp_path: Path) -> None:
    lstm = helper.make_node("LSTM", ["x", "w", "r"], ["y"], name="encoder_lstm", hidden_size=2)
    model = make_model(
        [lstm], {"x": (3, 1, 2)}, ["y"], {"w": weight(1, 8, 2), "r": weight(1, 8, 2)}
    )
    assert_clean_error(
        nnlayout_import(str(save(model, tmp_path / "lstm.onnx"))),
        "node 'encoder_lstm' (LSTM)",
        "unsupported operator",
    )


def test_truncated_file(tmp_path: Path) -> None:
    data = CASES["conv"].SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: len(data) // 2])
    assert_clean_error(nnlayout_import(str(path)), "not a valid ONNX model")


def test_missing_file(tmp_path: Path) -> None:
    assert_clean_error(nnlayout_import(str(tmp_path / "absent.onnx")), "cannot read")


def test_symbolic_batch_dimension(tmp_path: Path) -> None:
    model = make_model([node("Relu", ["x"])], {"x": ("batch", 3)}, ["y"])
    assert_clean_error(
        nnlayout_import(str(save(model, tmp_path / "dyn.onnx"))),
        "graph input 'x'",
        "symbolic dimension 'batch'",
    )


def test_non_float32_tensor(tmp_path: Path) -> None:
    graph = helper.make_graph(
        [node("Relu", ["x"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [2])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert_clean_error(
        nnlayout_import(str(save(model, tmp_path / "f64.onnx"))), "'x'", "DOUBLE", "float32"
    )


def test_maxpool_indices_output(tmp_path: Path) -> None:
    model = make_model(
        [node("MaxPool", ["x"], ["y", "idx"], kernel_shape=[2, 2])], X4, ["y", "idx"]
    )
    assert_clean_error(
        nnlayout_import(str(save(model, tmp_path / "mp.onnx"))),
        "node 'maxpool_node' (MaxPool)",
        "Indices",
    )


@pytest.mark.parametrize(
    ("outputs", "train", "message"),
    [
        (["y", "mask"], False, "Dropout's mask output is not supported"),
        (["y"], True, "Dropout in training mode is not supported"),
    ],
    ids=["mask", "training"],
)
def test_dropout_outside_inference_is_refused(
    tmp_path: Path, outputs: list[str], train: bool, message: str
) -> None:
    model = make_model(
        [node("Dropout", ["x", "", "train"], outputs)], X4, outputs, {"train": np.array(train)}
    )
    assert_clean_error(
        nnlayout_import(str(save(model, tmp_path / "dropout.onnx"))),
        "node 'dropout_node' (Dropout)",
        message,
    )


@pytest.mark.parametrize(
    "model",
    [
        make_model([node("MaxPool", ["x"], ["y", "idx"], kernel_shape=[2, 2])], X4, ["y"]),
        make_model([node("Dropout", ["x"], ["y", "mask"])], X4, ["y"], opset=12),
        make_model([node("Dropout", ["x"], ["y", "mask"], ratio=0.3)], X4, ["y"], opset=7),
    ],
    ids=["maxpool-indices", "dropout-mask", "dropout-7-mask"],
)
def test_optional_outputs_nothing_reads_are_left_out(model: onnx.ModelProto) -> None:
    """Exporters list outputs nobody reads (MaxPool's Indices, Dropout's mask); onnxruntime
    runs such models as if they were not there, and so does nnlayout."""
    assert_matches(model)


def test_batch_norm_statistics_outputs_mean_training_even_unread(tmp_path: Path) -> None:
    """Not so BatchNormalization's statistics outputs: listed, even with nothing reading
    them, they make onnxruntime normalise with the batch's own mean and variance."""
    model = make_model(
        [
            node(
                "BatchNormalization",
                ["x", "s", "b", "m", "v"],
                ["y", "mean", "var", "saved_mean", "saved_var"],
            )
        ],
        X4,
        ["y"],
        {"s": weight(4), "b": weight(4), "m": weight(4), "v": np.abs(weight(4)) + 0.5},
        opset=9,
    )
    assert_clean_error(
        nnlayout_import(str(save(model, tmp_path / "bn.onnx"))),
        "node 'batchnormalization_node' (BatchNormalization)",
        "training-mode BatchNormalization",
    )


def test_a_constant_through_an_identity_is_still_a_constant() -> None:
    """Exporters pass shapes and bounds through Identity nodes: Reshape and Clip, which need
    them at compile time, said the int64 shape was not float32, or that the bound was not a
    constant."""
    model = make_model(
        [
            helper.make_node("Identity", ["shape"], ["s"]),
            helper.make_node("Add", ["x", "lo"], ["a"]),
            helper.make_node("Identity", ["lo"], ["l"]),
            helper.make_node("Identity", ["l"], ["l2"]),
            node("Reshape", ["a", "s"], ["r"]),
            node("Clip", ["r", "l2"]),
        ],
        X4,
        ["y"],
        {"shape": np.array([1, -1], np.int64), "lo": np.float32(-0.1)},
    )
    assert_matches(model)


def test_a_constant_through_an_identity_into_a_ceil_mode_pool_matches_onnxruntime() -> None:
    """A window ONNX's inference overcounts is checked against the operand's shape, which an
    aliased constant gave only under its own name (an internal KeyError; found by review)."""
    model = make_model(
        [
            helper.make_node("Identity", ["c"], ["ci"]),
            node(
                "MaxPool",
                ["ci"],
                ["p"],
                kernel_shape=[2, 3],
                strides=[2, 4],
                pads=[0, 1, 0, 1],
                ceil_mode=1,
            ),
            helper.make_node("Relu", ["x"], ["y"]),
        ],
        {"x": (1,)},
        ["p", "y"],
        {"c": weight(1, 4, 8, 6)},
    )
    assert_matches(model)


def test_an_integer_constant_passed_on_by_an_identity_is_named_as_used(tmp_path: Path) -> None:
    model = make_model(
        [helper.make_node("Identity", ["c"], ["a"])],
        {"x": (2,)},
        ["a"],
        {"c": np.array([1, 2], np.int64)},
    )
    assert_clean_error(
        nnlayout_import(str(save(model, tmp_path / "int.onnx"))),
        "constant 'c' (passed on as 'a' by an Identity) has element type INT64",
    )


def test_a_weight_shared_through_an_identity_is_stored_once() -> None:
    """Exporters tie weights through Identity nodes: one nn.constant, one weights entry."""
    model = make_model(
        [
            helper.make_node("Identity", ["w"], ["w2"]),
            helper.make_node("Conv", ["x", "w"], ["a"]),
            helper.make_node("Conv", ["x", "w2"], ["b"]),
            helper.make_node("Add", ["a", "b"], ["y"]),
        ],
        X4,
        ["y"],
        {"w": weight(6, 4, 3, 3)},
    )
    imported = import_model(model, inline_limit=4)
    assert list(imported.weights) == ["w"]
    assert_matches(model)


@pytest.mark.parametrize("opset", [6, 17])
def test_a_nan_clip_bound_is_refused(tmp_path: Path, opset: int) -> None:
    """ONNX leaves it open: onnxruntime ignores the bound, numpy and ONNX's reference give
    NaN everywhere (nnlayout gave NaN, and oneDNN's fused clip an internal error)."""
    model = (
        make_model([node("Clip", ["x"], max=float("nan"))], X4, ["y"], opset=opset)
        if opset < 11
        else make_model([node("Clip", ["x", "", "hi"])], X4, ["y"], {"hi": np.float32("nan")})
    )
    assert_clean_error(
        nnlayout_import(str(save(model, tmp_path / "clip.onnx"))),
        "node 'clip_node' (Clip)",
        "Clip's max is NaN, which ONNX leaves open",
    )


def test_an_opset_6_dropout_is_in_training_mode_unless_is_test(tmp_path: Path) -> None:
    """(onnxruntime has no Dropout-6 to compare with.)"""
    model = make_model([node("Dropout", ["x"])], X4, ["y"], opset=6)
    assert_clean_error(
        nnlayout_import(str(save(model, tmp_path / "dropout6.onnx"))),
        "node 'dropout_node' (Dropout)",
        "Dropout in training mode",
    )
    inference = make_model([node("Dropout", ["x"], is_test=1)], X4, ["y"], opset=6)
    assert "func.return %x :" in round_trip(inference)


def test_non_constant_compile_time_operands(tmp_path: Path) -> None:
    model = make_model([node("Clip", ["x", "lo"])], {**X4, "lo": ()}, ["y"])
    assert_clean_error(
        nnlayout_import(str(save(model, tmp_path / "c.onnx"))),
        "node 'clip_node' (Clip)",
        "min 'lo' must be a constant",
    )
    model = make_model([node("Reshape", ["x", "s"])], X4, ["y"])
    model.graph.input.append(helper.make_tensor_value_info("s", TensorProto.INT64, [2]))
    assert_clean_error(
        nnlayout_import(str(save(model, tmp_path / "r.onnx"))), "graph input 's'", "INT64"
    )


@pytest.mark.parametrize("location", ["../outside.bin", "/etc/hostname", "sub/../../x.bin"])
def test_external_data_outside_the_folder_is_refused(tmp_path: Path, location: str) -> None:
    model = copy(CASES["conv"])
    folder = tmp_path / "model"
    folder.mkdir()
    onnx.save(
        model, folder / "m.onnx", save_as_external_data=True, location="m.data", size_threshold=0
    )
    (tmp_path / "outside.bin").write_bytes((folder / "m.data").read_bytes())
    proto = onnx.load(folder / "m.onnx", load_external_data=False)
    for tensor in proto.graph.initializer:
        for entry in tensor.external_data:
            if entry.key == "location":
                entry.value = location
    save(proto, folder / "m.onnx")
    assert_clean_error(nnlayout_import(str(folder / "m.onnx")), "outside the model's folder")


def test_stdout_needs_inline_weights(tmp_path: Path) -> None:
    path = save(CASES["conv"], tmp_path / "conv.onnx")
    assert_clean_error(nnlayout_import(str(path)), "-o OUT.mlir")
    inline = nnlayout_import(str(path), "--inline-weights")
    assert inline.returncode == 0, inline.stderr
    assert "nn.conv2d" in inline.stdout and "external" not in inline.stdout


def test_cli_writes_mlir_and_npz(tmp_path: Path) -> None:
    path = save(CASES["conv"], tmp_path / "conv.onnx")
    result = nnlayout_import(str(path), "-o", str(tmp_path / "out.mlir"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out.npz").is_file()
    assert f'{WEIGHTS_ATTR} = "out.npz"' in (tmp_path / "out.mlir").read_text()


def test_importer_errors_are_user_errors() -> None:
    """In-process callers get a UserError naming the node, too."""
    model = make_model([node("Conv", ["x", "w"])], X4, ["y"], {"w": weight(6, 5, 3, 3)})
    with pytest.raises(UserError, match=r"node 'conv_node' \(Conv\)"):
        import_model(model)


def test_initializers_listed_as_graph_inputs_are_not_arguments() -> None:
    """Before IR version 4 every initializer is also a graph input; only the rest are
    function arguments."""
    model = make_model(
        [node("MatMul", ["x", "w"])], {"x": (2, 4), "w": (4, 5)}, ["y"], {"w": weight(4, 5)}
    )
    text = round_trip(model)
    assert "func.func @main(%x: tensor<2x4xf32>) -> tensor<2x5xf32>" in text
    assert_matches(model)
