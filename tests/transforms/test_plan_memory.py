"""plan-memory: the planning core on bare intervals (the golden case of Pisarchyk & Lee 2020,
random interval sets), in-place decisions taken from the chosen kernels, the planned
programs' results against the unoptimised interpreter (the programs of test_layout_semantics
and the small zoo), and the report (test_verify_memory_plan.py: the verifier)."""

from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import IndexType, ModuleOp

from nnlayout.diagnostics import DiagnosticError, UserError
from nnlayout.dialects.kernel_attr import KERNEL_ATTR, KernelAttr, kernel_of
from nnlayout.examples.make_models import ZOO, build
from nnlayout.frontends.onnx import import_model
from nnlayout.ir.context import make_context
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests import helpers as semantics
from nnlayout.tools.driver import parse_pipeline, run_pipeline
from nnlayout.transforms import get_all_passes
from nnlayout.transforms import placement as planning_core
from nnlayout.transforms.memory_plan import Interval
from nnlayout.transforms.memory_report import format_report, plan_svg
from nnlayout.transforms.placement import HEURISTICS, SEARCH_NAME, peak, plan_offsets
from nnlayout.transforms.plan_memory import plan_function
from nnlayout.transforms.time_index import placing_work

# (first op, last op, size) of the 8 tensors in Pisarchyk & Lee (2020), figure 2.
GOLDEN = [
    (0, 1, 32),
    (1, 4, 28),
    (2, 5, 36),
    (3, 5, 16),
    (4, 5, 8),
    (5, 7, 64),
    (6, 8, 10),
    (7, 8, 40),
]


def assert_no_overlap(intervals: list[Interval], offsets: tuple[int, ...]) -> None:
    for i, a in enumerate(intervals):
        for j in range(i):
            b = intervals[j]
            if a.overlaps(b):
                assert offsets[i] + a.size <= offsets[j] or offsets[j] + b.size <= offsets[i], (
                    f"{a} at {offsets[i]} overlaps {b} at {offsets[j]}"
                )


def test_golden_case_of_pisarchyk_and_lee() -> None:
    intervals = [Interval(*t) for t in GOLDEN]
    placement = plan_offsets(intervals)
    assert sum(i.size for i in intervals) == 234  # unplanned
    assert peak(intervals) == (124, 5)  # lower bound, reached at op 5
    assert placement.arena_bytes == 124
    assert placement.arena_by_heuristic["greedy-by-size"] == 124
    assert_no_overlap(intervals, placement.offsets)


def test_equal_buffers_used_last_are_placed_first() -> None:
    """Greedy by size with ties broken by first use needs 5 bytes here; broken by last use
    (latest first), the lower bound of 4: with the later 2-byte buffer at the bottom, the
    1-byte one fits right above the 3-byte one."""
    intervals = [Interval(4, 6, 1), Interval(6, 8, 3), Interval(0, 3, 2), Interval(2, 5, 2)]
    placement = plan_offsets(intervals)
    assert peak(intervals)[0] == 4
    assert placement.arena_by_heuristic["greedy-by-size"] == 5
    assert (placement.arena_bytes, placement.heuristic) == (4, "greedy-by-size-last-use")
    assert_no_overlap(intervals, placement.offsets)


