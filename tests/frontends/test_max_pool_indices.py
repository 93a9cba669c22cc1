"""MaxPool's Indices output (torch's `return_indices=True`) as `nn.max_pool2d_indices`,
built with onnx.helper as torch's exporters write it and checked against onnxruntime on
every target, padding on and off, interpreter and generated module: strides, pads,
ceil_mode, dilations, storage_order 1, a 1-D pool, the classic exporter's per-plane indices
(the pool's indices less those of a 1x1 pool of the input), ties (the first maximum in
row-major order wins), NaN and -inf, which never win; and the refusal of a 3-D pool's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnlayout.diagnostics import UserError
from nnlayout.frontends.onnx import import_model
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    ALL_TARGETS,
    DEFAULT_PIPELINE,
    check_against_onnxruntime,
    compile_module,
    onnxruntime_outputs,
    swept,
)


def pool_model(
    x_shape: list[int], extra: list[onnx.NodeProto] | None = None, **attrs: object
) -> onnx.ModelProto:
    """x -> MaxPool (y, i) -> both outputs; `extra` nodes after it, reading them."""
    nodes = [helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs), *(extra or [])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    indices = "per_plane" if extra else "i"
    kind = TensorProto.FLOAT if extra else TensorProto.INT64
    outputs.append(helper.make_tensor_value_info(indices, kind, None))
    graph = helper.make_graph(
        nodes,
        "max_pool_indices",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        outputs,
        [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in _CONSTANTS.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


_CONSTANTS = {"zero": [0, 0], "one": [1, 1], "axes": [2, 3]}

CASES = {
    "halving": ([2, 3, 6, 6], {"kernel_shape": [2, 2], "strides": [2, 2]}),
    "padded": ([1, 5, 7, 7], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "ceil_dilated": (
        [1, 3, 9, 8],
        {"kernel_shape": [2, 3], "strides": [2, 2], "dilations": [2, 1], "ceil_mode": 1},
    ),
    "column_major": ([1, 2, 5, 6], {"kernel_shape": [2, 2], "storage_order": 1}),
    "one_dimensional": ([2, 3, 10], {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_indices(case: str, tmp_path: Path) -> None:
    x_shape, attrs = CASES[case]
    check_against_onnxruntime(pool_model(x_shape, **attrs), tmp_path)


def test_the_classic_exporters_per_plane_indices(tmp_path: Path) -> None:
    """torch's classic export of `F.max_pool2d(x, 2, return_indices=True)[1].float()`: the
    flat indices less those of a 1x1 pool's first element of each plane."""
    extra = [
        helper.make_node("MaxPool", ["x"], ["unused", "base"], kernel_shape=[1, 1]),
        helper.make_node("Slice", ["base", "zero", "one", "axes"], ["first"]),
        helper.make_node("Sub", ["i", "first"], ["plane"]),
        helper.make_node("Cast", ["plane"], ["per_plane"], to=TensorProto.FLOAT),
    ]
    model = pool_model([1, 4, 6, 6], extra, kernel_shape=[2, 2], strides=[2, 2])
    check_against_onnxruntime(model, tmp_path)


def test_ties_nan_and_infinity() -> None:
    """Values from a few levels (ties in most windows), NaN and -inf: onnxruntime's indices,
    exactly."""
    rng = np.random.default_rng(54)
    x = rng.integers(0, 3, (1, 4, 6, 6)).astype(np.float32)
    x[0, 0, 0, 0] = np.nan
    x[0, 1, :2, :2] = [[np.nan, -np.inf], [2.0, np.nan]]
    model = pool_model([1, 4, 6, 6], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    module = import_model(model).module
    want = onnxruntime_outputs(model, [x])[1]
    for target, padding in swept(ALL_TARGETS, b"ties"):
        compiled = compile_module(module, target, padding, DEFAULT_PIPELINE)
        for run in (lambda m, i: Interpreter(m).run(i), run_generated):
            np.testing.assert_array_equal(run(compiled, [x])[1], want)


def test_the_indices_of_a_3d_pool_are_refused() -> None:
    model = pool_model([1, 2, 4, 4, 4], kernel_shape=[2, 2, 2])
    with pytest.raises(UserError, match="MaxPool's Indices output of a 3-D pool is not supported"):
        import_model(model)
