"""Where in the pipeline IR is: the tensor-level passes (dispatch, fusion, layouts, constant
folding) rewrite `nn` ops on tensors and refuse a module that bufferize already turned into
`nn.compute` ops on buffers.

Inside an `nn.compute` the tensor-level op describes the computation of a buffer, and its body
holds exactly that op: a tensor-level pass run there dispatched ops after their buffers were
sized, put reorders into bodies, or erased a body's only op (`bufferize,default-pipeline` and
`default-pipeline,propagate-layouts` ended in an internal error or IR that does not verify).
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp, UnknownLoc

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects.compute import ComputeOp


def require_tensor_level(module: ModuleOp) -> None:
    """Fails at the first `nn.compute` of `module` with a source location (else the first:
    one bufferize made for a reorder has none); the driver names the pass."""
    computes = [op for op in module.walk() if isinstance(op, ComputeOp)]
    if computes:
        compute = next(
            (op for op in computes if not isinstance(op.location, UnknownLoc)), computes[0]
        )
        raise DiagnosticError(
            compute,
            "this pass rewrites tensor-level IR, and the module is "
            "already bufferized (nn.compute on buffers): run it before "
            "bufferize",
        )
