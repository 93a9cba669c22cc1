"""`nn.qlookup` whose table fold-qdq computed from a piecewise-linear function (its
`activation`: hardswish, hardsigmoid, relu, leaky relu, clip), or which requantizes (q(dq(v))
of its x and y parameters: fold-qdq's after a movement op), as oneDNN's binary primitive: one
vectorised pass over the bytes where numpy's `take` converts each to an index first
(measured at one thread on 47,040 bytes: hardswish 8.9 us, the identity 7.4, against 19.5
for `qlookup_any`'s pairs of bytes). A function with an exp (swish, sigmoid, tanh, gelu, ...)
oneDNN computes slower than the table is read (swish 26.0 us): its table stays numpy's.

    y = saturate(round_half_even(f((x - x_zp) * x_scale) / y_scale + y_zp))

is a binary sub of x_zp (an f32 scalar, broadcast; x - x_zp is exact), then post-ops: a
linear by x_scale, the function's eltwise (`eltwise.eltwise_params`; the identity for a
requantization), a linear by 1 / y_scale plus y_zp; oneDNN rounds half to even and
saturates into y's type.

The table is the op's semantics and oneDNN's function an approximation in f32 of its own, so
the kernel takes a table only where the primitive gives each of its 256 entries (tried once
per table, when dispatch asks; element-wise JIT code computes each lane alike, so the same
chain on a whole tensor gives the table's bytes too); elsewhere it refuses, naming how many
entries differ, and `qlookup_any` runs.

Element-wise, so layout-blind: the primitive sees the buffer as one flat array of bytes, in
whatever dense layout the input has (`"*"`). A layout with padding lanes, which must hold y's
zero point rather than the function's image of x's padding, is left to `qlookup_any`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from functools import partial

import numpy as np
from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.dialects.layout import LayoutSpec
from nnlayout.dialects.nn import QParams, shape_of
from nnlayout.kernels.blocked.common import (
    any_layouts,
    any_types_reason,
    sparse_operand,
)
from nnlayout.kernels.blocked.quantized import prepare_qlookup
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.common import is_fast
from nnlayout.kernels.onednn.eltwise import eltwise_params
from nnlayout.kernels.onednn.primitives import Compiled
from nnlayout.kernels.onednn.quantized import DATA_TYPES, X
from nnlayout.kernels.onednn.quantized_call import PrimitiveCall, int8_kernel
from nnlayout.kernels.reference_quantized import table_of
from nnlayout.kernels.registry import BoundKernel, FixedCall, Kernel, Target

_ARGS = (b.DNNL_ARG_SRC, b.DNNL_ARG_SRC_1, b.DNNL_ARG_DST)
# The piecewise-linear eltwise algorithms, which oneDNN computes faster than `qlookup_any`
# reads its table of byte pairs; those with an exp (swish, logistic, tanh, gelu, elu,
# soft_relu, mish) it computes slower, at one thread (docs/benchmarks-int8.md).
CHEAPER_THAN_THE_TABLE = frozenset(
    (
        b.dnnl_eltwise_linear,
        b.dnnl_eltwise_relu,
        b.dnnl_eltwise_clip,
        b.dnnl_eltwise_clip_v2,
        b.dnnl_eltwise_hardswish,
        b.dnnl_eltwise_hardsigmoid,
    )
)

# What a table's primitive depends on: the eltwise (algorithm, alpha, beta), x's scale and
# zero point, y's scale and zero point, and the data type.
Chain = tuple[tuple[int, float, float], float, int, float, int, int]


def _requantizes(op: nn.QLookupOp, x: QParams, y: QParams) -> bool:
    """Whether the table is q(dq(v)) of x's and y's parameters (fold-qdq's requantization
    after a movement op)."""
    return bool(np.array_equal(table_of(x, y), op.values()))


def _chain(op: nn.QLookupOp) -> Chain | None:
    """The chain computing the recorded function, or the identity where the table is a
    requantization; None for another table without a function."""
    function = op.activation_op()
    x, y = op.qparams("x"), op.qparams("y")
    if function is not None:
        eltwise = eltwise_params(function)
    elif _requantizes(op, x, y):
        eltwise = (b.dnnl_eltwise_linear, 1.0, 0.0)
    else:
        return None
    data_type = DATA_TYPES[op.values().dtype]
    return (
        eltwise,
        float(np.float32(x.scale)),
        int(x.zero_point),
        float(np.float32(y.scale)),
        int(y.zero_point),
        data_type,
    )


def _pd(chain: Chain, elements: int) -> b.PrimitiveDesc:
    """The binary primitive computing the chain on `elements` bytes."""
    (algorithm, alpha, beta), x_scale, _, y_scale, y_zp, data_type = chain
    data = b.MemoryDesc.with_tag((elements,), X, data_type)
    zero_point = b.MemoryDesc.with_tag((1,), X, b.dnnl_f32)
    post_ops = (
        b.PostOp.eltwise(b.dnnl_eltwise_linear, x_scale, 0.0),
        b.PostOp.eltwise(algorithm, alpha, beta),
        b.PostOp.eltwise(b.dnnl_eltwise_linear, float(1 / np.float32(y_scale)), float(y_zp)),
    )
    return p.binary_pd(b.dnnl_binary_sub, data, zero_point, data, post_ops)


def _call(chain: Chain, elements: int) -> PrimitiveCall:
    zero_point = np.asarray([chain[2]], np.float32)
    return PrimitiveCall(Compiled(_pd(chain, elements), _ARGS), {b.DNNL_ARG_SRC_1: zero_point})


@functools.cache
def _differences(chain: Chain, table: bytes) -> str | None:
    """Why the chain does not compute `table` (its bytes in the type's order), or None."""
    try:
        call = _call(chain, 256)
    except b.DnnlError as error:
        return f"oneDNN has no primitive for it: {error}"
    if not is_fast(call.compiled.pd.implementation):
        return f"oneDNN offers only {call.compiled.pd.implementation} for it"
    dtype = p.NUMPY_TYPES[chain[5]]
    info = np.iinfo(dtype)
    out = np.empty(256, dtype)
    call.call_on({b.DNNL_ARG_SRC: np.arange(info.min, info.max + 1).astype(dtype)}, out)
    wrong = int(np.count_nonzero(out != np.frombuffer(table, dtype)))
    if wrong:
        return f"oneDNN's function gives {wrong} of the table's 256 entries otherwise"
    return None


def _checked(op: Operation) -> tuple[Chain, None] | tuple[None, str]:
    """The op's chain where it gives the table's 256 entries, else why it does not."""
    assert isinstance(op, nn.QLookupOp)
    chain = _chain(op)
    if chain is None:
        return None, "no function recorded beside the table (nor a requantization)"
    reason = _differences(chain, op.values().tobytes())
    return (None, reason) if reason is not None else (chain, None)


def _applies(op: Operation) -> bool:
    """A table of a function `CHEAPER_THAN_THE_TABLE` computes, or a requantization."""
    if not isinstance(op, nn.QLookupOp):
        return False
    chain = _chain(op)
    return chain is not None and chain[0][0] in CHEAPER_THAN_THE_TABLE


def _accepts(op: Operation, target: Target, padding: bool) -> str | None:
    """The table's 256 entries checked (`_checked`), then a fast primitive for the op's size."""
    chain, reason = _checked(op)
    reason = sparse_operand(op) or reason
    if chain is not None and reason is None:
        implementation = _pd(chain, _elements(op)).implementation
        if not is_fast(implementation):
            reason = f"oneDNN offers only {implementation} for it"
    return reason


def _unpadded(op: Operation, spec: LayoutSpec) -> str | None:
    if spec.padding_elements(shape_of(op.results[0])):
        return f"{spec.text} pads; its padding lanes must hold y's zero point"
    return None


def _types_reason(op: Operation) -> str | None:
    return any_types_reason(op, shapes=sparse_operand, check=_unpadded)


def _elements(op: Operation) -> int:
    return int(np.prod(shape_of(op.results[0])))


def _workspace(op: Operation, target: Target) -> int:
    chain = _chain(op)  # type: ignore[arg-type]
    assert chain is not None
    return _pd(chain, _elements(op)).scratchpad_bytes


def _implementation(op: Operation) -> str:
    """oneDNN's implementation, or what runs instead (`_Bound`)."""
    chain, reason = _checked(op)
    if chain is None:
        return f"numpy's table ({reason})"
    return _pd(chain, _elements(op)).implementation


class _Bound:
    """The primitive for the op's number of bytes; `on` binds it to arena views once. Where
    it would not give the table here (a program compiled on another CPU, whose oneDNN
    computes the function otherwise or only with its reference code; a hand-written kernel
    choice), the table runs in numpy (`qlookup_any`'s bound kernel): the op's semantics."""

    def __init__(self, op: Operation):
        assert isinstance(op, nn.QLookupOp)
        self.table: BoundKernel | None = None
        chain, _ = _checked(op)
        if chain is None:
            self.table = prepare_qlookup(op, None)
            return
        self.call = _call(chain, _elements(op))
        self.dtype = p.NUMPY_TYPES[chain[5]]

    def _bytes(self, array: np.ndarray) -> np.ndarray:
        return array.reshape(-1).view(self.dtype)

    def __call__(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> None:
        if self.table is not None:
            self.table(inputs, out)
            return
        result = out if out.flags.c_contiguous else np.empty(out.shape, out.dtype)
        source = self._bytes(np.ascontiguousarray(inputs[0]))
        self.call.call_on({b.DNNL_ARG_SRC: source}, self._bytes(result))
        if result is not out:
            out[...] = result

    def on(self, inputs: Sequence[np.ndarray], out: np.ndarray) -> FixedCall:
        if self.table is not None or not (out.flags.c_contiguous and inputs[0].flags.c_contiguous):
            return partial(self, inputs, out)
        return self.call.bind_to({b.DNNL_ARG_SRC: self._bytes(inputs[0])}, self._bytes(out))


def qlookup_kernels(family: str) -> list[Kernel]:
    """qlookup_onednn: a table oneDNN's eltwise reproduces, computed by it."""
    return [
        int8_kernel(
            "qlookup_onednn",
            nn.QLookupOp,
            family,
            _Bound,
            accepts=_accepts,
            workspace=_workspace,
            implementation_of=_implementation,
            applies=_applies,
            layouts=any_layouts,
            accepts_layout=_unpadded,
            accepts_types=_types_reason,
            in_place=0,
        )
    ]
