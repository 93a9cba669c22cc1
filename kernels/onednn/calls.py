"""The ways a bound oneDNN op is called, each a small class made once per op whose `bind(at)`
returns the call, without arguments, of the op on one set of arrays (`Arrays`):

- `ConvolutionCall`: a convolution; with a finite variant (a cheaper epilogue, see
  `convolution.Epilogue`) each call whose operands `bounds.conv_bounds` bounds runs that
  instead, and the exact epilogue otherwise.
- `ProductCall`: a fused matmul whose activation's post-op is exact on finite values only:
  the reference runs each call whose product the bound does not prove finite.
- `GuardedCall`: an op oneDNN computes as the reference does on finite input only
  (`eltwise.finite_only`), or a global average pooling or a reduction, whose float32 sums
  may overflow where the reference's float64 ones do not (and whose max drops NaN): numpy
  runs a call the bound does not admit.
- `PlainCall`: every other op; batch norm with a zero variance runs in numpy.

What they share, decided once per op, is an `OpRun`: the op's primitives, the bounds it reads
and keeps, and what is derived once from its load-time constants. The call is a closure over
what it reads, so that a generated module's op pays per call only for its bounds and the
primitive's execution. Bounds are looked up on the `bounds` module at each call.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import partial
from typing import Any, Protocol

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.layout import LayoutSpec, layout_of
from nnlayout.dialects.nn import ints, shape_of
from nnlayout.kernels.blocked import max_pool2d_any
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import bounds
from nnlayout.kernels.onednn.bounds import FINITE_LIMIT, Extent, NormBound, extent
from nnlayout.kernels.onednn.common import padded_layout
from nnlayout.kernels.onednn.convolution import fused_epilogue
from nnlayout.kernels.onednn.eltwise import finite_arguments
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.onednn.reorder import weights_repacker
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.registry import FixedCall
from nnlayout.kernels.values import apply_kernel

Finish = Callable[[np.ndarray, Extent, float], None]


def reference_result(op: Operation, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """`op`'s reference kernel on its operands in their layouts, result in its own."""
    return apply_kernel(op, REFERENCE_KERNELS[type(op)], False, inputs)


def _finisher(padded: LayoutSpec | None, shape: tuple[int, ...], written: NormBound) -> Finish:
    """What every call does after its kernel wrote `out` (where `where` says): re-zero the
    padding lanes of a padded result (oneDNN leaves 0 * NaN in padded output channels and
    sigmoid(0) in padded lanes), and keep the bound `result` on its norm, or the norm itself
    where readers asked to `measure` it."""

    def finish(out: np.ndarray, where: Extent, result: float) -> None:
        if padded is not None:
            padded.zero_padding(out, shape)
        if written.measure:
            result = bounds.norm(out)
        # A bound past the limit is of no use to a guard, and may not bound what overflowed.
        written.value = result if result < FINITE_LIMIT else math.inf
        written.where = where

    return finish


