"""Converters of the ONNX reductions (ReduceSum, ReduceMean, ReduceMax, ... as `nn.reduce`),
of the normalisations that reduce: LayerNormalization (`nn.layer_norm`), InstanceNormalization
(`nn.layer_norm` from axis 2, then its per-channel affine) and LRN (`nn.lrn`), and of CumSum
(`nn.cumsum`).

A reduction's axes are an attribute before opset 18 (ReduceSum: 13) and a constant input
from then on; none, or an empty list, means every axis, or no reduction at all with
`noop_with_empty_axes`. `nn.reduce` keeps the reduced axes; keepdims=0 adds an `nn.reshape`.

LayerNormalization's Mean and InvStdDev outputs, where read, are computed by reductions and
element-wise ops beside the `nn.layer_norm` that gives its first.

The global average pooling that torch's exporters write as a ReduceMean over H and W of an
NCHW tensor becomes `nn.global_avg_pool` here, at import, and a ReduceMax over them (a
global max pooling, `amax`) an `nn.max_pool2d` whose window is the image, as GlobalMaxPool
is, rather than by a pattern in a pass: the ops are then the ones every exporter's global
pooling gives, with their kernels (blocked, oneDNN pooling) and layouts, before any pass
runs, and a hand-written `nn.reduce` still means what it says. (Over the last axis of a
[B, T, C] tensor a mean stays `nn.reduce`, which oneDNN's reduction runs.)
"""

from __future__ import annotations

import functools

import numpy as np
import onnx
from xdsl.dialects.builtin import i1, i64
from xdsl.ir import Operation, SSAValue

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.state import ImportState

#: ONNX operator -> `nn.reduce` kind (log_sum_exp: written with other ops, `_log_sum_exp`).
REDUCTIONS: dict[str, str] = {
    **{onnx_name: kind for kind, onnx_name in nn.REDUCE_KINDS.items()},
    "ReduceLogSumExp": "log_sum_exp",
}


def _axes_given(state: ImportState, node: onnx.NodeProto, attrs: dict) -> list[int] | None:
    """The axes the node names (None: none given), from its input or its attribute."""
    if len(node.input) > 1 and node.input[1]:
        return [int(a) for a in state.constant_array(node.input[1], "axes").ravel()]
    if "axes" in attrs:
        return [int(a) for a in attrs["axes"]]
    return None


def _axes(state: ImportState, given: list[int], rank: int) -> list[int]:
    """`given` made non-negative and sorted, refusing an axis out of range or named twice."""
    if any(not -rank <= a < rank for a in given):
        raise state.fail(f"axes {given} out of range for an input of rank {rank}")
    axes = sorted(a + rank if a < 0 else a for a in given)
    if len(set(axes)) != len(axes):
        raise state.fail(f"axes {given} name an axis twice")
    return axes


def _reduction(state: ImportState, x: SSAValue, kind: str, axes: list[int]) -> Operation:
    """`nn.reduce`, or the pooling op it is: a mean or max over H and W of an NCHW tensor;
    a mask's max (any) or min (all) as its int64 values', made a mask again."""
    if kind == "log_sum_exp":
        return _log_sum_exp(state, x, axes)
    if nn.tensor_type(x).element_type == i1 and kind in ("max", "min"):
        counts = state.emit(nn.CastOp(x, i64))
        return nn.CastOp(state.emit(nn.ReduceOp(counts, kind, axes)), i1)
    shape = nn.shape_of(x)
    if len(shape) == 4 and axes == [2, 3] and kind == "mean":
        return nn.GlobalAvgPoolOp(x)
    if len(shape) == 4 and axes == [2, 3] and kind == "max":
        return nn.MaxPool2dOp(x, kernel=shape[2:])
    return nn.ReduceOp(x, kind, axes)


def _log_sum_exp(state: ImportState, x: SSAValue, axes: list[int]) -> Operation:
    """log(sum(exp(x - m))) + m over `axes`, m the maximum where it is finite and 0 where
    not, as onnxruntime computes it (a row of -inf gives -inf, one with +inf +inf, NaN
    NaN); the last add is returned, the other ops emitted."""
    peak = state.emit(nn.ReduceOp(x, "max", axes))
    zero = state.made_constant("log_sum_exp.zero", np.zeros((1,) * len(nn.shape_of(x)), np.float32))
    difference = state.emit(nn.SubOp(peak, peak))  # inf - inf and NaN - NaN are NaN
    finite = state.emit(nn.CompareOp("eq", difference, zero))
    shift = state.emit(nn.WhereOp(finite, peak, zero))
    exps = state.emit(nn.ExpOp(state.emit(nn.SubOp(x, shift))))
    total = state.emit(nn.LogOp(state.emit(nn.ReduceOp(exps, "sum", axes))))
    return nn.AddOp(total, shift)


