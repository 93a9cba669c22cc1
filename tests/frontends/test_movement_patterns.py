"""Exporter patterns of the data-movement operators, as torch's classic (opset 17) and dynamo
(opset 18) exporters write them, built with onnx.helper and checked against onnxruntime on
every target, padding on and off, interpreter and generated module: ShuffleNet v2's unit
(Split in halves, the branch's convolutions, Concat, channel shuffle), a Slice of activations,
ViT's Gather of the class token, a segmentation head's bilinear Resize with sizes, a nearest
Upsample, and Pad before a convolution."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnlayout.dialects import nn
from nnlayout.tests.helpers import ALL_TARGETS, check_against_onnxruntime

RNG = np.random.default_rng(26)


def _weights(*shape: int) -> np.ndarray:
    return (RNG.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)


def _model(
    nodes: list[onnx.NodeProto],
    x_shape: list[int],
    initializers: dict[str, np.ndarray],
    opset: int,
    outputs: tuple[str, ...] = ("y",),
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "pattern",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in outputs],
        [numpy_helper.from_array(v, n) for n, v in initializers.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return model


def _conv(
    name: str,
    x: str,
    cin: int,
    cout: int,
    inits: dict,
    kernel: int = 1,
    groups: int = 1,
    relu: bool = True,
) -> list[onnx.NodeProto]:
    inits[f"{name}.w"] = _weights(cout, cin // groups, kernel, kernel)
    inits[f"{name}.b"] = _weights(cout)
    pads = [kernel // 2] * 4
    out = f"{name}.c" if relu else name
    nodes = [
        helper.make_node("Conv", [x, f"{name}.w", f"{name}.b"], [out], pads=pads, group=groups)
    ]
    if relu:
        nodes.append(helper.make_node("Relu", [out], [name]))
    return nodes


def shufflenet_unit(opset: int, channels: int = 40, size: int = 8) -> onnx.ModelProto:
    """conv -> Split in halves -> (x1, branch of 1x1, 3x3 depthwise, 1x1 convolutions) ->
    Concat -> channel shuffle (Reshape, Transpose, Reshape) -> conv."""
    half = channels // 2
    inits: dict[str, np.ndarray] = {}
    nodes = _conv("stem", "x", channels, channels, inits)
    if opset >= 18:  # dynamo: num_outputs
        nodes.append(helper.make_node("Split", ["stem"], ["x1", "x2"], axis=1, num_outputs=2))
    else:
        inits["halves"] = np.array([half, half], np.int64)
        nodes.append(helper.make_node("Split", ["stem", "halves"], ["x1", "x2"], axis=1))
    nodes += _conv("b1", "x2", half, half, inits)
    nodes += _conv("b2", "b1", half, half, inits, kernel=3, groups=half, relu=False)
    nodes += _conv("b3", "b2", half, half, inits)
    inits["grouped"] = np.array([1, 2, half, size, size], np.int64)
    inits["merged"] = np.array([1, -1, size, size], np.int64)
    nodes += [
        helper.make_node("Concat", ["x1", "b3"], ["cat"], axis=1),
        helper.make_node("Reshape", ["cat", "grouped"], ["r"]),
        helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1, 3, 4]),
        helper.make_node("Reshape", ["t", "merged"], ["shuffled"]),
    ]
    nodes += _conv("y", "shuffled", channels, channels, inits)
    return _model(nodes, [1, channels, size, size], inits, opset)


@pytest.mark.parametrize("opset", [17, 18])
def test_shufflenet_unit(opset: int, tmp_path: Path) -> None:
    module = check_against_onnxruntime(shufflenet_unit(opset), tmp_path)
    ops = [op.name for op in module.walk()]
    assert ops.count("nn.slice") == 2 and "nn.reshape" in ops  # the shuffle is fused later


def test_slice_of_activations(tmp_path: Path) -> None:
    """Dynamo writes Slice with constant starts, ends, axes and steps: a crop of the
    spatial axes, a stride, a negative step and a channel range off the block boundary."""
    inits: dict[str, np.ndarray] = {}
    nodes = _conv("c", "x", 5, 20, inits)
    for name, starts, ends, axes, steps in (
        ("s1", [1, 3], [-1, 1000], [2, 3], [1, 1]),
        ("s2", [0, 2], [20, 7], [1, 3], [3, 2]),
        ("s3", [-1], [-1000], [2], [-1]),
        ("s4", [3], [17], [1], [1]),
    ):
        for suffix, values in (("b", starts), ("e", ends), ("a", axes), ("k", steps)):
            inits[f"{name}{suffix}"] = np.array(values, np.int64)
        nodes.append(
            helper.make_node("Slice", ["c", f"{name}b", f"{name}e", f"{name}a", f"{name}k"], [name])
        )
    nodes += _conv("y", "s4", 14, 6, inits)
    model = _model(nodes, [1, 5, 9, 9], inits, 18, ("s1", "s2", "s3", "y"))
    check_against_onnxruntime(model, tmp_path)


@pytest.mark.parametrize("opset", [17, 18])
def test_vit_class_token(opset: int, tmp_path: Path) -> None:
    """ViT's head reads the class token: Gather(axis=1, index 0) of [N, tokens, dim], then
    LayerNorm's place is a Gemm here."""
    inits = {"zero": np.array(0, np.int64), "head": _weights(10, 12), "bias": _weights(10)}
    nodes = [
        helper.make_node("Relu", ["x"], ["tokens"]),
        helper.make_node("Gather", ["tokens", "zero"], ["cls"], axis=1),
        helper.make_node("Gemm", ["cls", "head", "bias"], ["y"], transB=1),
    ]
    module = check_against_onnxruntime(_model(nodes, [1, 5, 12], inits, opset), tmp_path)
    assert [op.name for op in module.walk()].count("nn.slice") == 1


