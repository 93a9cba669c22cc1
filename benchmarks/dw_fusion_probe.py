"""oneDNN's depthwise post-op probed: a 3x3 depthwise convolution fused into the 1x1
convolution before it (MobileNetV2's expand -> depthwise), against the two run apart.

For each inverted-residual shape it makes the fused primitive (1x1 convolution, clip(0, 6),
depthwise 3x3 with stride 1 or 2, clip(0, 6)) and the two separate ones, in f32 or int8 (u8
activations, s8 weights with per-channel scales, f32 biases), prints the implementations
oneDNN chose (`ref_fused_convolution:any:A:B` is not a fusion: it runs A over the whole
tensor, then B, with the intermediate in its scratchpad), the largest difference between
the fused result and the separate pair's, and the median time of each, 1 thread. The weights
and the sources are cycled through `--copies` copies so that they come from L3, as in a
network, and every primitive runs bound (its memory objects pointed once), as generated code
runs them.

    OMP_NUM_THREADS=1 python -m nnlayout.benchmarks.dw_fusion_probe [--int8] [--tag nChw16c]

docs/benchmarks.md ("the depthwise post-op") has the figures.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.attributes import Quantization, runtime_md
from nnlayout.kernels.onednn.binding import MemoryDesc, PostOp
from nnlayout.kernels.onednn.common import reorder_array
from nnlayout.kernels.onednn.formats import by_layout

S, W, B, D = b.DNNL_ARG_SRC, b.DNNL_ARG_WEIGHTS, b.DNNL_ARG_BIAS, b.DNNL_ARG_DST
DW = b.DNNL_ARG_ATTR_POST_OP_DW
CLIP = PostOp.eltwise(b.dnnl_eltwise_clip, 0.0, 6.0)
ANY, X = b.dnnl_format_tag_any, 2  # dnnl_x
SCALES = {S: 1.0, W: 0.02, D: 0.05, DW | W: 0.03, DW | D: 0.05}  # the 1x1's D = the dw's S


@dataclass(frozen=True)
class Shape:
    """An inverted residual's expand 1x1 (cin -> cmid at size x size) and its depthwise."""

    cin: int
    cmid: int
    size: int
    stride: int

    def __str__(self) -> str:
        return f"{self.cin}->{self.cmid} at {self.size}, dw s{self.stride}"


SHAPES = (
    Shape(16, 96, 112, 2),  # MobileNetV2, EfficientNet-B0
    Shape(16, 64, 112, 2),  # MobileNetV3-Large
    Shape(16, 48, 112, 2),  # MNASNet 1.0
    Shape(24, 144, 56, 1),
    Shape(24, 144, 56, 2),
    Shape(32, 192, 28, 1),
    Shape(64, 384, 14, 1),
    Shape(96, 576, 14, 2),
    Shape(160, 960, 7, 1),
)


@dataclass
class Case:
    """One shape's fused primitive and its separate pair."""

    shape: Shape
    fused: p.Compiled
    expand: p.Compiled
    depthwise: p.Compiled


def _quantizations(int8: bool) -> tuple[Quantization | None, ...]:
    """Of the fused primitive, the 1x1 and the depthwise: per-channel weight scales (mask 1
    for the 1x1's o, 3 for the depthwise's grouped g and o)."""
    if not int8:
        return (None, None, None)
    dw_scales = ((DW | W, 3), (DW | D, 0))
    return (
        Quantization(scales=((S, 0), (W, 1), (D, 0), *dw_scales)),
        Quantization(scales=((S, 0), (W, 1), (D, 0))),
        Quantization(scales=((S, 0), (W, 3), (D, 0))),
    )


def _compiled(
    pd: b.PrimitiveDesc, args: Sequence[int], q: Quantization | None, channels: int
) -> p.Compiled:
    """`pd` compiled, with f32 scale arguments (one per channel where the mask says so)."""
    runtime = {
        b.DNNL_ARG_ATTR_SCALES | arg: runtime_md([0.0] * (channels if mask else 1), b.dnnl_f32)
        for arg, mask in (q.scales if q else ())
    }
    return p.Compiled(pd, args, runtime=runtime)


def build(shape: Shape, tag: int, int8: bool) -> Case:
    """The fused primitive and the separate pair of `shape` in data format `tag`."""
    c, m, h, st = shape.cin, shape.cmid, shape.size, shape.stride
    ho = (h - 1) // st + 1
    adt, wdt = (b.dnnl_u8, b.dnnl_s8) if int8 else (b.dnnl_f32, b.dnnl_f32)
    fq, eq, dq = _quantizations(int8)
    src = MemoryDesc.with_tag((1, c, h, h), tag, adt)
    mid = MemoryDesc.with_tag((1, m, h, h), tag, adt)
    out = MemoryDesc.with_tag((1, m, ho, ho), tag, adt)
    w1 = MemoryDesc.with_tag((m, c, 1, 1), ANY, wdt)
    wd = MemoryDesc.with_tag((m, 1, 1, 3, 3), ANY, wdt)
    bias = MemoryDesc.with_tag((m,), X, b.dnnl_f32)
    dw = PostOp.depthwise(st, (wdt, b.dnnl_f32, adt))
    one, zero = (1, 1), (0, 0)
    fused = p.convolution_pd(src, w1, bias, mid, one, one, zero, zero, (CLIP, dw, CLIP), fq)
    expand = p.convolution_pd(src, w1, bias, mid, one, one, zero, zero, (CLIP,), eq)
    depthwise = p.convolution_pd(mid, wd, bias, out, (st, st), one, one, one, (CLIP,), dq)
    return Case(
        shape,
        _compiled(fused, (S, W, B, D, DW | W, DW | B), fq, m),
        _compiled(expand, (S, W, B, D), eq, m),
        _compiled(depthwise, (S, W, B, D), dq, m),
    )


