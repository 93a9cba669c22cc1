"""The files a user names: read as text (UTF-8, with located decoding errors) and written
only where asked, never over an input."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from nnlayout.diagnostics import UserError, os_error_reason


def read_text(path: str) -> tuple[str, str]:
    """Reads an input file (`-` is stdin) as UTF-8; returns (text, name for messages). An
    ONNX model (by its name, or by its bytes: on stdin, or under another name) is refused
    with the command that imports it: its bytes may well be UTF-8, and the parser would
    stop at the first control character. A path that names no file is reported as such,
    whatever its name."""
    name = "<stdin>" if path == "-" else path
    model_here = f"'{path}' is an ONNX model; import it first: nnlayout-import {path} -o MODEL.mlir"
    if path.lower().endswith(".onnx") and os.path.isfile(path):
        raise UserError(model_here)
    try:
        if path == "-":
            if sys.stdin is None:  # the process was started with fd 0 closed
                raise UserError("cannot read '<stdin>': stdin is closed")
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as handle:
                data = handle.read()
    except OSError as error:
        raise UserError(f"cannot read '{name}': {os_error_reason(error)}") from None
    if is_onnx_model(data):
        raise UserError(
            "stdin holds an ONNX model; save it to a file and import it: "
            "nnlayout-import MODEL.onnx -o MODEL.mlir"
            if path == "-"
            else model_here
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UserError(
            f"cannot read '{name}': not UTF-8 text (byte "
            f"0x{data[error.start]:02x} at offset {error.start})"
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n"), name  # as text mode reads it


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Writes an output file as UTF-8; an unwritable path is a UserError naming it."""
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as error:
        raise UserError(f"cannot write '{path}': {os_error_reason(error)}") from None


def names_a_file(path: str | os.PathLike[str]) -> bool:
    """Whether writing `path` makes or replaces a regular file (not /dev/stdout, a folder)."""
    return os.path.isfile(path) or not os.path.exists(path)


def refuse_overwriting_inputs(
    outputs: Sequence[str | os.PathLike[str]], inputs: Sequence[str | os.PathLike[str] | None]
) -> None:
    """Refuses to write any of `outputs` over one of `inputs` (the input file, its weights):
    that would destroy what the tool read. `-`, None and devices (/dev/stdout) are no files."""
    sources = {Path(p).resolve() for p in inputs if p and p != "-"}
    for written in outputs:
        if names_a_file(written) and Path(written).resolve() in sources:
            raise UserError(f"'{written}' would overwrite an input; choose another -o name")


def is_onnx_model(data: bytes) -> bool:
    """Whether `data` is a serialised ONNX model with a graph: it starts with the tag of
    ir_version, its first field (no MLIR text starts with that control character, so only
    such bytes pay for importing onnx), and parses as a model."""
    if not data.startswith(b"\x08"):
        return False
    import onnx
    from google.protobuf.message import DecodeError

    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError):
        return False
    return model.HasField("graph")
