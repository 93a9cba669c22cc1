"""An ONNX model evaluated in float64: the exact result a float32 runtime's rounding is
measured against (benchmarks/torchvision_zoo.py --exact).

Two float32 runtimes that differ by 1e-4 may both be right to float32's precision; which one
is closer to the exact result is only seen against a reference computed with more precision.
`float64_outputs` evaluates the model as written with every float32 value made float64: the
initializers, Constant and ConstantOfShape values, casts to float, the graph's inputs and
outputs. A float32 value is exact in float64, so the reference computes the very function
the float32 runtimes approximate, with float64's rounding (2**-53 relative per operation,
some 1e-13 at the output of a 55-convolution network that amplifies its rounding errors a few
hundred times: nine orders of magnitude below float32's, so "exact" for this purpose).

The evaluation is onnx's own reference evaluator (`onnx.reference.ReferenceEvaluator`), whose
operators are numpy written for any dtype. Three of them run Python loops over their output
elements, too slow for a 224x224 network, and are replaced here by vectorised float64 numpy of
the same semantics (tests/frontends/test_float64_reference.py checks each against onnx's on
the attributes the torchvision exports use):

- Conv (2-D, any group, stride, dilation, padding): im2col through a strided view, then one
  float64 matrix product per group;
- MaxPool (2-D, ceil_mode 0, one output): a strided view over -inf padding;
- Resize (4-D, mode linear, the last two axes, coordinate modes half_pixel,
  pytorch_half_pixel, align_corners, asymmetric): one interpolation matrix per axis.

Any other attribute combination falls back to onnx's implementation (slow but correct).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from numpy.lib.stride_tricks import sliding_window_view
from onnx import TensorProto, numpy_helper
from onnx.reference import ReferenceEvaluator
from onnx.reference.ops.op_conv import Conv as OnnxConv
from onnx.reference.ops.op_max_pool import MaxPool as OnnxMaxPool
from onnx.reference.ops.op_resize import Resize as OnnxResize

_FLOAT, _DOUBLE = TensorProto.FLOAT, TensorProto.DOUBLE


def _double_tensor(tensor: onnx.TensorProto) -> onnx.TensorProto:
    if tensor.data_type != _FLOAT:
        return tensor
    return numpy_helper.from_array(numpy_helper.to_array(tensor).astype(np.float64), tensor.name)


def _double_graph(graph: onnx.GraphProto) -> None:
    """`graph` (and its subgraphs) rewritten in place with every float32 value float64."""
    initializers = [_double_tensor(t) for t in graph.initializer]
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    for value in [*graph.input, *graph.output]:
        if value.type.tensor_type.elem_type == _FLOAT:
            value.type.tensor_type.elem_type = _DOUBLE
    del graph.value_info[:]  # float32 annotations of intermediates; the evaluator needs none
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.TENSOR:
                attribute.t.CopyFrom(_double_tensor(attribute.t))
            elif attribute.type == onnx.AttributeProto.GRAPH:
                _double_graph(attribute.g)
            elif attribute.type == onnx.AttributeProto.GRAPHS:
                for subgraph in attribute.graphs:
                    _double_graph(subgraph)
            elif node.op_type == "Cast" and attribute.name == "to" and attribute.i == _FLOAT:
                attribute.i = _DOUBLE


def float64_model(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `model` (its external data loaded) whose float32 values are all float64."""
    double = onnx.ModelProto()
    double.CopyFrom(model)
    _double_graph(double.graph)
    return double


# ------------------------------------------------------------------ vectorised operators
def _pads(pads: Sequence[int] | None, auto_pad: Any) -> tuple[int, int, int, int] | None:
    """(top, left, bottom, right), or None where auto_pad asks for the fallback."""
    if auto_pad not in (None, "NOTSET", b"NOTSET"):
        return None
    top, left, bottom, right = pads if pads else (0, 0, 0, 0)
    return top, left, bottom, right


def _windows(
    x: np.ndarray,
    kernel: Sequence[int],
    pads: tuple[int, int, int, int],
    strides: Sequence[int],
    dilations: Sequence[int],
    fill: float,
) -> np.ndarray:
    """x (N, C, H, W) padded with `fill`, as a view (N, C, OH, OW, KH, KW) of its windows."""
    top, left, bottom, right = pads
    padded = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=fill)
    span = [d * (k - 1) + 1 for k, d in zip(kernel, dilations, strict=True)]
    view = sliding_window_view(padded, tuple(span), axis=(2, 3))
    return view[:, :, :: strides[0], :: strides[1], :: dilations[0], :: dilations[1]]


