"""Every implementation oneDNN offers for each convolution of a zoo model, timed: where a
target's `preferred_implementations` come from, to re-measure on another machine.

    python -m nnlayout.benchmarks.onednn_implementations [MODEL|FILE.onnx ...] [--threads N]
        [--repeats N] [--small] [--data-format NHWC|NCHW8c]

A MODEL is a zoo model's name; an .onnx file (a torchvision export, say) is imported as
`nnlayout-import` imports it.

Each distinct convolution (shapes, strides, fused post-ops: as `default-pipeline{target=
onednn}` fuses it) is asked of oneDNN on the activation formats of its first choice, weights
left to it; the implementations it lists after that one, up to its reference one, run the
same convolution on the same formats. Medians of `--repeats` runs, ms, one primitive at a
time (the network's other layers are not in the caches). The totals weight each
convolution by how often the model has it: oneDNN's first choice, the `onednn` target's
(with its preferences), and the fastest per convolution. Thread counts are pinned before
oneDNN loads, so run it as a fresh process.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from nnlayout.benchmarks.startup import check_names, pin_threads
from nnlayout.tools.driver import description

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from nnlayout.kernels.onednn.convolution import ConvChoice, ConvGeometry


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("models", nargs="*", default=["resnet50"], help="zoo names or .onnx files")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--small", action="store_true", help="the small zoo (a quick check)")
    parser.add_argument(
        "--data-format", default="", help="activation format asked first (a target's data_format)"
    )
    args = parser.parse_args(argv)
    pin_threads(args.threads)
    from nnlayout.examples.make_models import ZOO

    check_names(parser, [m for m in args.models if not m.endswith(".onnx")], ZOO)
    from nnlayout.kernels.onednn.binding import available

    if not available():
        print("oneDNN does not load on this machine", file=sys.stderr)
        return 1
    from nnlayout.diagnostics import UserError

    for name in args.models:
        try:
            module = load(name, args.small)
        except UserError as error:
            print(f"{name}: {error}", file=sys.stderr)
            return 1
        report(name, module, args.data_format, args.repeats, args.threads)
    return 0


def load(name: str, small: bool) -> ModuleOp:
    """The zoo model `name`, or the model in the .onnx file `name`, imported."""
    from nnlayout.frontends.onnx import import_model, load_model

    if name.endswith(".onnx"):
        return import_model(load_model(name)).module
    from nnlayout.benchmarks.layout_report import load as load_zoo
    from nnlayout.examples.make_models import MODELS_DIR

    return load_zoo(name, small, MODELS_DIR)[0]


def report(name: str, module: ModuleOp, data_format: str, repeats: int, threads: int) -> None:
    from nnlayout.dialects import nn
    from nnlayout.ir.context import make_context
    from nnlayout.kernels.onednn import convolution as onednn
    from nnlayout.kernels.onednn.target_options import OneDNNOptions
    from nnlayout.kernels.targets import get_target
    from nnlayout.transforms.default_pipeline import DefaultPipelinePass

    ctx = make_context()
    for one_pass in DefaultPipelinePass(target="onednn").passes():
        if one_pass.name == "insert-layouts":
            break
        one_pass.apply(ctx, module)
    geometries = Counter(
        onednn.conv_geometry(op)
        for op in module.walk()
        if isinstance(op, nn.Conv2dOp | nn.FusedConv2dOp)
    )
    preferred = OneDNNOptions.of(get_target("onednn")).preferred_implementations
    print(
        f"\n{name}: {sum(geometries.values())} convolutions, {len(geometries)} distinct; "
        f"{threads} thread(s); ms, median of {repeats}; * oneDNN's first choice, "
        f"> the onednn target's (preferring {', '.join(preferred) or 'nothing'})"
    )
    totals: Counter[str] = Counter()
    for geometry, count in geometries.items():
        first = onednn.conv_choice(geometry, data_format)
        chosen = onednn.conv_choice(geometry, data_format, preferred)
        if isinstance(first, str) or isinstance(chosen, str):
            print(f"{count} x {describe(geometry)}: no fast implementation ({first})")
            continue
        timed = offered(geometry, first, repeats)
        by_name = {implementation: ms for implementation, _, ms in timed}
        totals["oneDNN's first"] += count * by_name[first.implementation]
        totals["onednn target"] += count * by_name[chosen.implementation]
        totals["fastest"] += count * min(by_name.values())
        marks = {first.implementation: "*", chosen.implementation: ">"}
        if first.implementation == chosen.implementation:
            marks[first.implementation] = "*>"
        cells = "  ".join(f"{marks.get(i, '')}{i} {w} {ms:.3f}" for i, w, ms in timed)
        print(f"{count} x {describe(geometry)}: {cells}", flush=True)
    print("total, ms: " + ", ".join(f"{what} {ms:.1f}" for what, ms in totals.items()))


def describe(g: ConvGeometry) -> str:
    return (
        f"{g.src[1]}->{g.dst[1]} {'x'.join(map(str, g.weights[-2:]))} @{g.src[2]} "
        f"s{g.strides[0]} ({len(g.post_ops)} post-ops)"
    )


def offered(g: ConvGeometry, first: ConvChoice, repeats: int) -> list[tuple[str, str, float]]:
    """(implementation, its weight format, median ms) for oneDNN's first choice and each
    implementation it lists after it, before its reference one, on random data."""
    import numpy as np

    from nnlayout.benchmarks.onednn_ops import median_ms
    from nnlayout.kernels.onednn import binding as b
    from nnlayout.kernels.onednn import convolution as onednn
    from nnlayout.kernels.onednn.formats import identify
    from nnlayout.kernels.onednn.primitives import Compiled

    args = [b.DNNL_ARG_SRC, b.DNNL_ARG_WEIGHTS, b.DNNL_ARG_DST]
    if g.bias:
        args.insert(2, b.DNNL_ARG_BIAS)
    rng = np.random.default_rng(0)
    pd = onednn.conv_pd(g, first.formats[0].value, onednn.ANY, first.formats[2].value)
    found: list[tuple[str, str, float]] = []
    while not pd.implementation.startswith("ref"):
        weights = identify(pd.md(b.dnnl_query_weights_md), g.weights_role)
        compiled = Compiled(pd, args)  # the primitive of the implementation pd is at now
        arrays = {
            arg: rng.standard_normal(compiled.nbytes(arg) // 4).astype(np.float32) for arg in args
        }
        scratchpad = np.empty(compiled.scratchpad_bytes, np.uint8)
        ms = median_ms(lambda: compiled(arrays, scratchpad), repeats)  # noqa: B023
        found.append((pd.implementation, weights.tag if weights else "unmapped", ms))
        if not pd.next_implementation():
            break
    return found


if __name__ == "__main__":
    sys.exit(main())
