"""`last_writers` (dialects/compute.py): which computes last wrote the bytes a kernel
reads, through views and subviews of the arena, so that a kernel may use the bounds they
kept on their results."""

from __future__ import annotations

import pytest

from nnlayout.dialects.compute import ComputeOp, last_writers, unwritten_between
from nnlayout.tests.helpers import (
    parse,
)


def relu_into(source: str, buffer: str) -> str:
    return (
        f"nn.compute ins({source} : memref<4xf32>) outs({buffer} : memref<4xf32>) {{\n"
        "^bb0(%t: tensor<4xf32>):\n  %r = nn.relu %t : tensor<4xf32>\n"
        "  nn.yield %r : tensor<4xf32>\n}"
    )


def _program(between: str, buffer: str) -> list[ComputeOp]:
    """A function writing `buffer` (a view of the arena, or the argument), then `between`,
    then reading `buffer`: its computes."""
    module = parse(
        f"""
func.func @f(%arg: memref<4xf32>) -> memref<4xf32> {{
  %arena = memref.alloc() : memref<64xi8>
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %a = memref.view %arena[%c0][] : memref<64xi8> to memref<4xf32>
  %b = memref.view %arena[%c16][] : memref<64xi8> to memref<4xf32>
  %c = memref.view %arena[%c8][] : memref<64xi8> to memref<4xf32>
  %sb = memref.subview %b[0] [4] [1] : memref<4xf32> to memref<4xf32, strided<[1]>>
  %sc = memref.subview %c[0] [4] [1] : memref<4xf32> to memref<4xf32, strided<[1]>>
  %upper = memref.view %arena[%c16][] : memref<64xi8> to memref<48xi8>
  %n = memref.view %upper[%c0][] : memref<48xi8> to memref<4xf32>
  %cast = "memref.cast"(%a) : (memref<4xf32>) -> memref<4xf32>
  {relu_into("%arg", buffer)}
  {between}
  %out = memref.alloc() : memref<4xf32>
  {relu_into(buffer, "%out")}
  func.return %out : memref<4xf32>
}}""".replace("outs(%sb : memref<4xf32>)", "outs(%sb : memref<4xf32, strided<[1]>>)").replace(
            "outs(%sc : memref<4xf32>)", "outs(%sc : memref<4xf32, strided<[1]>>)"
        )
    )
    module.verify()
    return [op for op in module.walk() if isinstance(op, ComputeOp)]


COPY = '"memref.copy"(%arg, %c) : (memref<4xf32>, memref<4xf32>) -> ()'


@pytest.mark.parametrize(
    ("between", "buffer", "writers"),
    [
        ("", "%a", ["first"]),
        (relu_into("%arg", "%b"), "%a", ["first"]),  # bytes 16..32: beside %a
        (relu_into("%arg", "%c"), "%a", ["between", "first"]),  # bytes 8..24: over half of %a
        (COPY, "%a", None),
        (relu_into("%arg", "%sb"), "%a", ["first"]),  # a subview of %b
        (relu_into("%arg", "%sc"), "%a", ["between", "first"]),  # a subview of %c
        (relu_into("%arg", "%n"), "%b", ["between"]),  # a view at 0 of a view at 16: all of %b
        (relu_into("%arg", "%cast"), "%a", None),
    ],
)  # another op's buffer: anywhere
def test_a_kernel_reads_the_bounds_of_the_last_writers_of_its_buffer_only(
    between: str, buffer: str, writers: list[str] | None
) -> None:
    """`last_writers`: the computes whose results the reader reads, latest first, are known
    only when nothing else may have written any of its bytes since."""
    computes = _program(between, buffer)
    roles = {"first": computes[0], "between": computes[1]}
    reader = computes[-1]
    expected = None if writers is None else [roles[role] for role in writers]
    assert last_writers(reader, reader.ins[0]) == expected


