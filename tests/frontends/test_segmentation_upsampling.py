"""A segmentation model returns its logits upsampled to the input's size, as torchvision's
LR-ASPP and DeepLabV3 heads end: F.interpolate(size=input size, mode='bilinear',
align_corners=False), a linear half_pixel Resize with sizes. The classic exporter computes the
sizes (Shape -> Slice -> Concat with the input's height and width), the dynamo exporter
writes them as a constant and spells out every attribute. The reorder back to plain is done
before the resize, on the small logits (propagate-layouts' HoistReorderAboveUpsampling): the
resize then writes the returned tensor plain, with no reorder of the 16 times larger one
after it. Checked against onnxruntime on every target, padding on and off (all pairs with
--runslow), interpreter and generated module."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from nnlayout.dialects import nn
from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.layout import ReorderOp, encoding_name
from nnlayout.dialects.nn import shape_of
from nnlayout.frontends.onnx import import_to_files
from nnlayout.kernels.targets import get_target
from nnlayout.reports.census import kernel_census
from nnlayout.tests.frontends.test_matmul_patterns import model, weights
from nnlayout.tests.helpers import (
    ALL_TARGETS,
    DEFAULT_PIPELINE,
    LAYOUT_PIPELINE,
    check_against_onnxruntime,
    compile_module,
    output_step,
    quantize_with_onnxruntime,
)

CLASSES, SIZE = 21, 32


def segmentation_model(exporter: str) -> onnx.ModelProto:
    """conv (stride 2) -> relu -> conv (stride 2, the classifier) -> bilinear Resize back to
    the input's size, returned."""
    init = {
        "w1": weights(16, 3, 3, 3),
        "b1": weights(16),
        "w2": weights(CLASSES, 16, 3, 3),
        "b2": weights(CLASSES),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1] * 4, strides=[2, 2]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["logits"], pads=[1] * 4, strides=[2, 2]),
    ]
    attributes: dict[str, object] = {
        "mode": "linear",
        "coordinate_transformation_mode": "half_pixel",
        "cubic_coeff_a": -0.75,
        "nearest_mode": "floor",
    }
    if exporter == "classic":  # sizes = logits' N and C, then the input's H and W
        init |= {
            "zero": np.array([0], np.int64),
            "two": np.array([2], np.int64),
            "hw": np.array([SIZE, SIZE], np.int64),
        }
        nodes += [
            helper.make_node("Shape", ["logits"], ["shape"]),
            helper.make_node("Slice", ["shape", "zero", "two", "zero"], ["nc"]),
            helper.make_node("Concat", ["nc", "hw"], ["sizes"], axis=0),
            helper.make_node("Resize", ["logits", "", "", "sizes"], ["y"], **attributes),
        ]
        return model(nodes, {"x": (1, 3, SIZE, SIZE)}, ["y"], init)
    init["sizes"] = np.array([1, CLASSES, SIZE, SIZE], np.int64)
    attributes |= {
        "antialias": 0,
        "exclude_outside": 0,
        "extrapolation_value": 0.0,
        "keep_aspect_ratio_policy": "stretch",
    }
    nodes.append(helper.make_node("Resize", ["logits", "", "", "sizes"], ["y"], **attributes))
    return model(nodes, {"x": (1, 3, SIZE, SIZE)}, ["y"], init, 20)


def _reorders_before_return(compiled: object, returned: nn.ResizeOp) -> list[ReorderOp]:
    return [
        op
        for op in compiled.walk()  # type: ignore[attr-defined]
        if isinstance(op, ReorderOp) and any(use.operation is returned for use in op.output.uses)
    ]


@pytest.mark.parametrize("exporter", ["classic", "dynamo"])
def test_segmentation_head_upsamples_plain(exporter: str, tmp_path: Path) -> None:
    module = check_against_onnxruntime(segmentation_model(exporter), tmp_path)
    for target in ALL_TARGETS:
        for padding in (True, False):
            compiled = compile_module(module, target, padding, LAYOUT_PIPELINE)
            (resize,) = (op for op in compiled.walk() if isinstance(op, nn.ResizeOp))
            # The returned tensor is written plain by the resize; what is reordered (where
            # the convolutions ran in another layout) is the logits, 16 times smaller.
            assert encoding_name(resize.output.type) == "", (target, padding, compiled)
            assert all(use.operation.name == "func.return" for use in resize.output.uses)
            for reorder in _reorders_before_return(compiled, resize):
                assert shape_of(reorder.output) == (1, CLASSES, SIZE // 4, SIZE // 4)


@pytest.mark.parametrize("target", ["onednn", "host"])
def test_segmentation_head_runs_onednn_resampling(target: str, tmp_path: Path) -> None:
    onnx_path = tmp_path / "model.onnx"
    onnx_path.write_bytes(segmentation_model("dynamo").SerializeToString())
    module = import_to_files(onnx_path)
    compiled = compile_module(module, target, True, DEFAULT_PIPELINE)
    census = kernel_census(compiled, get_target(target))
    assert census.fallbacks == {}, (census.fallbacks, census.reasons)
    assert census.kernels["resize_onednn"] == 1, census.kernels
    (resize,) = (
        op.inner
        for op in compiled.walk()
        if isinstance(op, ComputeOp) and isinstance(op.inner, nn.ResizeOp)
    )
    assert encoding_name(resize.operands[0].type) == "", compiled


@pytest.mark.parametrize("signed", [False, True], ids=["u8", "s8"])
def test_quantized_segmentation_head_upsamples_in_int8(signed: bool, tmp_path: Path) -> None:
    """onnxruntime's quantize_static writes the bilinear Resize between a DequantizeLinear
    and a QuantizeLinear: fold-qdq makes it nn.qresize, so the 16 times larger upsampled
    logits are 1-byte integers (no f32 resize result in the arena), within one step of
    onnxruntime on every target; on the oneDNN targets oneDNN's resampling runs it."""
    model = quantize_with_onnxruntime(
        segmentation_model("dynamo"), tmp_path, qoperator=False, signed_activations=signed
    )
    module = check_against_onnxruntime(model, tmp_path, seed=2, step=output_step(model))
    for target in ("onednn", "ref"):
        compiled = compile_module(module, target, True, DEFAULT_PIPELINE)
        names = [op.name for op in compiled.walk() if isinstance(op, nn.NNOp)]
        assert "nn.resize" not in names and names.count("nn.qresize") == 1, names
        census = kernel_census(compiled, get_target(target))
        if target == "onednn":
            assert census.kernels["qresize_onednn"] == 1, (census.kernels, census.reasons)
