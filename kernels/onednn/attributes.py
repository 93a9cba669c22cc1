"""Primitive attributes: `Attr` (a user-managed scratchpad and binding.PostOp's in order), and
int8 scales and zero points and the floating-point math mode, as a hashable `Quantization`
that keys the primitive cache with the rest of a primitive's description.

oneDNN v3 takes scales and zero points at execution, not at creation: the attribute only
says which arguments have them and how they vary (`mask`: 0 = one value for the tensor;
for a convolution's weights 1 << 0 = one per output channel, 1 << 1 for grouped weights,
whose dim 0 is the group and dim 1 the output channel within it). The values are then f32
(scales) or s32 (zero points) memories passed as `DNNL_ARG_ATTR_SCALES | arg` and
`DNNL_ARG_ATTR_ZERO_POINTS | arg`. What oneDNN computes, for a convolution (v3.2's
"Quantization" page of its developer guide):

    dst = saturate(round(post_ops(src_scale * wei_scale[oc] * conv(src - src_zp, wei) + bias)
                         / dst_scale) + dst_zp)

with the bias added in f32 after the scaling, and no weights zero point (matmul has one).

`float_math` is the fpmath mode of the f32 convolutions and matrix products, from the
environment: NNLAYOUT_ONEDNN_FPMATH=bf16 lets oneDNN compute them in bf16 (its operands
rounded to bf16, products accumulated in f32: AMX or AVX512_BF16 code where the CPU has it,
f32 code elsewhere), with f32 in memory, so that layouts, formats and plans do not change.
Set it before the first compilation (oneDNN's choices are remembered per process;
`kernels.forget_choices()` forgets them). tests/kernels/test_onednn_bf16.py states the
accuracy.
"""

from __future__ import annotations

import ctypes
import os
import warnings
from collections.abc import Sequence
from ctypes import c_void_p
from dataclasses import dataclass
from functools import cache

from nnlayout.kernels.onednn import binding as b


class Attr:
    """Primitive attributes: user-managed scratchpad, and the given post-ops in order."""

    def __init__(self, post_ops: Sequence[b.PostOp] = ()):
        self.handle = c_void_p()
        b.lib().dnnl_primitive_attr_create(ctypes.byref(self.handle))
        b.lib().dnnl_primitive_attr_set_scratchpad_mode(self.handle, b.dnnl_scratchpad_mode_user)
        if post_ops:
            ops = c_void_p()
            b.lib().dnnl_post_ops_create(ctypes.byref(ops))
            try:
                for post_op in post_ops:
                    _append(ops, post_op)
                b.lib().dnnl_primitive_attr_set_post_ops(self.handle, ops)
            finally:
                b.lib().dnnl_post_ops_destroy(ops)

    def __del__(self) -> None:
        if self.handle:
            b.lib().dnnl_primitive_attr_destroy(self.handle)


def _append(ops: c_void_p, post_op: b.PostOp) -> None:
    if post_op.kind == "eltwise":
        b.lib().dnnl_post_ops_append_eltwise(ops, post_op.algorithm, post_op.alpha, post_op.beta)
    elif post_op.kind == "sum":
        b.lib().dnnl_post_ops_append_sum(ops, post_op.alpha, post_op.zero_point, post_op.data_type)
    elif post_op.kind == "depthwise":
        b.lib().dnnl_post_ops_append_dw(ops, *post_op.dw_params)
    elif post_op.kind == "binary":
        plain = len(post_op.dims) + 1  # dnnl_a = 2, dnnl_ab = 3, ...: plain of each rank
        md = b.MemoryDesc.with_tag(post_op.dims, plain, b.dnnl_f32)
        b.lib().dnnl_post_ops_append_binary(ops, post_op.algorithm, md.handle)
    else:
        raise ValueError(f"unknown post-op kind '{post_op.kind}'")


@dataclass(frozen=True)
class Quantization:
    """Which arguments take scales and zero points at execution, each (argument, mask), and
    the fpmath mode (dnnl_fpmath_mode_strict: none of oneDNN's implicit down-conversions)."""

    scales: tuple[tuple[int, int], ...] = ()
    zero_points: tuple[tuple[int, int], ...] = ()
    fpmath: int = b.dnnl_fpmath_mode_strict

    def runtime_args(self) -> tuple[int, ...]:
        """The execution arguments the values come in (DNNL_ARG_ATTR_... | argument)."""
        return tuple(b.DNNL_ARG_ATTR_SCALES | arg for arg, _ in self.scales) + tuple(
            b.DNNL_ARG_ATTR_ZERO_POINTS | arg for arg, _ in self.zero_points
        )


def apply(attr: Attr, quantization: Quantization | None) -> None:
    """Sets `quantization` on `attr` (nothing for None)."""
    if quantization is None:
        return
    for arg, mask in quantization.scales:
        b.lib().dnnl_primitive_attr_set_scales_mask(attr.handle, arg, mask)
    for arg, mask in quantization.zero_points:
        b.lib().dnnl_primitive_attr_set_zero_points_mask(attr.handle, arg, mask)
    if quantization.fpmath != b.dnnl_fpmath_mode_strict:
        b.lib().dnnl_primitive_attr_set_fpmath_mode(attr.handle, quantization.fpmath)


def runtime_md(values: Sequence[float | int], data_type: int) -> b.MemoryDesc:
    """The descriptor of a runtime scale (f32) or zero-point (s32) memory of `values`."""
    return b.MemoryDesc.with_tag((len(values),), 2, data_type)  # dnnl_a = 2 (dnnl_x)


FPMATH_VARIABLE = "NNLAYOUT_ONEDNN_FPMATH"
FPMATH_MODES = {"strict": b.dnnl_fpmath_mode_strict, "bf16": b.dnnl_fpmath_mode_bf16}


def float_math() -> Quantization | None:
    """The attributes of an f32 convolution or matrix product: None (strict f32), or the
    fpmath mode NNLAYOUT_ONEDNN_FPMATH names (see the module doc)."""
    return _float_math(os.environ.get(FPMATH_VARIABLE, "strict"))


@cache
def _float_math(name: str) -> Quantization | None:
    mode = FPMATH_MODES.get(name.strip().lower())
    if mode is None:
        warnings.warn(
            f"{FPMATH_VARIABLE}={name!r} is not one of {', '.join(FPMATH_MODES)}; using strict f32",
            RuntimeWarning,
            stacklevel=3,
        )
        mode = b.dnnl_fpmath_mode_strict
    return None if mode == b.dnnl_fpmath_mode_strict else Quantization(fpmath=mode)
