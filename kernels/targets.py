"""The targets a pipeline can name, as data: `ref`, `avx2` (blocks of 8), `avx512` (blocks of
16), `onednn` (oneDNN's formats), `onednn-nhwc`, `onednn-nchw8c` and `onednn-nchw16c` (oneDNN
asked for that activation format first), and `host`, the best of them that runs here.
`register_target` adds another without touching any pass; `get_target` finds one by name.

Each built-in target lists its kernel families and gives each provider the options it reads
(`BlockedOptions`, `OneDNNOptions`); a provider given none uses its defaults.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from nnlayout.kernels.blocked.options import BlockedOptions
from nnlayout.kernels.onednn.target_options import OneDNNOptions
from nnlayout.kernels.registry import Target

# Convolutions under this many multiply-accumulates stay plain on every blocking target.
_MIN_BLOCKED_MACS = 1 << 14
_BLOCKED = ("sparse", "blocked", "ref")
# `blas` before `onednn`: numpy's BLAS streams a batch-1 classifier's weights faster than
# oneDNN on the CPUs where that was measured (kernels/blas.py, which applies to those
# products alone and refuses them elsewhere).
_ONEDNN = ("sparse", "blas", "onednn", "blocked", "ref")
# Over oneDNN's first choice: jit_1x1 for 1x1 convolutions on AVX2 machines (over
# brgconv_1x1), and jit_dw for f32 depthwise ones with a window on AVX-512 machines (over
# brdgmm_dw; convolution._measured_preferences keeps the cases where it was measured faster).
_PREFERRED = ("jit_1x1:avx2", "jit_dw:avx512_core")


def _onednn_asking(data_format: str, block: int) -> Target:
    """`onednn` asking oneDNN for `data_format` activations first, with blocked kernels of
    `block` channels where it has no fast convolution for them."""
    return Target(
        f"onednn-{data_format.lower()}",
        f"as onednn, with {data_format} activations where oneDNN has a fast convolution for "
        f"them, else blocked kernels with {block}-channel blocks",
        _ONEDNN,
        (
            BlockedOptions(block=block, min_blocked_macs=_MIN_BLOCKED_MACS),
            OneDNNOptions(data_format=data_format, preferred_implementations=_PREFERRED),
        ),
    )


# The onednn-* targets' blocked kernels take the blocks of the convolutions around them
# (NCHW16c: AVX-512 machines' blocks), or each op falling back to them would cost two reorders.
BUILTIN_TARGETS: tuple[Target, ...] = (
    Target("ref", "reference numpy kernels only, plain layouts", ("ref",)),
    Target(
        "avx2",
        "blocked kernels with 8-channel blocks (256-bit SIMD)",
        _BLOCKED,
        (BlockedOptions(block=8, min_blocked_macs=_MIN_BLOCKED_MACS),),
    ),
    Target(
        "avx512",
        "blocked kernels with 16-channel blocks (512-bit SIMD)",
        _BLOCKED,
        (BlockedOptions(block=16, min_blocked_macs=_MIN_BLOCKED_MACS),),
    ),
    Target(
        "onednn",
        "oneDNN primitives in the formats oneDNN chooses, else blocked kernels with 8-channel "
        "blocks",
        _ONEDNN,
        (
            BlockedOptions(block=8, min_blocked_macs=_MIN_BLOCKED_MACS),
            OneDNNOptions(preferred_implementations=_PREFERRED),
        ),
    ),
    *(_onednn_asking(layout, block) for layout, block in (("NHWC", 8), ("NCHW8c", 8))),
    _onednn_asking("NCHW16c", 16),
)

TARGETS: dict[str, Target] = {}


def register_target(target: Target) -> Target:
    """Makes `target` known by its name; a name taken is refused, as register_pass does (a
    plugin's `avx2` would otherwise change what every pipeline naming avx2 compiles)."""
    if target.name in TARGETS or target.name == "host":
        raise ValueError(f"a target named '{target.name}' is already registered")
    TARGETS[target.name] = target
    return target


for _target in BUILTIN_TARGETS:
    register_target(_target)


def _onednn_loads(cpu_flags: set[str]) -> bool:
    """Whether the oneDNN library loads here (imported only when asked)."""
    from nnlayout.kernels.onednn.binding import available

    return available()


# `host` is the first of these targets whose test passes on this machine's CPU flags.
HOST_CHOICES: tuple[tuple[str, Callable[[set[str]], bool]], ...] = (
    ("onednn", _onednn_loads),
    ("avx512", lambda cpu_flags: "avx512f" in cpu_flags),
    ("avx2", lambda cpu_flags: "avx2" in cpu_flags),
    ("ref", lambda cpu_flags: True),
)


def host_target() -> Target:
    """`host`: `onednn` when the oneDNN library loads here, else `avx512` or `avx2` by the
    CPU flags in /proc/cpuinfo (`ref` without either). Resolved on first use, so that only
    programs asking for it load oneDNN."""
    cpuinfo = Path("/proc/cpuinfo")
    flags = set(cpuinfo.read_text().split()) if cpuinfo.exists() else set()
    base = next(name for name, runs_here in HOST_CHOICES if runs_here(flags))
    return replace(TARGETS[base], name="host", description=f"this machine: {base}")


HOST_BLOCKED = "onednn-nchw16c"


def host_blocked_target() -> tuple[str | None, str]:
    """The target `host` becomes when a module's activations are better kept nChw16c
    (transforms/activation_format.py): `onednn-nchw16c`, where `host` is `onednn` and oneDNN
    runs its avx512_core code (the only code that runs nChw16c convolutions fast); else None,
    and `host` keeps its one format. With why not, when None."""
    if get_target("host").families != TARGETS["onednn"].families:
        return None, "host is not oneDNN here, and its blocked kernels have one format"
    from nnlayout.kernels.onednn.binding import runs_avx512_core

    if not runs_avx512_core():
        return None, (
            "host runs nChw16c convolutions fast only with oneDNN's avx512_core code, which "
            "does not run here"
        )
    return HOST_BLOCKED, ""


def get_target(name: str) -> Target:
    """The target called `name` (`host` resolved on first use); KeyError listing the known
    ones otherwise."""
    if name == "host" and name not in TARGETS:
        TARGETS[name] = host_target()
    if name not in TARGETS:
        known = ", ".join(sorted({*TARGETS, "host"}))  # host is registered when first asked
        raise KeyError(f"unknown target '{name}'; known targets: {known}")
    return TARGETS[name]
