"""The oneDNN binding's constants against the C headers, the format map against oneDNN's own
reorders, primitives with post-ops and a user scratchpad against numpy, and the error paths
(a failing call names itself; an unloadable library is explained once)."""

from __future__ import annotations

import ctypes
import importlib.metadata
import os
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from nnlayout.dialects.layout import LayoutSpec
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import primitives as p
from nnlayout.kernels.onednn.binding import DnnlError, MemoryDesc, PostOp
from nnlayout.kernels.onednn.common import reorder_array
from nnlayout.kernels.onednn.formats import FORMATS, Format, by_layout, identify, names
from nnlayout.kernels.reference import REFERENCE_KERNELS

pytestmark = pytest.mark.onednn


# ------------------------------------------------------------------ header cross-check
def include_dir() -> Path | None:
    try:
        files = importlib.metadata.distribution("onednn-devel-cpu-gomp").files or []
    except importlib.metadata.PackageNotFoundError:
        return None
    header = next((f for f in files if f.name == "dnnl_types.h" and "oneapi" in str(f)), None)
    return None if header is None else Path(str(header.locate())).parent


def active_lines(text: str, defined: set[str]) -> list[str]:
    """The lines of a header that its #ifdef / #if 0 blocks keep, given `defined`."""
    kept, stack = [], []
    for line in text.splitlines():
        words = line.split()
        directive = words[0] if words and words[0].startswith("#") else ""
        if directive == "#ifdef":
            stack.append(words[1] in defined)
        elif directive == "#ifndef":
            stack.append(True)  # include guards
        elif directive == "#if":
            stack.append(words[1] != "0")
        elif directive == "#else":
            stack[-1] = not stack[-1]
        elif directive == "#endif":
            stack.pop()
        elif all(stack):
            kept.append(line)
    return kept


def header_values(directory: Path) -> dict[str, int]:
    """Every enumerator of the type headers and every `#define DNNL_ARG_*` with its value,
    computed as a C compiler would (implicit values count up; aliases resolve)."""
    defined = set(re.findall(r"^#define (\w+)", (directory / "dnnl_config.h").read_text(), re.M))
    values: dict[str, int] = {}
    for name in ("dnnl_common_types.h", "dnnl_types.h"):
        text = "\n".join(active_lines((directory / name).read_text(), defined))
        text = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)
        for macro, expr in re.findall(r"^#define (DNNL_(?:ARG|MAX)_\w+) (\w+)\s*$", text, re.M):
            values[macro] = values[expr] if expr in values else int(expr, 0)
        for body in re.findall(r"typedef enum\s*\{(.*?)\}", text, re.S):
            following = 0
            for item in filter(None, (i.strip() for i in body.split(","))):
                enumerator, _, expr = (part.strip() for part in item.partition("="))
                if expr:
                    expr = expr.rstrip("uU")
                    following = values[expr] if expr in values else int(expr, 0)
                values[enumerator] = following
                following += 1
    return values


@pytest.fixture(scope="module")
def header() -> dict[str, int]:
    directory = include_dir()
    if directory is None:
        pytest.skip("onednn-devel-cpu-gomp==2023.2.0 (the headers) is not installed")
    return header_values(directory)


def test_parser_follows_c_rules(header: dict[str, int]) -> None:
    assert header["dnnl_nchw"] == header["dnnl_abcd"]  # an alias
    assert header["dnnl_forward"] == header["dnnl_forward_training"] == 64
    assert header["DNNL_ARG_SRC"] == header["DNNL_ARG_SRC_0"] == 1


def test_every_binding_constant_matches_the_header(header: dict[str, int]) -> None:
    constants = {
        name: value
        for name, value in vars(b).items()
        if re.fullmatch(r"dnnl_[a-z0-9_]+|DNNL_[A-Z0-9_]+", name) and isinstance(value, int)
    }
    assert len(constants) > 40
    wrong = {n: (v, header.get(n)) for n, v in constants.items() if header.get(n) != v}
    assert not wrong, f"constants differing from the header (ours, header's): {wrong}"
    for status, name in b.STATUS_NAMES.items():
        assert header[f"dnnl_{name}"] == status