def reduce(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    x = state.operand(node, 0)
    shape = nn.shape_of(x)
    given = _axes_given(state, node, attrs)
    if not given and attrs.get("noop_with_empty_axes", 0):
        state.output(node, x)
        return
    axes = list(range(len(shape))) if not given else _axes(state, given, len(shape))
    kind = REDUCTIONS[node.op_type]
    if not shape:  # a scalar: reduced as a 1-element vector
        vector = state.emit(state.build(lambda: nn.ReshapeOp(x, [1])))
        reduced = state.emit(state.build(lambda: _reduction(state, vector, kind, [0])))
        state.output(node, state.build(lambda: nn.ReshapeOp(reduced, [])))
        return
    reduction = state.build(lambda: _reduction(state, x, kind, axes))
    if attrs.get("keepdims", 1):
        state.output(node, reduction)
        return
    result = state.emit(reduction)
    kept = [d for i, d in enumerate(shape) if i not in axes]
    state.output(node, state.build(lambda: nn.ReshapeOp(result, kept)))


def layer_normalization(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    x, scale = state.operand(node, 0), state.operand(node, 1)
    bias = state.optional_operand(node, 2)
    axis, epsilon = int(attrs.get("axis", -1)), float(attrs.get("epsilon", 1e-5))
    state.output(node, state.build(lambda: nn.LayerNormOp(x, scale, bias, axis, epsilon)))
    if state.read_outputs(node):
        _statistics(state, node, x, axis, epsilon)


def _statistics(
    state: ImportState, node: onnx.NodeProto, x: SSAValue, axis: int, epsilon: float
) -> None:
    """LayerNormalization's Mean and InvStdDev outputs, where read: the mean over the
    normalised axes (kept) and 1 / sqrt(population variance + epsilon), as nn ops."""
    rank = len(nn.shape_of(x))
    axes = list(range(nn.normalize_axis("LayerNormalization", axis, rank), rank))
    names = state.read_outputs(node)
    wanted = [len(node.output) > i and node.output[i] in names for i in (1, 2)]
    mean = nn.ReduceOp(x, "mean", axes)
    if wanted[0]:
        state.output(node, mean, 1)
    else:
        state.emit(mean)
    if not wanted[1]:
        return
    centred = state.emit(nn.SubOp(x, mean.output))
    variance = state.emit(nn.ReduceOp(state.emit(nn.MulOp(centred, centred)), "mean", axes))
    shifted = state.emit(nn.AddOp(variance, state.emit(nn.ConstantOp.from_array(epsilon))))
    one = state.emit(nn.ConstantOp.from_array(np.float32(1)))
    state.output(node, nn.DivOp(one, state.emit(nn.SqrtOp(shifted))), 2)


def instance_normalization(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """Each (n, c) plane normalised over the axes from 2 on, as `nn.layer_norm` from axis 2
    with a scale of 1 (the population variance, as InstanceNormalization's), then times
    `scale` and plus `B` per channel. torch writes GroupNorm as a Reshape to [N, groups, -1],
    an InstanceNormalization whose scale and B are ones and zeros, a Reshape back and its own
    affine: a constant scale of ones and B of zeros are left out."""
    x = state.operand(node, 0)
    shape = nn.shape_of(x)
    if len(shape) < 3:
        raise state.fail(
            f"the input must have rank 3 or more (N, C, spatial...), got {list(shape)}"
        )
    epsilon = float(attrs.get("epsilon", 1e-5))
    one = state.emit(nn.ConstantOp.from_array(np.ones(1, np.float32)))
    result = state.build(lambda: nn.LayerNormOp(x, one, None, 2, epsilon))
    per_channel = [shape[1], *[1] * (len(shape) - 2)]
    for index, make, neutral in ((1, nn.MulOp, 1.0), (2, nn.AddOp, 0.0)):
        name = node.input[index]
        if state.is_constant(name):
            wanted = state.constant_array(name, "scale or B")
            _check_per_channel(state, index, list(wanted.shape), shape[1])
            if (wanted == neutral).all():
                continue
        value = state.operand(node, index)
        _check_per_channel(state, index, list(nn.shape_of(value)), shape[1])
        column = state.emit(state.build(functools.partial(nn.ReshapeOp, value, per_channel)))
        result = state.build(functools.partial(make, state.emit(result), column))
    state.output(node, result)


def _check_per_channel(state: ImportState, index: int, given: list[int], channels: int) -> None:
    if given != [channels]:
        raise state.fail(f"input {index} has shape {given}, not [{channels}]")


def lrn(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    if "size" not in attrs:
        raise state.fail("LRN needs its 'size' attribute")
    x = state.operand(node, 0)
    state.output(
        node,
        state.build(
            lambda: nn.LrnOp(
                x,
                int(attrs["size"]),
                float(attrs.get("alpha", 1e-4)),
                float(attrs.get("beta", 0.75)),
                float(attrs.get("bias", 1.0)),
            )
        ),
    )


def cumsum(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """CumSum of data computed at run time (on constants it folds), its axis a compile-time
    scalar: floats, or the int32 and int64 of index arithmetic."""
    x = state.operand(node, 0)
    axis = state.constant_array(node.input[1], "axis")
    if axis.size != 1 or axis.dtype.kind not in "iu":
        raise state.fail(f"the axis must be one integer, got {axis.dtype} of shape {axis.shape}")
    flags = {name: attrs.get(name, 0) for name in ("exclusive", "reverse")}
    for name, flag in flags.items():
        if flag not in (0, 1):
            raise state.fail(f"CumSum's '{name}' must be 0 or 1, got {flag}")
    exclusive, reverse = bool(flags["exclusive"]), bool(flags["reverse"])
    state.output(
        node, state.build(lambda: nn.CumSumOp(x, int(axis.ravel()[0]), exclusive, reverse))
    )
