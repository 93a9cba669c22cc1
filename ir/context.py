"""The xDSL context holding every dialect nnlayout reads or writes."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    Builtin,
)
from xdsl.ir import Dialect

from nnlayout.dialects.layout import Layout
from nnlayout.dialects.nn import NN


def _arith() -> Dialect:
    from xdsl.dialects.arith import Arith

    return Arith


def _memref() -> Dialect:
    from xdsl.dialects.memref import MemRef

    return MemRef


def make_context() -> Context:
    """A context with every dialect nnlayout reads or writes; arith and memref are imported
    on first use (importing them slows every tool's start-up)."""
    ctx = Context()
    for dialect in (Builtin, func.Func, NN, Layout):
        ctx.load_dialect(dialect)
    ctx.register_dialect("arith", _arith)
    ctx.register_dialect("memref", _memref)
    return ctx
