"""Every nn op's builder (and so its shape rule) against numpy and ONNX: convolutions, matrix
products, normalization and pooling here; element-wise ops and data movement in
test_shape_rules_elementwise.py, which shares `value`, `result_shape` and `onnx_shape`.

The ONNX side is `onnx.shape_inference.infer_shapes` on a one-node model, except for pooling
with ceil_mode: ONNX's shape inference does not yet drop a last window that would start in the
right padding, which the operator's specification (and onnxruntime, and PyTorch) require, so
those cases are checked against onnxruntime's output shape."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import onnxruntime
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Attribute, SSAValue
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn

Shape = tuple[int, ...]
SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, database=None)


def value(
    shape: Sequence[int], element: Attribute = f32, encoding: Attribute | None = None
) -> SSAValue:
    if encoding is None:
        return create_ssa_value(TensorType(element, shape))
    return create_ssa_value(TensorType(element, shape, encoding))


def result_shape(op: nn.NNOp) -> Shape:
    """The builder's result shape, after checking that the built op verifies."""
    op.verify()
    return tuple(nn.shape_of(op.results[0]))


def one_node_model(
    op_type: str,
    inputs: Sequence[Shape],
    attributes: dict[str, object],
    initializers: dict[str, np.ndarray] | None = None,
    opset: int = 19,
) -> onnx.ModelProto:
    names = [f"x{i}" for i in range(len(inputs))] + list(initializers or {})
    graph = helper.make_graph(
        [helper.make_node(op_type, names, ["y"], **attributes)],
        "one_node",
        [
            helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, list(shape))
            for i, shape in enumerate(inputs)
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(array, name) for name, array in (initializers or {}).items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def onnx_shape(
    op_type: str,
    inputs: Sequence[Shape],
    attributes: dict[str, object] | None = None,
    initializers: dict[str, np.ndarray] | None = None,
    opset: int = 19,
) -> Shape:
    """The output shape ONNX's shape inference gives a one-node model."""
    model = one_node_model(op_type, inputs, attributes or {}, initializers, opset)
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    dims = inferred.graph.output[0].type.tensor_type.shape.dim
    assert all(d.HasField("dim_value") for d in dims), f"ONNX left {op_type}'s shape symbolic"
    return tuple(d.dim_value for d in dims)


def onnxruntime_shape(
    op_type: str, inputs: Sequence[Shape], attributes: dict[str, object], opset: int = 19
) -> Shape:
    """The shape of the output onnxruntime computes for a one-node model."""
    model = one_node_model(op_type, inputs, attributes, opset=opset)
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    feeds = {f"x{i}": np.ones(shape, np.float32) for i, shape in enumerate(inputs)}
    return tuple(session.run(None, feeds)[0].shape)


# ------------------------------------------------------------------ convolution
def conv_attributes(
    strides: Sequence[int], pads: Sequence[int], dilations: Sequence[int], groups: int
) -> dict[str, object]:
    return {
        "strides": list(strides),
        "pads": list(pads),
        "dilations": list(dilations),
        "group": groups,
    }


@pytest.mark.parametrize(
    ("x", "w", "strides", "pads", "dilations", "groups"),
    [
        ((1, 3, 224, 224), (64, 3, 7, 7), (2, 2), (3, 3, 3, 3), (1, 1), 1),  # ResNet stem
        ((1, 64, 56, 56), (64, 64, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
        ((2, 32, 28, 28), (32, 1, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 32),  # depthwise
        ((1, 8, 17, 9), (12, 2, 3, 2), (3, 2), (0, 1, 2, 0), (2, 3), 4),  # asymmetric
        ((1, 4, 5, 5), (6, 4, 5, 5), (1, 1), (0, 0, 0, 0), (1, 1), 1),  # 1x1 output
    ],
)
def test_conv2d(
    x: Shape, w: Shape, strides: Shape, pads: Shape, dilations: Shape, groups: int
) -> None:
    expected = onnx_shape(
        "Conv", [x, w, (w[0],)], conv_attributes(strides, pads, dilations, groups)
    )
    op = nn.Conv2dOp(
        value(x),
        value(w),
        value((w[0],)),
        strides=strides,
        pads=pads,
        dilations=dilations,
        groups=groups,
    )
    assert result_shape(op) == expected
    no_bias = nn.Conv2dOp(
        value(x), value(w), strides=strides, pads=pads, dilations=dilations, groups=groups
    )
    assert result_shape(no_bias) == expected


@st.composite
def conv_cases(draw: st.DrawFn) -> tuple[Shape, Shape, Shape, Shape, Shape, int]:
    groups = draw(st.integers(1, 3))
    x = (
        draw(st.integers(1, 2)),
        groups * draw(st.integers(1, 3)),
        draw(st.integers(1, 12)),
        draw(st.integers(1, 12)),
    )
    w = (
        groups * draw(st.integers(1, 3)),
        x[1] // groups,
        draw(st.integers(1, 4)),
        draw(st.integers(1, 4)),
    )
    strides = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    pads = tuple(draw(st.integers(0, 2)) for _ in range(4))
    dilations = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    return x, w, strides, pads, dilations, groups


@SETTINGS
@given(conv_cases())
def test_conv2d_random(case: tuple[Shape, Shape, Shape, Shape, Shape, int]) -> None:
    x, w, strides, pads, dilations, groups = case
    for axis in range(2):
        extent = dilations[axis] * (w[2 + axis] - 1) + 1
        assume(x[2 + axis] + pads[axis] + pads[axis + 2] >= extent)
    expected = onnx_shape("Conv", [x, w], conv_attributes(strides, pads, dilations, groups))
    op = nn.Conv2dOp(
        value(x), value(w), strides=strides, pads=pads, dilations=dilations, groups=groups
    )
    assert result_shape(op) == expected


@pytest.mark.parametrize(
    ("x", "w", "strides", "pads", "output_padding", "dilations", "groups"),
    [
        ((1, 8, 16, 16), (8, 4, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1), (1, 1), 2),
        ((1, 64, 7, 7), (64, 32, 4, 4), (2, 2), (1, 1, 1, 1), (0, 0), (1, 1), 1),
        ((2, 3, 5, 4), (3, 2, 3, 2), (3, 1), (0, 1, 2, 0), (2, 0), (1, 2), 1),
    ],
)
def test_conv_transpose2d(
    x: Shape,
    w: Shape,
    strides: Shape,
    pads: Shape,
    output_padding: Shape,
    dilations: Shape,
    groups: int,
) -> None:
    channels = w[1] * groups
    expected = onnx_shape(
        "ConvTranspose",
        [x, w, (channels,)],
        {
            **conv_attributes(strides, pads, dilations, groups),
            "output_padding": list(output_padding),
        },
    )
    op = nn.ConvTranspose2dOp(
        value(x),
        value(w),
        value((channels,)),
        strides=strides,
        pads=pads,
        output_padding=output_padding,
        dilations=dilations,
        groups=groups,
    )
    assert result_shape(op) == expected


@st.composite
def conv_transpose_cases(draw: st.DrawFn) -> tuple[Shape, ...]:
    groups = draw(st.integers(1, 3))
    x = (1, groups * draw(st.integers(1, 2)), draw(st.integers(1, 6)), draw(st.integers(1, 6)))
    w = (x[1], draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    strides = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilations = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    output_padding = tuple(
        draw(st.integers(0, max(s, d) - 1)) for s, d in zip(strides, dilations, strict=True)
    )
    pads = tuple(draw(st.integers(0, 2)) for _ in range(4))
    return x, w, strides, pads, output_padding, dilations, (groups,)


@SETTINGS
@given(conv_transpose_cases())
def test_conv_transpose2d_random(case: tuple[Shape, ...]) -> None:
    x, w, strides, pads, output_padding, dilations, (groups,) = case
    for axis in range(2):
        full = (
            strides[axis] * (x[2 + axis] - 1)
            + output_padding[axis]
            + dilations[axis] * (w[2 + axis] - 1)
            + 1
        )
        assume(full > pads[axis] + pads[axis + 2])
    expected = onnx_shape(
        "ConvTranspose",
        [x, w],
        {
            **conv_attributes(strides, pads, dilations, groups),
            "output_padding": list(output_padding),
        },
    )
    op = nn.ConvTranspose2dOp(
        value(x),
        value(w),
        strides=strides,
        pads=pads,
        output_padding=output_padding,
        dilations=dilations,
        groups=groups,
    )
    assert result_shape(op) == expected


# ------------------------------------------------------------ matrix products
MATMUL_CASES = [
    ((2, 3), (3, 4)),
    ((3,), (3, 4)),
    ((2, 3), (3,)),
    ((3,), (3,)),
    ((5, 2, 3), (3, 4)),
    ((2, 1, 4, 3), (6, 3, 5)),
    ((1, 2, 3), (7, 1, 3, 2)),
    ((3,), (2, 3, 4)),
    ((2, 4, 3), (3,)),
]


@pytest.mark.parametrize(("a", "b"), MATMUL_CASES)
def test_matmul(a: Shape, b: Shape) -> None:
    expected = np.matmul(np.zeros(a), np.zeros(b)).shape
    assert onnx_shape("MatMul", [a, b]) == expected
    assert result_shape(nn.MatmulOp(value(a), value(b))) == expected


@SETTINGS
@given(
    mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=1, max_side=4),
    st.integers(1, 5),
    st.integers(1, 5),
    st.integers(1, 5),
    st.booleans(),
    st.booleans(),
)
def test_matmul_random(
    batch: object, m: int, k: int, n: int, vector_a: bool, vector_b: bool
) -> None:
    batch_a, batch_b = batch.input_shapes  # type: ignore[attr-defined]
    a = (k,) if vector_a else (*batch_a, m, k)
    b = (k,) if vector_b else (*batch_b, k, n)
    expected = np.matmul(np.zeros(a), np.zeros(b)).shape
    assert result_shape(nn.MatmulOp(value(a), value(b))) == expected


@pytest.mark.parametrize(
    ("a", "b", "c", "trans_a", "trans_b"),
    [
        ((4, 512), (1000, 512), (1000,), False, True),
        ((512, 4), (512, 10), (4, 1), True, False),
        ((3, 5), (7, 3), (1,), True, True),
        ((2, 3), (3, 6), None, False, False),
        ((2, 3), (3, 6), (2, 6), False, False),
    ],
)
def test_gemm(a: Shape, b: Shape, c: Shape | None, trans_a: bool, trans_b: bool) -> None:
    inputs = [a, b] if c is None else [a, b, c]
    expected = onnx_shape("Gemm", inputs, {"transA": int(trans_a), "transB": int(trans_b)})
    lhs = np.zeros(a).T if trans_a else np.zeros(a)
    rhs = np.zeros(b).T if trans_b else np.zeros(b)
    assert expected == (lhs @ rhs).shape
    op = nn.GemmOp(
        value(a),
        value(b),
        None if c is None else value(c),
        trans_a=trans_a,
        trans_b=trans_b,
        alpha=0.5,
        beta=2.0,
    )
    assert result_shape(op) == expected
    assert op.alpha.value.data == 0.5 and op.beta.value.data == 2.0


# ----------------------------------------------------- normalization, pooling
@pytest.mark.parametrize("shape", [(2, 16), (1, 3, 8), (2, 16, 7, 7), (1, 4, 2, 3, 5)])
def test_batch_norm(shape: Shape) -> None:
    channels = (shape[1],)
    expected = onnx_shape("BatchNormalization", [shape] + [channels] * 4, {"epsilon": 1e-3})
    params = [value(channels) for _ in range(4)]
    op = nn.BatchNormOp(value(shape), *params, epsilon=1e-3)
    assert result_shape(op) == expected
    assert op.epsilon.value.data == pytest.approx(1e-3)


def pool_attributes(
    kernel: Shape, strides: Shape, pads: Shape, dilations: Shape, ceil_mode: bool
) -> dict[str, object]:
    return {
        "kernel_shape": list(kernel),
        "strides": list(strides),
        "pads": list(pads),
        "dilations": list(dilations),
        "ceil_mode": int(ceil_mode),
    }


POOL_CASES = [
    # x, kernel, strides, pads, dilations
    ((1, 64, 112, 112), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),
    ((1, 8, 7, 7), (2, 2), (2, 2), (0, 0, 0, 0), (1, 1)),
    ((2, 3, 10, 9), (3, 2), (3, 2), (1, 0, 2, 1), (1, 1)),
    ((1, 1, 9, 11), (2, 3), (1, 2), (1, 1, 0, 2), (2, 2)),
    ((1, 2, 6, 6), (3, 3), (4, 4), (2, 2, 2, 2), (1, 1)),
]


@pytest.mark.parametrize(
    ("op_class", "onnx_op"), [(nn.MaxPool2dOp, "MaxPool"), (nn.AvgPool2dOp, "AveragePool")]
)
@pytest.mark.parametrize(("x", "kernel", "strides", "pads", "dilations"), POOL_CASES)
def test_pool(
    op_class: type[nn.Pool2dOp],
    onnx_op: str,
    x: Shape,
    kernel: Shape,
    strides: Shape,
    pads: Shape,
    dilations: Shape,
) -> None:
    floor = onnx_shape(onnx_op, [x], pool_attributes(kernel, strides, pads, dilations, False))
    ceil = onnxruntime_shape(onnx_op, [x], pool_attributes(kernel, strides, pads, dilations, True))
    for ceil_mode, expected in ((False, floor), (True, ceil)):
        op = op_class(
            value(x),
            kernel=kernel,
            strides=strides,
            pads=pads,
            dilations=dilations,
            ceil_mode=ceil_mode,
        )
        assert result_shape(op) == expected
        assert (op.ceil_mode is not None) == ceil_mode


def test_ceil_mode_drops_a_window_in_the_right_padding() -> None:
    # 6 + 2 + 2 pads, kernel 3, stride 4: windows would start at 0, 4 and 8, but 8 is past the
    # input and its leading pad (2 + 6), so there are 2 windows, not ceil(7/4) + 1 = 3.
    attributes = pool_attributes((3, 3), (4, 4), (2, 2, 2, 2), (1, 1), True)
    assert onnxruntime_shape("MaxPool", [(1, 2, 6, 6)], attributes) == (1, 2, 2, 2)
    op = nn.MaxPool2dOp(
        value((1, 2, 6, 6)), kernel=(3, 3), strides=(4, 4), pads=(2, 2, 2, 2), ceil_mode=True
    )
    assert result_shape(op) == (1, 2, 2, 2)


def test_ceil_mode_keeps_a_partial_first_window() -> None:
    attributes = pool_attributes((3, 3), (2, 2), (0, 0, 0, 0), (1, 1), True)
    assert onnxruntime_shape("MaxPool", [(1, 2, 2, 2)], attributes) == (1, 2, 1, 1)
    op = nn.MaxPool2dOp(value((1, 2, 2, 2)), kernel=(3, 3), strides=(2, 2), ceil_mode=True)
    assert result_shape(op) == (1, 2, 1, 1)
    with pytest.raises(VerifyException, match="window of extent 3 .* does not fit"):
        nn.MaxPool2dOp(value((1, 2, 2, 2)), kernel=(3, 3), strides=(2, 2))


@st.composite
def pool_cases(draw: st.DrawFn) -> tuple[Shape, ...]:
    kernel = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    x = (1, draw(st.integers(1, 3)), draw(st.integers(1, 12)), draw(st.integers(1, 12)))
    strides = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilations = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    # onnxruntime wants pads < kernel (stricter than our pads < dilated extent).
    pads = tuple(draw(st.integers(0, kernel[i % 2] - 1)) for i in range(4))
    return x, kernel, strides, pads, dilations


@SETTINGS
@given(pool_cases(), st.booleans())
def test_pool_random(case: tuple[Shape, ...], ceil_mode: bool) -> None:
    x, kernel, strides, pads, dilations = case
    for axis in range(2):
        extent = dilations[axis] * (kernel[axis] - 1) + 1
        assume(x[2 + axis] + pads[axis] + pads[axis + 2] >= extent)
    attributes = pool_attributes(kernel, strides, pads, dilations, ceil_mode)
    expected = (
        onnxruntime_shape("MaxPool", [x], attributes)
        if ceil_mode
        else onnx_shape("MaxPool", [x], attributes)
    )
    op = nn.MaxPool2dOp(
        value(x),
        kernel=kernel,
        strides=strides,
        pads=pads,
        dilations=dilations,
        ceil_mode=ceil_mode,
    )
    assert result_shape(op) == expected


def test_avg_pool_count_include_pad() -> None:
    op = nn.AvgPool2dOp(
        value((1, 2, 4, 4)), kernel=(3, 3), pads=(1, 1, 1, 1), count_include_pad=True
    )
    assert result_shape(op) == (1, 2, 4, 4)
    assert op.count_include_pad is not None
    assert nn.AvgPool2dOp(value((1, 2, 4, 4)), kernel=(2, 2)).count_include_pad is None


@pytest.mark.parametrize("shape", [(2, 16, 7), (1, 64, 7, 7), (2, 3, 4, 5, 6)])
def test_global_avg_pool(shape: Shape) -> None:
    expected = onnx_shape("GlobalAveragePool", [shape])
    assert result_shape(nn.GlobalAvgPoolOp(value(shape))) == expected
