"""The ONNX importer, op by op against onnxruntime (`CASES`), and the graph forms around the
ops: outputs declared without a shape, optional outputs nothing reads, legacy (opset < 7)
broadcasting and attributes, constants passed on by an Identity, initializers listed as graph
inputs. Its helpers (`make_model`, `node`, `assert_matches`, ...) serve the other
test_onnx_import_* files."""

from __future__ import annotations

import io
import sys
from collections.abc import Sequence

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from nnlayout.diagnostics import UserError
from nnlayout.frontends.onnx import import_model
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.ir.printer import print_module
from nnlayout.runtime.interpreter import run_function

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
    model = legacy_binary(op, b, **attrs)
    x = RNG.standard_normal((1, 3, 2, 4)).astype(np.float32)
    (got,) = run_function(parse_module(make_context(), round_trip(model), "test"), [x])
    np.testing.assert_allclose(got, LEGACY_BINARY[op](x, b.reshape(aligned)), rtol=1e-6)


def test_legacy_binary_without_broadcast_needs_one_shape() -> None:
    model = legacy_binary("Add", weight(4))
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


def copy(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy (onnx.save with external data rewrites the model it is given)."""
    return onnx.ModelProto.FromString(model.SerializeToString())


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


def test_initializers_listed_as_graph_inputs_are_not_arguments() -> None:
    """Before IR version 4 every initializer is also a graph input; only the rest are
    function arguments."""
    model = make_model(
        [node("MatMul", ["x", "w"])], {"x": (2, 4), "w": (4, 5)}, ["y"], {"w": weight(4, 5)}
    )
    text = round_trip(model)
    assert "func.func @main(%x: tensor<2x4xf32>) -> tensor<2x5xf32>" in text
    assert_matches(model)