class OpRun:
    """What every way of calling `op` shares, decided once per op: its primitive `compiled`,
    its `finite` variant if any, the execution arguments of its inputs (`args`), those that
    are load-time constants (`constants`: the same read-only array on every call), the bound
    it keeps on its result (`written`) and the bounds of the parts its writers wrote, by
    execution argument (`linked`)."""

    def __init__(
        self,
        op: Operation,
        compiled: Compiled,
        args: tuple[int, ...],
        finite: Compiled | None,
        linked: Mapping[int, Sequence[NormBound]],
        written: NormBound,
        constants: Collection[int],
    ):
        self.op, self.compiled, self.finite, self.args = op, compiled, finite, args
        self.constants, self.linked = constants, linked
        self.addend = isinstance(op, nn.FusedConv2dOp) and op.addend is not None
        self.repack = weights_repacker(op, compiled)
        conv = isinstance(op, nn.Conv2dOp | nn.FusedConv2dOp)
        fused_activation = op.activation_op() if isinstance(op, nn.FusedConv2dOp) else None
        shape, spec = shape_of(op.results[0]), layout_of(op.results[0].type)
        size = math.prod(shape if spec is None else spec.physical_shape(shape))
        self.bound_after = bounds.bound_after(fused_activation if conv else op, size)
        self.read_source = bounds.bound_reader(linked.get(b.DNNL_ARG_SRC))
        self.read_summand = bounds.bound_reader(linked.get(b.DNNL_ARG_DST))
        # A mul's, add's, sub's or concat's bound comes from all its sources' (`sources`).
        self.sources = bounds.sources_bound(op)
        self.read_sources = (
            {arg: bounds.bound_reader(linked.get(arg)) for arg, _ in self.sources[0]}
            if self.sources is not None
            else {}
        )
        self.variants = [compiled] if finite is None else [compiled, finite]
        self.finish = _finisher(padded_layout(op.results[0].type), shape, written)
        # The token of the arrays the variants' memory objects point at now.
        self.owner: list[object] = [None]
        self._derived: dict[tuple[int, str], tuple[weakref.ref[np.ndarray], Any]] = {}

    def once(self, arg: int, what: str, x: np.ndarray, derive: Callable[[np.ndarray], Any]) -> Any:
        """derive(x), computed once per array if the operand is a load-time constant (kept
        per argument and `what`: packed weights and their norm are two). The array is
        known by a weak reference: a call bound to the packed weights alone lets the loaded
        program free the plain ones (`lowering/program.py`)."""
        if arg not in self.constants:
            return derive(x)
        if (seen := self._derived.get((arg, what))) is None or seen[0]() is not x:
            seen = self._derived[arg, what] = (weakref.ref(x), derive(x))
        return seen[1]

    def arrays(
        self, inputs: Sequence[np.ndarray], out: np.ndarray, scratchpad: np.ndarray | None
    ) -> Arrays:
        """The op's arrays for a call on `inputs` into `out`, as oneDNN reads them."""
        *sources, summand = inputs if self.addend else (*inputs, None)
        passed = (
            sources
            if self.repack is None
            else [
                sources[0],
                self.once(b.DNNL_ARG_WEIGHTS, "packed", sources[1], self.repack),
                *sources[2:],
            ]
        )
        arrays = {
            arg: np.ascontiguousarray(x, dtype=self.compiled.dtype(arg) or np.float32)
            for arg, x in zip(self.args, passed, strict=True)
        }
        reusable = scratchpad is not None and all(  # constants never change
            arrays[arg] is x or arg in self.constants
            for arg, x in zip(self.args, sources, strict=True)
        )
        arrays[b.DNNL_ARG_DST] = out
        return Arrays(self, inputs, sources, summand, arrays, scratchpad, reusable)


class Arrays:
    """The arrays of one call of an op (a plan: made on each unbound call, once by a kernel
    bound to the arrays generated code always passes): oneDNN's, by execution argument, and
    whether a call made on them may run again on new contents of them (`reusable`: it may
    not where an operand had to be copied to suit oneDNN)."""

    def __init__(
        self,
        run: OpRun,
        inputs: Sequence[np.ndarray],
        sources: list[np.ndarray],
        summand: np.ndarray | None,
        arrays: dict[int, np.ndarray],
        scratchpad: np.ndarray | None,
        reusable: bool,
    ):
        self.run, self.inputs, self.sources, self.arrays = run, inputs, sources, arrays
        self.scratchpad, self.reusable = scratchpad, reusable
        self.out = out = arrays[b.DNNL_ARG_DST]
        # oneDNN's sum post-op adds what dst holds: the addend, copied there unless in place.
        self.copied = (
            None
            if summand is None or summand.ctypes.data == out.ctypes.data
            else (out.reshape(summand.shape), summand)
        )
        self.source = source = arrays.get(b.DNNL_ARG_SRC)
        self.source_at = None if source is None else extent(source)
        self.summand_at = None if summand is None else extent(np.ascontiguousarray(summand))
        self.out_at = extent(out)
        self.token = object()  # in `owner` while the primitives point at these arrays

    def drop_operands(self) -> None:
        """Forgets the operands as given (once a call is bound: it holds what it reads), so
        that a load-time constant repacked for oneDNN is held packed alone."""
        self.inputs, self.sources = (), []

    def point(self) -> None:
        """Points the op's primitives at these arrays."""
        for variant in self.run.variants:
            variant.point(self.arrays, self.scratchpad)
        self.run.owner[0] = self.token