def test_every_format_tag_matches_the_header(header: dict[str, int]) -> None:
    wrong = {
        f.tag: (f.value, header.get(f"dnnl_{f.tag}"))
        for f in FORMATS
        if header.get(f"dnnl_{f.tag}") != f.value
    }
    assert not wrong, f"format tags differing from the header (ours, header's): {wrong}"


# ------------------------------------------------------------------------- formats
# A logical shape per role whose channel counts do not divide the blocks (padding).
ROLE_SHAPES = {
    "data": (2, 5, 3, 4),
    "weights": (20, 5, 3, 2),
    "grouped": (6, 2, 3, 3),
    "depthwise": (20, 1, 3, 2),
    "vector": (7,),
    "matrix": (3, 5),
    "matrix_weights": (4, 6),
}


def role_shape(fmt: Format) -> tuple[int, ...]:
    """ROLE_SHAPES[fmt.role], but for blocked grouped weights two groups of twice the o
    block: oneDNN pads o within each group, which our layouts name only when no group
    needs it (`test_grouped_formats_need_whole_blocks_per_group`)."""
    if fmt.role == "grouped" and (block := LayoutSpec.parse(fmt.layout).block_product("O")) > 1:
        return (4 * block, 5, 3, 2)
    return ROLE_SHAPES[fmt.role]


def onednn_shape(role: str, shape: tuple[int, ...]) -> tuple[int, ...]:
    """oneDNN's dims for our logical shape: grouped weights are 5-D (g, o, i, h, w)."""
    if role == "depthwise":
        return (shape[0], 1, 1, *shape[2:])
    if role == "grouped":  # two groups
        return (2, shape[0] // 2, *shape[1:])
    return shape


def reorder(array: np.ndarray, src: MemoryDesc, dst: MemoryDesc) -> np.ndarray:
    compiled = p.Compiled(p.reorder_pd(src, dst), (b.DNNL_ARG_SRC, b.DNNL_ARG_DST))
    out = np.full(dst.size // 4, np.nan, dtype=np.float32)
    compiled(
        {b.DNNL_ARG_SRC: array, b.DNNL_ARG_DST: out}, np.empty(compiled.scratchpad_bytes, np.uint8)
    )
    return out


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f"{f.role}-{f.tag}")
def test_layout_spec_packs_like_onednn(fmt) -> None:
    shape = role_shape(fmt)
    logical = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    dims = onednn_shape(fmt.role, shape)
    plain = MemoryDesc.with_tag(dims, by_layout(fmt.role, "").value)
    blocked = MemoryDesc.with_tag(dims, fmt.value)
    ours = LayoutSpec.parse(fmt.layout).pack(logical)
    assert ours.nbytes == blocked.size
    np.testing.assert_array_equal(reorder(logical, plain, blocked), ours.ravel())


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f"{f.role}-{f.tag}")
def test_identify_round_trip(fmt) -> None:
    dims = onednn_shape(fmt.role, role_shape(fmt))
    found = identify(MemoryDesc.with_tag(dims, fmt.value), fmt.role)
    assert found is not None and found.value == fmt.value and found.layout == fmt.layout
    assert by_layout(fmt.role, found.kernel_layout).layout == fmt.layout


