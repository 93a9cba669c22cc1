"""blocked-stem (transforms/blocked_stem.py) and the reorder it leaves, a view where nChw16c
and NHWC are the same bytes (dialects/layout.py `same_bytes`, lowering/views.py): which
chains it takes, what it compiles to on `host`, and the same results as without it and as
onnxruntime, on every target, padding on and off, interpreter and generated module."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32

from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import LayoutAttr, ReorderOp, encoding_name, same_bytes
from nnlayout.frontends.onnx.importer import import_to_files
from nnlayout.kernels.blocked.options import BlockedOptions
from nnlayout.kernels.targets import get_target, host_blocked_target
from nnlayout.lowering.bufferize import activation_reorders
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.transforms.blocked_stem import stem_chain
from nnlayout.transforms.remarks import collecting
from tests.helpers import (
    ALL_TARGETS,
    DEFAULT_PIPELINE,
    PRE_DISPATCH,
    assert_close,
    assert_runs_give,
    check_against_onnxruntime,
    compile_module,
    onnx_model,
    onnxruntime_outputs,
    random_inputs,
)

RNG = np.random.default_rng(0)
NHWC_PIPELINE = "default-pipeline{{target={target} padding={padding} activation-format=nhwc}}"
DISPATCHED = PRE_DISPATCH + ",select-dispatch,fuse-post-ops,fuse-matmul-post-ops"


def conv(name: str, source: str, cin: int, cout: int, kernel: int, stride: int = 1, **kw: int):
    """A Conv node (torch's classic export: pads written out) and its initializers."""
    groups = kw.get("groups", 1)
    node = helper.make_node(
        "Conv",
        [source, f"{name}.w", f"{name}.b"],
        [name],
        kernel_shape=[kernel, kernel],
        pads=[kernel // 2] * 4,
        strides=[stride, stride],
        group=groups,
    )
    weights = {
        f"{name}.w": (RNG.standard_normal((cout, cin // groups, kernel, kernel)) * 0.3).astype(
            np.float32
        ),
        f"{name}.b": (RNG.standard_normal(cout) * 0.1).astype(np.float32),
    }
    return [node], weights


def clip6(source: str, name: str) -> list[onnx.NodeProto]:
    """ReLU6 as opset 17 writes it (Clip with min and max inputs)."""
    return [helper.make_node("Clip", [source, "zero", "six"], [name])]


def mobilenet_head(
    channels: int = 3,
    last: int = 16,
    residual: bool = False,
    batch: int = 1,
    reread: bool = False,
    excite: bool = False,
) -> onnx.ModelProto:
    """MobileNetV2's first layers: a 3x3 stride-2 stem with ReLU6, a depthwise 3x3 with
    ReLU6, a 1x1 to `last` channels, then a 1x1 expansion with ReLU (and, with `residual`,
    the depthwise result added back to itself through a second reader; with `reread`, the
    1x1's result likewise; with `excite`, EfficientNet-B0's squeeze-and-excitation block
    between the depthwise and the 1x1, as torch exports it)."""
    nodes, weights = [], {"zero": np.float32(0.0), "six": np.float32(6.0)}
    for part in (
        conv("stem", "x", channels, 32, 3, 2),
        conv("dw", "stem.r", 32, 32, 3, groups=32),
        conv("project", "dw.r", 32, last, 1),
        conv("expand", "project", last, 48, 1),
    ):
        nodes += part[0]
        weights |= part[1]
    nodes[1:1] = clip6("stem", "stem.r")
    nodes[3:3] = clip6("dw", "dw.r")
    if excite:
        squeeze, squeeze_weights = conv("squeeze", "pooled", 32, 8, 1)
        scale, scale_weights = conv("scale", "squeeze.r", 8, 32, 1)
        weights |= squeeze_weights | scale_weights
        nodes[4:4] = [
            helper.make_node("GlobalAveragePool", ["dw.r"], ["pooled"]),
            *squeeze,
            helper.make_node("Relu", ["squeeze"], ["squeeze.r"]),
            *scale,
            helper.make_node("Sigmoid", ["scale"], ["scale.s"]),
            helper.make_node("Mul", ["dw.r", "scale.s"], ["excited"]),
        ]
        project = next(n for n in nodes if n.output[0] == "project")
        project.input[0] = "excited"
    nodes.append(helper.make_node("Relu", ["expand"], ["y"]))
    outputs = ["y"]
    if residual:
        nodes.append(helper.make_node("Add", ["dw.r", "dw.r"], ["twice"]))
        outputs.append("twice")
    if reread:
        nodes.append(helper.make_node("Add", ["project", "project"], ["again"]))
        outputs.append("again")
    weights = {k: np.asarray(v) for k, v in weights.items()}
    return onnx_model(nodes, {"x": [batch, channels, 32, 32]}, outputs, weights)


def imported(model: onnx.ModelProto, folder: Path) -> tuple[ModuleOp, str]:
    path = folder / "model.onnx"
    path.write_bytes(model.SerializeToString())
    return import_to_files(path), str(path.with_suffix(".mlir"))


# the block of the target blocked-stem runs its chain on (host_blocked_target's, 16)
BLOCK = BlockedOptions.of(get_target("onednn-nchw16c")).block


def chain_names(module: ModuleOp) -> list[str]:
    function = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    return [op.name for op in stem_chain(function, BLOCK) or []]


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, ["nn.fused_conv2d", "nn.fused_conv2d", "nn.conv2d"]),
        ({"batch": 2}, ["nn.fused_conv2d", "nn.fused_conv2d", "nn.conv2d"]),
        ({"channels": 16}, []),  # not an image: a whole block already
        ({"last": 24}, []),  # no 16-channel result to end at
        ({"residual": True}, []),  # the depthwise result has a second reader
        ({"reread": True}, []),  # so has the 16-channel result
        (
            {"excite": True},
            [
                "nn.fused_conv2d",
                "nn.fused_conv2d",
                "nn.global_avg_pool",
                "nn.mul",
                "nn.conv2d",
            ],
        ),
    ],
)
def test_the_chain_runs_from_the_image_to_16_channels(
    kwargs: dict, expected: list[str], tmp_path: Path
) -> None:
    module, _ = imported(mobilenet_head(**kwargs), tmp_path)
    assert chain_names(compile_module(module, "host", True, DISPATCHED)) == expected


def test_on_host_the_chain_runs_blocked_and_reorders_nothing(tmp_path: Path) -> None:
    """Where host has its blocked target, the stem reads the input as it comes and the
    16-channel result is a view: the compiled module runs no activation reorder before the
    flatten-free tail (whereas NHWC alone moves the input), and a remark names the chain."""
    module, _ = imported(mobilenet_head(), tmp_path)
    with collecting() as remarks:
        dispatched = compile_module(module, "host", True, DISPATCHED + ",blocked-stem")
    convolutions = [kernel_of(op) for op in dispatched.walk() if op.name.startswith("nn.")]
    results = [k.results[0] for k in convolutions if k is not None]
    said = [r.message for r in remarks if r.pass_name == "blocked-stem"]
    planned = compile_module(module, "host", True, DEFAULT_PIPELINE)
    nhwc = compile_module(module, "host", True, NHWC_PIPELINE)
    if host_blocked_target()[0] is None:
        assert said == [] and "NCHW16c" not in results
        return
    assert results[:3] == ["NCHW16c"] * 3 and results[3] == "NHWC", results
    assert said == [
        "3 convolutions from the input to 16 channels run in nChw16c (onednn-nchw16c): "
        "nChw16c is NHWC at 16 channels"
    ]
    # NHWC moves the input into NHWC; both reorder the result back to plain.
    assert activation_reorders(nhwc) == 2
    assert activation_reorders(planned) == 1
    reorders = [
        op.inner.input.type
        for op in planned.walk()
        if isinstance(op, ComputeOp) and isinstance(op.inner, ReorderOp)
    ]
    assert [encoding_name(t) for t in reorders] == ["NHWC"]


@pytest.mark.parametrize(
    "kwargs", [{}, {"batch": 2}, {"residual": True}, {"reread": True}, {"excite": True}]
)
def test_same_results_with_and_without_it_and_as_onnxruntime(kwargs: dict, tmp_path: Path) -> None:
    """auto (the chain blocked, where host can) and nhwc (no blocked-stem), padding on and
    off, interpreter and generated module; then every target against onnxruntime."""
    model = mobilenet_head(**kwargs)
    module, source = imported(model, tmp_path)
    inputs = random_inputs(module)
    want = onnxruntime_outputs(model, inputs)
    for activation_format in ("auto", "nhwc"):
        for padding in (True, False):
            spec = "default-pipeline{{target={target} padding={padding} activation-format=%s}}"
            compiled = compile_module(module, "host", padding, spec % activation_format)
            for got in (
                Interpreter(compiled, source_path=source).run(inputs),
                run_generated(compiled, inputs, source_path=source),
            ):
                for expected, actual in zip(want, got, strict=True):
                    assert_close(expected, actual)
    other = tmp_path / "onnxruntime"
    other.mkdir()
    check_against_onnxruntime(model, other)


@pytest.mark.parametrize("kwargs", [{}, {"excite": True}])
def test_every_target_padding_on_and_off_gives_onnxruntime_results(
    kwargs: dict, tmp_path: Path
) -> None:
    """The chain's models through every target (host: the chain blocked; the others: as
    they were), padding on and off, interpreter and generated module, all pairs in every
    tier (the squeeze-and-excitation block's sigmoid of padding lanes would leak 0.5)."""
    model = mobilenet_head(**kwargs)
    module, source = imported(model, tmp_path)
    inputs = random_inputs(module)
    want = onnxruntime_outputs(model, inputs)
    for target in ALL_TARGETS:
        for padding in (True, False):
            compiled = compile_module(module, target, padding, DEFAULT_PIPELINE)
            assert_runs_give(want, compiled, inputs, source, f"{target} padding={padding}")


def test_a_nan_in_the_image_reaches_the_output_as_without_it(tmp_path: Path) -> None:
    """The stem's ReLU6 is a oneDNN post-op that turns NaN into a bound: its guard must
    still see the input read directly (not a copy of it)."""
    model = mobilenet_head()
    module, source = imported(model, tmp_path)
    (x,) = random_inputs(module)
    x[0, 1, 5, 7] = np.nan
    results = []
    for activation_format in ("auto", "nhwc"):
        spec = "default-pipeline{{target={target} padding={padding} activation-format=%s}}"
        compiled = compile_module(module, "host", True, spec % activation_format)
        results.append(run_generated(compiled, [x], source_path=source)[0])
    reference = Interpreter(module, source_path=source).run([x])[0]
    assert np.isnan(reference).any()
    for got in results:
        np.testing.assert_array_equal(np.isnan(got), np.isnan(reference))
        assert_close(np.nan_to_num(reference), np.nan_to_num(got))


def tensor(shape: list[int], layout: str = "") -> TensorType:
    return TensorType(f32, shape, LayoutAttr(layout) if layout else None)


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (tensor([1, 16, 7, 7], "NCHW16c"), tensor([1, 16, 7, 7], "NHWC"), True),
        (tensor([2, 16, 7, 7], "NCHW16c"), tensor([2, 16, 7, 7], "NHWC"), True),
        (tensor([1, 32, 7, 7], "NCHW16c"), tensor([1, 32, 7, 7], "NHWC"), False),
        (tensor([1, 8, 7, 7], "NCHW16c"), tensor([1, 8, 7, 7], "NHWC"), False),  # padded
        (tensor([1, 64, 1, 1], "NCHW16c"), tensor([1, 64, 1, 1]), True),  # one pixel
        (tensor([2, 16, 3, 3], "NCHW16c"), tensor([2, 16, 3, 3]), False),
        (tensor([1, 32, 2, 2], "NCHW8c"), tensor([1, 32, 2, 2], "NCHW16c"), False),
        (tensor([1, 16, 2, 2], "NCHW16c"), tensor([1, 16, 2, 3], "NHWC"), False),
    ],
)
def test_same_bytes(a: TensorType, b: TensorType, same: bool) -> None:
    assert same_bytes(a, b) is same
    assert same_bytes(b, a) is same