class Way(Protocol):
    """A way of calling an op (made once per op from its `OpRun`)."""

    def bind(self, at: Arrays) -> FixedCall:
        """The op's call on the arrays `at` (pointing its primitives at them first where
        another call pointed them elsewhere)."""
        ...


class ConvolutionCall:
    """A convolution, guarded where it has a finite variant; numpy where its weights are not
    finite and it has padding (oneDNN skips the taps that fall in a convolution's zero
    padding, where the reference multiplies: a weight that is NaN or infinite makes NaN
    there)."""

    def __init__(self, run: OpRun):
        op = run.op
        assert isinstance(op, nn.Conv2dOp | nn.FusedConv2dOp)
        self.run = run
        self.pads_multiply = any(ints(op.pads))
        self.factors = bounds.conv_norm_factors(op)
        fused = isinstance(op, nn.FusedConv2dOp)
        # An activation with no exact post-op runs after the primitive, as its reference does.
        self.activation = (
            op.activation_op() if fused and fused_epilogue(op).numpy_activation else None
        )

    def _constant_norms(
        self, weights: np.ndarray, bias: np.ndarray | None
    ) -> tuple[float | None, float | None]:
        """The norms of the weights and the bias where they are load-time constants (a
        missing bias: 0), else None: measured on each call."""
        once, constants = self.run.once, self.run.constants
        weights_norm = (
            once(b.DNNL_ARG_WEIGHTS, "norm", weights, bounds.norm)
            if b.DNNL_ARG_WEIGHTS in constants
            else None
        )
        if bias is None:
            return weights_norm, 0.0
        if b.DNNL_ARG_BIAS not in constants:
            return weights_norm, None
        return weights_norm, once(b.DNNL_ARG_BIAS, "norm", bias, bounds.norm)

    def _bounder(self, at: Arrays) -> Callable[[float, float], tuple[float, float]]:
        """The guard's bounds (`bounds.conv_bounds`) of a call on `at`, from the weights' and
        bias's norms: it measures what its writers' bounds do not vouch for (none known, or
        ones that compounded past what the sums may reach: `bounds.measured`), and asks the
        writers to measure where the measured norms fit and the bounds did not."""
        run, factors, source, out = self.run, self.factors, at.source, at.out
        read_source = partial(run.read_source, source, at.source_at)
        read_summand = partial(run.read_summand, out, at.summand_at)
        addend, guarded = run.addend, run.finite is not None
        writers = [run.linked.get(b.DNNL_ARG_SRC), run.linked.get(b.DNNL_ARG_DST)]

        def measured(norm: float, bias: float) -> tuple[float, float]:
            operands = bounds.norm(source), bounds.norm(out) if addend else 0.0  # type: ignore[arg-type]
            element, before = bounds.conv_bounds(factors, *operands, norm, bias)
            if element < FINITE_LIMIT:
                for linked in writers:
                    bounds.ask_all(linked)
            return element, before

        def bounded(norm: float, bias: float) -> tuple[float, float]:
            operands = (read_source(), read_summand() if addend else 0.0)
            if guarded and not max(operands) < FINITE_LIMIT:
                return measured(norm, bias)
            element, before = bounds.conv_bounds(factors, *operands, norm, bias)
            if guarded and not element < FINITE_LIMIT:
                return measured(norm, bias)
            return element, before

        return bounded

    def bind(self, at: Arrays) -> FixedCall:
        # What the call reads, as its locals.
        run = self.run
        op, owner, finish, after = run.op, run.owner, run.finish, run.bound_after
        activation, pads_multiply = self.activation, self.pads_multiply
        out, out_at, copied, token = at.out, at.out_at, at.copied, at.token
        weights, bias = at.arrays[b.DNNL_ARG_WEIGHTS], at.arrays.get(b.DNNL_ARG_BIAS)
        weights_norm, bias_norm = self._constant_norms(weights, bias)
        # The operands as given, for the reference: only where the weights may not be finite.
        finite = weights_norm is not None and math.isfinite(weights_norm)
        inputs = () if finite or not pads_multiply else at.inputs
        run_finite = None if run.finite is None else run.finite.runner()
        run_exact, bounded = run.compiled.runner(), self._bounder(at)

        def call() -> None:
            if owner[0] is not token:
                at.point()
            norm = bounds.norm(weights) if weights_norm is None else weights_norm
            if pads_multiply and not math.isfinite(norm):
                out[...] = reference_result(op, inputs).reshape(out.shape)
                finish(out, out_at, math.inf)
                return
            if copied is not None:
                copied[0][...] = copied[1]
            element, before = bounded(norm, bounds.norm(bias) if bias_norm is None else bias_norm)
            if run_finite is not None and element < FINITE_LIMIT:
                run_finite()
            else:
                run_exact()
                if activation is not None:
                    out[...] = REFERENCE_KERNELS[type(activation)](activation, [out])
            finish(out, out_at, after(before) if before < math.inf else math.inf)

        return call


