"""Each reference kernel against an independent oracle: onnxruntime running a one-node ONNX
model with the same attributes (ONNX semantics are the spec of the nn dialect)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Operation, SSAValue
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.kernels.reference import REFERENCE_KERNELS

OPSET = 19  # AveragePool with dilations


def onnx_run(
    op_type: str,
    inputs: Sequence[np.ndarray | None],
    constants: Sequence[np.ndarray] = (),
    opset: int = OPSET,
    **attributes: Any,
) -> np.ndarray:
    """Runs one ONNX node on `inputs` (None = an omitted optional input); `constants` are
    extra inputs passed as initializers (e.g. Reshape's shape)."""
    names = ["" if a is None else f"in{i}" for i, a in enumerate(inputs)]
    initializers = [numpy_helper.from_array(c, f"const{i}") for i, c in enumerate(constants)]
    node = helper.make_node(op_type, names + [t.name for t in initializers], ["out"], **attributes)
    graph = helper.make_graph(
        [node],
        "one_node",
        [
            helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape)
            for n, a in zip(names, inputs, strict=True)
            if a is not None
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        initializer=initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # onnx's own shape inference warns on ceil_mode pools
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    feed = {n: a for n, a in zip(names, inputs, strict=True) if a is not None}
    return session.run(None, feed)[0]


def value(array: np.ndarray) -> SSAValue:
    return create_ssa_value(TensorType(f32, array.shape))


def run_kernel(build: Callable[..., Operation], *arrays: np.ndarray, **kwargs: Any) -> np.ndarray:
    """Builds the nn op on values typed like `arrays`, verifies it and runs its kernel."""
    op = build(*(value(a) for a in arrays), **kwargs)
    op.verify()
    with np.errstate(all="ignore"):  # exp overflows to inf, as in onnxruntime
        result = REFERENCE_KERNELS[type(op)](op, arrays)
    assert result.dtype == np.float32
    assert result.shape == nn.shape_of(op.results[0])
    return result


def random(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(np.float32)


def close(actual: np.ndarray, expected: np.ndarray, tolerance: float = 1e-5) -> None:
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=tolerance, atol=tolerance)


# ------------------------------------------------------------------- convolutions
CONV_CASES = [
    # x shape, weight shape, strides, pads [t, l, b, r], dilations, groups, bias
    ((1, 3, 9, 9), (4, 3, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1, False),
    ((2, 3, 10, 9), (5, 3, 3, 2), (2, 1), (1, 0, 2, 1), (1, 1), 1, True),
    ((1, 4, 11, 12), (6, 2, 3, 3), (1, 2), (1, 1, 1, 1), (2, 2), 2, True),
    ((1, 6, 8, 8), (6, 1, 3, 3), (2, 2), (1, 1, 0, 0), (1, 1), 6, True),  # depthwise
    ((1, 8, 7, 7), (16, 8, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, True),  # 1x1
    ((1, 3, 13, 13), (2, 3, 7, 5), (3, 2), (3, 2, 1, 0), (1, 2), 1, False),
]


@pytest.mark.parametrize(("xs", "ws", "strides", "pads", "dilations", "groups", "bias"), CONV_CASES)
def test_conv2d(
    xs: tuple[int, ...],
    ws: tuple[int, ...],
    strides: tuple[int, int],
    pads: tuple[int, ...],
    dilations: tuple[int, int],
    groups: int,
    bias: bool,
) -> None:
    x, w = random(*xs), random(*ws, seed=1)
    b = random(ws[0], seed=2) if bias else None
    arrays = (x, w) if b is None else (x, w, b)
    ours = run_kernel(
        lambda *v: nn.Conv2dOp(*v, strides=strides, pads=pads, dilations=dilations, groups=groups),
        *arrays,
    )
    expected = onnx_run(
        "Conv",
        [x, w, b],
        strides=list(strides),
        pads=list(pads),
        dilations=list(dilations),
        group=groups,
        kernel_shape=list(ws[2:]),
    )
    close(ours, expected, 1e-4)


CONV_TRANSPOSE_CASES = [
    # x shape, weight shape [C_in, C_out/groups, kH, kW], strides, pads, output_padding,
    # dilations, groups, bias
    ((1, 3, 5, 5), (3, 2, 3, 3), (1, 1), (0, 0, 0, 0), (0, 0), (1, 1), 1, False),
    ((2, 4, 4, 5), (4, 3, 3, 2), (2, 3), (1, 0, 0, 1), (1, 2), (1, 1), 1, True),
    ((1, 4, 6, 5), (4, 1, 3, 3), (2, 2), (1, 1, 1, 1), (1, 0), (2, 1), 2, True),
    ((1, 6, 4, 4), (6, 1, 4, 4), (2, 2), (1, 1, 1, 1), (0, 0), (1, 1), 6, False),
]


@pytest.mark.parametrize(
    ("xs", "ws", "strides", "pads", "output_padding", "dilations", "groups", "bias"),
    CONV_TRANSPOSE_CASES,
)
def test_conv_transpose2d(
    xs: tuple[int, ...],
    ws: tuple[int, ...],
    strides: tuple[int, int],
    pads: tuple[int, ...],
    output_padding: tuple[int, int],
    dilations: tuple[int, int],
    groups: int,
    bias: bool,
) -> None:
    x, w = random(*xs), random(*ws, seed=1)
    b = random(ws[1] * groups, seed=2) if bias else None
    arrays = (x, w) if b is None else (x, w, b)
    ours = run_kernel(
        lambda *v: nn.ConvTranspose2dOp(
            *v,
            strides=strides,
            pads=pads,
            output_padding=output_padding,
            dilations=dilations,
            groups=groups,
        ),
        *arrays,
    )
    expected = onnx_run(
        "ConvTranspose",
        [x, w, b],
        strides=list(strides),
        pads=list(pads),
        output_padding=list(output_padding),
        dilations=list(dilations),
        group=groups,
        kernel_shape=list(ws[2:]),
    )
    close(ours, expected, 1e-4)


# ---------------------------------------------------------------- linear algebra
@pytest.mark.parametrize(
    ("a", "b"),
    [
        ((3, 4), (4, 5)),
        ((2, 1, 3, 4), (5, 4, 2)),  # broadcast batch dimensions
        ((4,), (2, 4, 3)),  # 1-D lhs is promoted then squeezed
        ((2, 3, 4), (4,)),  # 1-D rhs
    ],
)
def test_matmul(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    lhs, rhs = random(*a), random(*b, seed=1)
    close(run_kernel(nn.MatmulOp, lhs, rhs), onnx_run("MatMul", [lhs, rhs]))


@pytest.mark.parametrize(
    ("trans_a", "trans_b", "alpha", "beta", "c_shape"),
    [
        (False, False, 1.0, 1.0, None),
        (False, True, 0.5, 2.0, (5,)),
        (True, False, 1.5, -1.0, (3, 1)),
        (True, True, 1.0, 0.25, (3, 5)),
    ],
)
def test_gemm(
    trans_a: bool, trans_b: bool, alpha: float, beta: float, c_shape: tuple[int, ...] | None
) -> None:
    a = random(*((4, 3) if trans_a else (3, 4)))
    b = random(*((5, 4) if trans_b else (4, 5)), seed=1)
    c = None if c_shape is None else random(*c_shape, seed=2)
    arrays = (a, b) if c is None else (a, b, c)
    ours = run_kernel(
        lambda *v: nn.GemmOp(*v, trans_a=trans_a, trans_b=trans_b, alpha=alpha, beta=beta), *arrays
    )
    expected = onnx_run(
        "Gemm", [a, b, c], transA=int(trans_a), transB=int(trans_b), alpha=alpha, beta=beta
    )
    close(ours, expected)


def test_gemm_with_beta_zero_does_not_add_c() -> None:
    """onnxruntime (and onnx's reference evaluator) leave C out when beta = 0; the kernel
    added 0 * C, so an inf in C gave NaN where onnxruntime gives A @ B (3.0 here)."""
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    c = np.array([[np.inf, np.nan, 1, 1]] * 2, np.float32)
    ours = run_kernel(lambda *v: nn.GemmOp(*v, beta=0.0), a, b, c)
    expected = onnx_run("Gemm", [a, b, c], beta=0.0)
    np.testing.assert_array_equal(ours, expected)
    np.testing.assert_array_equal(ours, np.full((2, 4), 3, np.float32))


# ------------------------------------------------------------------ element-wise
@pytest.mark.parametrize(
    ("build", "onnx_op"),
    [
        (nn.ReluOp, "Relu"),
        (nn.SigmoidOp, "Sigmoid"),
        (nn.TanhOp, "Tanh"),
        (nn.ExpOp, "Exp"),
        (nn.NegOp, "Neg"),
        (nn.AbsOp, "Abs"),
    ],
)
def test_unary(build: Callable[..., Operation], onnx_op: str) -> None:
    x = random(2, 3, 4) * 4
    x[0, 0, :2] = (-100.0, 100.0)  # saturation of sigmoid/tanh
    close(run_kernel(build, x), onnx_run(onnx_op, [x]))


def test_sqrt() -> None:
    x = np.abs(random(3, 7))
    close(run_kernel(nn.SqrtOp, x), onnx_run("Sqrt", [x]))


def test_leaky_relu() -> None:
    x = random(2, 5)
    close(run_kernel(nn.LeakyReluOp, x, alpha=0.2), onnx_run("LeakyRelu", [x], alpha=0.2))


# The activations of dialects/nn/activations.py, with non-default attributes where they have
# some (Gelu is an opset-20 operator), on values that saturate, and on NaN, infinities and
# signed zeros, which onnxruntime maps as the reference does (-inf * 0 = NaN in HardSwish,
# Gelu, Mish).
ACTIVATION_CASES = [
    (nn.HardSwishOp, "HardSwish", {}),
    (nn.HardSigmoidOp, "HardSigmoid", {"alpha": 0.3, "beta": 0.4}),
    (nn.GeluOp, "Gelu", {}),
    (nn.GeluOp, "Gelu", {"approximate": "tanh"}),
    (nn.ErfOp, "Erf", {}),
    (nn.EluOp, "Elu", {"alpha": 0.7}),
    (nn.SeluOp, "Selu", {"alpha": 1.5, "gamma": 1.1}),
    (nn.SoftplusOp, "Softplus", {}),
    (nn.MishOp, "Mish", {}),
    (nn.ReciprocalOp, "Reciprocal", {}),
    (nn.LogOp, "Log", {}),
]
SPECIAL_VALUES = np.array(
    [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 100.0, -100.0, 1e-8, -1e-8], np.float32
)


@pytest.mark.parametrize(("build", "onnx_op", "attributes"), ACTIVATION_CASES)
def test_activations(build: Callable[..., Operation], onnx_op: str, attributes: dict) -> None:
    x = random(2, 3, 8) * 4
    x[0, 0, :2] = (-100.0, 100.0)
    for data in (x, SPECIAL_VALUES):
        expected = onnx_run(onnx_op, [data], opset=20, **attributes)
        actual = run_kernel(build, data, **attributes)
        np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
        close(actual, expected)


@pytest.mark.parametrize("exponent", [2.0, 0.5, 3.0, -1.0, 0.0, -0.5, 1.5])
def test_pow_with_a_constant_exponent(exponent: float) -> None:
    """IEEE pow, as onnxruntime computes it: pow(-inf, 0.5) is inf (numpy's sqrt gave
    NaN), pow(NaN, 0) is 1, a negative base with a non-integer exponent NaN."""
    for data in (random(3, 7) * 3, SPECIAL_VALUES):
        expected = onnx_run("Pow", [data], [np.array(exponent, np.float32)])
        actual = run_kernel(nn.PowOp, data, exponent=exponent)
        np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
        close(actual, expected)


@pytest.mark.parametrize(("low", "high"), [(None, None), (-0.5, None), (None, 0.3), (-0.2, 0.7)])
def test_clip(low: float | None, high: float | None) -> None:
    x = random(4, 6)
    bounds = [None if b is None else np.array(b, np.float32) for b in (low, high)]
    close(run_kernel(nn.ClipOp, x, min=low, max=high), onnx_run("Clip", [x, *bounds]))


@pytest.mark.parametrize(
    ("build", "onnx_op"),
    [
        (nn.AddOp, "Add"),
        (nn.SubOp, "Sub"),
        (nn.MulOp, "Mul"),
        (nn.DivOp, "Div"),
        (nn.MaxOp, "Max"),
        (nn.MinOp, "Min"),
    ],
)
@pytest.mark.parametrize(
    ("a", "b"), [((2, 3, 4), (2, 3, 4)), ((2, 1, 4), (3, 1)), ((5,), (2, 3, 5))]
)
def test_binary_broadcast(
    build: Callable[..., Operation], onnx_op: str, a: tuple[int, ...], b: tuple[int, ...]
) -> None:
    lhs, rhs = random(*a), random(*b, seed=1) + 3.0  # away from 0 for div
    close(run_kernel(build, lhs, rhs), onnx_run(onnx_op, [lhs, rhs]))


@pytest.mark.parametrize("op_type", ["Max", "Min", "PRelu"])
def test_max_min_prelu_special_values_as_onnxruntime(op_type: str) -> None:
    """NaN in either operand propagates (Max, Min, PRelu's input); PRelu keeps a zero (also
    -0.0) whatever its slope, x < 0 being false, and a NaN slope reaches negative x only."""
    special = [np.nan, -np.inf, np.inf, 0.0, -0.0, 1.5, -2.0]
    a, b = np.meshgrid(np.array(special, np.float32), np.array(special, np.float32))
    build = {"Max": nn.MaxOp, "Min": nn.MinOp, "PRelu": nn.PReluOp}[op_type]
    got, want = run_kernel(build, a, b), onnx_run(op_type, [a, b])
    np.testing.assert_array_equal(got, want)
    zeros = want == 0
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))


@pytest.mark.parametrize("slope", [(3, 1, 1), (1,), (1, 3, 1, 1), (4,)])
def test_prelu_slope_broadcasts_to_the_input(slope: tuple[int, ...]) -> None:
    x, s = random(2, 3, 5, 4), random(*slope, seed=1)
    close(run_kernel(nn.PReluOp, x, s), onnx_run("PRelu", [x, s]))


@pytest.mark.parametrize("shapes", [[(2, 3)], [(2, 3), (3,)], [(4, 1, 3), (2, 1), (1, 2, 3)]])
def test_sum(shapes: list[tuple[int, ...]]) -> None:
    arrays = [random(*s, seed=i) for i, s in enumerate(shapes)]
    close(run_kernel(lambda *v: nn.SumOp(list(v)), *arrays), onnx_run("Sum", arrays))


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 3)])
def test_batch_norm(shape: tuple[int, ...]) -> None:
    x = random(*shape)
    c = shape[1]
    params = [
        random(c, seed=1),
        random(c, seed=2),
        random(c, seed=3),
        np.abs(random(c, seed=4)) + 0.1,
    ]
    ours = run_kernel(lambda *v: nn.BatchNormOp(*v, epsilon=1e-3), x, *params)
    close(ours, onnx_run("BatchNormalization", [x, *params], epsilon=1e-3), 1e-4)


