"""Refusing work that cannot fit in this machine's memory, before allocating any of it.

A tensor type such as `tensor<1000000x1000000xf32>` verifies (its size fits in 64 bits), but
running it needs 4 TB. numpy would raise MemoryError at best, and at worst the operating system
would overcommit and kill the process half-way. The interpreter and `nnlayout-run` ask here
first and report the size with the value that needs it; the ONNX importer bounds what it
computes at import (`FOLDED_CONSTANT_BYTES`).
"""

from __future__ import annotations

import os

#: The most bytes a constant the ONNX importer computes (a folded node's result) may take:
#: protobuf's bound on a model file, so that folding makes nothing larger than a model could
#: have stored (a hostile ConstantOfShape or Range is refused before it is allocated).
FOLDED_CONSTANT_BYTES = 2**31


def memory_limit() -> int:
    """The bytes of physical memory of this machine: no buffer may need more."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def human_bytes(count: int) -> str:
    """`count` bytes in binary units, e.g. '3.6 TiB'."""
    size, unit = float(count), "B"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"):
        if size < 1024 or unit == "YiB":
            break
        size /= 1024
    return f"{size:.1f} {unit}" if unit != "B" else f"{count} B"


def too_large(nbytes: int, what: str) -> str | None:
    """Why `what` cannot be allocated, or None when `nbytes` fit in memory."""
    return refusal(nbytes, what) if nbytes > memory_limit() else None


def refusal(nbytes: int, what: str) -> str:
    """Why `what`, of `nbytes` bytes (more than this machine has), is not allocated."""
    return (
        f"{what} needs {nbytes:,} bytes ({human_bytes(nbytes)}), more than this machine's "
        f"memory ({human_bytes(memory_limit())}); refusing to allocate it"
    )
