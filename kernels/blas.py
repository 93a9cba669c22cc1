"""The `blas` family: a fully connected layer on a few rows (a CNN's classifier at batch 1) as
numpy's matmul, which calls the BLAS numpy was built with (OpenBLAS in numpy's wheels).

Why: at batch 1 such a product does two flops per weight it reads, so its time is the time to
stream the weights, which a network's other layers have pushed out of the core's cache. On
this project's AVX-512 test machine (Intel Xeon, 2 MB of L2 per core), with the weights coming
from L3 as in a network, numpy's BLAS streams them about twice as fast as every oneDNN
implementation (its inner product's brgemm:avx2 and brgemm:avx512_core, its gemm:jit on plain
weights, its matmul) and a third faster than onnxruntime's MLAS: 1024 -> 1000 (ShuffleNetV2's
classifier) 0.41 ms against oneDNN's 0.98 and onnxruntime's 0.61; figures in docs/benchmarks.md,
"the small CNNs". Hence the targets with oneDNN prefer this family to it for such products,
on the CPUs where that was measured (`FASTER_ON`): on an AMD EPYC (Zen 4) oneDNN's brgemm,
with the bias and activation fused as its post-ops, runs the same networks faster (alexnet
9%), so there the kernel refuses and oneDNN takes the product (`accepts`; docs/benchmarks.md,
"a batch-1 classifier on AMD Zen 4").

It applies only where that was measured: float32, at most `SMALL_BATCH_ROWS` rows, the right
operand a 2-D constant of at least `MIN_WEIGHT_BYTES` (smaller weights stay in cache, where
oneDNN's blocked kernels were not measured slower), a gemm without trans_a or a matmul. A
transposed constant (a Gemm with transB, as torch's classic exporter writes a Linear) is
copied once, when the kernel is bound, as the K x N matrix BLAS streams fastest
(`copied_constants`: plan-memory counts the copy); bound to the arrays a generated module
passes (`on`), it keeps the copy alone, and the loaded program frees the plain array where
nothing else reads it (`lowering/program.py`).

The result is the reference kernel's formula (`alpha * a @ b + beta * c`, c added only where
beta is not 0) in float32, with BLAS's order of summation; NaN and infinities propagate as
IEEE arithmetic makes them, as in the reference. No bias or activation is fused into it
(`post_ops` is false): `fuse-matmul-post-ops` leaves an add after it a kernel of its own.
"""

from __future__ import annotations

import functools
import math
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import Float32Type
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.constant_expressions import is_constant_operand
from nnlayout.dialects.nn import shape_of
from nnlayout.kernels.registry import BindingSession, FixedCall, Kernel, Target

FAMILY = "blas"
SMALL_BATCH_ROWS = 8
MIN_WEIGHT_BYTES = 1 << 20
Product = nn.GemmOp | nn.MatmulOp
# The CPU vendors (/proc/cpuinfo's vendor_id) on which numpy's BLAS was measured faster than
# oneDNN for these products in whole networks (module doc).
FASTER_ON = ("GenuineIntel",)


def applies(op: Operation) -> bool:
    """A float32 fully connected product on at most SMALL_BATCH_ROWS rows whose constant
    weights take at least MIN_WEIGHT_BYTES (module doc)."""
    if isinstance(op, nn.GemmOp):
        if op.trans_a is not None:
            return False
    elif not isinstance(op, nn.MatmulOp) or len(shape_of(op.rhs)) != 2:
        return False
    types = [v.type for v in (*op.operands, *op.results)]
    if not all(isinstance(getattr(t, "element_type", None), Float32Type) for t in types):
        return False
    lhs, weights = shape_of(op.operands[0]), shape_of(op.operands[1])
    return (
        math.prod(lhs[:-1]) <= SMALL_BATCH_ROWS
        and 4 * math.prod(weights) >= MIN_WEIGHT_BYTES
        and is_constant_operand(op, op.operands[1])
    )