# ResNeXt-50's buffers on avx2 without padding (start, end, size in units of 64 bytes).
RESNEXT_INTERVALS = [
    Interval(start, end, 64 * size)
    for start, end, size in [
        (0, 3, 51984),
        (3, 4, 12544),
        (4, 13, 12544),
        (5, 8, 25088),
        (7, 9, 26912),
        (9, 11, 25088),
        (11, 12, 25088),
        (12, 24, 50176),
        (13, 14, 50176),
        (16, 19, 25088),
        (18, 20, 26912),
        (20, 22, 25088),
        (22, 23, 25088),
        (23, 34, 50176),
        (26, 29, 25088),
        (28, 30, 26912),
        (30, 32, 25088),
        (32, 33, 25088),
        (33, 42, 50176),
        (36, 39, 53824),
        (39, 41, 12544),
        (41, 51, 25088),
        (42, 43, 25088),
        (45, 48, 14400),
        (48, 50, 12544),
        (50, 59, 25088),
        (53, 56, 14400),
        (56, 58, 12544),
        (58, 67, 25088),
        (61, 64, 14400),
        (64, 66, 12544),
        (66, 75, 25088),
        (69, 72, 28800),
        (72, 74, 6272),
        (74, 84, 12544),
        (75, 76, 12544),
        (78, 81, 8192),
        (81, 83, 6272),
        (83, 92, 12544),
        (86, 89, 8192),
        (89, 91, 6272),
        (91, 100, 12544),
        (94, 97, 8192),
        (97, 99, 6272),
        (99, 108, 12544),
        (102, 105, 8192),
        (105, 107, 6272),
        (107, 116, 12544),
        (110, 113, 8192),
        (113, 115, 6272),
        (115, 124, 12544),
        (118, 121, 16384),
        (121, 123, 3136),
        (123, 133, 6272),
        (124, 125, 6272),
        (127, 130, 5184),
        (130, 132, 3136),
        (132, 141, 6272),
        (135, 138, 5184),
        (138, 140, 3136),
        (140, 143, 6272),
        (143, 144, 128),
        (144, 145, 128),
        (145, 146, 128),
    ]
]


def test_the_search_has_moves_enough_for_resnext() -> None:
    """The heuristics leave ResNeXt-50 on avx2 without padding 1.5% above its lower bound; 400
    moves (the search's former cap) kept it there, about 600 reach the bound."""
    placement = plan_offsets(RESNEXT_INTERVALS, 64)
    bound = peak(RESNEXT_INTERVALS)[0]
    assert min(placement.arena_by_heuristic[name] for name in HEURISTICS) > 1.01 * bound
    assert placement.arena_bytes == bound
    assert_no_overlap(RESNEXT_INTERVALS, placement.offsets)


def test_the_search_has_moves_enough_for_maxvit() -> None:
    """MaxViT-T quantized by onnxruntime (933 buffers, on host): the heuristics leave it 4.2%
    above its lower bound; budgeted by n^2 the search made 4 moves and kept it there, budgeted
    by what a move costs (`placing_work`) it reaches the bound."""
    data = json.loads((Path(__file__).parent / "maxvit_t_int8_intervals.json").read_text())
    intervals = [Interval(*entry) for entry in data["intervals"]]
    alignment = data["alignment"]
    placement = plan_offsets(intervals, alignment)
    aligned = [Interval(i.start, i.end, -(-i.size // alignment) * alignment) for i in intervals]
    bound = peak(aligned)[0]
    assert min(placement.arena_by_heuristic[name] for name in HEURISTICS) > 1.04 * bound
    assert placement.arena_bytes == bound
    assert_no_overlap(intervals, placement.offsets)


@pytest.mark.parametrize("seed", range(20))
def test_placing_work_counts_each_live_pair_once(seed: int) -> None:
    """Beyond each interval's path and duration, `placing_work` counts the pairs of intervals
    live at a common step: what a scan of every pair counts."""
    rng = random.Random(seed)
    intervals = []
    for _ in range(rng.randrange(1, 50)):
        start = rng.randrange(30)
        intervals.append(Interval(start, start + rng.randrange(8), 16))
    height = (max(i.end for i in intervals) + 1).bit_length() + 1
    own = sum(height + i.end - i.start + 1 for i in intervals)
    pairs = sum(
        1
        for n, a in enumerate(intervals)
        for b in intervals[:n]
        if a.start <= b.end and b.start <= a.end
    )
    assert placing_work(intervals) == own + pairs
    assert placing_work([]) == 0


def test_a_local_search_reaches_the_bound_the_heuristics_miss() -> None:
    """The ordering heuristics need 13 bytes or more here, the lower bound is 10 (B and D live at
    step 2): the search that follows them moves buffers in the best order until the bound is
    reached (D and A at the bottom, B above D, C above A), the same plan on every run."""
    intervals = [Interval(3, 6, 4), Interval(2, 4, 4), Interval(6, 10, 5), Interval(0, 2, 6)]
    placement = plan_offsets(intervals)
    assert peak(intervals)[0] == 10
    assert min(placement.arena_by_heuristic[name] for name in HEURISTICS) == 13
    assert placement.arena_bytes == placement.arena_by_heuristic[SEARCH_NAME] == 10
    assert placement.heuristic.startswith(f"{SEARCH_NAME} from ")
    assert_no_overlap(intervals, placement.offsets)
    assert plan_offsets(intervals) == placement
    assert plan_offsets([]).arena_bytes == 0  # nothing to place, nothing to search


def test_alignment_rounds_offsets() -> None:
    intervals = [Interval(*t) for t in GOLDEN]
    placement = plan_offsets(intervals, alignment=64)
    assert all(offset % 64 == 0 for offset in placement.offsets)
    assert_no_overlap(intervals, placement.offsets)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 30), st.integers(0, 10), st.integers(1, 500)),
        min_size=1,
        max_size=40,
    ),
    st.sampled_from([1, 8, 64]),
)
def test_random_plans_never_overlap_nor_beat_the_bound(
    raw: list[tuple[int, int, int]], alignment: int
) -> None:
    intervals = [Interval(start, start + length, size) for start, length, size in raw]
    placement = plan_offsets(intervals, alignment)
    assert_no_overlap(intervals, placement.offsets)
    assert all(offset % alignment == 0 for offset in placement.offsets)
    assert placement.arena_bytes >= peak(intervals)[0]
    assert placement.arena_bytes == min(placement.arena_by_heuristic.values())
    assert placement.arena_bytes == max(
        o + i.size + -i.size % alignment for o, i in zip(placement.offsets, intervals, strict=True)
    )


