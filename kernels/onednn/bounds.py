"""Bounds on the Euclidean norms of the values oneDNN kernels read and write, and the
guards built on them.

Semantics kept equal to the reference kernels, where oneDNN differs: its relu and clip turn
NaN into a bound, and its max pooling drops NaN and turns a window of -inf into the lowest
float, so these run in oneDNN on calls whose input is finite (known from the kernel that
wrote it, `NormBound`, or checked by one BLAS pass, `norm`) and in numpy otherwise. A
convolution fused with them checks that nothing can overflow either (`conv_bounds`); batch
norm and global average pooling bound their results so that the next guard need not
measure (`batch_norm_bound`, `bound_after`).

The kernels calling these (calls.py) look them up on this module at each call, so that
tests can count and replace them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.compute import last_writers, operands_outside
from nnlayout.dialects.nn import ints, shape_of
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn.eltwise import binary_order, clip_range
from nnlayout.kernels.registry import BindingSession

# Below this bound on every partial sum, a convolution in float32 cannot overflow (room is
# left for rounding in its sums and in the norms that bound them).
FINITE_LIMIT = float(np.finfo(np.float32).max) / 16


def norm(x: np.ndarray) -> float:
    """An upper bound on the Euclidean norm of `x`, from one BLAS pass (its float32 sum of
    squares, raised by that sum's largest rounding error): inf or NaN when `x` holds an
    infinity or NaN (or its square sum overflows, past 1.8e19). A bf16 (or f16) array is
    widened to f32 first (exactly): numpy's dot of ml_dtypes' bfloat16 is a generic loop,
    0.61 ms on 1x128x56x56 where the widening and BLAS's dot take 0.23 ms (issue 27)."""
    flat = x.reshape(-1)
    if flat.dtype.itemsize == 2:
        flat = flat.astype(np.float32)
    return math.sqrt(float(np.dot(flat, flat)) * (1 + flat.size * 2.0**-23))


def largest_magnitude(x: np.ndarray) -> float:
    return float(np.max(np.abs(x)))  # NaN if any is


def smallest(x: np.ndarray) -> float:
    return float(np.min(x))  # NaN if any is


def conv_norm_factors(op: nn.Conv2dOp | nn.FusedConv2dOp) -> tuple[float, float]:
    """sqrt(kh kw) and sqrt(positions) of a convolution (see `conv_bounds`)."""
    n, _, h, w = shape_of(op.output)
    return math.sqrt(math.prod(shape_of(op.weight)[2:])), math.sqrt(n * h * w)


def conv_bounds(
    factors: tuple[float, float], source: float, summand: float, weights: float, bias: float
) -> tuple[float, float]:
    """Bounds on a convolution whose source, addend, weights and bias have Euclidean norms
    of at most `source`, `summand`, `weights` and `bias`: on every partial sum of an output
    element, and on the norm of the result before its activation; (inf, inf) when it may
    overflow (or an operand is not finite). A partial sum is a sum of weight * input
    products over part of a window, plus bias and addend elements, so by Cauchy-Schwarz it
    is at most |weights| |source| + |bias| + |addend|; each input element is in at most
    kh * kw windows per output channel, so the result's norm is at most sqrt(kh kw)
    |weights| |source| + sqrt(positions) |bias| + |addend| (`factors` holds those two
    square roots)."""
    element = weights * source + bias + summand
    if not (source + summand < FINITE_LIMIT and element < FINITE_LIMIT):
        return math.inf, math.inf
    window, positions = factors
    return element, window * weights * source + positions * bias + summand


def bound_after(op: Operation | None, size: int) -> Callable[[float], float]:
    """The bound on the norm of `op`'s result (an element-wise activation on `size`
    elements; None: no activation) from one on its finite operand's; inf when unknown."""
    if (
        op is None
        or isinstance(op, nn.ReluOp)
        or (isinstance(op, nn.LeakyReluOp) and op.alpha.value.data == 0)
    ):
        return lambda norm: norm  # |f(x)| <= |x|
    if isinstance(op, nn.ClipOp):
        low, high = clip_range(op)
        largest = math.sqrt(size) * max(abs(low), abs(high))
        if low <= 0 <= high:
            return lambda norm: min(norm, largest)
        return lambda norm: largest
    if isinstance(op, nn.SigmoidOp | nn.TanhOp | nn.SoftmaxOp):
        return lambda norm: math.sqrt(size)
    if isinstance(op, nn.Pool2dOp):
        # A window's max, and its sum (so every partial sum of its average), is at most
        # sqrt(window) times its norm; each element is in at most `window` windows.
        window = math.sqrt(math.prod(ints(op.kernel)))
        return lambda norm: window * norm
    if isinstance(op, nn.GlobalAvgPoolOp):  # the same, with the whole plane as the window
        plane = math.sqrt(math.prod(shape_of(op.operands[0])[2:]))
        return lambda norm: plane * norm
    if isinstance(op, nn.ReduceOp):
        return _reduction_bound(op)
    return lambda norm: math.inf


# Room for the rounding of each element's product or sum: one float32 rounding is 2^-24,
# 2^-20 leaves a margin of 16 of them.
_ROUNDING = 1 + 2.0**-20


SourcesBound = tuple[tuple[tuple[int, int], ...], Callable[..., float]]


def sources_bound(op: Operation) -> SourcesBound | None:
    """How the bound on the result of a (broadcasting) mul, add or sub, or of a concat,
    follows from its sources' bounds: the (execution argument, operand index) of each
    source, and the function of their bounds, in that order; None for other ops.

    A source repeated r times by broadcasting has sqrt(r) times its norm, and a vector's
    largest magnitude is at most its norm, so |a b| <= sqrt(min(ra, rb)) |a| |b| and
    |a +- b| <= sqrt(ra) |a| + sqrt(rb) |b|; a concat's norm is the root of its parts'
    squares' sum. An SE block's mul (features times gates) and a dense or inception block's
    concat then pass a bound on, where the guarded convolutions and max poolings reading
    them measured their operands (33 passes in RegNetY-400MF, 63 of 10.7M elements in
    DenseNet-121)."""
    if isinstance(op, nn.ConcatOp):
        parts = tuple((b.DNNL_ARG_MULTIPLE_SRC + i, i) for i in range(len(op.operands)))
        return parts, lambda *bounds: math.hypot(*bounds) * _ROUNDING
    if not isinstance(op, nn.MulOp | nn.AddOp | nn.SubOp):
        return None
    size = math.prod(shape_of(op.results[0]))
    first, second = binary_order(op)  # oneDNN's first source is the full-size operand
    ra, rb = (size / max(1, math.prod(shape_of(op.operands[i]))) for i in (first, second))
    reads = ((b.DNNL_ARG_SRC, first), (b.DNNL_ARG_SRC_1, second))
    if isinstance(op, nn.MulOp):
        factor = math.sqrt(min(ra, rb)) * _ROUNDING
        return reads, lambda a, c: factor * a * c
    fa, fb = math.sqrt(ra) * _ROUNDING, math.sqrt(rb) * _ROUNDING
    return reads, lambda a, c: fa * a + fb * c


def _reduction_bound(op: nn.ReduceOp) -> Callable[[float], float]:
    """The bound on a reduction's result, and on every partial result, from its finite
    source's norm: each output reduces `count` elements of its own, so by Cauchy-Schwarz a
    (partial) sum is at most sqrt(count) times their norm, a max, min or l2 at most their
    norm, a sum of squares its square; a product at most the largest magnitude, at most the
    norm, to the power `count` (1 where that is below 1), for each of the outputs."""
    x = shape_of(op.operands[0])
    count = math.prod(x[a] for a in op.reduced_axes)
    outputs = math.prod(shape_of(op.results[0]))
    kind = op.kind.data
    if kind in ("max", "min", "l2"):
        return lambda norm: norm
    if kind in ("sum", "mean", "l1"):
        return lambda norm: math.sqrt(count) * norm
    if kind == "sum_square":
        return lambda norm: norm * norm if norm < FINITE_LIMIT else math.inf

    def product(norm: float) -> float:
        if not norm < FINITE_LIMIT:
            return math.inf
        try:
            return math.sqrt(outputs) * max(1.0, norm) ** count
        except OverflowError:
            return math.inf

    return product


def batch_norm_bound(op: nn.BatchNormOp) -> Callable[[float, float, float, float, float], float]:
    """The bound on the result of inference batch norm, a (x - mean) + shift with
    a = scale / sqrt(variance + epsilon) per channel, and on every intermediate however
    oneDNN orders it (x - mean, a x, a mean, ...), from the norm of its finite source and
    its vectors' (largest |scale|, smallest variance, norms of mean and shift); inf when
    it may overflow. A vector's norm over the whole tensor is sqrt(N H W) times its own."""
    shape = shape_of(op.operands[0])
    positions = math.sqrt(shape[0] * math.prod(shape[2:]))
    epsilon = op.epsilon.value.data

    def bound(
        source: float, scale_max: float, variance_min: float, mean_norm: float, shift_norm: float
    ) -> float:
        denominator = variance_min + epsilon
        factor = scale_max / math.sqrt(denominator) if denominator > 0 else math.inf
        if not factor < FINITE_LIMIT:  # also NaN
            return math.inf
        return max(1.0, factor) * (source + positions * mean_norm) + positions * shift_norm

    return bound


class NormBound:
    """A bound on the Euclidean norm of the value a kernel wrote on its last call; inf when
    none is known (the value may then hold NaN or an infinity). The kernels reading that
    value next (found by `last_writers`) use it instead of a pass over their operand, so a
    chain of guarded convolutions measures its input once: the bound grows with each layer's
    weights until it is too large to be of use, and the next guard measures again. A value
    read whole whose parts several kernels wrote (a concat built in place) is bounded by the
    root of their bounds' squares; asked, each part's writer measures its own, so that the
    whole's bound is the exact norm of its parts, which does not compound through a dense
    block whose every layer reads all the parts before it. A
    reader trusts the bound only for the bytes it was about (`where`: address and size of
    the array written): a kernel called on arrays of the caller's choosing measures them or
    takes no bound.

    A guard that had to measure its operand, and found it small enough where the writers'
    bound was not, `ask`s them to measure from the next call on: the pass moves to the
    writer, and every later reader of its result (and of what follows from it) gets the
    exact norm instead of a compounded bound. A concat of linked parts forwards the request
    to its parts (`upstream`), whose norms it combines exactly: in DenseNet-121 each dense
    layer's 32 new channels are measured once, where each layer's guard measured the whole
    concat of all the layers before it (47 passes over 6.5 M elements per run). A kernel
    reading such a concat (its kernel's, or the parts' writers' of one built in place: a
    `NormBound` standing for it) passes the first request on to it (`through`), and measures only
    if asked again (its exact source was not enough): a dense layer's batch norm (a
    depthwise convolution) admits the concat's bound, the convolution after it not the
    batch norm's, where the first parts' bounds had compounded through the block before."""

    __slots__ = ("measure", "passed", "through", "upstream", "value", "where")

    def __init__(self) -> None:
        self.value = math.inf
        self.measure = self.passed = False
        self.upstream: tuple[NormBound, ...] = ()
        self.through: NormBound | None = None
        self.where: Extent | None = None

    def ask(self) -> None:
        """Has the writer keep the exact norm of its result from its next call on (its
        parts' writers, for a concat that has them; the first time, the concat's it reads,
        for a kernel reading one)."""
        if self.upstream:
            for part in self.upstream:
                part.ask()
        elif self.through is not None and not self.passed:
            self.passed = True
            self.through.ask()
        else:
            self.measure = True


def ask_all(bounds: Sequence[NormBound] | None) -> None:
    """`NormBound.ask` on each of the bounds a reader linked for one argument (if any)."""
    for bound in bounds or ():
        bound.ask()


Extent = tuple[int, int]  # a C-contiguous array's address and size in bytes


def extent(x: np.ndarray) -> Extent:
    return x.ctypes.data, x.nbytes


def linked_bounds(
    op: Operation, session: BindingSession | None
) -> tuple[dict[int, list[NormBound]], NormBound]:
    """The bounds of the values `op` reads as source and addend, where the kernels that
    wrote them (one, or each part of a concat built in place) are oneDNN kernels prepared
    earlier in the same binding `session` whose results nothing overwrote since, and the
    bound `op`'s kernel is to keep on its own result (kept in `session`). Outside a session
    (None), no bounds are linked."""
    written, linked = NormBound(), {}
    found = operands_outside(op)
    if found is None or session is None:
        return linked, written
    compute, outside = found
    session.tell(compute, written)
    reads = {b.DNNL_ARG_SRC: op.operands[0]}
    if isinstance(op, nn.FusedConv2dOp) and op.addend is not None:
        reads[b.DNNL_ARG_DST] = op.addend
    if (combined := sources_bound(op)) is not None:
        reads = {arg: op.operands[index] for arg, index in combined[0]}
    for arg, value in reads.items():
        bounds = [session.told(writer) for writer in last_writers(compute, outside[value]) or ()]
        if bounds and all(isinstance(bound, NormBound) for bound in bounds):
            linked[arg] = bounds
    if isinstance(op, nn.ConcatOp) and len(linked) == len(reads):
        written.upstream = tuple(bound for bounds in linked.values() for bound in bounds)
    elif len(source := linked.get(b.DNNL_ARG_SRC, ())) == 1 and source[0].upstream:
        written.through = source[0]
    elif len(source) > 1:  # a concat built in place: its parts' writers stand for its kernel
        written.through = NormBound()
        written.through.upstream = tuple(source)
    return linked, written


def bound_reader(parts: Sequence[NormBound] | None) -> Callable[[np.ndarray, Extent], float]:
    """How a kernel bounds the norm of an operand `x` occupying `extent`: by the bounds its
    writers kept (`parts`: the root of their squares' sum when several kernels wrote it) if
    they wrote exactly those bytes on their last calls, else inf. A guard that cannot use
    the bound measures `x` (`measured`)."""
    if parts is None:
        return lambda x, extent: math.inf
    if len(parts) == 1:
        [part] = parts
        return lambda x, extent: part.value if part.where == extent else math.inf
    tiled: list[object] = [None]  # the parts' extents last seen to tile an operand's

    def several(x: np.ndarray, extent: Extent) -> float:
        wheres = (extent, *(part.where for part in parts))
        if wheres != tiled[0]:
            end = extent[0]
            for where in sorted(w for w in wheres[1:] if w is not None):
                end = end + where[1] if where[0] == end else -1
            tiled[0] = wheres if None not in wheres and end == sum(extent) else None
        return math.hypot(*(part.value for part in parts)) if tiled[0] is not None else (math.inf)

    return several


def measured(
    bound: float,
    x: np.ndarray,
    fits: Callable[[float], bool],
    writers: Sequence[NormBound] | None = None,
) -> float:
    """`bound` where the guard `fits` can use it, else the norm of `x` itself: the writers'
    bounds compound layer by layer (each conv multiplies its source's by its weights'), so
    deep in a network they overflow, or only just fit, long before the values do, and the
    guards would run their exact (or numpy) paths needlessly. A norm that fits where the
    bound did not asks the `writers` to measure from then on (`NormBound.ask`)."""
    if fits(bound):
        return bound
    result = norm(x)
    if fits(result):
        ask_all(writers)
    return result
