"""Converters of the ONNX operators that name values rather than compute them: Constant,
which becomes a constant known at compile time (an `nn.constant` where a tensor is used), and
Identity, which passes a constant on under another name, or a value."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

from nnlayout.frontends.onnx.state import ImportState


def constant(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    if "value" in attrs:
        tensor = TensorProto()
        tensor.CopyFrom(attrs["value"])  # (renamed below: leave the model as it is)
    elif "value_float" in attrs or "value_floats" in attrs:
        tensor = numpy_helper.from_array(
            np.array(attrs.get("value_float", attrs.get("value_floats")), np.float32)
        )
    elif "value_int" in attrs or "value_ints" in attrs:
        tensor = numpy_helper.from_array(
            np.array(attrs.get("value_int", attrs.get("value_ints")), np.int64)
        )
    else:
        raise state.fail(f"unsupported Constant attribute(s) {sorted(attrs)}")
    tensor.name = node.output[0]
    state.constants[node.output[0]] = tensor


def identity(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    source = state.aliases.get(node.input[0], node.input[0])
    if source in state.constants:
        # A constant under another name (exporters pass shapes, bounds and shared
        # weights through an Identity): known at compile time to the ops that need it
        # there, and one nn.constant (one weights-file entry) as a tensor.
        state.aliases[node.output[0]] = source
        state.constants[node.output[0]] = state.constants[source]
        return
    state.output(node, state.operand(node, 0))