def segmentation_head(opset: int, mode: str = "half_pixel") -> onnx.ModelProto:
    """torchvision's heads: F.interpolate(size=input size, mode='bilinear',
    align_corners=False) -> Resize linear with sizes (roi and scales left out)."""
    inits: dict[str, np.ndarray] = {"sizes": np.array([1, 6, 16, 20], np.int64)}
    nodes = _conv("c", "x", 5, 6, inits)
    if opset >= 18:  # dynamo (onnxscript) spells out every attribute
        nodes.append(
            helper.make_node(
                "Resize",
                ["c", "", "", "sizes"],
                ["y"],
                mode="linear",
                coordinate_transformation_mode=mode,
                antialias=0,
                cubic_coeff_a=-0.75,
                exclude_outside=0,
                extrapolation_value=0.0,
                keep_aspect_ratio_policy="stretch",
                nearest_mode="floor",
            )
        )
    else:
        inits["roi"] = np.array([], np.float32)
        inits["scales"] = np.array([], np.float32)
        nodes.append(
            helper.make_node(
                "Resize",
                ["c", "roi", "scales", "sizes"],
                ["y"],
                mode="linear",
                coordinate_transformation_mode=mode,
                cubic_coeff_a=-0.75,
                nearest_mode="floor",
            )
        )
    return _model(nodes, [1, 5, 4, 5], inits, opset)


@pytest.mark.parametrize("opset", [17, 18])
@pytest.mark.parametrize("mode", ["half_pixel", "pytorch_half_pixel"])
def test_segmentation_head_resize(opset: int, mode: str, tmp_path: Path) -> None:
    check_against_onnxruntime(segmentation_head(opset, mode), tmp_path)


def test_nearest_upsample(tmp_path: Path) -> None:
    """The ONNX model zoo's opset-9 Upsample: nearest, scales [1, 1, 2, 2]."""
    inits = {"scales": np.array([1, 1, 2, 2], np.float32)}
    nodes = _conv("c", "x", 5, 12, inits)
    nodes.append(helper.make_node("Upsample", ["c", "scales"], ["u"], mode="nearest"))
    nodes += _conv("y", "u", 12, 4, inits, kernel=3)
    check_against_onnxruntime(_model(nodes, [1, 5, 5, 6], inits, 9), tmp_path)


@pytest.mark.parametrize(
    ("mode", "value"), [("reflect", 0.0), ("edge", 0.0), ("constant", 0.0), ("constant", 1.5)]
)
def test_pad_before_conv(mode: str, value: float, tmp_path: Path) -> None:
    """Pad of the spatial axes before a convolution (opset 17: pads and constant_value as
    inputs), on 20 channels: a non-zero constant must not reach the padding lanes."""
    inits: dict[str, np.ndarray] = {
        "pads": np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64),
        "value": np.array(value, np.float32),
    }
    nodes = _conv("c", "x", 5, 20, inits)
    nodes.append(helper.make_node("Pad", ["c", "pads", "value"], ["p"], mode=mode))
    nodes += _conv("y", "p", 20, 6, inits, kernel=3)
    check_against_onnxruntime(_model(nodes, [1, 5, 6, 7], inits, 17), tmp_path)


