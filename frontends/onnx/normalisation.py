"""Converters of the ONNX normalisations: BatchNormalization (inference mode), Softmax and
LogSoftmax (before opset 13 over the input coerced to 2-D)."""

from __future__ import annotations

import onnx
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.state import ImportState


def batch_normalization(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    # Listed statistics outputs mean training mode, read or not: onnxruntime then
    # normalises with the batch's own mean and variance.
    if attrs.get("training_mode", 0) or len([o for o in node.output if o]) > 1:
        raise state.fail(
            "training-mode BatchNormalization (running statistics outputs) "
            "is not supported; export the model for inference"
        )
    if not attrs.get("spatial", 1):
        raise state.fail(
            "BatchNormalization with spatial=0 (statistics per element, "
            "before opset 9) is not supported"
        )
    operands = [state.operand(node, i) for i in range(5)]
    state.output(
        node,
        state.build(lambda: nn.BatchNormOp(*operands, epsilon=float(attrs.get("epsilon", 1e-5)))),
    )


def softmax(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    """Softmax as `nn.softmax`, LogSoftmax as `nn.log_softmax`."""
    op_type = nn.LogSoftmaxOp if node.op_type == "LogSoftmax" else nn.SoftmaxOp
    x = state.operand(node, 0)
    shape = nn.shape_of(x)
    axis = int(attrs.get("axis", -1 if state.opset >= 13 else 1))
    if state.opset >= 13:
        state.output(node, state.build(lambda: op_type(x, axis)))
        return
    # Before opset 13: softmax of the input coerced to 2-D at `axis`.
    try:
        axis = nn.normalize_axis("Softmax", axis, len(shape))
    except VerifyException as error:
        raise state.fail(str(error)) from None
    if axis == len(shape) - 1:
        state.output(node, state.build(lambda: op_type(x, -1)))
        return
    flat = state.emit(state.build(lambda: nn.FlattenOp(x, axis)))
    soft = state.emit(op_type(flat, 1))
    state.output(node, nn.ReshapeOp(soft, shape))
