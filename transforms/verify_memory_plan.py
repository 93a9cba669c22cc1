"""verify-memory-plan: checks every function's memory plan with the independent verifier of
`runtime/plan_check.py` (which the runners also call before running a plan); changes nothing."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from nnlayout.diagnostics import DiagnosticError
from nnlayout.runtime.plan_check import verify_function


@dataclass(frozen=True)
class VerifyMemoryPlanPass(ModulePass):
    """Checks every function's memory plan (module doc); changes nothing."""

    name = "verify-memory-plan"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.ops:
            if isinstance(function, func.FuncOp) and not function.is_declaration:
                if len(function.body.blocks) != 1:
                    raise DiagnosticError(
                        function, "verify-memory-plan checks single-block functions only"
                    )
                verify_function(function)