# ------------------------------------------------------------------ in place
IN_PLACE = """
func.func @f(%x: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %w = nn.constant dense<0.1> : tensor<8x8x1x1xf32>
  %r0 = nn.relu %x : tensor<1x8x8x8xf32>
  %c1 = nn.conv2d %r0, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x8x8x8xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x8x8xf32>
  %r1 = nn.relu %c1 : tensor<1x8x8x8xf32>
  %a = nn.add %r1, %x : (tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %e = nn.exp %a : tensor<1x8x8x8xf32>
  %m = nn.mul %e, %a : (tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %n = nn.neg %m : tensor<1x8x8x8xf32>
  func.return %n : tensor<1x8x8x8xf32>
}
"""
# What each buffer overwrites: r0 reads an argument, conv2d_ref is never in place, e's input
# is still read later, n is returned (a separate allocation, not in the plan).
EXPECTED_OVERWRITES = {"r0": None, "c1": None, "r1": "c1", "a": "r1", "e": None, "m": "e"}


def compile_text(text: str, pipeline: str) -> ModuleOp:
    module = semantics.parse(text)
    run_pipeline(parse_pipeline(pipeline, get_all_passes()), make_context(), module)
    return module


def the_function(module: ModuleOp) -> func.FuncOp:
    return next(op for op in module.ops if isinstance(op, func.FuncOp))


def kernels(module: ModuleOp) -> set[str]:
    return {k.kernel_name.data for op in module.walk() if (k := kernel_of(op)) is not None}


@pytest.mark.parametrize(
    ("target", "expected_kernels"),
    [
        ("ref", {"conv2d_ref", "relu_ref", "add_ref"}),
        ("avx2", {"conv2d_ref", "relu_any", "add_any"}),
    ],
)
def test_in_place_only_where_the_kernel_allows(target: str, expected_kernels: set[str]) -> None:
    module = compile_text(IN_PLACE, f"default-pipeline{{target={target}}}")
    assert expected_kernels <= kernels(module)
    bufferized = compile_text(
        IN_PLACE,
        f"select-dispatch{{target={target}}},insert-layouts,"
        "propagate-layouts,fold-constants,bufferize",
    )
    plan, _ = plan_function(the_function(bufferized))
    assert {b.name: b.overwrites for b in plan.buffers} == EXPECTED_OVERWRITES
    by_name = {b.name: b for b in plan.buffers}
    assert by_name["r1"].offset == by_name["c1"].offset == by_name["a"].offset
    # at most two 2 KiB buffers live at once: r0 and c1, then the chains c1 -> r1 -> a, e -> m
    assert plan.lower_bound_bytes == plan.arena_bytes == 2 * 2048
    assert plan.unplanned_bytes == 6 * 2048