class ProductCall:
    """A fused matmul whose activation's post-op is the reference's on finite values only
    (`matmul.guarded_activation`: the exact GELU's gelu_erf turns +inf into NaN; relu, clip
    and hardsigmoid without `nnan` turn NaN into a bound). Every element of x @ w + b, and
    every partial sum of one, is at most |x| |w| + |b| (Cauchy-Schwarz on a row of x and a
    column of w; Euclidean norms), so where `bounds.conv_bounds` (with a window of 1) admits
    those norms, every operand is finite, nothing before the activation can be NaN or an
    infinity, and the fused primitive computes the reference's result. Any other call runs
    the reference kernel (the product, the bias, then the activation, in numpy): a product
    that overflows to +inf keeps gelu(+inf) = +inf, a NaN stays NaN through relu. x's norm is
    its writers' bound where they kept one, else one BLAS pass over x (M K elements, against
    the product's M K N multiply-adds); the weights' and the bias's are measured once where
    they are load-time constants."""

    def __init__(self, run: OpRun):
        op = run.op
        assert isinstance(op, nn.FusedMatmulOp)
        self.run = run
        rows = math.prod(shape_of(op.output)[:-1])
        self.factors = (1.0, math.sqrt(rows))  # one window per element, the bias on each row
        self.after = bounds.bound_after(op.activation_op(), math.prod(shape_of(op.output)))

    def bind(self, at: Arrays) -> FixedCall:
        # What the call reads, as its locals.
        run, factors, after = self.run, self.factors, self.after
        op, owner, finish, once = run.op, run.owner, run.finish, run.once
        inputs, out, out_at, source, token = at.inputs, at.out, at.out_at, at.source, at.token
        read_source = partial(run.read_source, source, at.source_at)
        weights, bias = at.sources[1], at.arrays.get(b.DNNL_ARG_BIAS)
        execute = run.compiled.runner()

        def norms() -> tuple[float, float]:
            weights_norm = once(b.DNNL_ARG_WEIGHTS, "norm", weights, bounds.norm)
            return weights_norm, 0.0 if bias is None else once(
                b.DNNL_ARG_BIAS, "norm", bias, bounds.norm
            )

        def call() -> None:
            if owner[0] is not token:
                at.point()
            weights_norm, bias_norm = norms()

            def fits(norm: float) -> bool:
                return bounds.conv_bounds(factors, norm, 0.0, weights_norm, bias_norm)[0] < (
                    FINITE_LIMIT
                )

            norm = bounds.measured(read_source(), source, fits)  # type: ignore[arg-type]
            element, before = bounds.conv_bounds(factors, norm, 0.0, weights_norm, bias_norm)
            if element < FINITE_LIMIT:
                execute()
                finish(out, out_at, after(before))
                return
            out[...] = reference_result(op, inputs).reshape(out.shape)
            finish(out, out_at, math.inf)

        return call