@pytest.mark.parametrize(
    "fmt",
    [f for f in FORMATS if f.role == "grouped" and LayoutSpec.parse(f.layout).is_blocked],
    ids=lambda f: f.tag,
)
def test_grouped_formats_need_whole_blocks_per_group(fmt) -> None:
    """Two groups of 1.5 o blocks: oneDNN pads each group to 2 blocks (4 in all), our
    layout would pad O = 3 blocks to 3, so the format is not ours to name there."""
    block = LayoutSpec.parse(fmt.layout).block_product("O")
    dims = (2, block * 3 // 2, 5, 3, 2)
    md = MemoryDesc.with_tag(dims, fmt.value)
    ours = LayoutSpec.parse(fmt.layout).element_count((3 * block, 5, 3, 2)) * 4
    assert md.size != ours
    assert identify(md, "grouped") is None
    assert not names(fmt, dims) and names(fmt, (2, 2 * block, 5, 3, 2))


# ---------------------------------------------------------------------- primitives
def conv_ref(
    x: np.ndarray, w: np.ndarray, bias: np.ndarray, stride: int = 1, pad: int = 1, groups: int = 1
) -> np.ndarray:
    """An NCHW convolution (3x3, stride 1, pads 1 unless told) through the reference kernel."""
    from xdsl.dialects.builtin import TensorType, f32
    from xdsl.utils.test_value import create_ssa_value

    from nnlayout.dialects import nn

    values = [create_ssa_value(TensorType(f32, a.shape)) for a in (x, w, bias)]
    op = nn.Conv2dOp(*values, strides=[stride] * 2, pads=[pad] * 4, dilations=[1, 1], groups=groups)
    return REFERENCE_KERNELS[nn.Conv2dOp](op, [x, w, bias])


def test_primitive_creation_is_counted_once_per_primitive() -> None:
    """`CREATED` counts each primitive when it is created (lazily: at its first execution
    for eager=False), not when it is asked for again."""
    md = MemoryDesc.with_tag((1, 8, 5, 5), by_layout("data", "NHWC").value)
    before = (p.CREATED.count, p.CREATED.seconds)
    compiled = p.Compiled(
        p.eltwise_pd(b.dnnl_eltwise_tanh, md, md), (b.DNNL_ARG_SRC, b.DNNL_ARG_DST), eager=False
    )
    assert p.CREATED.count == before[0]
    data = np.ones(200, np.float32)
    compiled({b.DNNL_ARG_SRC: data, b.DNNL_ARG_DST: data})
    compiled({b.DNNL_ARG_SRC: data, b.DNNL_ARG_DST: data})
    assert p.CREATED.count == before[0] + 1 and p.CREATED.seconds > before[1]
    np.testing.assert_allclose(data, np.tanh(np.tanh(1.0)), rtol=1e-6)


@pytest.mark.parametrize(
    ("post_ops", "expected"),
    [
        ((PostOp.eltwise(b.dnnl_eltwise_relu, 0.0),), lambda y, s: np.maximum(y, 0)),
        ((PostOp.eltwise(b.dnnl_eltwise_relu, 0.1),), lambda y, s: np.where(y > 0, y, 0.1 * y)),
        ((PostOp.eltwise(b.dnnl_eltwise_clip, 0.0, 6.0),), lambda y, s: np.clip(y, 0, 6)),
        ((PostOp.sum(), PostOp.eltwise(b.dnnl_eltwise_relu)), lambda y, s: np.maximum(y + s, 0)),
    ],
)
def test_convolution_post_ops_and_user_scratchpad(post_ops, expected) -> None:
    rng = np.random.default_rng(1)
    x, w = (rng.standard_normal(s).astype(np.float32) for s in ((1, 16, 9, 9), (24, 16, 3, 3)))
    bias = rng.standard_normal(24).astype(np.float32)
    residual = rng.standard_normal((1, 24, 9, 9)).astype(np.float32)
    nhwc, ohwi = by_layout("data", "NHWC").value, by_layout("weights", "OHWI").value
    pd = p.convolution_pd(
        *(
            MemoryDesc.with_tag(s, t)
            for s, t in (((1, 16, 9, 9), nhwc), ((24, 16, 3, 3), ohwi), ((24,), 2))
        ),
        MemoryDesc.with_tag((1, 24, 9, 9), nhwc),
        (1, 1),
        (1, 1),
        (1, 1),
        (1, 1),
        post_ops,
    )
    compiled = p.Compiled(pd, (b.DNNL_ARG_SRC, b.DNNL_ARG_WEIGHTS, b.DNNL_ARG_BIAS, b.DNNL_ARG_DST))
    out = np.ascontiguousarray(residual.transpose(0, 2, 3, 1))  # the sum post-op reads it
    args = {
        b.DNNL_ARG_SRC: np.ascontiguousarray(x.transpose(0, 2, 3, 1)),
        b.DNNL_ARG_WEIGHTS: np.ascontiguousarray(w.transpose(0, 2, 3, 1)),
        b.DNNL_ARG_BIAS: bias,
        b.DNNL_ARG_DST: out,
    }
    if compiled.scratchpad_bytes:
        with pytest.raises(ValueError, match="scratchpad"):
            compiled(args)
    compiled(args, np.empty(compiled.scratchpad_bytes, np.uint8))
    want = expected(conv_ref(x, w, bias), residual)
    np.testing.assert_allclose(out.transpose(0, 3, 1, 2), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("channels", "size", "stride"), [(24, 10, 1), (32, 9, 2), (96, 112, 2)])
def test_depthwise_post_op_is_the_two_convolutions(channels: int, size: int, stride: int) -> None:
    """A 1x1 convolution with clip(0, 6), a fused 3x3 depthwise (PostOp.depthwise, its weights
    and bias as DNNL_ARG_ATTR_POST_OP_DW arguments) and clip(0, 6) computes the two
    convolutions in sequence, at oneDNN's output size ceil(size / stride). The largest shape
    is MobileNetV2's 16->96 at 112x112, where oneDNN fuses in its jit_1x1 kernel (the others
    get ref_fused_convolution, the two primitives one after the other)."""
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 3, (1, 16, size, size)).astype(np.float32)
    w1 = (rng.standard_normal((channels, 16, 1, 1)) / 4).astype(np.float32)
    wd = (rng.standard_normal((channels, 1, 3, 3)) / 3).astype(np.float32)
    b1, bd = (rng.standard_normal(channels).astype(np.float32) for _ in range(2))
    out = (size - 1) // stride + 1
    nhwc = by_layout("data", "NHWC").value
    clip = PostOp.eltwise(b.dnnl_eltwise_clip, 0.0, 6.0)
    pd = p.convolution_pd(
        MemoryDesc.with_tag(x.shape, nhwc),
        MemoryDesc.with_tag(w1.shape, by_layout("weights", "OHWI").value),
        MemoryDesc.with_tag((channels,), 2),
        MemoryDesc.with_tag((1, channels, size, size), nhwc),
        (1, 1),
        (1, 1),
        (0, 0),
        (0, 0),
        (clip, PostOp.depthwise(stride), clip),
    )
    dw_weights = b.DNNL_ARG_ATTR_POST_OP_DW | b.DNNL_ARG_WEIGHTS
    args = (b.DNNL_ARG_SRC, b.DNNL_ARG_WEIGHTS, b.DNNL_ARG_BIAS, b.DNNL_ARG_DST)
    compiled = p.Compiled(pd, (*args, dw_weights, b.DNNL_ARG_ATTR_POST_OP_DW | b.DNNL_ARG_BIAS))
    assert compiled.memories[b.DNNL_ARG_DST].md.shape == (1, channels, out, out)
    goihw = MemoryDesc.with_tag((channels, 1, 1, 3, 3), 6)  # dnnl_goihw
    result = np.empty((1, out, out, channels), np.float32)
    compiled(
        {
            b.DNNL_ARG_SRC: np.ascontiguousarray(x.transpose(0, 2, 3, 1)),
            b.DNNL_ARG_WEIGHTS: w1.reshape(-1),
            b.DNNL_ARG_BIAS: b1,
            b.DNNL_ARG_DST: result,
            dw_weights: reorder_array(wd, goihw, compiled.memories[dw_weights].md),
            b.DNNL_ARG_ATTR_POST_OP_DW | b.DNNL_ARG_BIAS: bd,
        },
        np.empty(compiled.scratchpad_bytes, np.uint8),
    )
    middle = np.clip(conv_ref(x, w1, b1, pad=0), 0, 6)
    want = np.clip(conv_ref(middle, wd, bd, stride=stride, groups=channels), 0, 6)
    np.testing.assert_allclose(result.transpose(0, 3, 1, 2), want, rtol=1e-5, atol=1e-5)