def _packed(array: np.ndarray, compiled: p.Compiled, arg: int) -> np.ndarray:
    """`array` (plain f32) in the format and data type `compiled` wants for `arg`."""
    given = MemoryDesc.with_strides(array.shape, [int(s) // 4 for s in array.strides], b.dnnl_f32)
    return reorder_array(array, given, compiled.memories[arg].md)


def _scales(compiled: p.Compiled, values: dict[int, float]) -> dict[int, np.ndarray]:
    return {
        arg: np.full(memory.md.size // 4, values[arg & ~b.DNNL_ARG_ATTR_SCALES], np.float32)
        for arg, memory in compiled.memories.items()
        if arg & b.DNNL_ARG_ATTR_SCALES
    }


def bind(case: Case, int8: bool, copies: int, rng: np.random.Generator) -> list[tuple]:
    """For each copy: (fused call, separate calls, fused output, separate output, the
    arrays and memory objects the calls are bound to)."""
    c, m, h = case.shape.cin, case.shape.cmid, case.shape.size
    w1 = (rng.standard_normal((m, c, 1, 1)) / np.sqrt(c)).astype(np.float32)
    wd = (rng.standard_normal((m, 1, 1, 3, 3)) / 3).astype(np.float32)
    src = rng.uniform(0, 255 if int8 else 3, (1, c, h, h)).astype(np.float32)
    if int8:
        w1, wd, src = (
            np.round(w1 * 40).clip(-127, 127),
            np.round(wd * 40).clip(-127, 127),
            np.round(src),
        )
    bias = np.linspace(-0.5, 0.5, m).astype(np.float32)
    dtype = p.NUMPY_TYPES[case.fused.memories[D].md.data_type]
    mid = np.empty(case.expand.nbytes(D) // dtype.itemsize, dtype)
    pad = np.empty(
        max(x.scratchpad_bytes for x in (case.fused, case.expand, case.depthwise)) + 1, np.uint8
    )
    dw_scales = {S: SCALES[D], W: SCALES[DW | W], D: SCALES[DW | D]}
    bound = []
    for _ in range(copies):
        out_f = np.empty(case.fused.nbytes(D) // dtype.itemsize, dtype)
        out_s = np.empty_like(out_f)
        fused, expand, depthwise = (
            case.fused.private(),
            case.expand.private(),
            case.depthwise.private(),
        )
        arrays = (
            {S: _packed(src, fused, S), W: _packed(w1, fused, W), B: bias, D: out_f}
            | {DW | W: _packed(wd, fused, DW | W), DW | B: bias}
            | _scales(fused, SCALES),
            {S: _packed(src, expand, S), W: _packed(w1, expand, W), B: bias, D: mid}
            | _scales(expand, SCALES),
            {S: mid, W: _packed(wd, depthwise, W), B: bias, D: out_s}
            | _scales(depthwise, dw_scales),
        )
        for compiled, given in zip((fused, expand, depthwise), arrays, strict=True):
            compiled.point(given, pad)
        # the arrays and the primitives' memory objects are kept with the calls
        kept = (arrays, pad, fused, expand, depthwise)
        bound.append((fused.runner(), (expand.runner(), depthwise.runner()), out_f, out_s, kept))
    return bound


def _timed(call: Callable[[], None]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def measure(bound: list[tuple], runs: int) -> tuple[float, float, float]:
    """The largest difference of the fused result from the separate pair's, and the median
    microseconds of the fused call and of the pair, taking turns, copies in rotation."""
    for fused, (expand, depthwise), *_ in bound:
        fused(), expand(), depthwise()
    diff = max(float(np.max(np.abs(f.astype(np.float64) - s))) for _, _, f, s, _ in bound)
    fused_times, separate_times = [], []
    for run in range(runs):
        fused, (expand, depthwise), *_ = bound[run % len(bound)]
        fused_times.append(_timed(fused))
        separate_times.append(_timed(expand) + _timed(depthwise))
    return diff, float(np.median(fused_times)) * 1e6, float(np.median(separate_times)) * 1e6


def main(argv: Sequence[str] | None = None) -> None:
    first_paragraph = (__doc__ or "").split("\n\n", 1)[0]
    parser = argparse.ArgumentParser(description=" ".join(first_paragraph.split()))
    parser.add_argument("--copies", type=int, default=24, help="of weights and sources")
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--int8", action="store_true", help="u8 activations, s8 weights")
    parser.add_argument("--tag", choices=("NHWC", "NCHW16c"), default="NHWC")
    options = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    tag = by_layout("data", options.tag).value
    print(
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, {options.tag}, "
        f"{'int8' if options.int8 else 'f32'}, {options.copies} copies, {options.runs} runs"
    )
    print("| shape | fused | separate | max diff | fused us | separate us | ratio |")
    print("|---|---|---|---:|---:|---:|---:|")
    for shape in SHAPES:
        try:
            case = build(shape, tag, options.int8)
        except b.DnnlError as error:
            print(f"| {shape} | refused: {error} | | | | | |")
            continue
        diff, fused, separate = measure(bind(case, options.int8, options.copies, rng), options.runs)
        print(
            f"| {shape} | {case.fused.pd.implementation} | {case.expand.pd.implementation} + "
            f"{case.depthwise.pd.implementation} | {diff:.2g} | {fused:.1f} | {separate:.1f} "
            f"| {fused / separate:.3f} |"
        )


if __name__ == "__main__":
    main()