@functools.cache
def cpu_vendor() -> str:
    """This machine's CPU vendor as /proc/cpuinfo names it; empty where it does not say."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    for line in text.splitlines():
        if line.startswith("vendor_id"):
            return line.partition(":")[2].strip()
    return ""


def accepts(op: Operation, target: Target, padding: bool) -> str | None:
    """None on the CPUs where the kernel was measured faster than oneDNN (`FASTER_ON`)."""
    del op, target, padding
    vendor = cpu_vendor()
    if vendor in FASTER_ON:
        return None
    return (
        f"this CPU ({vendor or 'vendor unknown'}) is not one where numpy's BLAS was measured "
        f"faster than oneDNN for such products ({', '.join(FASTER_ON)})"
    )


def _transposed(op: Operation) -> bool:
    return isinstance(op, nn.GemmOp) and op.trans_b is not None


def copied(op: Operation) -> dict[int, int]:
    """The bytes of the K x N copy of a transposed Gemm's weights the kernel keeps."""
    return {1: 4 * math.prod(shape_of(op.operands[1]))} if _transposed(op) else {}


class PreparedProduct:
    """The product bound to `op`: its weights as a C-contiguous K x N matrix, copied once
    (per weights array) where the op reads them transposed."""

    def __init__(self, op: Operation, session: BindingSession | None = None):
        del session  # it tells later kernels nothing
        self.transposed = _transposed(op)
        gemm = isinstance(op, nn.GemmOp)
        self.alpha = float(op.alpha.value.data) if gemm else 1.0
        self.beta = float(op.beta.value.data) if gemm else 0.0
        # The weights last seen (a weak reference: `on` keeps the copy alone) and their copy.
        self._seen: tuple[weakref.ref[np.ndarray], np.ndarray] | None = None

    def _weights(self, weights: np.ndarray) -> np.ndarray:
        if self._seen is not None and self._seen[0]() is weights:
            return self._seen[1]
        packed = weights.T if self.transposed else weights
        packed = np.ascontiguousarray(packed)
        self._seen = (weakref.ref(weights), packed)
        return packed

    def _compute(self, x: np.ndarray, w: np.ndarray, c: Sequence[np.ndarray], out: np.ndarray):
        rows = x.reshape(-1, x.shape[-1])
        result = out.reshape(rows.shape[0], w.shape[1])  # a view: out is C-contiguous
        np.matmul(rows, w, out=result)
        if self.alpha != 1.0:
            result *= np.float32(self.alpha)
        if c and self.beta != 0.0:  # as the reference kernel: C is not added with beta 0
            result += c[0] if self.beta == 1.0 else np.float32(self.beta) * c[0]

    def __call__(self, inputs: Sequence[Any], out: Any) -> None:
        x, weights, *c = inputs
        if out.flags.c_contiguous:
            self._compute(x, self._weights(weights), c, out)
        else:
            dense = np.empty(out.shape, np.float32)
            self._compute(x, self._weights(weights), c, dense)
            out[...] = dense

    def on(self, inputs: Sequence[Any], out: Any) -> FixedCall:
        x, weights, *c = inputs
        if not out.flags.c_contiguous:
            return lambda: self(inputs, out)
        packed = self._weights(weights)
        compute = self._compute
        return lambda: compute(x, packed, c, out)


def product(op: Operation, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The unprepared kernel: the product into a new array."""
    out = np.empty(shape_of(op.results[0]), np.float32)
    PreparedProduct(op)(inputs, out)
    return out


def implementation(op: Operation) -> str:
    """The library that runs `op`: numpy's BLAS, by the name numpy was built with."""
    del op
    return _blas_name()


@functools.cache
def _blas_name() -> str:
    try:
        name = np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
    except (KeyError, TypeError, AttributeError):
        name = "BLAS"
    return f"numpy.matmul ({name})"


def kernels() -> list[Kernel]:
    """The family's descriptors: gemm and matmul (plain layouts)."""
    return [
        Kernel(
            f"{op_type.name.removeprefix('nn.')}_blas",
            op_type,
            FAMILY,
            product,
            applies=applies,
            accepts=accepts,
            reads_halo=False,
            writes_strided=False,
            prepare=PreparedProduct,
            implementation_of=implementation,
            copied_constants=copied,
        )
        for op_type in (nn.GemmOp, nn.MatmulOp)
    ]