def test_buffers_are_checked() -> None:
    md = MemoryDesc.with_tag((1, 8, 2, 2), by_layout("data", "").value)
    compiled = p.Compiled(
        p.eltwise_pd(b.dnnl_eltwise_abs, md, md), (b.DNNL_ARG_SRC, b.DNNL_ARG_DST)
    )
    x = np.ones((1, 8, 2, 2), np.float32)
    with pytest.raises(ValueError, match="float32 buffer of 128 bytes"):
        compiled({b.DNNL_ARG_SRC: x, b.DNNL_ARG_DST: np.empty(16, np.float64)})
    with pytest.raises(ValueError, match="no buffer for argument 17"):
        compiled({b.DNNL_ARG_SRC: x})


def test_a_failing_call_is_named() -> None:
    plain = by_layout("data", "").value
    with pytest.raises(
        DnnlError,
        match=r"dnnl_convolution_forward_primitive_desc_create "
        r"failed: invalid_arguments",
    ):
        p.convolution_pd(
            MemoryDesc.with_tag((1, 3, 8, 8), plain),
            MemoryDesc.with_tag((4, 5, 3, 3), plain),
            None,  # 5 != 3 channels
            MemoryDesc.with_tag((1, 4, 8, 8), plain),
            (1, 1),
            (1, 1),
            (1, 1),
            (1, 1),
        )