EXCITATION = """
func.func @f(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %e = nn.exp %x : tensor<1x16x8x8xf32>
  %g = nn.global_avg_pool %e : tensor<1x16x8x8xf32> -> tensor<1x16x1x1xf32>
  %s = nn.sigmoid %g : tensor<1x16x1x1xf32>
  %m = nn.mul %s, %e : (tensor<1x16x1x1xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %n = nn.neg %m : tensor<1x16x8x8xf32>
  func.return %n : tensor<1x16x8x8xf32>
}
"""


@pytest.mark.parametrize(
    "target",
    [
        "avx2",
        pytest.param(
            "onednn",
            marks=pytest.mark.onednn,
        ),
    ],
)
def test_a_broadcasting_product_writes_over_its_full_operand(target: str) -> None:
    """scale * x (squeeze-and-excitation as torchvision writes it) may overwrite x, operand
    1, never the smaller scale: the product shares x's buffer (SE-ResNet-50's arena: 9.19 ->
    6.89 MiB), with the same results in the interpreter and the generated module."""
    module = compile_text(EXCITATION, FULL_PIPELINE.format(target=target, padding="true"))
    (product,) = [op for op in module.walk() if op.name == "nn.mul"]
    assert kernel_of(product).in_place_operand == 1
    assert kernel_of(product).kernel_name.data == f"mul_{'any' if target == 'avx2' else target}"
    bufferized = compile_text(
        EXCITATION,
        f"select-dispatch{{target={target}}},insert-layouts,"
        "propagate-layouts,fold-constants,bufferize",
    )
    plan, _ = plan_function(the_function(bufferized))
    assert {b.name: b.overwrites for b in plan.buffers}["m"] == "e"
    source = semantics.parse(EXCITATION)
    inputs = semantics.random_inputs(source)
    expected = Interpreter(source).run(inputs)
    semantics.assert_same(expected, Interpreter(module).run(inputs))
    semantics.assert_same(expected, run_generated(module, inputs))


def test_a_conv_kernel_that_allowed_it_would_work_in_place() -> None:
    """The rule comes from the kernel attribute alone: mark conv2d_ref in place and it is."""
    module = compile_text(
        IN_PLACE,
        "select-dispatch{target=ref},insert-layouts,propagate-layouts,fold-constants,bufferize",
    )
    for op in module.walk():
        if (kernel := kernel_of(op)) is not None and kernel.kernel_name.data == "conv2d_ref":
            op.attributes[KERNEL_ATTR] = KernelAttr(
                "conv2d_ref", kernel.operands, kernel.results, in_place=0
            )
    plan, _ = plan_function(the_function(module))
    assert {b.name: b.overwrites for b in plan.buffers}["c1"] == "r0"


# ------------------------------------------------------------------ semantics
FULL_PIPELINE = "default-pipeline{{target={target} padding={padding} verify=true}}"


def test_planned_programs_run_on_the_arena() -> None:
    """The arena really is used: planned buffers are views of one allocation."""
    module = compile_text(IN_PLACE, "default-pipeline{target=avx2}")
    function = the_function(module)
    allocs = [op for op in function.walk() if isinstance(op, memref.AllocOp)]
    views = [op for op in function.walk() if isinstance(op, memref.ViewOp)]
    assert len(allocs) == 2 and len(views) == 6  # the arena and the returned %n
    assert function.attributes["nnlayout.arena_bytes"].value.data == 2 * 2048
    inputs = semantics.random_inputs(semantics.parse(IN_PLACE))
    semantics.assert_same(
        Interpreter(semantics.parse(IN_PLACE)).run(inputs), Interpreter(module).run(inputs)
    )


