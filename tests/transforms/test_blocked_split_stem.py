"""blocked-stem's split stems (transforms/blocked_stem.py, `split_stem_chain`): a ResNet's 7x7
stem, which split-image-conv sums one image channel at a time, and the max pool after it run
in nChw16c on `host`, leaving one reorder to NHWC, of the pooled result; which stems it
takes, and the same results as without it and as onnxruntime on every target, padding on
and off, interpreter and generated module."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper
from xdsl.dialects import func
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.kernel_attr import KernelAttr, kernel_of
from nnlayout.dialects.layout import ReorderOp, encoding_name
from nnlayout.kernels.targets import host_blocked_target
from nnlayout.lowering.bufferize import activation_reorders
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.transforms.blocked_stem import split_stem_chain
from nnlayout.transforms.remarks import collecting
from tests.helpers import (
    ALL_TARGETS,
    DEFAULT_PIPELINE,
    PRE_DISPATCH,
    assert_close,
    assert_runs_give,
    compile_module,
    onnx_model,
    onnxruntime_outputs,
    random_inputs,
)
from tests.transforms.test_blocked_stem import BLOCK, imported

RNG = np.random.default_rng(3)
DISPATCHED = PRE_DISPATCH + ",select-dispatch,fuse-post-ops,fuse-matmul-post-ops"
NHWC_PIPELINE = "default-pipeline{{target={target} padding={padding} activation-format=nhwc}}"
BLOCKED = host_blocked_target()[0] is not None


def resnet_head(
    channels: int = 32, pool: str = "MaxPool", stride: int = 2, batch: int = 1
) -> onnx.ModelProto:
    """A 7x7 stride-2 stem over a 3-channel image with its ReLU, a 3x3 pooling (`pool`, or
    none: ""), then a 3x3 convolution with ReLU."""
    weights = {
        "stem.w": (RNG.standard_normal((channels, 3, 7, 7)) * 0.2).astype(np.float32),
        "stem.b": (RNG.standard_normal(channels) * 0.1).astype(np.float32),
        "next.w": (RNG.standard_normal((channels, channels, 3, 3)) * 0.1).astype(np.float32),
        "next.b": (RNG.standard_normal(channels) * 0.1).astype(np.float32),
    }
    stem = helper.make_node(
        "Conv",
        ["x", "stem.w", "stem.b"],
        ["stem"],
        kernel_shape=[7, 7],
        pads=[3] * 4,
        strides=[2, 2],
    )
    nodes = [stem, helper.make_node("Relu", ["stem"], ["stem.r"])]
    read = "stem.r"
    if pool:
        window = {"kernel_shape": [3, 3], "pads": [1] * 4, "strides": [stride] * 2}
        nodes.append(helper.make_node(pool, ["stem.r"], ["pooled"], **window))
        read = "pooled"
    nodes += [
        helper.make_node(
            "Conv", [read, "next.w", "next.b"], ["next"], kernel_shape=[3, 3], pads=[1] * 4
        ),
        helper.make_node("Relu", ["next"], ["y"]),
    ]
    return onnx_model(nodes, {"x": [batch, 3, 32, 32]}, ["y"], weights)


def chain_of(model: onnx.ModelProto, tmp_path: Path) -> list[Operation] | None:
    module, _ = imported(model, tmp_path)
    dispatched = compile_module(module, "host", True, DISPATCHED)
    function = next(op for op in dispatched.walk() if isinstance(op, func.FuncOp))
    return split_stem_chain(function, BLOCK)


@pytest.mark.parametrize(
    ("kwargs", "taken"),
    [
        ({}, True),
        ({"batch": 2}, True),
        ({"pool": "AveragePool"}, True),
        ({"pool": ""}, False),  # no pooling: NHWC would be reached at full size
        ({"stride": 1}, False),  # a pooling that keeps the size
        ({"channels": 24}, False),  # not whole 16-channel blocks
    ],
)
def test_which_stems_it_takes(kwargs: dict, taken: bool, tmp_path: Path) -> None:
    chain = chain_of(resnet_head(**kwargs), tmp_path)
    if not taken:
        assert chain is None
        return
    assert chain is not None
    assert [op.name for op in chain] == ["nn.conv2d", "nn.fused_conv2d", "nn.fused_conv2d"]
    assert [isinstance(op, nn.FusedConv2dOp) and op.addend is not None for op in chain] == [
        False,
        True,
        True,
    ]


def test_on_host_the_stem_and_pool_run_blocked(tmp_path: Path) -> None:
    """The three convolutions and the max pool write nChw16c; the one activation reorder
    before the output's is the pooled result's, to NHWC (NHWC has none there); a remark
    names the chain."""
    module, _ = imported(resnet_head(), tmp_path)
    with collecting() as remarks:
        planned = compile_module(module, "host", True, DEFAULT_PIPELINE)
    said = [r.message for r in remarks if r.pass_name == "blocked-stem"]
    nhwc = compile_module(module, "host", True, NHWC_PIPELINE)
    written = [
        (op.inner.name, encoding_name(op.inner.results[0].type))
        for op in planned.walk()
        if isinstance(op, ComputeOp) and kernel_of(op.inner) is not None
    ]
    if not BLOCKED:
        assert said == [] and all(layout != "NCHW16c" for _, layout in written)
        return
    assert written[:4] == [
        ("nn.conv2d", "NCHW16c"),
        ("nn.fused_conv2d", "NCHW16c"),
        ("nn.fused_conv2d", "NCHW16c"),
        ("nn.max_pool2d", "NCHW16c"),
    ], written
    assert said == [
        "3 convolutions summed over the image's channels run in nChw16c (onednn-nchw16c), "
        "and the pooling after them: NHWC is reached pooled"
    ]
    reorders = [
        (encoding_name(op.inner.input.type), list(op.inner.input.type.get_shape()))
        for op in planned.walk()
        if isinstance(op, ComputeOp) and isinstance(op.inner, ReorderOp)
    ]
    assert reorders[0] == ("NCHW16c", [1, 32, 8, 8])
    # NHWC reads the image's channels as they are too: its one reorder is the output's.
    assert activation_reorders(planned) == activation_reorders(nhwc) + 1 == 2


@pytest.mark.parametrize("kwargs", [{}, {"batch": 2}, {"pool": "AveragePool"}])
def test_every_target_padding_on_and_off_gives_onnxruntime_results(
    kwargs: dict, tmp_path: Path
) -> None:
    """The stem through every target (host: blocked, and forced NHWC), padding on and off,
    interpreter and generated module."""
    model = resnet_head(**kwargs)
    module, source = imported(model, tmp_path)
    inputs = random_inputs(module)
    want = onnxruntime_outputs(model, inputs)
    configurations = [(target, DEFAULT_PIPELINE) for target in ALL_TARGETS]
    for target, pipeline in [*configurations, ("host", NHWC_PIPELINE)]:
        for padding in (True, False):
            compiled = compile_module(module, target, padding, pipeline)
            where = f"{target} {pipeline} padding={padding}"
            assert_runs_give(want, compiled, inputs, source, where)


def test_a_nan_in_the_image_reaches_the_output_as_without_it(tmp_path: Path) -> None:
    """The stem's ReLU is the last convolution's post-op: a NaN in one image channel still
    reaches the output, as in NHWC and in the reference."""
    module, source = imported(resnet_head(), tmp_path)
    (x,) = random_inputs(module)
    x[0, 2, 9, 4] = np.nan
    reference = Interpreter(module, source_path=source).run([x])[0]
    assert np.isnan(reference).any()
    for pipeline in (DEFAULT_PIPELINE, NHWC_PIPELINE):
        compiled = compile_module(module, "host", True, pipeline)
        got = run_generated(compiled, [x], source_path=source)[0]
        np.testing.assert_array_equal(np.isnan(got), np.isnan(reference))
        assert_close(np.nan_to_num(reference), np.nan_to_num(got))


@pytest.mark.parametrize(
    ("pinned", "layout"), [("max_pool2d_onednn", "NHWC"), ("max_pool2d_ref", "")]
)
def test_a_pooling_pinned_to_another_layout_keeps_the_stem_nhwc(
    pinned: str, layout: str, tmp_path: Path
) -> None:
    """A pooling whose kernel the user pinned to NHWC or to plain numpy would not follow the
    stem into nChw16c: the whole sum would be reordered, so the chain is not taken (found by
    a review)."""
    module, _ = imported(resnet_head(), tmp_path)
    dispatched = compile_module(module, "host", True, DISPATCHED)
    pool = next(op for op in dispatched.walk() if isinstance(op, nn.MaxPool2dOp))
    pool.attributes["kernel"] = KernelAttr(pinned, [layout], [layout])
    function = next(op for op in dispatched.walk() if isinstance(op, func.FuncOp))
    assert split_stem_chain(function, BLOCK) is None
