"""Reductions and normalisations as torch's exporters write them (the classic `dynamo=False`
exporter at opset 17, the default dynamo one at opset 18+), built with onnx.helper and checked
against onnxruntime through every target, padding on and off, interpreter and generated
module. Channel counts are not multiples of 8, so that padding lanes are there to leak."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnlayout.dialects import nn
from nnlayout.tests.helpers import check_against_onnxruntime

RNG = np.random.default_rng(7)


def _weights(*shape: int) -> np.ndarray:
    return (RNG.standard_normal(shape) * 0.3).astype(np.float32)


def _model(
    nodes: list[onnx.NodeProto],
    x_shape: list[int],
    initializers: dict[str, np.ndarray],
    opset: int,
) -> onnx.ModelProto:
    """The graph of `nodes` from input x to output y, y's type as onnx infers it."""
    graph = helper.make_graph(
        nodes,
        "pattern",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [],
        [numpy_helper.from_array(v, n) for n, v in initializers.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True).graph.value_info
    model.graph.output.extend(v for v in inferred if v.name == "y")
    onnx.checker.check_model(model, full_check=True)
    return model


def _conv(channels: int, x: str = "x", out: str = "c") -> tuple[list[onnx.NodeProto], dict]:
    """Conv(3 -> channels, 3x3, pad 1) -> Relu: the blocked producer of a reduction."""
    nodes = [
        helper.make_node("Conv", [x, "w", "b"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv"], [out]),
    ]
    return nodes, {"w": _weights(channels, 3, 3, 3), "b": _weights(channels)}


def _ops(module: object) -> list[str]:
    return [op.name for op in module.walk()]  # type: ignore[attr-defined]


def _classifier(channels: int, source: str) -> tuple[list[onnx.NodeProto], dict]:
    return (
        [helper.make_node("Gemm", [source, "fc_w", "fc_b"], ["y"], transB=1)],
        {"fc_w": _weights(10, channels), "fc_b": _weights(10)},
    )


def test_dynamo_global_pool_flatten_gemm(tmp_path: Path) -> None:
    """dynamo (opset 18): ReduceMean, axes [-1, -2] as an input, keepdims 1, then Flatten and
    Gemm: the global pool every torchvision classifier ends with; it becomes
    nn.global_avg_pool."""
    conv, weights = _conv(20)
    head, fc = _classifier(20, "flat")
    nodes = [
        *conv,
        helper.make_node("ReduceMean", ["c", "axes"], ["pooled"], keepdims=1),
        helper.make_node("Flatten", ["pooled"], ["flat"], axis=1),
        *head,
    ]
    axes = {"axes": np.array([-1, -2], np.int64)}
    module = check_against_onnxruntime(
        _model(nodes, [1, 3, 6, 6], {**weights, **axes, **fc}, 18), tmp_path
    )
    assert "nn.global_avg_pool" in _ops(module) and "nn.reduce" not in _ops(module)


def test_reduce_mean_keepdims_0_then_gemm(tmp_path: Path) -> None:
    """ReduceMean over [2, 3] with keepdims 0 straight into Gemm (dynamo's adaptive pool
    followed by torch.flatten folded away): a global pool and an nn.reshape."""
    conv, weights = _conv(20)
    head, fc = _classifier(20, "pooled")
    nodes = [*conv, helper.make_node("ReduceMean", ["c", "axes"], ["pooled"], keepdims=0), *head]
    axes = {"axes": np.array([2, 3], np.int64)}
    module = check_against_onnxruntime(
        _model(nodes, [1, 3, 6, 6], {**weights, **axes, **fc}, 18), tmp_path
    )
    assert "nn.global_avg_pool" in _ops(module) and "nn.reshape" in _ops(module)


def test_classic_reduce_mean_axes_attribute(tmp_path: Path) -> None:
    """The classic exporter (opset 17): the axes as an attribute."""
    conv, weights = _conv(20)
    head, fc = _classifier(20, "flat")
    nodes = [
        *conv,
        helper.make_node("ReduceMean", ["c"], ["pooled"], axes=[2, 3], keepdims=1),
        helper.make_node("Flatten", ["pooled"], ["flat"]),
        *head,
    ]
    module = check_against_onnxruntime(_model(nodes, [1, 3, 6, 6], {**weights, **fc}, 17), tmp_path)
    assert "nn.global_avg_pool" in _ops(module)


@pytest.mark.parametrize("opset", [17, 18])
def test_reduce_mean_over_an_odd_channel_count(opset: int, tmp_path: Path) -> None:
    """A mean over 21 channels after a blocked convolution: the padding lanes of NCHW8c and
    NCHW16c must not count."""
    conv, weights = _conv(21)
    axes: dict = {"axes": np.array([1], np.int64)} if opset >= 18 else {}
    reduce = (
        helper.make_node("ReduceMean", ["c", "axes"], ["y"], keepdims=1)
        if opset >= 18
        else helper.make_node("ReduceMean", ["c"], ["y"], axes=[1], keepdims=1)
    )
    module = check_against_onnxruntime(
        _model([*conv, reduce], [1, 3, 5, 5], {**weights, **axes}, opset), tmp_path
    )
    [op] = [op for op in module.walk() if isinstance(op, nn.ReduceOp)]
    assert op.kind.data == "mean" and op.reduced_axes == (1,)


def test_global_max_pool_as_reduce_max(tmp_path: Path) -> None:
    """dynamo's amax over H and W (keepdims 0): a max pool over the whole image."""
    conv, weights = _conv(20)
    head, fc = _classifier(20, "pooled")
    nodes = [*conv, helper.make_node("ReduceMax", ["c", "axes"], ["pooled"], keepdims=0), *head]
    axes = {"axes": np.array([-2, -1], np.int64)}
    module = check_against_onnxruntime(
        _model(nodes, [1, 3, 6, 6], {**weights, **axes, **fc}, 18), tmp_path
    )
    assert "nn.max_pool2d" in _ops(module) and "nn.reduce" not in _ops(module)


def test_reduce_mean_over_the_last_axis_of_tokens_stays_a_reduction(tmp_path: Path) -> None:
    """A mean over C of [B, T, C] (an exporter's decomposed LayerNorm or RMSNorm) is no
    global pool: oneDNN's reduction runs it."""
    nodes = [
        helper.make_node("Mul", ["x", "x"], ["square"]),
        helper.make_node("ReduceMean", ["square", "axes"], ["ms"], keepdims=1),
        helper.make_node("Add", ["x", "ms"], ["y"]),
    ]
    axes = {"axes": np.array([-1], np.int64)}
    module = check_against_onnxruntime(_model(nodes, [2, 5, 20], axes, 18), tmp_path)
    assert "nn.reduce" in _ops(module)


def test_reduce_max_over_channels_of_negative_values(tmp_path: Path) -> None:
    """ReduceMax over 20 channels, every real value negative (-sigmoid): a padding zero
    would win."""
    conv, weights = _conv(20)
    nodes = [
        *conv,
        helper.make_node("Sigmoid", ["c"], ["s"]),
        helper.make_node("Neg", ["s"], ["n"]),
        helper.make_node("ReduceMax", ["n"], ["y"], axes=[1], keepdims=0),
    ]
    check_against_onnxruntime(_model(nodes, [1, 3, 5, 5], weights, 17), tmp_path)


@pytest.mark.parametrize(
    ("operator", "opset"),
    [
        ("ReduceSum", 13),
        ("ReduceMax", 18),
        ("ReduceMin", 18),
        ("ReduceL2", 18),
        ("ReduceSumSquare", 18),
        ("ReduceL1", 18),
        ("ReduceProd", 18),
    ],
)
def test_other_reductions_over_spatial_axes(operator: str, opset: int, tmp_path: Path) -> None:
    """The other kinds over H (an input from ReduceSum-13 and every reduction at 18)."""
    conv, weights = _conv(20)
    nodes = [*conv, helper.make_node(operator, ["c", "axes"], ["y"], keepdims=1)]
    axes = {"axes": np.array([2], np.int64)}
    check_against_onnxruntime(_model(nodes, [1, 3, 4, 5], {**weights, **axes}, opset), tmp_path)


def test_reduce_sum_over_every_axis_and_noop(tmp_path: Path) -> None:
    """No axes: every axis (keepdims 0 gives a scalar); with noop_with_empty_axes, none."""
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["all"], keepdims=0),
        helper.make_node("ReduceSum", ["x"], ["same"], noop_with_empty_axes=1),
        helper.make_node("Add", ["same", "all"], ["y"]),
    ]
    check_against_onnxruntime(_model(nodes, [2, 3, 4], {}, 13), tmp_path)


def test_layer_norm_on_tokens(tmp_path: Path) -> None:
    """ViT/Swin: LayerNormalization over the last axis of [1, T, C] (opset 17), then a
    MatMul; C = 20."""
    nodes = [
        helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["n"], epsilon=1e-6),
        helper.make_node("MatMul", ["n", "proj"], ["y"]),
    ]
    weights = {"scale": _weights(20) + 1, "bias": _weights(20), "proj": _weights(20, 12)}
    module = check_against_onnxruntime(_model(nodes, [1, 7, 20], weights, 17), tmp_path)
    assert "nn.layer_norm" in _ops(module)


