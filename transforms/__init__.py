"""Passes over the nn and layout dialects, and the registry that tools read them from."""

import dataclasses
import importlib
import inspect
import re
from collections.abc import Callable

from xdsl.passes import ModulePass

_PASS_NAME = re.compile(r"[A-Za-z0-9_-]+")
_NUMBER = re.compile(r"[-+]?[0-9]+")

# Passes added from outside the package (`register_pass`, `nnlayout-opt --load FILE.py`).
_REGISTERED: dict[str, type[ModulePass]] = {}


def register_pass(pass_class: type[ModulePass]) -> type[ModulePass]:
    """Makes `pass_class` (a ModulePass dataclass with a `name`) available to every tool's
    `-p` by its name; usable as a class decorator in a file given to `--load`."""
    if not (isinstance(pass_class, type) and issubclass(pass_class, ModulePass)):
        # Else registered, and -p failed with an internal error (no from_pass_spec).
        raise TypeError(
            f"{getattr(pass_class, '__name__', pass_class)} is not an "
            "xdsl.passes.ModulePass subclass"
        )
    if hidden := _options_not_fields(pass_class):
        # xDSL reads a pass's options from its dataclass fields: `-p p{k=2}` said "its
        # options: none" of a pass whose __init__ takes k.
        raise TypeError(
            f"{pass_class.__name__} takes {', '.join(hidden)} in its __init__, "
            "not as dataclass fields: make it a @dataclass(frozen=True) with its "
            "options as fields"
        )
    name = getattr(pass_class, "name", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f'{pass_class.__name__} has no pass name (a `name = "..."` field)')
    if not _PASS_NAME.fullmatch(name) or _NUMBER.fullmatch(name):
        # What xDSL's pipeline lexer reads as one word: 'my pass' or 'x.v2' registered, and
        # no -p could name them.
        raise ValueError(
            f"pass name '{name}' cannot be written in a pipeline: use letters, digits, '-' and '_'"
        )
    if name in get_all_passes() and _REGISTERED.get(name) is not pass_class:
        raise ValueError(f"a pass named '{name}' is already registered")
    _REGISTERED[name] = pass_class
    return pass_class


def _options_not_fields(pass_class: type[ModulePass]) -> list[str]:
    """The named parameters of the pass's __init__ (its own or inherited) that are not
    dataclass fields, which xDSL would not offer as options."""
    fields = {f.name for f in dataclasses.fields(pass_class)}
    parameters = list(inspect.signature(pass_class.__init__).parameters.values())[1:]
    return [
        p.name
        for p in parameters
        if p.name not in fields and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


# Every pass of nnlayout's own, by name, in the order tools list them: "module:class",
# imported when first asked for (as xDSL does), so that a tool loads only the passes it runs.
_PASSES: dict[str, str] = {
    "canonicalize": "xdsl.transforms.canonicalize:CanonicalizePass",
    "cse": "xdsl.transforms.common_subexpression_elimination:CommonSubexpressionElimination",
    "dce": "xdsl.transforms.dead_code_elimination:DeadCodeElimination",
    "extend-ranks": "nnlayout.transforms.extend_ranks:ExtendRanksPass",
    "fold-batch-norm": "nnlayout.transforms.fold_batch_norm:FoldBatchNormPass",
    "fold-qdq": "nnlayout.transforms.fold_qdq:FoldQdqPass",
    "tabulate-qbinary": "nnlayout.transforms.tabulate_qbinary:TabulateQBinaryPass",
    "fuse-integer-scale": "nnlayout.transforms.fuse_integer_scale:FuseIntegerScalePass",
    "share-dynamic-range": "nnlayout.transforms.share_dynamic_range:ShareDynamicRangePass",
    "fold-pad": "nnlayout.transforms.fold_pad:FoldPadPass",
    "split-image-conv": "nnlayout.transforms.split_image_conv:SplitImageConvPass",
    "fuse-channel-shuffle": "nnlayout.transforms.fuse_channel_shuffle:FuseChannelShufflePass",
    "fold-scatter-transposes": (
        "nnlayout.transforms.fold_scatter_transposes:FoldScatterTransposesPass"
    ),
    "sink-movement": "nnlayout.transforms.sink_movement:SinkMovementPass",
    "fuse-activations": "nnlayout.transforms.fuse_activations:FuseActivationsPass",
    "nest-concats": "nnlayout.transforms.nest_concats:NestConcatsPass",
    "convert-to-bf16": "nnlayout.transforms.convert_bf16:ConvertToBf16Pass",
    "select-dispatch": "nnlayout.transforms.select_dispatch:SelectDispatchPass",
    "fuse-post-ops": "nnlayout.transforms.fuse_post_ops:FusePostOpsPass",
    "fuse-matmul-post-ops": "nnlayout.transforms.fuse_matmul_post_ops:FuseMatmulPostOpsPass",
    "blocked-stem": "nnlayout.transforms.blocked_stem:BlockedStemPass",
    "insert-layouts": "nnlayout.transforms.insert_layouts:InsertLayoutsPass",
    "propagate-layouts": "nnlayout.transforms.propagate_layouts:PropagateLayoutsPass",
    "fold-constants": "nnlayout.transforms.fold_constants:FoldConstantsPass",
    "bufferize": "nnlayout.lowering.bufferize:BufferizePass",
    "plan-memory": "nnlayout.transforms.plan_memory:PlanMemoryPass",
    "verify-memory-plan": "nnlayout.transforms.verify_memory_plan:VerifyMemoryPlanPass",
    "default-pipeline": "nnlayout.transforms.default_pipeline:DefaultPipelinePass",
}


def _loader(where: str) -> Callable[[], type[ModulePass]]:
    """What imports the pass class `where` ("module:class") names, when called."""
    module, _, name = where.partition(":")

    def load() -> type[ModulePass]:
        return getattr(importlib.import_module(module), name)

    return load


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every pass `nnlayout-opt -p` accepts, by name; imported lazily, as xDSL does."""
    return {
        **{name: _loader(where) for name, where in _PASSES.items()},
        **{name: (lambda found=found: found) for name, found in _REGISTERED.items()},
    }


def own_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """nnlayout's own passes by name (not xDSL's canonicalize, cse and dce, nor passes
    registered at run time), imported lazily: what its xDSL universe offers `xdsl-opt`."""
    return {
        name: _loader(where) for name, where in _PASSES.items() if where.startswith("nnlayout.")
    }
