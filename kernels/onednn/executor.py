"""An op's oneDNN kernel as an `Executor`: `run_into(inputs, out, scratchpad)` writes its
result into caller-owned buffers, and `on(inputs, out, scratchpad)` binds it to those very
arrays, a call without arguments.

`executor` decides what depends on the op alone (its kind, result padding, epilogue: an
`OpRun` and the way of calling it, calls.py) once, and what depends on its arrays once per
arrays (on each call of `run_into`, once by `on`). Where oneDNN, on this machine, offers for
the formats the op was compiled with only its reference code or code that is not exact,
nnlayout's reference kernel runs the op instead (`ReferenceExecutor`), with a warning.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Collection, Mapping, Sequence
from functools import partial
from typing import Protocol

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.onednn.bounds import NormBound
from nnlayout.kernels.onednn.calls import (
    ConvolutionCall,
    GuardedCall,
    OpRun,
    PlainCall,
    ProductCall,
    Way,
    reference_result,
)
from nnlayout.kernels.onednn.common import is_fast, padded_layout
from nnlayout.kernels.onednn.convolution import drops_nan
from nnlayout.kernels.onednn.eltwise import finite_only
from nnlayout.kernels.onednn.matmul import guarded_activation
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.registry import FixedCall


class Executor(Protocol):
    """An op's kernel run as `run_into(inputs, out, scratchpad)`, and `on(inputs, out,
    scratchpad)`: the same bound to those very arrays, a call without arguments."""

    def run_into(
        self, inputs: Sequence[np.ndarray], out: np.ndarray, scratchpad: np.ndarray | None
    ) -> None: ...

    def on(
        self, inputs: Sequence[np.ndarray], out: np.ndarray, scratchpad: np.ndarray | None
    ) -> FixedCall: ...


class PrimitiveExecutor:
    """`run`'s op called `way` on each set of arrays: a plan made on each call of
    `run_into`, once by `on`, whose call runs again on new contents of the same arrays
    where nothing had to be copied to suit oneDNN."""

    def __init__(self, run: OpRun, way: Way):
        self.run, self.way = run, way

    def run_into(
        self, inputs: Sequence[np.ndarray], out: np.ndarray, scratchpad: np.ndarray | None
    ) -> None:
        self.way.bind(self.run.arrays(inputs, out, scratchpad))()

    def on(
        self, inputs: Sequence[np.ndarray], out: np.ndarray, scratchpad: np.ndarray | None
    ) -> FixedCall:
        at = self.run.arrays(inputs, out, scratchpad)
        call = self.way.bind(at)
        if not at.reusable:
            return partial(self.run_into, inputs, out, scratchpad)
        at.drop_operands()  # the call holds what it reads
        return call


class SlowImplementationWarning(RuntimeWarning):
    """oneDNN has only its reference code, or code that is not exact, for an op as
    compiled: numpy runs the op."""


class ReferenceExecutor:
    """`op` run by nnlayout's reference kernel where oneDNN, on this machine, offers for the
    formats the op was compiled with only its reference code (a program compiled for a CPU
    with more features: much slower than numpy), or code that is not exact; `why` says
    which, and what to do, in the warning (issued for the caller of `executor`)."""

    def __init__(self, op: Operation, why: str, written: NormBound):
        warnings.warn(f"{op.name}: {why}", SlowImplementationWarning, stacklevel=3)
        self.op, self.written = op, written
        self.padded, self.shape = padded_layout(op.results[0].type), shape_of(op.results[0])

    def run_into(
        self, inputs: Sequence[np.ndarray], out: np.ndarray, scratchpad: np.ndarray | None
    ) -> None:
        out[...] = reference_result(self.op, inputs).reshape(out.shape)
        if self.padded is not None:
            self.padded.zero_padding(out, self.shape)
        self.written.value, self.written.where = math.inf, None

    def on(
        self, inputs: Sequence[np.ndarray], out: np.ndarray, scratchpad: np.ndarray | None
    ) -> FixedCall:
        return partial(self.run_into, inputs, out, scratchpad)


def executor(
    op: Operation,
    compiled: Compiled,
    args: tuple[int, ...],
    finite: Compiled | None = None,
    linked: Mapping[int, Sequence[NormBound]] | None = None,
    written: NormBound | None = None,
    constants: Collection[int] = (),
) -> Executor:
    """`op` run by `compiled`, with the execution arguments `args` for its inputs. With a
    `finite` variant (a cheaper epilogue, see `convolution.Epilogue`), each call whose
    operands `bounds.conv_bounds` bounds runs that instead. Norm bounds of operands come
    from `linked` (by execution argument: the bounds of the parts its writers wrote) where
    known; the bound of the result is kept in `written`. What is derived from `constants`
    (the arguments that are load-time constants, the same array on every call: norms,
    packed weights) is derived once."""
    written = NormBound() if written is None else written
    implementation = compiled.pd.implementation
    if not is_fast(implementation):
        return ReferenceExecutor(
            op,
            f"oneDNN offers only {implementation} here for the formats this program was "
            "compiled with (for another CPU?); nnlayout's reference kernel runs it instead: "
            "compile on this machine for oneDNN's fast kernels",
            written,
        )
    if drops_nan(op, implementation):
        return ReferenceExecutor(
            op,
            f"oneDNN picks {implementation} here for the formats this program was "
            "compiled with, and its sigmoid post-op drops NaN; nnlayout's reference kernel "
            "runs it instead",
            written,
        )
    run = OpRun(op, compiled, args, finite, {} if linked is None else linked, written, constants)
    if isinstance(op, nn.Conv2dOp | nn.FusedConv2dOp):
        return PrimitiveExecutor(run, ConvolutionCall(run))
    if guarded_activation(op):
        return PrimitiveExecutor(run, ProductCall(run))
    if finite_only(op) or isinstance(op, nn.GlobalAvgPoolOp | nn.ReduceOp):
        return PrimitiveExecutor(run, GuardedCall(run))
    return PrimitiveExecutor(run, PlainCall(run))