def test_pad_negative_crops(tmp_path: Path) -> None:
    """Negative pads crop first (opset 11+)."""
    inits = {"pads": np.array([0, 0, -1, 2, 0, 0, 1, -2], np.int64)}
    nodes = [helper.make_node("Pad", ["x", "pads"], ["y"], mode="edge")]
    module = check_against_onnxruntime(_model(nodes, [1, 3, 5, 6], inits, 13), tmp_path)
    assert {op.name for op in module.walk()} >= {"nn.slice", "nn.pad"}


def test_split_outputs_are_slices() -> None:
    """Split of opset 18 into three uneven parts: one nn.slice per output."""
    from nnlayout.frontends.onnx import import_model

    nodes = [helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3)]
    model = _model(nodes, [1, 7, 2, 2], {}, 18, ("a", "b", "c"))
    slices = [op for op in import_model(model).module.walk() if isinstance(op, nn.SliceOp)]
    assert [list(nn.shape_of(s.output)) for s in slices] == [
        [1, 3, 2, 2],
        [1, 3, 2, 2],
        [1, 1, 2, 2],
    ]


@pytest.mark.parametrize("target", ["avx2", "avx512", "onednn", "onednn-nchw8c", "onednn-nchw16c"])
def test_shufflenet_unit_stays_in_one_layout(target: str) -> None:
    """With 116 channels (halves of 58, off every block), the split, the concat and the
    fused channel shuffle run in the convolutions' layout: the only activation reorders are
    the input's and the output's."""
    from nnlayout.frontends.onnx import import_model
    from nnlayout.tests.helpers import LAYOUT_PIPELINE, activation_reorders, compile_module

    module = import_model(shufflenet_unit(18, channels=116, size=7)).module
    compiled = compile_module(module, target, True, "fuse-channel-shuffle," + LAYOUT_PIPELINE)
    names = [op.name for op in compiled.walk()]
    assert "nn.channel_shuffle" in names and "nn.transpose" not in names
    assert activation_reorders(compiled) == 2


def test_zero_pad_folds_into_the_conv(tmp_path: Path) -> None:
    """fold-pad (default-pipeline): a zero Pad of H and W before a Conv becomes its pads; a
    reflect one stays."""
    from nnlayout.tests.helpers import DEFAULT_PIPELINE, compile_module

    inits: dict[str, np.ndarray] = {"pads": np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64)}
    nodes = [helper.make_node("Pad", ["x", "pads"], ["p"], mode="constant")]
    nodes += _conv("y", "p", 5, 6, inits, kernel=3)
    module = check_against_onnxruntime(_model(nodes, [1, 5, 6, 7], inits, 17), tmp_path)
    compiled = compile_module(module, "avx2", True, DEFAULT_PIPELINE)
    assert "nn.pad" not in {op.name for op in compiled.walk()}
    reflect = check_against_onnxruntime(
        _model(
            [helper.make_node("Pad", ["x", "pads"], ["p"], mode="reflect"), *nodes[1:]],
            [1, 5, 6, 7],
            inits,
            17,
        ),
        tmp_path,
    )
    compiled = compile_module(reflect, "avx2", True, DEFAULT_PIPELINE)
    assert "nn.pad" in {op.name for op in compiled.walk()}


@pytest.mark.parametrize("opset", [13, 18])
def test_expand_of_activations(opset: int, tmp_path: Path) -> None:
    """Expand of a run-time value (a per-sample vector broadcast over tokens), and one to
    its own shape (the identity)."""
    inits = {"shape": np.array([2, 6, 1, 5], np.int64), "same": np.array([1, 5], np.int64)}
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Expand", ["r", "shape"], ["e"]),
        helper.make_node("Expand", ["e", "same"], ["y"]),
    ]
    module = check_against_onnxruntime(_model(nodes, [2, 1, 3, 5], inits, opset), tmp_path)
    assert [op.name for op in module.walk()].count("nn.expand") == 1


def _resize_node(**attrs: object) -> onnx.NodeProto:
    return helper.make_node("Resize", ["x", "", "scales"], ["y"], **attrs)


