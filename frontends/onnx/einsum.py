"""The ONNX Einsum converter: the equations attention blocks, torch's exporters and users'
own code write, decomposed into nn.reduce, nn.transpose, nn.reshape and one nn.matmul.

Indices of one operand that neither the output nor the other operand has are summed out of
it first (nn.reduce sum: "ij->i", "bij,bjk->bk"). Then, for two operands, indices in both and
the output are batch dims (an ellipsis is batch dims too, broadcast as matmul broadcasts
them), indices of one operand and the output its free dims, and indices of both but not the
output are contracted: each operand is transposed to [batch, free, contracted] (the right one
to [batch, contracted, free]), its free dims merged into one and its contracted dims into
one (none: an outer product, K = 1), the product taken, its free dims split again and the
result transposed to the output's order ("bhid,bhjd->bhij", "bchw,bdhw->bcd", "i,j->ij");
identities are left out. One operand: a permutation (a transpose). Repeated indices (a
diagonal) and three operands are refused with the equation named.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import onnx
from xdsl.ir import SSAValue

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.common import text_attribute
from nnlayout.frontends.onnx.state import ImportState

# Indices standing for an ellipsis' dims, right-aligned (ONNX's indices are letters: digits
# cannot clash with them).
_ELLIPSIS = "0123456789"


def _terms(state: ImportState, node: onnx.NodeProto, equation: str) -> tuple[list[str], str]:
    """The operands' index strings and the output's, ellipses as placeholder indices (the
    output implicit in an equation without "->": its indices that appear once, sorted)."""
    text = equation.replace(" ", "")
    inputs, arrow, output = text.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(node.input):
        raise _refused(state, equation, f"{len(terms)} terms for {len(node.input)} operands")
    expanded = [
        _expand(state, equation, term, len(nn.shape_of(state.operand(node, i))))
        for i, term in enumerate(terms)
    ]
    width = max(sum(c in _ELLIPSIS for c in t) for t in expanded)
    if arrow:
        return expanded, _expand(state, equation, output, None, width)
    letters = "".join(expanded)
    named = sorted(c for c in set(letters) if c not in _ELLIPSIS and letters.count(c) == 1)
    return expanded, _ELLIPSIS[len(_ELLIPSIS) - width :] + "".join(named)


def _expand(state: ImportState, equation: str, term: str, rank: int | None, width: int = 0) -> str:
    """`term` with its ellipsis as placeholders, right-aligned across operands (the last
    placeholder is the ellipsis' last dim); an operand's term must name its rank."""
    head, ellipsis, tail = term.partition("...")
    if rank is not None:
        width = rank - len(head) - len(tail)
        if width < 0 or width > len(_ELLIPSIS) or (width and not ellipsis):
            raise _refused(state, equation, f"term '{term}' for an operand of rank {rank}")
    dots = _ELLIPSIS[len(_ELLIPSIS) - width :] if ellipsis else ""
    if len(set(head + tail)) != len(head + tail):
        raise _refused(state, equation, f"repeated index in '{term}' (a diagonal)")
    return head + dots + tail


def _refused(state: ImportState, equation: str, why: str) -> Exception:
    return state.fail(
        f"Einsum equation '{equation}': {why}; nnlayout imports a permutation of one "
        "operand or a product of two (sums, batch, free and contracted indices)"
    )


def _transposed(state: ImportState, x: SSAValue, have: str, want: str) -> SSAValue:
    if have == want:
        return x
    perm = [have.index(c) for c in want]
    return state.emit(state.build(lambda: nn.TransposeOp(x, perm)))


def einsum(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    equation = text_attribute(attrs, "equation", "")
    terms, output = _terms(state, node, equation)
    if len(terms) > 2:
        raise _refused(state, equation, f"{len(terms)} operands")
    kept = set(output) | _shared(terms)
    operands = [_summed(state, state.operand(node, i), t, kept) for i, t in enumerate(terms)]
    if len(operands) == 1:
        x, term = operands[0]
        state.output(node, _transposed(state, x, term, output))
        return
    state.output(node, _product(state, operands, output))


def _shared(terms: Sequence[str]) -> set[str]:
    return set(terms[0]) & set(terms[1]) if len(terms) == 2 else set()


def _summed(state: ImportState, x: SSAValue, term: str, kept: set[str]) -> tuple[SSAValue, str]:
    """`x` summed over its indices not in `kept`, and its term without them."""
    axes = [i for i, c in enumerate(term) if c not in kept]
    if not axes:
        return x, term
    total = state.emit(state.build(lambda: nn.ReduceOp(x, "sum", axes)))
    rest = "".join(c for c in term if c in kept)
    sizes = [d for c, d in zip(term, nn.shape_of(x), strict=True) if c in kept]
    return state.reshaped(total, sizes), rest


def _product(state: ImportState, operands: Sequence[tuple[SSAValue, str]], output: str) -> SSAValue:
    """The product of two operands, their contracted indices merged into one (none: K = 1),
    as one nn.matmul."""
    (a, left), (b, right) = operands
    contracted = "".join(c for c in left if c in right and c not in output)
    batch = "".join(c for c in output if c in left and c in right)
    free_left = "".join(c for c in output if c in left and c not in right)
    free_right = "".join(c for c in output if c in right and c not in left)
    a_sizes = dict(zip(left, nn.shape_of(a), strict=True))
    b_sizes = dict(zip(right, nn.shape_of(b), strict=True))
    a_batch, b_batch = _present(batch, left), _present(batch, right)
    if not (contracted or free_left or free_right):  # an element-wise product
        a, b = _transposed(state, a, left, a_batch), _transposed(state, b, right, b_batch)
        return _transposed(state, state.emit(state.build(lambda: nn.MulOp(a, b))), batch, output)
    a = _transposed(state, a, left, a_batch + free_left + contracted)
    b = _transposed(state, b, right, b_batch + contracted + free_right)
    rows = math.prod(a_sizes[c] for c in free_left)
    columns = math.prod(b_sizes[c] for c in free_right)
    depth = (math.prod(a_sizes[c] for c in contracted), math.prod(b_sizes[c] for c in contracted))
    a = state.reshaped(a, [*(a_sizes[c] for c in a_batch), rows, depth[0]])
    b = state.reshaped(b, [*(b_sizes[c] for c in b_batch), depth[1], columns])
    product = state.emit(state.build(lambda: nn.MatmulOp(a, b)))
    batch_dims = list(nn.shape_of(product)[:-2])
    split = [*batch_dims, *(a_sizes[c] for c in free_left), *(b_sizes[c] for c in free_right)]
    return _transposed(
        state, state.reshaped(product, split), batch + free_left + free_right, output
    )


def _present(batch: str, term: str) -> str:
    """The batch indices `term` has (an ellipsis may be shorter in one operand: matmul
    broadcasts the missing leading dims)."""
    return "".join(c for c in batch if c in term)
