"""Converters of the ONNX matrix products: MatMul and Gemm."""

from __future__ import annotations

import onnx

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.state import ImportState


def matmul(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    state.output(
        node, state.build(lambda: nn.MatmulOp(state.operand(node, 0), state.operand(node, 1)))
    )


def gemm(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    state.output(
        node,
        state.build(
            lambda: nn.GemmOp(
                state.operand(node, 0),
                state.operand(node, 1),
                state.optional_operand(node, 2),
                trans_a=bool(attrs.get("transA", 0)),
                trans_b=bool(attrs.get("transB", 0)),
                alpha=float(attrs.get("alpha", 1.0)),
                beta=float(attrs.get("beta", 1.0)),
            )
        ),
    )
