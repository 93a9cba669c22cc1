"""Reading an ONNX file: its protobuf, refused with a `UserError` when it is no model, and its
external tensor data, read only from inside the model's folder."""

from __future__ import annotations

from pathlib import Path

import onnx
from google.protobuf.message import DecodeError
from onnx import TensorProto

from nnlayout.diagnostics import UserError, os_error_reason
from nnlayout.files import open_input
from nnlayout.frontends.onnx.common import one_line, printable

# What parsing bytes that are no ONNX model raises (protobuf's decoders differ).
_NOT_A_MODEL = (DecodeError, RuntimeError, ValueError)


def load_model(path: str | Path) -> onnx.ModelProto:
    """Reads an ONNX file and its external data (only from inside the model's folder)."""
    path = Path(path)
    try:
        with open_input(path) as handle:  # a FIFO or device refused before it can block
            data = handle.read()
    except OSError as error:
        raise UserError(f"cannot read '{path}': {os_error_reason(error)}") from None
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except _NOT_A_MODEL as error:
        raise UserError(
            f"'{path}' is not a valid ONNX model (truncated or corrupt file?): "
            f"{one_line(str(error))}"
        ) from None
    if not model.HasField("graph") or not model.opset_import:
        raise UserError(
            f"'{path}' is not a valid ONNX model (truncated or corrupt file?): "
            "it has no graph or no opset"
        )
    if not all(
        isinstance(text, str)
        for node in model.graph.node
        for text in (node.name, node.op_type, node.domain, *node.input, *node.output)
    ):
        raise UserError(
            f"'{path}' is not a valid ONNX model (truncated or corrupt file?): "
            "a node has a name that is not UTF-8 text"
        )
    try:
        _load_external_data(model, path.resolve().parent)
    except UserError as error:
        raise UserError(printable(error.message)) from None
    return model


def _tensors(model: onnx.ModelProto) -> list[TensorProto]:
    """The tensors of the main graph that may hold data: initializers and Constant values."""
    constants = [
        a.t
        for node in model.graph.node
        if node.op_type == "Constant"
        for a in node.attribute
        if a.HasField("t")
    ]
    return [*model.graph.initializer, *constants]


def _check_external_file(name: str, location: str, folder: Path) -> None:
    """Refuses an external data location that is not a regular file inside `folder`."""
    if "\0" in location:
        raise UserError(
            f"initializer '{name}': its external data location '{location}' holds a "
            "NUL byte, which no file name can"
        )
    target = (folder / location).resolve()
    if (
        Path(location).is_absolute()
        or ".." in Path(location).parts
        or not target.is_relative_to(folder)
    ):
        raise UserError(
            f"initializer '{name}' refers to external data '{location}' outside "
            f"the model's folder; refusing to read it"
        )
    if not target.exists():
        raise UserError(
            f"initializer '{name}': external data file '{location}' not found in '{folder}'"
        )
    if not target.is_file():  # a directory; a FIFO would block the read
        raise UserError(
            f"initializer '{name}': external data '{location}' in '{folder}' is not a regular file"
        )


def _load_external_data(model: onnx.ModelProto, folder: Path) -> None:
    """Loads external tensor data, refusing locations outside `folder`."""
    for tensor in _tensors(model):
        if tensor.data_location != TensorProto.EXTERNAL:
            continue
        info = {entry.key: entry.value for entry in tensor.external_data}
        location = info.get("location", "")
        if not location:
            raise UserError(f"initializer '{tensor.name}': its external data has no location")
        try:
            _check_external_file(tensor.name, location, folder)
        except OSError as error:  # a name too long, ...
            raise UserError(
                f"initializer '{tensor.name}': external data location '{location}' is not a "
                f"usable file name: {os_error_reason(error)}"
            ) from None
        try:
            onnx.external_data_helper.load_external_data_for_tensor(tensor, str(folder))
        except (OSError, ValueError) as error:
            raise UserError(
                f"initializer '{tensor.name}': cannot load external data: {one_line(str(error))}"
            ) from None
        tensor.data_location = TensorProto.DEFAULT
        del tensor.external_data[:]
