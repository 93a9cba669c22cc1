"""Passes over the nn and layout dialects, and the registry that tools read them from."""

from collections.abc import Callable

from xdsl.passes import ModulePass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every pass `nnlayout-opt -p` accepts, by name; imported lazily, as xDSL does."""

    def canonicalize() -> type[ModulePass]:
        from xdsl.transforms.canonicalize import CanonicalizePass

        return CanonicalizePass

    def cse() -> type[ModulePass]:
        from xdsl.transforms.common_subexpression_elimination import (
            CommonSubexpressionElimination,
        )

        return CommonSubexpressionElimination

    def dce() -> type[ModulePass]:
        from xdsl.transforms.dead_code_elimination import DeadCodeElimination

        return DeadCodeElimination

    return {"canonicalize": canonicalize, "cse": cse, "dce": dce}