class GuardedCall:
    """An op oneDNN computes as the reference does on finite input only (relu, clip,
    leaky_relu with alpha 0, max pooling, binary max and min, prelu's slope: the arguments
    `eltwise.finite_arguments` names), or a global average pooling or a reduction (oneDNN
    sums in float32, the reference in float64: a plane whose float32 sum overflows gave inf
    for a finite mean; its max and min drop NaN). A call whose source's bound (its writers',
    else its measured norm) the guard does not admit, or whose other guarded argument is not
    finite, runs in numpy.

    A sum or mean (global average pooling, `nn.reduce` of kind sum or mean) whose writers'
    bound the guard does not admit runs in oneDNN and measures its result instead of its
    source: a float32 sum that overflowed stays inf or NaN to the end, so a finite result
    is one no sum overflowed in (and its norm is its bound), and a result that is not
    finite is computed again in numpy. The result is the source's size over the reduced
    count: the SE blocks of EfficientNet and MobileNetV3, whose convolutions' swish and
    hardswish keep no bound, measured each pooled source (17 full passes in EfficientNet-B0)."""

    def __init__(self, run: OpRun):
        op, after = run.op, run.bound_after
        self.run = run
        self.averages = isinstance(op, nn.GlobalAvgPoolOp | nn.ReduceOp)
        guarded = finite_arguments(op)
        self.checks_source = self.averages or b.DNNL_ARG_SRC in guarded
        self.others = [arg for arg in guarded if arg != b.DNNL_ARG_SRC]
        self.fits: Callable[[float], bool] = (
            (lambda bound: after(bound) < FINITE_LIMIT) if self.averages else math.isfinite
        )
        self.numpy_kernel = (
            max_pool2d_any if isinstance(op, nn.MaxPool2dOp) else REFERENCE_KERNELS.get(type(op))
        )
        self.checks_result = isinstance(op, nn.GlobalAvgPoolOp) or (
            isinstance(op, nn.ReduceOp) and op.kind.data in ("sum", "mean")
        )

    def bind(self, at: Arrays) -> FixedCall:
        # What the call reads, as its locals.
        run, fits, averages, numpy_kernel = self.run, self.fits, self.averages, self.numpy_kernel
        op, owner, finish, after = run.op, run.owner, run.finish, run.bound_after
        sources, out, out_at, source, token = at.sources, at.out, at.out_at, at.source, at.token
        read_source = partial(run.read_source, source, at.source_at)
        checks_source, others = self.checks_source, self._others_finite(at)
        execute, writers = run.compiled.runner(), run.linked.get(b.DNNL_ARG_SRC)
        if self.checks_result:
            return self._result_checked(at, execute)

        def call() -> None:
            if owner[0] is not token:
                at.point()
            bound = (
                bounds.measured(read_source(), source, fits, writers)  # type: ignore[arg-type]
                if checks_source
                else math.inf
            )
            if (fits(bound) or not checks_source) and others():
                execute()
                finish(out, out_at, after(bound))
            else:
                out[...] = (
                    reference_result(op, sources).reshape(out.shape)
                    if averages
                    else numpy_kernel(op, sources)  # type: ignore[misc]
                )
                finish(out, out_at, math.inf)

        return call

    def _result_checked(self, at: Arrays, execute: Callable[[], None]) -> FixedCall:
        """The call of a sum or mean: oneDNN's result, kept where its writers' bound admits
        the source or the result is finite, else the reference's (see the class)."""
        run, fits = self.run, self.fits
        op, owner, finish, after = run.op, run.owner, run.finish, run.bound_after
        sources, out, out_at, source, token = at.sources, at.out, at.out_at, at.source, at.token
        read_source = partial(run.read_source, source, at.source_at)

        def call() -> None:
            if owner[0] is not token:
                at.point()
            bound = read_source()
            execute()
            if fits(bound):
                finish(out, out_at, after(bound))
                return
            result = bounds.norm(out)  # inf or NaN where a sum overflowed or met NaN
            if not result < FINITE_LIMIT:
                out[...] = reference_result(op, sources).reshape(out.shape)
                result = math.inf
            finish(out, out_at, result)

        return call

    def _others_finite(self, at: Arrays) -> Callable[[], bool]:
        """Whether the guarded arguments other than the source are finite on this call
        (measured, once for a load-time constant)."""
        run, others = self.run, [(arg, at.arrays[arg]) for arg in self.others]
        return lambda: all(
            math.isfinite(run.once(arg, "norm", x, bounds.norm)) for arg, x in others
        )