@pytest.mark.parametrize(
    ("node", "inits", "message"),
    [
        (_resize_node(mode="lanczos"), {}, "Resize mode 'lanczos' is not supported"),
        (_resize_node(antialias=1, mode="linear"), {}, "Resize with antialias=1"),
        (
            _resize_node(coordinate_transformation_mode="tf_crop_and_resize"),
            {},
            "coordinate_transformation_mode 'tf_crop_and_resize' is not supported",
        ),
        (
            helper.make_node("Resize", ["x", "", "chan"], ["y"]),
            {"chan": np.array([1, 2, 1, 1], np.float32)},
            "resizes the N or C axis",
        ),
        (
            helper.make_node("Pad", ["x", "pads"], ["y"], mode="circular"),
            {"pads": np.zeros(8, np.int64)},
            "Pad mode 'circular' is not supported",
        ),
        (
            helper.make_node("Slice", ["x", "b", "e"], ["y"]),
            {"b": np.array([3], np.int64), "e": np.array([1], np.int64)},
            "zero-size result",
        ),
    ],
)
def test_refusals_name_the_node(node: onnx.NodeProto, inits: dict, message: str) -> None:
    """What the movement converters cannot do is refused in one line naming the node."""
    from nnlayout.diagnostics import UserError
    from nnlayout.frontends.onnx import import_model

    inits = {"scales": np.array([1, 1, 2, 2], np.float32), **inits}
    node.name = "the_node"
    with pytest.raises(UserError) as error:
        import_model(_model([node], [1, 2, 3, 4], inits, 19))
    assert message in error.value.message and "node 'the_node'" in error.value.message
    assert "\n" not in error.value.message


@pytest.mark.parametrize("opset", [13, 18])
def test_nearest_interpolate_by_two(opset: int, tmp_path: Path) -> None:
    """F.interpolate(scale_factor=2, mode='nearest'): Resize with scales, asymmetric
    coordinates, nearest floor, which oneDNN's resampling computes exactly."""
    from nnlayout.dialects.kernel_attr import kernel_of
    from nnlayout.tests.helpers import LAYOUT_PIPELINE, compile_module

    inits = {"scales": np.array([1, 1, 2, 2], np.float32)}
    if opset < 18:
        inits["roi"] = np.array([], np.float32)
    nodes = _conv("c", "x", 5, 12, inits)
    nodes.append(
        helper.make_node(
            "Resize",
            ["c", "roi" if opset < 18 else "", "scales"],
            ["u"],
            mode="nearest",
            coordinate_transformation_mode="asymmetric",
            nearest_mode="floor",
        )
    )
    nodes += _conv("y", "u", 12, 4, inits, kernel=3)
    module = check_against_onnxruntime(_model(nodes, [1, 5, 5, 6], inits, opset), tmp_path)
    if "onednn" in ALL_TARGETS:
        compiled = compile_module(module, "onednn", True, LAYOUT_PIPELINE)
        (resize,) = [op for op in compiled.walk() if isinstance(op, nn.ResizeOp)]
        assert kernel_of(resize).kernel_name.data == "resize_onednn"


def test_gather_of_scattered_indices(tmp_path: Path) -> None:
    """Gather at indices that do not step evenly (and a negative one): slices joined by a
    concat, reshaped to the indices' shape."""
    inits = {"idx": np.array([[3, 0], [-1, 2]], np.int64)}
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Gather", ["r", "idx"], ["y"], axis=2),
    ]
    check_against_onnxruntime(_model(nodes, [1, 3, 5, 4], inits, 13), tmp_path)


def test_upsample_linear(tmp_path: Path) -> None:
    """Upsample (opset 9) linear: asymmetric coordinates, as onnxruntime reads it."""
    inits = {"scales": np.array([1, 1, 2, 3], np.float32)}
    nodes = [helper.make_node("Upsample", ["x", "scales"], ["y"], mode="linear")]
    check_against_onnxruntime(_model(nodes, [1, 3, 4, 5], inits, 9), tmp_path)


def test_slice_of_everything_is_the_input() -> None:
    """Dynamo's Slice(x, 0, INT64_MAX) on an axis: no op at all."""
    from nnlayout.frontends.onnx import import_model

    inits = {
        "b": np.array([0], np.int64),
        "e": np.array([2**63 - 1], np.int64),
        "a": np.array([1], np.int64),
    }
    nodes = [
        helper.make_node("Slice", ["x", "b", "e", "a"], ["s"]),
        helper.make_node("Relu", ["s"], ["y"]),
    ]
    module = import_model(_model(nodes, [1, 3, 4], inits, 18)).module
    assert "nn.slice" not in {op.name for op in module.walk()}