def test_layer_norm_2d_as_convnext_writes_it(tmp_path: Path) -> None:
    """ConvNeXt's LayerNorm2d: Transpose NCHW -> NHWC, LayerNormalization over the last axis
    (no bias: dynamo drops a zero one at opset 18), Transpose back, after a convolution with
    20 channels."""
    conv, weights = _conv(20)
    nodes = [
        *conv,
        helper.make_node("Transpose", ["c"], ["nhwc"], perm=[0, 2, 3, 1]),
        helper.make_node("LayerNormalization", ["nhwc", "scale"], ["n"], axis=-1),
        helper.make_node("Transpose", ["n"], ["y"], perm=[0, 3, 1, 2]),
    ]
    weights["scale"] = _weights(20) + 1
    check_against_onnxruntime(_model(nodes, [1, 3, 5, 5], weights, 18), tmp_path)


def test_layer_norm_over_several_axes(tmp_path: Path) -> None:
    """axis 1 of [2, 4, 5]: the mean and variance of each sample's 20 elements, scale [4, 5]
    and a bias that broadcasts ([5])."""
    nodes = [helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["y"], axis=1)]
    weights = {"scale": _weights(4, 5) + 1, "bias": _weights(5)}
    check_against_onnxruntime(_model(nodes, [2, 4, 5], weights, 17), tmp_path)