class Conv(OnnxConv):
    """Conv in float64 numpy: im2col (a strided view) and a matrix product per group."""

    def _run(  # type: ignore[override]
        self,
        X: np.ndarray,
        W: np.ndarray,
        B: np.ndarray | None = None,
        auto_pad: Any = None,
        dilations: Sequence[int] | None = None,
        group: int | None = None,
        kernel_shape: Sequence[int] | None = None,
        pads: Sequence[int] | None = None,
        strides: Sequence[int] | None = None,
    ) -> tuple[np.ndarray]:
        edges = _pads(pads, auto_pad) if X.ndim == 4 else None
        if edges is None:
            return super()._run(  # type: ignore[no-any-return]
                X, W, B, auto_pad, dilations, group, kernel_shape, pads, strides
            )
        groups = group or 1
        n, oc, (kh, kw) = X.shape[0], W.shape[0], W.shape[2:]
        view = _windows(X, (kh, kw), edges, strides or (1, 1), dilations or (1, 1), 0.0)
        oh, ow = view.shape[2:4]
        per_group = view.reshape(n, groups, X.shape[1] // groups, oh, ow, kh, kw)
        cols = per_group.transpose(1, 0, 3, 4, 2, 5, 6).reshape(groups, n * oh * ow, -1)
        weights = W.reshape(groups, oc // groups, -1).transpose(0, 2, 1)
        out = np.matmul(cols, weights).reshape(groups, n, oh, ow, oc // groups)
        out = out.transpose(1, 0, 4, 2, 3).reshape(n, oc, oh, ow)
        if B is not None:
            out = out + B.reshape(1, oc, 1, 1)
        return (out.astype(X.dtype, copy=False),)


class MaxPool(OnnxMaxPool):
    """MaxPool in numpy: the largest of each window of a strided view over -inf padding."""

    def _run(  # type: ignore[override]
        self,
        x: np.ndarray,
        auto_pad: Any = None,
        ceil_mode: int | None = None,
        dilations: Sequence[int] | None = None,
        kernel_shape: Sequence[int] | None = None,
        pads: Sequence[int] | None = None,
        storage_order: int | None = None,
        strides: Sequence[int] | None = None,
    ) -> tuple[np.ndarray, ...]:
        edges = _pads(pads, auto_pad) if x.ndim == 4 else None
        if edges is None or ceil_mode or len(self.output) > 1 or not kernel_shape:
            return super()._run(  # type: ignore[no-any-return]
                x, auto_pad, ceil_mode, dilations, kernel_shape, pads, storage_order, strides
            )
        view = _windows(x, kernel_shape, edges, strides or (1, 1), dilations or (1, 1), -np.inf)
        return (view.max(axis=(4, 5)).astype(x.dtype, copy=False),)


_LINEAR_MODES = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def interpolation_matrix(size_in: int, size_out: int, scale: float, mode: str) -> np.ndarray:
    """(size_out, size_in): row i holds the linear weights of output i on the input, with the
    input's coordinate of i from ONNX Resize's `coordinate_transformation_mode` and clamped to
    the edge samples, as onnx's reference does."""
    i = np.arange(size_out, dtype=np.float64)
    if mode == "align_corners":  # onnx's reference takes the unrounded output length
        length = size_in * scale
        x = i * (size_in - 1) / (length - 1) if length != 1 else np.zeros_like(i)
    elif mode == "asymmetric":
        x = i / scale
    elif mode == "pytorch_half_pixel" and size_out == 1:
        x = np.zeros_like(i)
    else:  # half_pixel, pytorch_half_pixel
        x = (i + 0.5) / scale - 0.5
    x = np.clip(x, 0, size_in - 1)
    low = np.floor(x).astype(np.int64)
    high = np.minimum(low + 1, size_in - 1)
    fraction = x - low
    matrix = np.zeros((size_out, size_in))
    np.add.at(matrix, (np.arange(size_out), low), 1.0 - fraction)
    np.add.at(matrix, (np.arange(size_out), high), fraction)
    return matrix


class Resize(OnnxResize):
    """Linear Resize of the last two axes in numpy: one interpolation matrix per axis."""

    def _run(
        self, X: np.ndarray, roi: Any, scales: Any = None, sizes: Any = None, **attributes: Any
    ) -> Any:  # type: ignore[override]
        plan = self._plan(X, scales, sizes, attributes)
        if plan is None:
            return super()._run(X, roi, scales, sizes, **attributes)
        mode = _text(attributes.get("coordinate_transformation_mode") or "half_pixel")
        rows, columns = (
            interpolation_matrix(X.shape[axis], out, scale, mode) for axis, out, scale in plan
        )
        out = np.einsum("nchw,oh,pw->ncop", X, rows, columns, optimize=True)
        return (out.astype(X.dtype, copy=False),)

    @staticmethod
    def _plan(
        X: np.ndarray, scales: Any, sizes: Any, attributes: dict[str, Any]
    ) -> list[tuple[int, int, float]] | None:
        """(axis, output size, scale) of H and W, or None where the fallback is needed."""
        plain = (
            X.ndim == 4
            and _text(attributes.get("mode")) == "linear"
            and not attributes.get("antialias")
            and attributes.get("axes") is None
            and _text(attributes.get("keep_aspect_ratio_policy") or "stretch") == "stretch"
            and _text(attributes.get("coordinate_transformation_mode") or "half_pixel")
            in _LINEAR_MODES
        )
        if not plain:
            return None
        if sizes is not None and len(sizes):
            out = [int(s) for s in sizes]
            factors = [o / i for o, i in zip(out, X.shape, strict=True)]
        elif scales is not None and len(scales):
            factors = [float(s) for s in scales]
            out = [int(np.floor(i * s)) for i, s in zip(X.shape, factors, strict=True)]
        else:
            return None
        if out[:2] != list(X.shape[:2]):
            return None
        return [(axis, out[axis], factors[axis]) for axis in (2, 3)]


OPERATORS = [Conv, MaxPool, Resize]


def float64_outputs(path: Path, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The outputs of the ONNX model at `path` on `inputs` (float32 arrays are taken as their
    exact float64 values), computed in float64."""
    evaluator = ReferenceEvaluator(float64_model(onnx.load(str(path))), new_ops=OPERATORS)
    feeds = {
        name: value.astype(np.float64) if value.dtype == np.float32 else value
        for name, value in inputs.items()
    }
    return [np.asarray(out) for out in evaluator.run(None, feeds)]