@pytest.mark.parametrize(
    ("name", "target", "padding"),
    semantics.tiered(
        [
            (name, target, padding)
            for name in sorted(ZOO)
            for target, padding in (("avx512", True), ("avx2", False))
        ],
        [("densenet121", "avx512", True), ("resnext50", "avx2", False), ("unet", "avx512", True)],
    ),
)
def test_small_zoo_planned_keeps_results(name: str, target: str, padding: bool) -> None:
    module = import_model(build(name, small=True), inline_limit=1 << 30).module
    inputs = semantics.random_inputs(module)
    compiled = module.clone()
    spec = FULL_PIPELINE.format(target=target, padding=str(padding).lower())
    run_pipeline(parse_pipeline(spec, get_all_passes()), make_context(), compiled)
    function = the_function(compiled)
    figures = {k: v.value.data for k, v in function.attributes.items() if k.startswith("nnlayout.")}
    assert (
        figures["nnlayout.lower_bound_bytes"]
        <= figures["nnlayout.arena_bytes"]
        <= (figures["nnlayout.unplanned_bytes"])
    )
    if not padding:
        assert figures["nnlayout.padding_bytes"] == figures["nnlayout.halo_bytes"]
    semantics.assert_same(Interpreter(module).run(inputs), Interpreter(compiled).run(inputs))


def views(function: func.FuncOp) -> dict[str, memref.ViewOp]:
    return {op.result.name_hint: op for op in function.walk() if isinstance(op, memref.ViewOp)}


def test_plan_memory_needs_bufferized_input() -> None:
    with pytest.raises(DiagnosticError, match="run bufferize first"):
        plan_function(the_function(semantics.parse(IN_PLACE)))


# ------------------------------------------------------------------ the report
def test_report_and_picture() -> None:
    module = compile_text(
        IN_PLACE,
        "select-dispatch{target=avx2},insert-layouts,propagate-layouts,fold-constants,bufferize",
    )
    plan, _ = plan_function(the_function(module))
    text = format_report(plan)
    assert "arena" in text and "lower bound" in text and "arena/bound 1.000" in text
    assert "largest buffers live at the peak (2 live, 0.0 KiB of padding and halo)" in text
    assert "%r0  steps 0-1" in text and "%c1  steps 1-2" in text
    svg = ElementTree.fromstring(plan_svg([plan, plan]))
    rects = [
        e
        for e in svg.iter("{http://www.w3.org/2000/svg}rect")
        if e.find("{http://www.w3.org/2000/svg}title") is not None
    ]
    assert len(rects) == 2 * len(plan.buffers)