@pytest.mark.parametrize("size", [5, 3])
def test_lrn_after_conv(size: int, tmp_path: Path) -> None:
    """The ONNX model zoo's opset-9 AlexNet/GoogLeNet: LRN across 20 channels after a conv
    and relu (onnxruntime refuses even sizes)."""
    conv, weights = _conv(20)
    nodes = [
        *conv,
        helper.make_node("LRN", ["c"], ["y"], size=size, alpha=1e-2, beta=0.75, bias=1.5),
    ]
    check_against_onnxruntime(_model(nodes, [1, 3, 5, 5], weights, 9), tmp_path)


def test_layer_norm_statistics_outputs(tmp_path: Path) -> None:
    """LayerNormalization's Mean and InvStdDev outputs (training graphs read them), over
    axis 1 of [2, 6, 3]."""
    nodes = [
        helper.make_node("LayerNormalization", ["x", "scale"], ["n", "mean", "inv"], axis=1),
        helper.make_node("Mul", ["n", "inv"], ["scaled"]),
        helper.make_node("Add", ["scaled", "mean"], ["y"]),
    ]
    weights = {"scale": _weights(6, 3) + 1}
    check_against_onnxruntime(_model(nodes, [2, 6, 3], weights, 17), tmp_path)


@pytest.mark.parametrize(
    ("axes", "message"),
    [
        ([1, 3], r"invalid ONNX model: .*node name: sum.*axis must be in \[-rank, rank-1\]"),
        ([1, -2], r"node 'sum' \(ReduceSum\): axes \[1, -2\] name an axis twice"),
    ],
)
def test_bad_reduction_axes_are_refused_naming_the_node(
    axes: list[int], message: str, tmp_path: Path
) -> None:
    """One line naming the node: ours for an axis named twice, onnx's shape inference's for
    one out of range."""
    from nnlayout.diagnostics import UserError
    from nnlayout.frontends.onnx import import_to_files

    node = helper.make_node("ReduceSum", ["x", "axes"], ["y"], name="sum")
    graph = helper.make_graph(
        [node],
        "bad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(axes, np.int64), "axes")],
    )
    path = tmp_path / "model.onnx"
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path.write_bytes(model.SerializeToString())
    with pytest.raises(UserError, match=message) as error:
        import_to_files(path)
    assert "\n" not in error.value.message
