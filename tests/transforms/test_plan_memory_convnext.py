"""ConvNeXt's blocks as torch's dynamo exporter writes them (opset 20): a depthwise 7x7
convolution, Transpose to NHWC, LayerNormalization, MatMul + Add, Gelu, MatMul + Add,
Transpose back, the layer scale's Mul and the residual Add. Every block's 4x-wide hidden
buffer and the residual chains that overlap from one block to the next left the ordering
heuristics of plan-memory 1/6 above the lower bound (convnext_tiny at 1.167), and the local
search after them reached it on one seed in two; its moves of an interval at the top of the
arena to an earlier place reach it (transforms/plan_memory.py, `_searched`)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from nnlayout.dialects.plan import ARENA_BYTES, LOWER_BOUND_BYTES
from nnlayout.tests.helpers import (
    ALL_TARGETS,
    DEFAULT_PIPELINE,
    check_against_onnxruntime,
    compile_module,
)
from nnlayout.transforms.memory_plan import Interval
from nnlayout.transforms.placement import HEURISTICS, peak, plan_offsets

C = 20  # not a multiple of 8: padding lanes in the blocked layouts
BLOCKS = 3
RNG = np.random.default_rng(3)


def _weights(*shape: int) -> np.ndarray:
    return (RNG.standard_normal(shape) * 0.3).astype(np.float32)


def _block(k: int, x: str) -> tuple[list[onnx.NodeProto], dict[str, np.ndarray]]:
    """One CNBlock as dynamo writes it, from `x` (NCHW) to f"add_{k}"."""
    nodes = [
        helper.make_node(
            "Conv",
            [x, f"dw_{k}", f"dwb_{k}"],
            [f"conv_{k}"],
            group=C,
            pads=[3, 3, 3, 3],
            kernel_shape=[7, 7],
        ),
        helper.make_node("Transpose", [f"conv_{k}"], [f"permute_{k}"], perm=[0, 2, 3, 1]),
        helper.make_node(
            "LayerNormalization",
            [f"permute_{k}", "ln_w", "ln_b"],
            [f"ln_{k}"],
            axis=-1,
            epsilon=1e-6,
            stash_type=1,
        ),
        helper.make_node("MatMul", [f"ln_{k}", f"fc1_{k}"], [f"mm1_{k}"]),
        helper.make_node("Add", [f"mm1_{k}", f"fc1b_{k}"], [f"linear1_{k}"]),
        helper.make_node("Gelu", [f"linear1_{k}"], [f"gelu_{k}"], approximate="none"),
        helper.make_node("MatMul", [f"gelu_{k}", f"fc2_{k}"], [f"mm2_{k}"]),
        helper.make_node("Add", [f"mm2_{k}", f"fc2b_{k}"], [f"linear2_{k}"]),
        helper.make_node("Transpose", [f"linear2_{k}"], [f"back_{k}"], perm=[0, 3, 1, 2]),
        helper.make_node("Mul", [f"scale_{k}", f"back_{k}"], [f"mul_{k}"]),
        helper.make_node("Add", [f"mul_{k}", x], [f"add_{k}"]),
    ]
    weights = {
        f"dw_{k}": _weights(C, 1, 7, 7),
        f"dwb_{k}": _weights(C),
        f"fc1_{k}": _weights(C, 4 * C),
        f"fc1b_{k}": _weights(4 * C),
        f"fc2_{k}": _weights(4 * C, C),
        f"fc2b_{k}": _weights(C),
        f"scale_{k}": _weights(C, 1, 1) + 1,
    }
    return nodes, weights


def convnext_stage(size: int = 8) -> onnx.ModelProto:
    """x [1, C, size, size] -> LayerNorm2d (Transpose, LayerNormalization, Transpose) ->
    BLOCKS blocks -> y."""
    nodes = [
        helper.make_node("Transpose", ["x"], ["stem_nhwc"], perm=[0, 2, 3, 1]),
        helper.make_node(
            "LayerNormalization",
            ["stem_nhwc", "ln_w", "ln_b"],
            ["stem_ln"],
            axis=-1,
            epsilon=1e-6,
            stash_type=1,
        ),
        helper.make_node("Transpose", ["stem_ln"], ["stem"], perm=[0, 3, 1, 2]),
    ]
    weights = {"ln_w": _weights(C) + 1, "ln_b": _weights(C)}
    x = "stem"
    for k in range(BLOCKS):
        block, block_weights = _block(k, x)
        nodes += block
        weights |= block_weights
        x = f"add_{k}"
    nodes.append(helper.make_node("Identity", [x], ["y"]))
    graph = helper.make_graph(
        nodes,
        "convnext_stage",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, C, size, size])],
        [numpy_helper.from_array(v, n) for n, v in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    onnx.checker.check_model(model, full_check=True)
    return model


# The live intervals of convnext_tiny's dynamo export on host (oneDNN, AVX-512), padding on,
# as plan-memory sees them ("start-end:bytes"; alignment 64).
CONVNEXT_TINY_TEXT = (
    "0-1:602112 1-2:1204224 2-3:1204224 3-11:1204224 4-5:1204224 5-6:1204224 6-7:1204224 "
    "7-8:4816896 8-9:1204224 9-19:1204224 12-13:1204224 13-14:1204224 14-15:1204224 "
    "15-16:4816896 16-17:1204224 17-27:1204224 20-21:1204224 21-22:1204224 22-23:1204224 "
    "23-24:4816896 24-25:1204224 25-28:1204224 28-29:1204224 29-30:1204224 30-31:1204224 "
    "31-32:1204224 32-40:602112 33-34:602112 34-35:602112 35-36:2408448 36-37:602112 "
    "37-39:602112 39-48:602112 41-42:602112 42-43:602112 43-44:2408448 44-45:602112 "
    "45-47:602112 47-56:602112 49-50:602112 50-51:602112 51-52:2408448 52-53:602112 "
    "53-55:602112 55-57:602112 57-58:602112 58-59:602112 59-60:602112 60-68:301056 "
    "61-62:301056 62-63:301056 63-64:1204224 64-65:301056 65-67:301056 67-76:301056 "
    "69-70:301056 70-71:301056 71-72:1204224 72-73:301056 73-75:301056 75-84:301056 "
    "77-78:301056 78-79:301056 79-80:1204224 80-81:301056 81-83:301056 83-92:301056 "
    "85-86:301056 86-87:301056 87-88:1204224 88-89:301056 89-91:301056 91-100:301056 "
    "93-94:301056 94-95:301056 95-96:1204224 96-97:301056 97-99:301056 99-108:301056 "
    "101-102:301056 102-103:301056 103-104:1204224 104-105:301056 105-107:301056 "
    "107-116:301056 109-110:301056 110-111:301056 111-112:1204224 112-113:301056 "
    "113-115:301056 115-124:301056 117-118:301056 118-119:301056 119-120:1204224 "
    "120-121:301056 121-123:301056 123-132:301056 125-126:301056 126-127:301056 "
    "127-128:1204224 128-129:301056 129-131:301056 131-133:301056 133-134:301056 "
    "134-135:301056 135-136:301056 136-144:150528 137-138:150528 138-139:150528 "
    "139-140:602112 140-141:150528 141-143:150528 143-152:150528 145-146:150528 "
    "146-147:150528 147-148:602112 148-149:150528 149-151:150528 151-160:150528 "
    "153-154:150528 154-155:150528 155-156:602112 156-157:150528 157-159:150528 "
    "159-161:150528 161-162:3072 162-163:3072 163-164:3072 164-165:3072 165-166:3072 "
    "166-167:3072 "
)
CONVNEXT_TINY = [
    Interval(int(start), int(end), int(size))
    for start, end, size in re.findall(r"(\d+)-(\d+):(\d+)", CONVNEXT_TINY_TEXT)
]


def test_the_search_reaches_convnext_tiny_bound() -> None:
    """Every heuristic leaves convnext_tiny at 7/6 of its bound (every block's 4.6 MiB hidden
    buffer at offset 0, three 1.15 MiB buffers above it where the residual chains overlap);
    the search reaches the bound (which the old moves, anywhere in the order, missed for
    this seed)."""
    placement = plan_offsets(CONVNEXT_TINY, 64)
    bound = peak(CONVNEXT_TINY)[0]
    assert min(placement.arena_by_heuristic[name] for name in HEURISTICS) * 6 == bound * 7
    assert placement.arena_bytes == bound
    for i, a in enumerate(CONVNEXT_TINY):
        for j in range(i):
            b, x, y = CONVNEXT_TINY[j], placement.offsets[i], placement.offsets[j]
            assert not a.overlaps(b) or x + a.size <= y or y + b.size <= x


def test_convnext_blocks_as_dynamo_writes_them(tmp_path: Path) -> None:
    """The blocks give onnxruntime's results (every target, padding on and off, interpreter
    and generated module: `check_against_onnxruntime`), and the plan meets its lower bound
    on every target with padding off and on, but avx2 with padding on (8-channel blocks pad
    20 channels to 24 and 80 to 80: the sizes no longer in the ratios of the plain model),
    where it stays at 1.033, the heuristics at 1.146, as with the former search's 2000
    moves: no plan at the bound is known there."""
    module = check_against_onnxruntime(convnext_stage(), tmp_path)
    for target in ALL_TARGETS:
        for padding in (True, False):
            compiled = compile_module(module, target, padding, DEFAULT_PIPELINE)
            (function,) = [op for op in compiled.walk() if op.name == "func.func"]
            arena = function.attributes[ARENA_BYTES].value.data  # type: ignore[attr-defined]
            bound = function.attributes[LOWER_BOUND_BYTES].value.data  # type: ignore[attr-defined]
            if (target, padding) == ("avx2", True):
                assert arena <= 1.034 * bound
            else:
                assert arena == bound, (target, padding, arena / bound)