# ---------------------------------------------------------------------- pooling
POOL_CASES = [
    # x shape, kernel, strides, pads [t, l, b, r], dilations, ceil_mode
    ((1, 2, 8, 8), (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), False),
    ((2, 3, 9, 10), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), False),
    ((1, 2, 8, 9), (3, 2), (2, 3), (1, 0, 1, 1), (1, 1), True),  # asymmetric pads
    ((1, 2, 8, 7), (3, 3), (2, 2), (0, 0, 0, 0), (1, 1), True),  # overhang past the input
    ((1, 2, 11, 10), (3, 2), (2, 1), (1, 1, 0, 1), (2, 2), True),  # dilated
    ((1, 1, 6, 6), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), True),  # input, pad and overhang
]


def pool_attributes(
    kernel: tuple[int, int],
    strides: tuple[int, int],
    pads: tuple[int, ...],
    dilations: tuple[int, int],
    ceil_mode: bool,
) -> dict[str, Any]:
    return {
        "kernel_shape": list(kernel),
        "strides": list(strides),
        "pads": list(pads),
        "dilations": list(dilations),
        "ceil_mode": int(ceil_mode),
    }


@pytest.mark.parametrize(("xs", "kernel", "strides", "pads", "dilations", "ceil_mode"), POOL_CASES)
def test_max_pool2d(
    xs: tuple[int, ...],
    kernel: tuple[int, int],
    strides: tuple[int, int],
    pads: tuple[int, ...],
    dilations: tuple[int, int],
    ceil_mode: bool,
) -> None:
    x = random(*xs) - 5.0  # all negative: a zero pad winning would show
    ours = run_kernel(
        lambda v: nn.MaxPool2dOp(
            v, kernel=kernel, strides=strides, pads=pads, dilations=dilations, ceil_mode=ceil_mode
        ),
        x,
    )
    attributes = pool_attributes(kernel, strides, pads, dilations, ceil_mode)
    close(ours, onnx_run("MaxPool", [x], **attributes))


