"""3-D convolution, transposed convolution and pooling as torch's exporters write them (Conv,
ConvTranspose, MaxPool, AveragePool over N x C x D x H x W; video models, 3-D UNets), imported
as 2-D ones (frontends/onnx/volumes.py) and
checked against onnxruntime on every target, padding on and off: depth strides, pads and
dilations, groups, a bias, weights given at run time, ceil_mode, count_include_pad, channel
counts (5, 7) that pad in every blocked layout; and the refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnlayout.diagnostics import UserError
from nnlayout.frontends.onnx import import_model
from nnlayout.tests.helpers import check_against_onnxruntime

RNG = np.random.default_rng(54)


def _model(
    nodes: list[onnx.NodeProto],
    x_shape: list[int],
    inits: dict[str, np.ndarray],
    inputs: tuple[tuple[str, list[int]], ...] = (),
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "volumes",
        [
            helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
            for name, shape in (("x", x_shape), *inputs)
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in inits.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def conv_model(
    x_shape: list[int],
    out_channels: int,
    kernel: tuple[int, int, int],
    groups: int = 1,
    bias: bool = True,
    weights_input: bool = False,
    **attrs: object,
) -> onnx.ModelProto:
    """x -> Conv (3-D; weights an initializer, or a graph input) -> y."""
    w_shape = [out_channels, x_shape[1] // groups, *kernel]
    inits = {} if weights_input else {"w": RNG.standard_normal(w_shape) / 4}
    names = ["x", "w"]
    if bias:
        inits["b"] = RNG.standard_normal(out_channels)
        names.append("b")
    node = helper.make_node("Conv", names, ["y"], group=groups, **attrs)
    inputs = (("w", w_shape),) if weights_input else ()
    return _model([node], x_shape, inits, inputs)


CONVS = {
    # torchvision r3d_18's stem: depth 3 (pad 1), spatial 7x7 stride 2
    "stem": ([1, 3, 4, 12, 12], 5, (3, 7, 7), {"strides": [1, 2, 2], "pads": [1, 3, 3] * 2}),
    "basic": ([1, 5, 4, 6, 6], 7, (3, 3, 3), {"pads": [1] * 6}),
    "depth_stride": ([2, 5, 5, 6, 6], 7, (3, 3, 3), {"strides": [2, 2, 2], "pads": [1] * 6}),
    # r2plus1d's factorised kernels
    "spatial_only": ([1, 5, 3, 6, 6], 7, (1, 3, 3), {"pads": [0, 1, 1, 0, 1, 1]}),
    "temporal_only": ([1, 7, 5, 4, 4], 5, (3, 1, 1), {"pads": [1, 0, 0, 1, 0, 0]}),
    "dilated_uneven": (
        [1, 4, 7, 5, 5],
        6,
        (2, 3, 3),
        {"dilations": [2, 1, 2], "pads": [0, 1, 2, 1, 0, 2], "strides": [2, 1, 1]},
    ),
    "same_upper": ([1, 4, 5, 5, 5], 5, (3, 3, 3), {"auto_pad": "SAME_UPPER", "strides": [2] * 3}),
    "one_frame": ([1, 3, 1, 6, 6], 5, (1, 3, 3), {"pads": [0, 1, 1, 0, 1, 1]}),
}


@pytest.mark.parametrize("case", sorted(CONVS))
def test_conv3d(case: str, tmp_path: Path) -> None:
    x_shape, out_channels, kernel, attrs = CONVS[case]
    check_against_onnxruntime(conv_model(x_shape, out_channels, kernel, **attrs), tmp_path)


def test_grouped_conv3d_without_bias(tmp_path: Path) -> None:
    """A depthwise 3-D convolution (channel-separated networks), no bias."""
    model = conv_model([1, 6, 4, 5, 5], 6, (3, 3, 3), groups=6, bias=False, pads=[1] * 6)
    check_against_onnxruntime(model, tmp_path)


def test_conv3d_of_weights_given_at_run_time(tmp_path: Path) -> None:
    model = conv_model([1, 3, 4, 5, 5], 5, (3, 3, 3), weights_input=True, pads=[1] * 6)
    check_against_onnxruntime(model, tmp_path)


def test_conv3d_block_as_torch_exports_it(tmp_path: Path) -> None:
    """Conv3d -> BatchNorm3d -> ReLU -> Conv3d -> GlobalAveragePool: r3d_18's layers."""
    c = 5
    inits = {
        "w1": RNG.standard_normal((c, 3, 3, 3, 3)) / 4,
        "w2": RNG.standard_normal((c, c, 3, 3, 3)) / 4,
        "scale": RNG.uniform(0.5, 1.5, c),
        "shift": RNG.standard_normal(c),
        "mean": RNG.standard_normal(c),
        "var": RNG.uniform(0.5, 1.5, c),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1] * 6),
        helper.make_node("BatchNormalization", ["c1", "scale", "shift", "mean", "var"], ["b1"]),
        helper.make_node("Relu", ["b1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1] * 6, strides=[2, 2, 2]),
        helper.make_node("GlobalAveragePool", ["c2"], ["y"]),
    ]
    check_against_onnxruntime(_model(nodes, [1, 3, 4, 8, 8], inits), tmp_path)


POOLS = {
    "max_r3d": (
        "MaxPool",
        [1, 5, 4, 8, 8],
        {"kernel_shape": [3, 3, 3], "strides": [2] * 3, "pads": [1] * 6},
    ),
    "max_s3d_spatial": (
        "MaxPool",
        [1, 5, 4, 9, 9],
        {"kernel_shape": [1, 3, 3], "strides": [1, 2, 2], "pads": [0, 1, 1] * 2},
    ),
    "max_ceil_dilated": (
        "MaxPool",
        [1, 3, 6, 7, 7],
        {"kernel_shape": [2, 3, 2], "strides": [2, 2, 3], "ceil_mode": 1, "dilations": [2, 1, 1]},
    ),
    "avg_include_pad": (
        "AveragePool",
        [1, 5, 5, 6, 6],
        {"kernel_shape": [3, 3, 3], "strides": [2] * 3, "pads": [1] * 6, "count_include_pad": 1},
    ),
    "avg_exclude_pad": (
        "AveragePool",
        [1, 5, 5, 6, 6],
        {"kernel_shape": [3, 2, 3], "strides": [1, 2, 2], "pads": [1, 0, 1, 1, 1, 1]},
    ),
    "avg_ceil": (
        "AveragePool",
        [2, 3, 5, 7, 7],
        {"kernel_shape": [2, 2, 2], "strides": [2] * 3, "ceil_mode": 1, "count_include_pad": 1},
    ),
    "avg_temporal": (
        "AveragePool",
        [1, 7, 8, 3, 3],
        {"kernel_shape": [4, 1, 1], "strides": [4, 1, 1]},
    ),
    "global_max": ("GlobalMaxPool", [1, 5, 3, 4, 4], {}),
    # two clips: pooled over [N, C*D, H, W], not as frames
    "max_two_clips": (
        "MaxPool",
        [2, 3, 5, 6, 6],
        {"kernel_shape": [3, 3, 3], "strides": [2, 2, 2], "pads": [1] * 6, "ceil_mode": 1},
    ),
}


@pytest.mark.parametrize("case", sorted(POOLS))
def test_pool3d(case: str, tmp_path: Path) -> None:
    op_type, x_shape, attrs = POOLS[case]
    model = _model([helper.make_node(op_type, ["x"], ["y"], **attrs)], x_shape, {})
    check_against_onnxruntime(model, tmp_path)


def test_a_3d_pool_with_negative_same_padding_is_refused() -> None:
    node = helper.make_node(
        "MaxPool", ["x"], ["y"], kernel_shape=[1, 1, 1], strides=[4, 4, 4], auto_pad="SAME_UPPER"
    )
    with pytest.raises(UserError, match="auto_pad SAME_UPPER on spatial axis 0"):
        import_model(_model([node], [1, 2, 7, 7, 7], {}))


def test_convolutions_of_other_ranks_are_refused() -> None:
    w = {"w": RNG.standard_normal((2, 2, 1, 1, 1, 1))}
    node = helper.make_node("Conv", ["x", "w"], ["y"])
    with pytest.raises(UserError, match="4-D convolution is not supported"):
        import_model(_model([node], [1, 2, 3, 3, 3, 3], w))
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"])
    w = {"w": RNG.standard_normal((2, 2, 1, 1, 1, 1))}
    with pytest.raises(UserError, match="4-D transposed convolution is not supported"):
        import_model(_model([node], [1, 2, 3, 3, 3, 3], w))


def test_a_depth_window_larger_than_the_padded_depth_is_refused() -> None:
    model = conv_model([1, 3, 2, 5, 5], 4, (3, 3, 3), pads=[0, 1, 1, 0, 1, 1])
    with pytest.raises(UserError, match="does not fit the padded depth size 2"):
        import_model(model)


@pytest.mark.parametrize("clips", [1, 2])
def test_depth_pads_as_large_as_the_window_are_refused(clips: int) -> None:
    """As onnxruntime refuses them (a window of padding only), one clip (its frames) or two."""
    node = helper.make_node(
        "MaxPool", ["x"], ["y"], kernel_shape=[1, 2, 2], pads=[1, 0, 0, 1, 0, 0]
    )
    with pytest.raises(UserError, match=r"pads \[1, 0, 1, 0\] must be smaller than the window"):
        import_model(_model([node], [clips, 2, 3, 4, 4], {}))


def conv_transpose_model(
    x_shape: list[int],
    out_channels: int,
    kernel: tuple[int, int, int],
    groups: int = 1,
    bias: bool = True,
    **attrs: object,
) -> onnx.ModelProto:
    """x -> ConvTranspose (3-D, weights [C, O / groups, kd, kh, kw]) -> y."""
    inits = {"w": RNG.standard_normal([x_shape[1], out_channels // groups, *kernel]) / 4}
    names = ["x", "w"]
    if bias:
        inits["b"] = RNG.standard_normal(out_channels)
        names.append("b")
    node = helper.make_node("ConvTranspose", names, ["y"], group=groups, **attrs)
    return _model([node], x_shape, inits)


TRANSPOSED = {
    # a 3-D UNet's upsampling (torch's ConvTranspose3d(k=2, s=2)): the taps interleave
    "unet_up": ([1, 5, 3, 4, 4], 7, (2, 2, 2), {"strides": [2, 2, 2]}),
    # a "same" one: every tap on every residue, shifted
    "same": ([1, 5, 4, 5, 5], 3, (3, 3, 3), {"pads": [1] * 6}),
    # stride 2 with pads and output_padding (torch's usual x2 upsampling), two clips
    "stride_pad": (
        [2, 4, 3, 4, 4],
        5,
        (3, 3, 3),
        {"strides": [2, 2, 2], "pads": [1] * 6, "output_padding": [1, 1, 1]},
    ),
    # kernel 4 stride 2 pad 1 (GANs' and VAEs' decoders): two taps on each residue
    "k4s2": ([1, 3, 3, 4, 4], 4, (4, 4, 4), {"strides": [2, 2, 2], "pads": [1] * 6}),
    # stride 3 over a kernel of 2: a residue no tap reaches (zeros, then the bias)
    "gaps": ([1, 2, 3, 3, 3], 3, (2, 1, 1), {"strides": [3, 1, 1]}),
    # depth dilation, asymmetric depth pads
    "dilated": (
        [1, 3, 4, 3, 3],
        2,
        (2, 3, 3),
        {"dilations": [2, 1, 1], "pads": [1, 1, 1, 0, 1, 1]},
    ),
    # output_shape (auto padding) asks one more frame than the natural size with pads
    "output_shape": (
        [1, 3, 3, 4, 4],
        2,
        (3, 3, 3),
        {"strides": [2, 2, 2], "output_shape": [6, 8, 8]},
    ),
}


@pytest.mark.parametrize("case", TRANSPOSED)
def test_conv_transpose3d(case: str, tmp_path: Path) -> None:
    x_shape, out_channels, kernel, attrs = TRANSPOSED[case]
    check_against_onnxruntime(
        conv_transpose_model(x_shape, out_channels, kernel, **attrs), tmp_path
    )


def test_grouped_conv_transpose3d_without_bias(tmp_path: Path) -> None:
    model = conv_transpose_model(
        [2, 4, 3, 3, 3], 6, (2, 3, 3), groups=2, bias=False, strides=[2, 1, 1], pads=[0, 1, 1] * 2
    )
    check_against_onnxruntime(model, tmp_path)


def test_conv_transpose3d_pads_past_its_frames_are_refused() -> None:
    model = conv_transpose_model([1, 2, 1, 3, 3], 2, (1, 1, 1), pads=[1, 0, 0, 1, 0, 0])
    with pytest.raises(UserError, match="depth pads 1 \\+ 1 leave -1 of its 1 frames"):
        import_model(model)


@pytest.mark.parametrize(
    ("op_type", "x_shape", "w_shape", "b", "attrs", "message"),
    [
        ("ConvTranspose", [1, 3, 3, 3, 3], [2, 2, 2, 2, 2], None, {}, "input has 3 channels"),
        ("Conv", [1, 3, 3, 3, 3], [2, 2, 1, 1, 1], None, {}, "input has 3 channels"),
        ("Conv", [1, 2, 3, 2, 2], [2, 2, 1, 3, 3], None, {}, "window of extent 3"),
        (
            "ConvTranspose",
            [1, 2, 3, 3, 3],
            [2, 2, 2, 2, 2],
            None,
            {"pads": [0, 3, 0, 0, 3, 0]},
            "leave no output along spatial axis 0",
        ),
        ("ConvTranspose", [1, 2, 3, 3, 3], [2, 3, 2, 2, 2], [1], {}, "bias must have shape [3]"),
        (
            "ConvTranspose",
            [1, 2, 3, 3, 3],
            [2, 3, 2, 1, 1],
            None,
            {"strides": [2, 1, 1], "output_padding": [2, 0, 0]},
            "depth output_padding 2 must be at least 0 and smaller than",
        ),
    ],
    ids=["transposed channels", "channels", "window", "crop", "bias", "output_padding"],
)
def test_malformed_3d_convolutions_are_refused_naming_the_node(
    op_type: str,
    x_shape: list[int],
    w_shape: list[int],
    b: list[int] | None,
    attrs: dict,
    message: str,
) -> None:
    """As onnxruntime refuses them, in one line naming the node, as the 2-D paths do."""
    inits = {"w": RNG.standard_normal(w_shape)}
    names = ["x", "w"]
    if b is not None:
        inits["b"] = RNG.standard_normal(b)
        names.append("b")
    node = helper.make_node(op_type, names, ["y"], name="up", **attrs)
    with pytest.raises(UserError) as error:
        import_model(_model([node], x_shape, inits))
    assert f"node 'up' ({op_type})" in error.value.message and message in error.value.message, (
        error.value.message
    )