def test_unavailable_library_is_explained_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(b, "_load", lambda: DnnlError("no wheel here"))
    monkeypatch.setattr(b, "_warned", False)
    with pytest.warns(b.OneDNNUnavailableWarning, match="no wheel here.*numpy kernels"):
        assert not b.available()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not b.available()
    with pytest.raises(DnnlError, match="no wheel here"):
        b.lib()


def test_host_target_without_onednn_follows_the_cpu_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    from nnlayout.kernels.targets import host_target

    assert host_target().families == ("sparse", "blas", "onednn", "blocked", "ref")
    monkeypatch.setattr(b, "available", lambda: False)
    flags = (
        set(Path("/proc/cpuinfo").read_text().split()) if Path("/proc/cpuinfo").exists() else set()
    )
    expected = "avx512" if "avx512f" in flags else "avx2" if "avx2" in flags else "ref"
    host = host_target()
    assert host.name == "host" and host.description == f"this machine: {expected}"
    assert "onednn" not in host.families


@pytest.mark.parametrize(
    ("chosen", "seen"),
    [
        ({}, {"GOMP_SPINCOUNT": "1000"}),
        ({"OMP_WAIT_POLICY": "passive"}, {"OMP_WAIT_POLICY": "passive"}),
        ({"GOMP_SPINCOUNT": "5"}, {"GOMP_SPINCOUNT": "5"}),
    ],
)
def test_libgomp_loads_with_a_short_spin_unless_the_user_chose(
    monkeypatch: pytest.MonkeyPatch, chosen: dict[str, str], seen: dict[str, str]
) -> None:
    """libgomp reads OMP_WAIT_POLICY and GOMP_SPINCOUNT when it loads, with the library: our
    default spin count is in the environment then, only if the user set neither, and gone
    afterwards."""
    names = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
    for name in names:
        monkeypatch.delenv(name, raising=False)
    for name, value in chosen.items():
        monkeypatch.setenv(name, value)
    at_load = []
    real = ctypes.CDLL

    def recording(path: str) -> ctypes.CDLL:
        at_load.append({name: os.environ[name] for name in names if name in os.environ})
        return real(path)

    monkeypatch.setattr(ctypes, "CDLL", recording)
    assert not isinstance(b._load.__wrapped__(), DnnlError)
    assert at_load == [seen]
    assert {name: os.environ[name] for name in names if name in os.environ} == chosen