@pytest.mark.parametrize("count_include_pad", [False, True])
@pytest.mark.parametrize(("xs", "kernel", "strides", "pads", "dilations", "ceil_mode"), POOL_CASES)
def test_avg_pool2d(
    xs: tuple[int, ...],
    kernel: tuple[int, int],
    strides: tuple[int, int],
    pads: tuple[int, ...],
    dilations: tuple[int, int],
    ceil_mode: bool,
    count_include_pad: bool,
) -> None:
    x = random(*xs) + 1.0
    ours = run_kernel(
        lambda v: nn.AvgPool2dOp(
            v,
            kernel=kernel,
            strides=strides,
            pads=pads,
            dilations=dilations,
            ceil_mode=ceil_mode,
            count_include_pad=count_include_pad,
        ),
        x,
    )
    attributes = pool_attributes(kernel, strides, pads, dilations, ceil_mode)
    close(
        ours, onnx_run("AveragePool", [x], count_include_pad=int(count_include_pad), **attributes)
    )


def test_pool_cases_exercise_ceil_mode_overhang() -> None:
    """The ceil_mode cases above must contain windows past the padded end, or the avg-pool
    divisor rule for them would go untested."""
    overhanging = 0
    for xs, kernel, strides, pads, dilations, ceil_mode in POOL_CASES:
        if not ceil_mode:
            continue
        floor = nn.pool2d_shape("p", xs, kernel, strides, pads, dilations, False)
        ceil = nn.pool2d_shape("p", xs, kernel, strides, pads, dilations, True)
        overhanging += floor != ceil
    assert overhanging >= 3