@pytest.mark.parametrize(
    ("between", "buffer", "unwritten"),
    [
        ("", "%a", True),
        (relu_into("%arg", "%b"), "%a", True),
        (relu_into("%arg", "%c"), "%a", False),
        (COPY, "%a", False),
        (relu_into("%arg", "%sb"), "%a", True),
        (relu_into("%arg", "%sc"), "%a", False),
        (relu_into("%arg", "%n"), "%b", False),
        (relu_into("%arg", "%cast"), "%a", False),
        (relu_into("%a", "%b"), "%arg", True),  # the arena is not the argument
        (relu_into("%a", "%cast"), "%arg", False),  # another op's buffer: anywhere
    ],
)
def test_a_buffer_unwritten_between_two_computes(
    between: str, buffer: str, unwritten: bool
) -> None:
    """`unwritten_between`: nothing between the first compute and the reader may write a
    byte the reader reads (a function argument included)."""
    computes = _program(between, buffer)
    reader = computes[-1]
    assert unwritten_between(computes[0], reader, reader.ins[0]) is unwritten


def relu_of(source: str, source_type: str, buffer: str, buffer_type: str, shape: str) -> str:
    return (
        f"nn.compute ins({source} : {source_type}) outs({buffer} : {buffer_type}) {{\n"
        f"^bb0(%t: tensor<{shape}xf32>):\n  %r = nn.relu %t : tensor<{shape}xf32>\n"
        f"  nn.yield %r : tensor<{shape}xf32>\n}}"
    )


HALF = "memref<2x4xf32, strided<[4, 1]>>"
UPPER_HALF = "memref<2x4xf32, strided<[4, 1], offset: 8>>"
LEFT_HALF = "memref<4x2xf32, strided<[4, 1]>>"


@pytest.mark.parametrize(
    ("parts", "read", "writers"),
    [
        # A concat built in place: each part written through a subview, the whole read.
        ([("%lo", HALF), ("%hi", UPPER_HALF)], ("%whole", "memref<4x4xf32>", "4x4"), [1, 0]),
        ([("%hi", UPPER_HALF)], ("%whole", "memref<4x4xf32>", "4x4"), None),  # half unwritten
        ([("%lo", HALF)], ("%lo", HALF, "2x4"), [0]),  # a part read as it was written
        # Bytes 0..8 and 16..24 of each row: not one range; which bytes is not followed.
        ([("%left", LEFT_HALF), ("%hi", UPPER_HALF)], ("%whole", "memref<4x4xf32>", "4x4"), None),
        ([("%left", LEFT_HALF)], ("%lo", HALF, "2x4"), None),
    ],
)
def test_the_parts_of_a_buffer_written_through_subviews_are_its_writers(
    parts: list[tuple[str, str]], read: tuple[str, str, str], writers: list[int] | None
) -> None:
    """`last_writers` follows a value built in place from parts (contiguous subviews at
    constant offsets) while their writes together cover every byte read, each exactly."""
    shapes = {HALF: "2x4", UPPER_HALF: "2x4", LEFT_HALF: "4x2"}
    writes = "\n  ".join(
        relu_of("%arg", "memref<16xf32>", name, buffer_type, shapes[buffer_type]).replace(
            "ins(%arg : memref<16xf32>)", f"ins(%src{i} : {buffer_type})"
        )
        for i, (name, buffer_type) in enumerate(parts)
    )
    module = parse(f"""
func.func @f(%src0: {parts[0][1]}, %src1: {parts[-1][1]}) -> memref<{read[2]}xf32> {{
  %arena = memref.alloc() : memref<256xi8>
  %c64 = arith.constant 64 : index
  %whole = memref.view %arena[%c64][] : memref<256xi8> to memref<4x4xf32>
  %lo = memref.subview %whole[0, 0] [2, 4] [1, 1] : memref<4x4xf32> to {HALF}
  %hi = memref.subview %whole[2, 0] [2, 4] [1, 1] : memref<4x4xf32> to {UPPER_HALF}
  %left = memref.subview %whole[0, 0] [4, 2] [1, 1] : memref<4x4xf32> to {LEFT_HALF}
  {writes}
  %out = memref.alloc() : memref<{read[2]}xf32>
  {relu_of(read[0], read[1], "%out", f"memref<{read[2]}xf32>", read[2])}
  func.return %out : memref<{read[2]}xf32>
}}""")
    module.verify()
    computes = [op for op in module.walk() if isinstance(op, ComputeOp)]
    reader = computes[-1]
    expected = None if writers is None else [computes[i] for i in writers]
    assert last_writers(reader, reader.ins[0]) == expected
