"""The operator table: which converter translates each ONNX operator (default domain) the
importer supports, and the check that a graph uses no other."""

from __future__ import annotations

from collections.abc import Callable

import onnx

from nnlayout.diagnostics import UserError
from nnlayout.frontends.onnx.common import describe
from nnlayout.frontends.onnx.constants import constant, identity
from nnlayout.frontends.onnx.convolution import conv, conv_transpose
from nnlayout.frontends.onnx.elementwise import (
    BINARY,
    EXTREMA,
    UNARY,
    binary,
    clip,
    dropout,
    extremum,
    leaky_relu,
    prelu,
    sum_inputs,
    unary,
)
from nnlayout.frontends.onnx.linear import gemm, matmul
from nnlayout.frontends.onnx.normalisation import batch_normalization, softmax
from nnlayout.frontends.onnx.pooling import (
    average_pool,
    global_average_pool,
    global_max_pool,
    max_pool,
)
from nnlayout.frontends.onnx.shapes import concat, flatten, reshape, transpose
from nnlayout.frontends.onnx.state import ImportState

#: A converter emits a node's `nn` ops into the import state; it gets the node's attributes.
Converter = Callable[[ImportState, onnx.NodeProto, dict], None]

CONVERTERS: dict[str, Converter] = {
    "Conv": conv,
    "ConvTranspose": conv_transpose,
    "Gemm": gemm,
    "MatMul": matmul,
    **dict.fromkeys(UNARY, unary),
    "LeakyRelu": leaky_relu,
    "Clip": clip,
    **dict.fromkeys(BINARY, binary),
    "Sum": sum_inputs,
    **dict.fromkeys(EXTREMA, extremum),
    "PRelu": prelu,
    "MaxPool": max_pool,
    "AveragePool": average_pool,
    "GlobalAveragePool": global_average_pool,
    "BatchNormalization": batch_normalization,
    "Concat": concat,
    "Softmax": softmax,
    "Flatten": flatten,
    "Reshape": reshape,
    "Transpose": transpose,
    "Identity": identity,
    "Constant": constant,
    "Dropout": dropout,
    "GlobalMaxPool": global_max_pool,
}

#: ONNX operators (default domain) the importer translates.
SUPPORTED_OPS = frozenset(CONVERTERS)


def check_operators(graph: onnx.GraphProto) -> None:
    """Refuses the first node whose operator is not in the table, naming those that are."""
    for index, node in enumerate(graph.node):
        if node.domain not in ("", "ai.onnx") or node.op_type not in SUPPORTED_OPS:
            domain = f" of domain '{node.domain}'" if node.domain not in ("", "ai.onnx") else ""
            raise UserError(
                f"{describe(node, index)}: unsupported operator "
                f"'{node.op_type}'{domain}; nnlayout imports "
                f"{', '.join(sorted(SUPPORTED_OPS))}"
            )