def test_global_avg_pool() -> None:
    x = random(2, 3, 5, 7)
    close(run_kernel(nn.GlobalAvgPoolOp, x), onnx_run("GlobalAveragePool", [x]))


# ---------------------------------------------------------------- data movement
@pytest.mark.parametrize(
    ("shapes", "axis"),
    [([(2, 3, 4), (2, 1, 4), (2, 5, 4)], 1), ([(2, 3), (2, 4)], -1), ([(1, 3), (2, 3)], 0)],
)
def test_concat(shapes: list[tuple[int, ...]], axis: int) -> None:
    arrays = [random(*s, seed=i) for i, s in enumerate(shapes)]
    ours = run_kernel(lambda *v: nn.ConcatOp(list(v), axis), *arrays)
    close(ours, onnx_run("Concat", arrays, axis=axis))


@pytest.mark.parametrize("axis", [0, 1, -1, -3])
def test_softmax(axis: int) -> None:
    x = random(3, 4, 5) * 10
    close(run_kernel(nn.SoftmaxOp, x, axis=axis), onnx_run("Softmax", [x], axis=axis))


@pytest.mark.parametrize("axis", [0, 1, 2, -1, 4])
def test_flatten(axis: int) -> None:
    x = random(2, 3, 4, 5)
    close(run_kernel(nn.FlattenOp, x, axis=axis), onnx_run("Flatten", [x], axis=axis))


