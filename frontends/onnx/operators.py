"""The operator table: which converter translates each ONNX operator (default domain) the
importer supports, and the check that a graph uses no other except where it folds (see
`folding`: a node whose inputs are known at compile time needs no converter)."""

from __future__ import annotations

from collections.abc import Callable

import onnx

from nnlayout.diagnostics import UserError
from nnlayout.frontends.onnx.activations import celu, elu, gelu, hard_sigmoid, power, selu
from nnlayout.frontends.onnx.common import describe
from nnlayout.frontends.onnx.constants import constant, identity
from nnlayout.frontends.onnx.convolution import conv, conv_transpose
from nnlayout.frontends.onnx.dynamic_quantized import CONVERTERS as DYNAMIC_CONVERTERS
from nnlayout.frontends.onnx.einsum import einsum
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
from nnlayout.frontends.onnx.folding import unfoldable_reason
from nnlayout.frontends.onnx.grid_sample import grid_sample
from nnlayout.frontends.onnx.linear import gemm, matmul
from nnlayout.frontends.onnx.logical import COMPARISONS, compare, is_nan, logical, where
from nnlayout.frontends.onnx.masks import one_hot, trilu
from nnlayout.frontends.onnx.movement import (
    expand,
    gather,
    gather_elements,
    gather_nd,
    pad,
    resize,
    slice_node,
    split,
    upsample,
)
from nnlayout.frontends.onnx.normalisation import batch_normalization, softmax
from nnlayout.frontends.onnx.pooling import (
    average_pool,
    global_average_pool,
    global_max_pool,
    max_pool,
)
from nnlayout.frontends.onnx.qlinear_float import CONVERTERS as QLINEAR_FLOAT_CONVERTERS
from nnlayout.frontends.onnx.quantized import CONVERTERS as QUANTIZED_CONVERTERS
from nnlayout.frontends.onnx.quantized import MICROSOFT_CONVERTERS as QUANTIZED_MICROSOFT
from nnlayout.frontends.onnx.rearrange import depth_to_space, space_to_depth, tile
from nnlayout.frontends.onnx.recurrent import recurrent
from nnlayout.frontends.onnx.reduction import (
    REDUCTIONS,
    cumsum,
    instance_normalization,
    layer_normalization,
    lrn,
    reduce,
)
from nnlayout.frontends.onnx.reshapes import cast, squeeze, unsqueeze
from nnlayout.frontends.onnx.scatter import scatter_elements, scatter_nd
from nnlayout.frontends.onnx.selection import arg_extremum, topk
from nnlayout.frontends.onnx.shapes import concat, flatten, reshape, transpose
from nnlayout.frontends.onnx.state import ImportState

#: A converter emits a node's `nn` ops into the import state; it gets the node's attributes.
Converter = Callable[[ImportState, onnx.NodeProto, dict], None]

CONVERTERS: dict[str, Converter] = {
    "Conv": conv,
    "ConvTranspose": conv_transpose,
    "Gemm": gemm,
    "MatMul": matmul,
    "Einsum": einsum,
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
    "LogSoftmax": softmax,
    "Flatten": flatten,
    "Reshape": reshape,
    "Transpose": transpose,
    "Identity": identity,
    "Constant": constant,
    "Dropout": dropout,
    "GlobalMaxPool": global_max_pool,
    "Squeeze": squeeze,
    "Unsqueeze": unsqueeze,
    "Cast": cast,
    **dict.fromkeys(REDUCTIONS, reduce),
    "LayerNormalization": layer_normalization,
    "LRN": lrn,
    "CumSum": cumsum,
    "InstanceNormalization": instance_normalization,
    "Slice": slice_node,
    "Split": split,
    "Gather": gather,
    "GatherElements": gather_elements,
    "GatherND": gather_nd,
    "ScatterND": scatter_nd,
    "ScatterElements": scatter_elements,
    "Pad": pad,
    "Resize": resize,
    "Upsample": upsample,
    "GridSample": grid_sample,
    "Expand": expand,
    "Tile": tile,
    "LSTM": recurrent,
    "GRU": recurrent,
    "RNN": recurrent,
    "Trilu": trilu,
    "OneHot": one_hot,
    "ArgMax": arg_extremum,
    "ArgMin": arg_extremum,
    "TopK": topk,
    "DepthToSpace": depth_to_space,
    "SpaceToDepth": space_to_depth,
    "HardSigmoid": hard_sigmoid,
    "Elu": elu,
    "Celu": celu,
    "Selu": selu,
    "Gelu": gelu,
    "Pow": power,
    **dict.fromkeys(COMPARISONS, compare),
    "Where": where,
    "IsNaN": is_nan,
    **dict.fromkeys(("And", "Or", "Xor", "Not"), logical),
    **QUANTIZED_CONVERTERS,
    **DYNAMIC_CONVERTERS,
}

#: Converters of com.microsoft operators (onnxruntime's QOperator form).
MICROSOFT_CONVERTERS: dict[str, Converter] = {**QUANTIZED_MICROSOFT, **QLINEAR_FLOAT_CONVERTERS}

#: ONNX operators (default domain) the importer translates.
SUPPORTED_OPS = frozenset(CONVERTERS)


def converter_of(node: onnx.NodeProto) -> Converter | None:
    if node.domain == "com.microsoft":  # onnxruntime's quantized operators (QOperator form)
        return MICROSOFT_CONVERTERS.get(node.op_type)
    return CONVERTERS.get(node.op_type) if node.domain in ("", "ai.onnx") else None


def check_operators(graph: onnx.GraphProto, opset: int) -> None:
    """Refuses the first node whose operator is not in the table and that cannot fold (its
    inputs known at compile time), naming those in the table and why it does not fold."""
    known = {t.name for t in graph.initializer}
    defined = known | {vi.name for vi in graph.input}
    for index, node in enumerate(graph.node):
        reason = unfoldable_reason(node, known, defined, opset)
        if (
            reason is None
            or node.op_type == "Constant"
            or (node.op_type == "Identity" and node.input[0] in known)
        ):
            known.update(node.output)
        defined.update(node.output)
        if reason is None or converter_of(node) is not None:
            continue
        domain = f" of domain '{node.domain}'" if node.domain not in ("", "ai.onnx") else ""
        why = f" (not folded at import: {reason})" if not domain else ""
        raise UserError(
            f"{describe(node, index)}: unsupported operator '{node.op_type}'{domain}{why}; "
            f"nnlayout imports {', '.join(sorted(SUPPORTED_OPS))}, com.microsoft's "
            f"{', '.join(sorted(MICROSOFT_CONVERTERS))}, and folds other operators "
            "whose inputs are known at compile time"
        )
