"""nnlayout's own kernels, registered into the process-wide registry (`registry()`) on first use.

The reference kernels (`kernels/reference.py`) serve every op in plain layouts and are the
oracle; blocked kernels (`kernels/blocked/`) work on channel-blocked layouts; sparse kernels
(`kernels/sparse.py`) take CSR operands; the BLAS kernels (`kernels/blas.py`) run a
classifier's fully connected layer at batch 1 in numpy's BLAS; oneDNN's (`kernels/onednn/`)
are registered only where the library loads. The targets choosing among them are in
`kernels/targets.py`.
"""

from __future__ import annotations

from xdsl.ir import Operation

from nnlayout.dialects import nn
from nnlayout.kernels.registry import Implementation, Kernel, Registry

# Reference kernels whose result may overwrite operand 0 (element-wise, same size).
_ELEMENTWISE = (nn.UnaryOp, nn.BinaryOp, nn.SumOp, nn.BatchNormOp)
# nn.where's writes y (operand 2) first, then x over it where the mask holds; nn.scatter's
# writes the updates over its data (operand 0).
_IN_PLACE: dict[type[Operation], int] = {nn.WhereOp: 2, nn.ScatterOp: 0}


def reference_kernel(op_type: type[Operation], impl: Implementation) -> Kernel:
    """The descriptor of a reference kernel: plain layouts, always accepted; prepared where
    `PREPARED_REFERENCE_KERNELS` has the op class."""
    from nnlayout.kernels.reference import PREPARED_REFERENCE_KERNELS

    short_name = op_type.name.removeprefix("nn.")
    in_place = 0 if issubclass(op_type, _ELEMENTWISE) else _IN_PLACE.get(op_type)
    return Kernel(
        f"{short_name}_ref",
        op_type,
        "ref",
        impl,
        in_place=in_place,
        prepare=PREPARED_REFERENCE_KERNELS.get(op_type),
    )


def register_builtin_kernels(registry: Registry) -> None:
    """Registers the reference, blocked, sparse and BLAS kernels, and oneDNN's where it
    loads."""
    from nnlayout.kernels.blas import kernels as blas_kernels
    from nnlayout.kernels.blocked import kernels as blocked_kernels
    from nnlayout.kernels.reference import REFERENCE_KERNELS
    from nnlayout.kernels.sparse import kernels as sparse_kernels

    for op_type, impl in REFERENCE_KERNELS.items():
        registry.register(reference_kernel(op_type, impl))
    for kernel in (*blocked_kernels(), *sparse_kernels(), *blas_kernels()):
        registry.register(kernel)
    from nnlayout.kernels.onednn.binding import available

    if available():
        from nnlayout.kernels.onednn import kernels as onednn

        for kernel in onednn.kernels():
            registry.register(kernel)


_REGISTRY: Registry | None = None


def registry() -> Registry:
    """The process-wide registry, with nnlayout's own kernels registered on first use."""
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = Registry()
        register_builtin_kernels(_REGISTRY)
    return _REGISTRY