def test_shufflenet_downsampling_unit(tmp_path: Path) -> None:
    """ShuffleNet v2's stride-2 unit: no split, both branches read the input (depthwise 3x3
    stride 2 then 1x1; 1x1, depthwise stride 2, 1x1), Concat of 2 x 29 channels, shuffle."""
    inits: dict[str, np.ndarray] = {}
    nodes = _conv("stem", "x", 12, 29, inits)
    for name, cin in (("a1", 29), ("b2", 29)):
        inits[f"{name}.w"] = _weights(cin, 1, 3, 3)
        inits[f"{name}.b"] = _weights(cin)
    nodes += [
        helper.make_node(
            "Conv", ["stem", "a1.w", "a1.b"], ["a1"], pads=[1] * 4, strides=[2, 2], group=29
        )
    ]
    nodes += _conv("a2", "a1", 29, 29, inits)
    nodes += _conv("b1", "stem", 29, 29, inits)
    nodes += [
        helper.make_node(
            "Conv", ["b1", "b2.w", "b2.b"], ["b2"], pads=[1] * 4, strides=[2, 2], group=29
        )
    ]
    nodes += _conv("b3", "b2", 29, 29, inits)
    inits["grouped"] = np.array([1, 2, 29, 4, 4], np.int64)
    inits["merged"] = np.array([1, 58, 4, 4], np.int64)
    nodes += [
        helper.make_node("Concat", ["a2", "b3"], ["cat"], axis=1),
        helper.make_node("Reshape", ["cat", "grouped"], ["r"]),
        helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1, 3, 4]),
        helper.make_node("Reshape", ["t", "merged"], ["y"]),
    ]
    check_against_onnxruntime(_model(nodes, [1, 12, 8, 8], inits, 17), tmp_path)


def test_a_concat_of_one_input_is_that_input(tmp_path: Path) -> None:
    """torchvision's DenseNet concatenates each block's first layer's input alone (a
    `torch.cat` of a list of one): imported as the input itself, not a copy, also where it
    is a graph output."""
    inits: dict[str, np.ndarray] = {}
    nodes = _conv("c", "x", 6, 12, inits)
    nodes += [helper.make_node("Concat", ["c"], ["one"], axis=1)]
    nodes += _conv("y", "one", 12, 8, inits)
    nodes += [helper.make_node("Concat", ["y"], ["out"], axis=1)]
    model = _model(nodes, [1, 6, 7, 7], inits, 17, outputs=("out", "one"))
    module = check_against_onnxruntime(model, tmp_path)
    assert not [op for op in module.walk() if isinstance(op, nn.ConcatOp)]


def _roll_model(shift: int, then: str = "Relu") -> onnx.ModelProto:
    """torch.roll(x, shift, dims=1) as the classic exporter writes it: Slice(x, -shift:),
    Slice(x, :-shift), Concat; with shift 0 (swin3d_t's windows, shifted along every axis
    but one) the first part is empty. Then `then` of the roll."""
    ints = {name: np.array([v], np.int64) for name, v in (("axis", 1), ("big", 1 << 62))}
    ints["cut"] = np.array([-shift if shift else 4], np.int64)
    ints["zero"] = np.array([0], np.int64)
    nodes = [
        helper.make_node("Slice", ["x", "cut", "big", "axis"], ["tail"]),
        helper.make_node("Slice", ["x", "zero", "cut", "axis"], ["head"]),
        helper.make_node("Concat", ["tail", "head"], ["rolled"], axis=1),
        helper.make_node(then, ["rolled"], ["y"]),
    ]
    return _model(nodes, [1, 4, 6], ints, 17)  # type: ignore[arg-type]


@pytest.mark.parametrize("shift", [0, 1, 3])
def test_roll_by_zero_leaves_the_empty_part_out(shift: int, tmp_path: Path) -> None:
    check_against_onnxruntime(_roll_model(shift), tmp_path)


def test_an_empty_slice_read_by_another_op_is_refused() -> None:
    from nnlayout.diagnostics import UserError
    from nnlayout.frontends.onnx import import_model

    nodes = [
        helper.make_node("Slice", ["x", "four", "big", "axis"], ["none"]),
        helper.make_node("Relu", ["none"], ["y"]),
    ]
    ints = {name: np.array([v], np.int64) for name, v in (("axis", 1), ("big", 99), ("four", 4))}
    model = _model(nodes, [1, 4, 6], ints, 17)  # type: ignore[arg-type]
    with pytest.raises(
        UserError,
        match=r"\(Relu\) producing 'y': 'none' is empty \(node #0 \(Slice\) producing 'none': the slice of \[1, 4, 6\] has a zero-size result",
    ):
        import_model(model)
