"""The graph walk: checks a model, makes its graph inputs the arguments of `func.func @main`,
translates node by node through the operator table and returns the graph outputs; and
writing the result as a .mlir file (with a .npz of its large constants)."""

from __future__ import annotations

import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.ir import Region
from xdsl.utils.exceptions import VerifyException

from nnlayout.diagnostics import UserError
from nnlayout.dialects import nn
from nnlayout.dialects.weights import attach_weights_file
from nnlayout.files import Outputs, file_sha256
from nnlayout.frontends.onnx.checks import (
    NARROW_FLOATS,
    check_input_shapes,
    check_order,
    input_type,
    require_graph_tensor,
)
from nnlayout.frontends.onnx.common import attributes, describe, printable, sanitize_name
from nnlayout.frontends.onnx.folding import fold
from nnlayout.frontends.onnx.inference import infer_shapes, with_bfloat16_opset
from nnlayout.frontends.onnx.loading import load_model
from nnlayout.frontends.onnx.operators import check_operators, converter_of
from nnlayout.frontends.onnx.state import ImportState
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.ir.printer import print_module

#: Initializers with more elements than this go to the weights file.
DEFAULT_INLINE_LIMIT = 16


@dataclass
class ImportedModel:
    """The imported module and the arrays its external constants name."""

    module: ModuleOp
    weights: dict[str, np.ndarray] = field(default_factory=dict)


def import_model(
    model: onnx.ModelProto,
    *,
    inline_limit: int = DEFAULT_INLINE_LIMIT,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
) -> ImportedModel:
    """Translates `model` into a module with one `func.func @main`; see the package docstring.
    `input_shapes` (input name -> sizes) fixes graph inputs' symbolic or unknown sizes."""
    try:
        model = with_bfloat16_opset(model)
        imported = _import_graph(ImportState(model, inline_limit), dict(input_shapes or {}))
    except UserError as error:
        raise UserError(printable(error.message)) from None
    try:
        imported.module.verify()
    except VerifyException as error:  # a bug in the importer, not in the model
        raise AssertionError(f"imported module does not verify: {error}") from error
    return imported


def _import_graph(state: ImportState, input_shapes: dict[str, Sequence[int]]) -> ImportedModel:
    graph, block = state.graph, state.block
    check_operators(graph, state.opset)
    check_order(graph, set(state.constants))
    arguments = [vi for vi in graph.input if vi.name not in state.constants]
    check_input_shapes(input_shapes, arguments)
    input_types = [input_type(vi, input_shapes.get(vi.name)) for vi in arguments]
    state.inferred = infer_shapes(
        state.model, {vi.name: t.get_shape() for vi, t in zip(arguments, input_types, strict=True)}
    )
    for vi, arg_type in zip(arguments, input_types, strict=True):
        arg = block.insert_arg(arg_type, len(block.args))
        arg.name_hint = sanitize_name(vi.name)
        state.values[vi.name] = arg
        if arg_type.element_type in NARROW_FLOATS.values():  # computed in f32 from here on
            state.values[vi.name] = state.emit(nn.CastOp(arg, f32))
    for index, node in enumerate(graph.node):
        state.node = describe(node, index)
        converter = converter_of(node)
        if not fold(state, node, converter is not None):
            if converter is None:  # check_operators found it could fold
                raise AssertionError(f"{state.node} neither folds nor has a converter")
            converter(state, node, attributes(node))
    state.node = "graph"
    results = []
    for vi in graph.output:
        result = state.tensor(vi.name)
        declared = require_graph_tensor(vi, "graph output") if vi.HasField("type") else None
        if declared is None and vi.name in state.inferred:  # what ONNX infers, untyped
            inferred = state.inferred[vi.name]
            declared = inferred.tensor_type if inferred.HasField("tensor_type") else None
        if declared is not None and declared.elem_type in NARROW_FLOATS:
            # rounded once, on the way out
            result = state.emit(nn.CastOp(result, NARROW_FLOATS[declared.elem_type]))
        results.append(result)
    block.add_op(func.ReturnOp(*results))
    function = func.FuncOp(
        "main",
        ([a.type for a in block.args], [r.type for r in results]),
        Region(block),
    )
    return ImportedModel(ModuleOp([function]), state.weights)


def write_imported(imported: ImportedModel, path: Path) -> None:
    """Writes the weights (if any) as `<stem>.npz` beside `path`, then the IR to `path`,
    all or nothing (`files.Outputs`); the module's `nn.weights` attribute names the .npz
    relative to the .mlir, and `nn.weights_sha256` records its bytes' hash."""
    with Outputs() as outputs:
        if imported.weights:
            weights_file = path.with_suffix(".npz")
            with (
                outputs.open(weights_file, "wb") as handle,
                # what np.savez does, without its keyword arguments clashing with our keys
                zipfile.ZipFile(handle, "w", allowZip64=True) as archive,
            ):
                for key, array in imported.weights.items():
                    with archive.open(f"{key}.npy", "w", force_zip64=True) as member:
                        np.lib.format.write_array(member, array, allow_pickle=False)
            sha256 = file_sha256(outputs.written(weights_file))
            attach_weights_file(imported.module, weights_file.name, sha256)
        with outputs.open(path, "w") as handle:
            print_module(imported.module, handle)


def import_to_files(onnx_path: Path) -> ModuleOp:
    """Imports `onnx_path` into `<stem>.mlir` (and `<stem>.npz`) beside it, as
    `nnlayout-import` does, and parses the .mlir back, as every tool reads it."""
    mlir_path = onnx_path.with_suffix(".mlir")
    write_imported(import_model(load_model(onnx_path)), mlir_path)
    return parse_module(make_context(), mlir_path.read_text(encoding="utf-8"), str(mlir_path))
