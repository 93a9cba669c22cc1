"""What torch's exporters write for torchvision's models: an inventory of the cached exports.

    python -m nnlayout.scripts.export_inventory                      # -> stdout
    python -m nnlayout.scripts.export_inventory -o /work/notes/export-patterns.md

Reads the .onnx files (and .error records) that `benchmarks/torchvision_export.py` caches and
writes, in Markdown: per model and exporter, the opset, whether the current importer takes it
(else its first refusal) and the operator types with counts; then, per operator type over all
models, the forms seen: attributes with their values, and each input's kind, element type and
rank (with its value when it is a small constant), with how many nodes have that form and in
which exports. Needs no torch.

An input's kind says where its data comes from: `act` (computed from the graph input's
values: an activation), `shape` (computed from a Shape or Size of something, never from the
values of an activation), `const` (an initializer or a Constant node's output) or `folded`
(computed from constants only). A node "acts on activations" if an input is `act`.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from nnlayout.benchmarks.torchvision_export import (
    add_common_arguments,
    chosen,
    error_path,
    onnx_path,
)
from nnlayout.diagnostics import UserError
from nnlayout.frontends.onnx import import_model, load_model
from nnlayout.tools.driver import description

#: Constants with at most this many elements are shown with their values.
SHOWN_VALUES = 8
#: Forms listed per operator type, the most frequent first.
SHOWN_FORMS = 25
SHAPE_OPS = {"Shape", "Size"}
#: Nodes on shapes or constants are evaluated when no input has more elements than this.
FOLDED_LIMIT = 4096


@dataclass
class Export:
    """One cached export, inventoried."""

    model: str
    exporter: str
    opset: int | None = None
    status: str = ""  # "imports", or the first refusal, or why there is no file
    ops: Counter[str] = field(default_factory=Counter[str])
    # op, form, on activations, inputs without their values, attributes
    forms: list[tuple[str, str, bool, str, list[str]]] = field(default_factory=list)


def type_name(element_type: int) -> str:
    return helper.tensor_dtype_to_np_dtype(element_type).name if element_type else "?"


def value_text(array: np.ndarray) -> str:
    values = array.ravel().tolist()
    if array.dtype.kind == "f":
        values = [f"{v:g}" for v in values]
    return f"[{', '.join(str(v) for v in values)}]"


def attribute_text(attribute: onnx.AttributeProto) -> str:
    value = helper.get_attribute_value(attribute)
    if isinstance(value, onnx.TensorProto):
        array = numpy_helper.to_array(value)
        shown = f"={value_text(array)}" if array.size <= SHOWN_VALUES else ""
        return f"{attribute.name}=tensor<{array.dtype.name}{list(array.shape)}>{shown}"
    if isinstance(value, bytes):
        return f"{attribute.name}={value.decode(errors='replace')!r}"
    if attribute.name == "to":
        return f"to={type_name(int(value))}"
    if isinstance(value, float):
        return f"{attribute.name}={value:g}"
    if isinstance(value, list):
        items = [f"{v:g}" if isinstance(v, float) else str(v) for v in value]
        return f"{attribute.name}=[{', '.join(items)}]"
    return f"{attribute.name}={value}"


class Walk:
    """The kinds, types and small constant values of a graph's values."""

    def __init__(self, model: onnx.ModelProto, known: dict[str, np.ndarray] | None = None) -> None:
        graph = model.graph
        self.constants = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        self.known = known or {}  # values computed by running the model
        self.kind = dict.fromkeys(self.constants, "const")
        for vi in graph.input:
            self.kind.setdefault(vi.name, "act")
        self.opsets = list(model.opset_import)
        self.types: dict[str, tuple[str, int | None]] = {}
        self.dims: dict[str, tuple[int, ...]] = {}
        try:
            inferred = onnx.shape_inference.infer_shapes(model, data_prop=True).graph
        except Exception:  # noqa: BLE001 - the inventory does without ranks then
            inferred = graph
        for vi in [*inferred.value_info, *inferred.input, *inferred.output]:
            tensor = vi.type.tensor_type
            rank = len(tensor.shape.dim) if tensor.HasField("shape") else None
            self.types[vi.name] = (type_name(tensor.elem_type), rank)
            dims = [d.dim_value if d.HasField("dim_value") else -1 for d in tensor.shape.dim]
            if rank is not None and min(dims, default=0) >= 0:
                self.dims[vi.name] = tuple(dims)
        for name, array in self.constants.items():
            self.types[name] = (array.dtype.name, array.ndim)

    def visit(self, node: onnx.NodeProto) -> tuple[str, bool, str, list[str]]:
        """The node's form, whether it acts on activations, its inputs without their values
        and its attributes; records its outputs' kinds."""
        kinds = [self.kind.get(name, "none") if name else "none" for name in node.input]
        if node.op_type == "Constant":
            out = "const"
            for attribute in node.attribute:
                if attribute.name == "value":
                    self.constants[node.output[0]] = numpy_helper.to_array(attribute.t)
        elif node.op_type == "Identity":
            out = kinds[0]
        elif node.op_type in SHAPE_OPS:
            out = "folded" if set(kinds) <= {"const", "folded"} else "shape"
        elif "act" in kinds:
            out = "act"
        elif "shape" in kinds:
            out = "shape"
        else:
            out = "folded"
        for name in node.output:
            self.kind[name] = out
        if out in ("shape", "folded") and node.op_type != "Constant":
            self.fold(node)
            for name in node.output:
                if name not in self.constants and name in self.known:
                    self.constants[name] = self.known[name]
        texts = sorted(attribute_text(a) for a in node.attribute)
        attributes = ", ".join(texts)
        pairs = list(zip(node.input, kinds, strict=True))
        inputs = ", ".join(self.describe(n, k) for n, k in pairs)
        signature = ", ".join(self.describe(n, k, values=False) for n, k in pairs)
        acts = "act" in kinds and node.op_type not in SHAPE_OPS
        form = f"({inputs}){' {' + attributes + '}' if attributes else ''}"
        return form, acts, f"({signature})", texts

    def fold(self, node: onnx.NodeProto) -> None:
        """Records the values of a node on shapes or constants, where they can be computed
        (small ones only: shape arithmetic), to show what a computed input holds."""
        if node.op_type in SHAPE_OPS:
            dims = self.dims.get(node.input[0])
            if dims is not None:
                start, end = (0, None)
                for a in node.attribute:
                    start, end = (a.i, end) if a.name == "start" else (start, a.i or end)
                shape = np.array(dims[start:end], np.int64)
                self.constants[node.output[0]] = (
                    shape if node.op_type == "Shape" else np.array(np.prod(dims), np.int64)
                )
            return
        arrays = [self.constants.get(name) for name in node.input if name]
        if any(a is None or a.size > FOLDED_LIMIT for a in arrays):
            return
        evaluator = ReferenceEvaluator(one_node_model(node, self.opsets, arrays))
        try:
            results = evaluator.run(None, {f"i{k}": a for k, a in enumerate(arrays)})
        except Exception:  # noqa: BLE001 - the values are not shown then
            return
        self.constants.update(zip(node.output, (np.asarray(r) for r in results), strict=False))

    def describe(self, name: str, kind: str, values: bool = True) -> str:
        if not name:
            return "-"
        element, rank = self.types.get(name, ("?", None))
        text = f"{kind} {element} r{'?' if rank is None else rank}"
        array = self.constants.get(name)
        if values and array is not None and array.size <= SHOWN_VALUES:
            text += f" {value_text(array)}"
        return text


