"""`nnlayout-import`: translate an ONNX model into nn IR, weights in an .npz beside it.

    nnlayout-import model.onnx -o model.mlir       # writes model.mlir and model.npz

Initializers with more than `--inline-limit` elements go to OUT.npz (the module attribute
`nn.weights = "OUT.npz"` names it, relative to the .mlir); smaller ones are inlined. Writing to
stdout needs every constant inline (`--inline-weights`, or a large enough limit).

    nnlayout-import model.onnx -o model.mlir --input-shape images=1x3x224x224

fixes the sizes of a graph input that the model leaves symbolic or unknown (a dynamic batch
axis), as onnxruntime's and IREE's tools do; repeat it for each such input.

    nnlayout-import model.onnx -o model.mlir --batch 8

sets the first size of every graph input whose first size is symbolic (a size the model or
--input-shape states must be 8). Errors (unsupported operator, tensor of a type nn does not
hold, symbolic dimension, corrupt file, ...) are one line naming the node, and exit status 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from io import StringIO
from pathlib import Path

import onnx

from nnlayout.diagnostics import UserError
from nnlayout.files import refuse_overwriting_inputs, write_stdout
from nnlayout.frontends.onnx import (
    DEFAULT_INLINE_LIMIT,
    import_model,
    load_model,
    write_imported,
)
from nnlayout.ir.printer import print_module
from nnlayout.tools.driver import add_traceback_option, non_negative_int, positive_int, run_tool


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nnlayout-import", description="Import an ONNX model as nn dialect IR."
    )
    parser.add_argument("input", help="the .onnx model")
    parser.add_argument(
        "-o",
        "--output",
        default="-",
        help="output .mlir file (default: stdout); large weights go to the "
        ".npz of the same name beside it",
    )
    parser.add_argument(
        "--inline-limit",
        type=non_negative_int,
        default=DEFAULT_INLINE_LIMIT,
        help="constants with more elements than this go to the weights file "
        f"(default {DEFAULT_INLINE_LIMIT})",
    )
    parser.add_argument(
        "--inline-weights", action="store_true", help="inline every constant (no weights file)"
    )
    parser.add_argument(
        "--input-shape",
        metavar="NAME=DIMS",
        type=input_shape,
        action="append",
        default=[],
        help="give graph input NAME the sizes DIMS (e.g. images=1x3x224x224), fixing what "
        "the model leaves symbolic or unknown (a dynamic batch axis); sizes the model states "
        "must agree. Repeat for each input",
    )
    parser.add_argument(
        "--batch",
        type=positive_int,
        metavar="N",
        help="give every graph input's first dimension (the batch axis) the size N where "
        "the model leaves it symbolic or unknown; where the model or --input-shape states "
        "it, it must be N",
    )
    add_traceback_option(parser)
    return parser


def input_shape(text: str) -> tuple[str, list[int]]:
    """An argparse type: NAME=DxDx... (an ONNX name may hold '='; the sizes cannot)."""
    name, _, dims = text.rpartition("=")
    sizes = dims.split("x")
    if not name or not all(size.isdigit() and int(size) > 0 for size in sizes):
        raise argparse.ArgumentTypeError(
            f"expected NAME=DIMS with positive sizes separated by 'x' (e.g. "
            f"images=1x3x224x224), got '{text}'"
        )
    return name, [int(size) for size in sizes]


def with_batch(
    model: onnx.ModelProto, shapes: dict[str, list[int]], batch: int
) -> dict[str, list[int]]:
    """`shapes` (--input-shape's) with the first size of every graph input set to `batch`
    (--batch): where the model leaves it symbolic or unknown, the input's shape is the
    model's with that size; a first size the model or `shapes` states must be `batch`, and an
    input with other symbolic sizes needs --input-shape."""
    initializers = {tensor.name for tensor in model.graph.initializer}
    result = dict(shapes)
    for vi in model.graph.input:
        if vi.name in initializers or not vi.type.tensor_type.HasField("shape"):
            continue
        dims = list(vi.type.tensor_type.shape.dim)
        if not dims:
            continue  # a scalar has no batch axis
        given = shapes.get(vi.name)
        if given is not None and given[0] != batch:
            raise UserError(
                f"--batch {batch} and --input-shape {vi.name}={'x'.join(map(str, given))} "
                f"disagree on the first size of '{vi.name}'"
            )
        if dims[0].HasField("dim_value") and dims[0].dim_value != batch:
            raise UserError(
                f"--batch {batch}: graph input '{vi.name}' has batch size "
                f"{dims[0].dim_value} in the model (export it with a symbolic batch axis)"
            )
        open_axes = [i for i, dim in enumerate(dims[1:], 1) if not dim.HasField("dim_value")]
        if given is None and open_axes:
            example = "x".join(str(d.dim_value or 1) for d in dims[1:])
            raise UserError(
                f"--batch {batch} fixes the first size of graph input '{vi.name}', but its "
                f"size on axis {open_axes[0]} is symbolic too: give all its sizes with "
                f"--input-shape (e.g. {vi.name}={batch}x{example})"
            )
        if given is None:
            result[vi.name] = [batch, *(dim.dim_value for dim in dims[1:])]
    return result


def main(argv: Sequence[str]) -> int:
    args = _build_parser().parse_args(argv)
    limit = sys.maxsize if args.inline_weights else args.inline_limit
    shapes = dict(args.input_shape)
    if len(shapes) < len(args.input_shape):
        twice = next(
            n for n, _ in args.input_shape if [m for m, _ in args.input_shape].count(n) > 1
        )
        raise UserError(f"--input-shape gives the shape of '{twice}' more than once")
    model = load_model(args.input)
    if args.batch is not None:
        shapes = with_batch(model, shapes, args.batch)
    imported = import_model(model, inline_limit=limit, input_shapes=shapes)
    if args.output == "-":
        if imported.weights:
            raise UserError(
                f"{len(imported.weights)} constants are larger than the inline "
                "limit and cannot go to stdout; give -o OUT.mlir (they go to "
                "OUT.npz) or --inline-weights"
            )
        text = StringIO()
        print_module(imported.module, text)
        write_stdout(text.getvalue())
    else:
        output = Path(args.output)
        weights = output.with_suffix(".npz") if imported.weights else None
        if weights == output:
            raise UserError(
                f"-o '{output}' is also the weights file (OUT.npz beside "
                "OUT.mlir); give -o a .mlir name"
            )
        refuse_overwriting_inputs([output, *([weights] if weights else [])], [args.input])
        write_imported(imported, output)
    return 0


def entry() -> None:
    sys.exit(run_tool(main))


if __name__ == "__main__":
    entry()