def test_default_pipeline_verify_option_runs_the_verifier(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planner bug (every buffer at offset 0) is stopped by `verify=true`."""
    place = planning_core._best_fit

    def all_at_zero(*args: object) -> tuple[list[int], int]:
        offsets, arena = place(*args)
        return [0] * len(offsets), arena

    monkeypatch.setattr(planning_core, "_best_fit", all_at_zero)
    compile_text(IN_PLACE, "default-pipeline{target=avx2}")  # unchecked: goes through
    with pytest.raises(UserError, match="overlaps .* while both are live"):
        compile_text(IN_PLACE, "default-pipeline{target=avx2 verify=true}")


def test_plan_memory_options_write_report_and_svg(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    svg = tmp_path / "plan.svg"
    compile_text(
        IN_PLACE,
        "select-dispatch{target=avx2},insert-layouts,propagate-layouts,"
        f'fold-constants,bufferize,plan-memory{{report=true svg="{svg}"}}',
    )
    assert "@f: 6 buffers over 8 steps" in capsys.readouterr().err
    assert ElementTree.parse(svg).getroot().tag == "{http://www.w3.org/2000/svg}svg"


def test_an_in_place_chain_longer_than_the_recursion_limit_has_a_root() -> None:
    """3000 element-wise ops in place make one chain of buffers; its root is found by a loop
    (found by a bad-input hunt: RecursionError in plan-memory), each chain walked once."""
    from nnlayout.transforms.plan_memory import Buffer, _roots

    alloc = memref.AllocOp.get(IndexType(), shape=[4])
    chain = [Buffer(alloc, 16, 0, 1, [])]
    for step in range(3000):
        chain.append(Buffer(alloc, 16, step, step + 1, [], overwrites=chain[-1]))
    roots = _roots(list(reversed(chain)))
    assert all(roots[b] is chain[0] for b in chain)


def _best_fit_by_scanning(intervals, order, alignment):
    """The best fit as first written: every placed buffer looked at for each placement."""
    offsets, placed, arena = [0] * len(intervals), [], 0
    for i in order:
        size = -(-intervals[i].size // alignment) * alignment
        top, best_offset, best_gap = 0, -1, float("inf")
        for offset, end, j in sorted(placed):
            if intervals[i].overlaps(intervals[j]):
                if size <= offset - top < best_gap:
                    best_offset, best_gap = top, offset - top
                top = max(top, end)
        offsets[i] = best_offset if best_offset >= 0 else top
        placed.append((offsets[i], offsets[i] + size, i))
        arena = max(arena, offsets[i] + size)
    return offsets, arena


def _by_breadth_by_listing(intervals):
    """Greedy by breadth as first written: each step's live buffers listed."""
    from nnlayout.transforms.placement import _by_size

    order = _by_size(intervals)
    steps = sorted({i.start for i in intervals})
    profiles = [[i for i in order if intervals[i].start <= s <= intervals[i].end] for s in steps]
    profiles.sort(key=lambda p: -sum(intervals[i].size for i in p))
    result = []
    for profile in profiles:
        result += [i for i in profile if i not in result]
    return result


@pytest.mark.parametrize("seed", range(40))
def test_the_indexed_best_fit_and_breadth_order_equal_the_scanning_ones(seed: int) -> None:
    """The time index and the range-minimum table change the cost of planning, never a plan:
    on random intervals (long and short, many of one size) both give what a scan of every
    placed buffer and a listing of every step's buffers give."""
    from nnlayout.transforms.memory_plan import Interval
    from nnlayout.transforms.placement import HEURISTICS, _best_fit, _by_breadth

    rng = random.Random(seed)
    intervals = []
    for _ in range(rng.randrange(1, 60)):
        start = rng.randrange(40)
        length = rng.randrange(3 if rng.random() < 0.7 else 40)
        intervals.append(Interval(start, start + length, rng.choice([16, 64, 100, 4096])))
    assert _by_breadth(intervals) == _by_breadth_by_listing(intervals)
    for ordering in HEURISTICS.values():
        order = ordering(intervals)
        for alignment in (1, 64):
            assert _best_fit(intervals, order, alignment) == _best_fit_by_scanning(
                intervals, order, alignment
            )


ODD_BYTES = """
func.func @f(%x: tensor<1x3x10x10xui8>) -> tensor<1x3x10x10xui8> {
  %a = nn.max_pool2d %x kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x3x10x10xui8> -> tensor<1x3x10x10xui8>
  %b = nn.max_pool2d %a kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x3x10x10xui8> -> tensor<1x3x10x10xui8>
  %c = nn.max_pool2d %b kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x3x10x10xui8> -> tensor<1x3x10x10xui8>
  func.return %c : tensor<1x3x10x10xui8>
}
"""


def test_the_bound_counts_the_alignment_every_buffer_starts_on() -> None:
    """Two 300-byte u8 buffers live at once take 320 bytes each (64-byte alignment): the
    bound is 640, which the arena reaches, not 600, which no plan can."""
    pipeline = "select-dispatch{target=ref},insert-layouts,propagate-layouts,bufferize"
    plan, _ = plan_function(the_function(compile_text(ODD_BYTES, pipeline)))
    assert plan.lower_bound_bytes == plan.arena_bytes == 2 * 320