class PlainCall:
    """Every other op, whose result's bound follows from its source's (batch norm's from its
    vectors' as well). Batch norm with a zero variance runs in numpy: oneDNN's
    (x - mean) / 0 is +-inf where the reference's x * inf + (shift - mean * inf) is NaN, as
    onnxruntime's."""

    def __init__(self, run: OpRun):
        op = run.op
        self.run = run
        self.batch_norm = None
        if isinstance(op, nn.BatchNormOp):
            self.batch_norm = bounds.batch_norm_bound(op)
            self.epsilon = np.float32(op.epsilon.value.data)  # added in float32, as the reference

    def _divides_by_zero(self, variance: np.ndarray) -> bool:
        return bool(np.any(variance + self.epsilon == 0))

    def _batch_norm_after(self, at: Arrays) -> Callable[[float], float]:
        """The bound on batch norm's result from its source's and its vectors'."""
        once, arrays, batch_norm = self.run.once, at.arrays, self.batch_norm
        assert batch_norm is not None
        return lambda bound: batch_norm(
            bound,
            once(b.DNNL_ARG_SCALE, "largest", arrays[b.DNNL_ARG_SCALE], bounds.largest_magnitude),
            once(b.DNNL_ARG_VARIANCE, "smallest", arrays[b.DNNL_ARG_VARIANCE], bounds.smallest),
            once(b.DNNL_ARG_MEAN, "norm", arrays[b.DNNL_ARG_MEAN], bounds.norm),
            once(b.DNNL_ARG_SHIFT, "norm", arrays[b.DNNL_ARG_SHIFT], bounds.norm),
        )

    def _combined_sources(self, at: Arrays) -> Callable[[], float]:
        """The bound on a mul's, add's, sub's or concat's result from its sources' writers'
        bounds (`bounds.sources_bound`)."""
        run = self.run
        assert run.sources is not None
        combine = run.sources[1]
        readers = [
            partial(read, at.arrays[arg], extent(at.arrays[arg]))
            for arg, read in run.read_sources.items()
        ]
        return lambda: combine(*(read() for read in readers))

    def bind(self, at: Arrays) -> FixedCall:
        # What the call reads, as its locals.
        run, batch_norm, divides_by_zero = self.run, self.batch_norm, self._divides_by_zero
        op, owner, finish, once = run.op, run.owner, run.finish, run.once
        sources, out, out_at, source, token = at.sources, at.out, at.out_at, at.source, at.token
        read_source = partial(run.read_source, source, at.source_at)
        variance = at.arrays.get(b.DNNL_ARG_VARIANCE)
        execute = run.compiled.runner()
        after = run.bound_after if batch_norm is None else self._batch_norm_after(at)
        combined = run.sources
        sources = sources if batch_norm is not None else []  # the reference's, else unread
        if run.sources is not None:  # the bound on the result, from all its sources'
            read_source, after = self._combined_sources(at), lambda bound: bound

        def call() -> None:
            if owner[0] is not token:
                at.point()
            if batch_norm is not None and once(
                b.DNNL_ARG_VARIANCE, "zero", variance, divides_by_zero
            ):
                out[...] = reference_result(op, sources).reshape(out.shape)
                finish(out, out_at, math.inf)
                return
            # Before the kernel: it may run in place.
            bound = math.inf if source is None and combined is None else read_source()
            execute()
            finish(out, out_at, after(bound) if bound < FINITE_LIMIT else math.inf)

        return call
