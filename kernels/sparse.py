"""Sparse kernels (family `sparse`): nn.gemm and 2-D nn.matmul whose left operand is declared
`#layout.storage<"csr">` in the IR. The operand arrives as a `scipy.sparse.csr_array`; the
other operands and the result are plain numpy arrays, and the product is scipy's CSR x dense.

When sparse pays (`accepts`): the operand must be declared CSR, float32, 2-D and have at least
the target's `SparseOptions.min_elements` elements. If it is an inline `nn.constant`, its
density (non-zeros / elements) must also be at most `SparseOptions.max_density`, since a
denser matrix multiplies faster as a dense GEMM. An operand whose density cannot be known at
compile time (a function argument, an external constant) is accepted once it is declared CSR
and large enough: the declaration is the user's statement that it is sparse.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import Float32Type
from xdsl.ir import Operation, SSAValue

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import CSR_LAYOUT, PLAIN_LAYOUT
from nnlayout.dialects.layout import storage_of
from nnlayout.dialects.nn import shape_of, tensor_type
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.kernels.registry import Kernel, ProviderOptions, Target, layouts_refusal


@dataclass(frozen=True)
class SparseOptions(ProviderOptions):
    """The sparse family's options on a target: a CSR operand is used as such only when it
    is at most this dense and this large."""

    max_density: float = 0.25
    min_elements: int = 1024


def _sparse_operand(op: Operation) -> SSAValue:
    """The operand a sparse kernel takes in CSR: gemm's a, matmul's lhs."""
    return op.operands[0]


def _applies(op: Operation) -> bool:
    """Only to ops whose operand 0 the program declares CSR."""
    return storage_of(_sparse_operand(op).type) == CSR_LAYOUT


def _accepts(op: Operation, target: Target, padding: bool) -> str | None:
    """f32, 2-D, large enough, and not too dense where the density is known."""
    options = SparseOptions.of(target)
    operand = _sparse_operand(op)
    element_type = tensor_type(operand).element_type
    if not isinstance(element_type, Float32Type):
        return f"element type {element_type}, not f32"
    shapes = [shape_of(v) for v in op.operands[:2]]
    if any(len(s) != 2 for s in shapes):
        return f"operands of shapes {', '.join(str(list(s)) for s in shapes)} are not all 2-D"
    elements = math.prod(shapes[0])
    if elements < options.min_elements:
        return f"{elements} elements < {options.min_elements}: too small for sparse"
    owner = operand.owner
    if isinstance(owner, nn.ConstantOp) and owner.value is not None:
        density = np.count_nonzero(owner.inline_array()) / elements
        if density > options.max_density:
            return f"density {density:.2f} > {options.max_density:.2f}: dense GEMM is faster"
    return None


def _layouts(op: Operation, target: Target) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Operand 0 in CSR, the others and the result plain."""
    return (CSR_LAYOUT,) + (PLAIN_LAYOUT,) * (len(op.operands) - 1), (PLAIN_LAYOUT,)


def _types_reason(op: Operation) -> str | None:
    """Operand 0 in CSR, the others and the result plain: the layouts it reads."""
    return layouts_refusal(
        op, [(CSR_LAYOUT,), *[(PLAIN_LAYOUT,)] * (len(op.operands) - 1)], [(PLAIN_LAYOUT,)]
    )


def _dense_if_not_finite(op: Operation, inputs: Sequence[Any]) -> np.ndarray | None:
    """The reference kernel's result on densified a where b holds NaN or an infinity, else
    None: the implicit zeros of a would multiply it into NaN, and CSR skips them."""
    if np.isfinite(inputs[1]).all():
        return None
    return REFERENCE_KERNELS[type(op)](op, [inputs[0].toarray(), *inputs[1:]])


def gemm_csr(op: nn.GemmOp, inputs: Sequence[Any]) -> np.ndarray:
    """alpha * op(a) @ op(b) + beta * c with CSR a (its transpose is a CSC view, no copy)."""
    if (dense := _dense_if_not_finite(op, inputs)) is not None:
        return dense
    a, b, *c = inputs
    a = a.T if op.trans_a is not None else a
    b = b.T if op.trans_b is not None else b
    dtype = b.dtype.type
    out = np.asarray(a @ b) * dtype(op.alpha.value.data)
    if c and op.beta.value.data != 0:  # as the reference kernel: C is not added
        out += dtype(op.beta.value.data) * c[0]
    return out


def matmul_csr(op: nn.MatmulOp, inputs: Sequence[Any]) -> np.ndarray:
    """CSR lhs @ dense rhs."""
    if (dense := _dense_if_not_finite(op, inputs)) is not None:
        return dense
    return np.asarray(inputs[0] @ inputs[1])


def kernels() -> list[Kernel]:
    """The sparse family's descriptors: gemm and matmul with a CSR operand 0."""
    return [
        Kernel(
            "gemm_csr",
            nn.GemmOp,
            "sparse",
            gemm_csr,
            applies=_applies,
            accepts=_accepts,
            layouts=_layouts,
            accepts_types=_types_reason,
        ),
        Kernel(
            "matmul_csr",
            nn.MatmulOp,
            "sparse",
            matmul_csr,
            applies=_applies,
            accepts=_accepts,
            layouts=_layouts,
            accepts_types=_types_reason,
        ),
    ]