def one_node_model(
    node: onnx.NodeProto, opsets: Sequence[onnx.OperatorSetIdProto], arrays: Sequence[np.ndarray]
) -> onnx.ModelProto:
    """`node` alone in a model whose inputs take `arrays` (named i0, i1, ...)."""
    names = iter(f"i{k}" for k in range(len(arrays)))
    copy = onnx.NodeProto()
    copy.CopyFrom(node)
    copy.ClearField("input")
    copy.input.extend(next(names) if name else "" for name in node.input)
    inputs = [
        helper.make_tensor_value_info(f"i{k}", helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
        for k, a in enumerate(arrays)
    ]
    outputs = [helper.make_value_info(name, onnx.TypeProto()) for name in node.output]
    graph = helper.make_graph([copy], "one", inputs, outputs)
    return helper.make_model(graph, opset_imports=opsets)


def inventory(cache: Path, model: str, exporter: str) -> Export:
    """The export's opset, import status, operator counts and node forms."""
    export = Export(model, exporter)
    path = onnx_path(cache, model, exporter)
    if not path.is_file():
        error = error_path(cache, model, exporter)
        export.status = (
            error.read_text(encoding="utf-8").splitlines()[0] if error.is_file() else "not exported"
        )
        return export
    loaded = load_model(path)
    export.opset = next(o.version for o in loaded.opset_import if o.domain in ("", "ai.onnx"))
    export.status = import_status(loaded)
    first = Walk(loaded)
    for node in loaded.graph.node:
        first.visit(node)
    walk = Walk(loaded, runtime_values(loaded, first))
    for node in loaded.graph.node:
        export.ops[node.op_type] += 1
        export.forms.append((node.op_type, *walk.visit(node)))
    return export


def runtime_values(model: onnx.ModelProto, walk: Walk) -> dict[str, np.ndarray]:
    """The values on shapes and constants that `walk` could not compute statically, from one
    onnxruntime run of `model` (graph outputs added) on a seeded input; {} if it fails."""
    names = [
        name
        for node in model.graph.node
        for name in node.output
        if name and walk.kind.get(name) in ("shape", "folded") and name not in walk.constants
    ]
    if not names:
        return {}
    extended = onnx.ModelProto()
    extended.CopyFrom(model)
    outputs = {o.name for o in model.graph.output}
    for name in names:
        if name not in outputs:
            element = helper.np_dtype_to_tensor_dtype(np.dtype(walk.types.get(name, ("?",))[0]))
            extended.graph.output.append(helper.make_tensor_value_info(name, element, None))
    try:
        import onnxruntime

        session = onnxruntime.InferenceSession(
            extended.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        feeds = {
            i.name: np.random.default_rng(0).standard_normal(i.shape).astype(np.float32)
            for i in session.get_inputs()
        }
        results = session.run(names, feeds)
    except Exception:  # noqa: BLE001 - the values are not shown then
        return {}
    return {n: r for n, r in zip(names, results, strict=True) if r.size <= FOLDED_LIMIT}


def import_status(model: onnx.ModelProto) -> str:
    """ "imports", or the importer's refusal (its first line; a traceback is a bug)."""
    try:
        import_model(model)
    except UserError as error:
        return "refused: " + error.message.splitlines()[0]
    except Exception as error:  # noqa: BLE001 - reported, as an importer bug
        return f"IMPORTER BUG ({type(error).__name__}): {str(error).splitlines()[0][:300]}"
    return "imports"


def short_status(status: str) -> str:
    """A refusal cut before the list of supported operators."""
    return status.split("; nnlayout imports")[0]


# ------------------------------------------------------------------ the report
def summary(exports: Sequence[Export]) -> list[str]:
    from nnlayout.frontends.onnx import SUPPORTED_OPS

    lines = [
        "| model | exporter | opset | nodes | import with the current nnlayout "
        "| operators not supported today |"
    ]
    lines.append("|---|---|---:|---:|---|---|")
    for e in exports:
        status = short_status(e.status).replace("|", "\\|")
        missing = ", ".join(sorted(op for op in e.ops if op not in SUPPORTED_OPS)) or "-"
        lines.append(
            f"| {e.model} | {e.exporter} | {e.opset or '-'} | {sum(e.ops.values())} | {status} "
            f"| {missing} |"
        )
    return lines


def per_export(exports: Sequence[Export]) -> list[str]:
    lines = []
    for e in exports:
        if not e.ops:
            continue
        counted = ", ".join(f"{op} {n}" for op, n in sorted(e.ops.items(), key=lambda i: -i[1]))
        lines += [f"- **{e.model} / {e.exporter}** (opset {e.opset}): {counted}"]
    return lines


def per_operator(exports: Sequence[Export]) -> list[str]:
    """Per operator type: where it occurs, on what, and its forms."""
    from nnlayout.frontends.onnx import SUPPORTED_OPS

    forms: dict[str, Counter[str]] = defaultdict(Counter)
    signatures: dict[str, Counter[str]] = defaultdict(Counter)
    attributes: dict[str, Counter[str]] = defaultdict(Counter)
    where: dict[tuple[str, str], set[str]] = defaultdict(set)
    on_activations: Counter[str] = Counter()
    nodes: Counter[str] = Counter()
    for e in exports:
        for op, form, active, signature, texts in e.forms:
            forms[op][form] += 1
            signatures[op][signature] += 1
            attributes[op].update(texts)
            where[op, form].add(f"{e.model}/{e.exporter}")
            nodes[op] += 1
            on_activations[op] += active
    lines = []

    def order(op: str) -> tuple[bool, int, str]:  # unsupported first, then the most common
        return op in SUPPORTED_OPS, -len({w for f in forms[op] for w in where[op, f]}), op

    for op in sorted(forms, key=order):
        exports_with = sorted({w for f in forms[op] for w in where[op, f]})
        supported = "supported today" if op in SUPPORTED_OPS else "NOT supported today"
        lines += [
            "",
            f"### {op} ({supported})",
            "",
            f"{nodes[op]} nodes in {len(exports_with)} exports; {on_activations[op]} act on "
            f"activations, {nodes[op] - on_activations[op]} on shapes/constants only.",
            "",
            f"Inputs (kind, type, rank): {tally(signatures[op])}.",
            "",
            f"Attribute values: {tally(attributes[op]) or 'none'}.",
            "",
            "| nodes | form: (inputs) {attributes} | exports |",
            "|---:|---|---|",
        ]
        ranked = sorted(forms[op].items(), key=lambda i: -i[1])
        for form, count in ranked[:SHOWN_FORMS]:
            seen = sorted(where[op, form])
            shown = ", ".join(seen[:6]) + (f", ... ({len(seen)} in all)" if len(seen) > 6 else "")
            lines.append(f"| {count} | `{form}` | {shown} |")
        if len(ranked) > SHOWN_FORMS:
            rest = sum(c for _, c in ranked[SHOWN_FORMS:])
            lines.append(f"| {rest} | ({len(ranked) - SHOWN_FORMS} more forms) | |")
    return lines


def tally(counts: Counter[str]) -> str:
    """`a` x3, `b` x1: the most frequent first (at most SHOWN_FORMS)."""
    ranked = sorted(counts.items(), key=lambda i: (-i[1], i[0]))
    shown = ", ".join(f"`{text}` x{n}" for text, n in ranked[:SHOWN_FORMS])
    return shown + (f", ... ({len(ranked)} in all)" if len(ranked) > SHOWN_FORMS else "")


def report(exports: Sequence[Export], complete: bool) -> str:
    header = [
        f"STATUS: {'complete' if complete else 'in progress (exports still running)'}",
        "",
        "# What torch's exporters write for torchvision's models",
        "",
        "Generated by `python -m nnlayout.scripts.export_inventory` from the exports of "
        "`python -m nnlayout.benchmarks.torchvision_export` (weights=None, seeded, batch-norm "
        "statistics set from random batches, eval mode, batch 1, 3x224x224, inception_v3 "
        "3x299x299; classic = `dynamo=False, opset_version=17`, dynamo = torch's default). "
        "Read the module docstring of scripts/export_inventory.py for what `act`, `shape`, "
        "`const` and `folded` mean. `r4` is the rank; `[..]` a small constant's values.",
        "",
        "## Exports",
        "",
        *summary(exports),
        "",
        "## Operators per export",
        "",
        *per_export(exports),
        "",
        "## Forms per operator type (over all exports)",
        *per_operator(exports),
    ]
    return "\n".join(header) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    add_common_arguments(parser)
    parser.add_argument("-o", "--output", type=Path, help="write here (default: stdout)")
    parser.add_argument(
        "--complete", action="store_true", help="mark the report complete (STATUS: complete)"
    )
    args = parser.parse_args(argv)
    exports = []
    for model, exporter in chosen(parser, args):
        exports.append(inventory(args.cache_dir, model, exporter))
        print(f"{model} {exporter}: {short_status(exports[-1].status)}", file=sys.stderr)
    text = report(exports, args.complete)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