def test_onednn_says_whether_it_runs_avx512_core_code() -> None:
    """Its choices of code and weight formats follow the instruction set it runs: avx512_core
    where the CPU has the four AVX-512 extensions it needs, avx2 where ONEDNN_MAX_CPU_ISA caps
    it (which is how a run on an AVX-512 machine checks the AVX2 choices)."""
    import subprocess
    import sys

    ask = "from nnlayout.kernels.onednn.binding import runs_avx512_core as r; print(r())"
    capped = subprocess.run(
        [sys.executable, "-c", ask],
        capture_output=True,
        text=True,
        env=dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2"),
        check=True,
    )
    assert capped.stdout.strip() == "False"
    if not CAPPED_HERE:
        flags = set(Path("/proc/cpuinfo").read_text().split())
        assert b.runs_avx512_core() == ({"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags)


# oneDNN reads its cap under either name (DNNL_ is the older spelling it still honours).
ISA_CAPS = ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA")
CAPPED_HERE = any(name in os.environ for name in ISA_CAPS)


@pytest.mark.slow  # lit itself runs in scripts/test.sh, under both instruction sets
@pytest.mark.parametrize("name", ISA_CAPS)
def test_lit_checks_the_instruction_set_its_tests_run(name: str) -> None:
    """lit.cfg asks oneDNN which code it runs (%onednn_isa) in lit's own process: the tests
    it starts must see the same cap, under whichever name it was given."""
    import shutil
    import subprocess
    import sys

    lit = shutil.which("lit", path=str(Path(sys.executable).parent)) or shutil.which("lit")
    if lit is None:
        pytest.skip("lit is not installed")
    root = Path(__file__).resolve().parents[2] / "lit"
    env = {k: v for k, v in os.environ.items() if k not in ISA_CAPS}
    env[name] = "AVX2"
    done = subprocess.run(
        [lit, "-q", str(root / "transforms" / "select-dispatch-onednn.mlir")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_small_primitives_are_made_and_run_on_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Waking OpenMP's other threads costs more than they save on small work, so a primitive
    below the thresholds is made and run on one thread, and the caller's thread count is
    restored after each call (it is the user's: a primitive made next takes it, and a
    thread-dependent choice like a brgconv's weight blocks follows it). A large primitive
    leaves the count alone. (A user's TBB or SYCL build, NNLAYOUT_ONEDNN_LIBRARY, runs every
    primitive on all its threads.)"""
    if not b.loaded_version().openmp:
        pytest.skip(f"{b.loaded_version()} has no OpenMP thread count to set")
    calls: list[int] = []
    real = b.lib().omp_set_num_threads
    monkeypatch.setattr(
        b.lib(), "omp_set_num_threads", lambda count: (calls.append(count), real(count))[1]
    )
    before = b.lib().omp_get_max_threads()
    nc = by_layout("matrix", "").value

    def relu(elements: int) -> tuple[p.Compiled, np.ndarray, np.ndarray]:
        md = MemoryDesc.with_tag((1, elements), nc)
        compiled = p.Compiled(
            p.eltwise_pd(b.dnnl_eltwise_relu, md, md), (b.DNNL_ARG_SRC, b.DNNL_ARG_DST)
        )
        x = np.linspace(-1.0, 1.0, elements, dtype=np.float32)
        out = np.empty_like(x)
        compiled.point({b.DNNL_ARG_SRC: x, b.DNNL_ARG_DST: out})
        return compiled, x, out

    small, x, out = relu(p.SERIAL_ELEMENTS // 4)
    assert small.pd.serial and calls == [1, before, 1, before]  # descriptor, primitive
    small.runner()()
    small.execute()
    assert calls[4:] == [1, before, 1, before]
    np.testing.assert_array_equal(out, np.maximum(x, 0))
    del calls[:]
    large, big_x, big_out = relu(p.SERIAL_ELEMENTS)
    large.runner()()
    assert not large.pd.serial and calls == []
    np.testing.assert_array_equal(big_out, np.maximum(big_x, 0))
    assert b.lib().omp_get_max_threads() == before