def test_reshape() -> None:
    x = random(2, 3, 4)
    shape = (4, 6)
    expected = onnx_run("Reshape", [x], constants=[np.array(shape, np.int64)])
    close(run_kernel(nn.ReshapeOp, x, shape=shape), expected)


@pytest.mark.parametrize("perm", [(1, 0, 2), (2, 0, 1), (0, 2, 3, 1)])
def test_transpose(perm: tuple[int, ...]) -> None:
    x = random(*(2, 3, 4, 5)[: len(perm)])
    ours = run_kernel(nn.TransposeOp, x, perm=perm)
    assert ours.flags.c_contiguous
    close(ours, onnx_run("Transpose", [x], perm=list(perm)))


def test_transpose_of_a_scalar_is_a_scalar() -> None:
    """The kernel returned [1] for a 0-d input (np.ascontiguousarray), so any tool running
    an ONNX Transpose of a scalar failed with 'kernel returned [1] float32'."""
    x = np.array(1.5, np.float32)
    ours = run_kernel(nn.TransposeOp, x, perm=())
    assert ours.shape == ()
    close(ours, onnx_run("Transpose", [x]))


def test_every_nn_op_but_constant_has_a_kernel() -> None:
    """Constants are materialised at load time; nn.compute/nn.yield only wrap other ops."""
    missing = {op.name for op in nn.NN.operations} - {op.name for op in REFERENCE_KERNELS}
    assert missing == {"nn.constant", "nn.compute", "nn.yield"}
