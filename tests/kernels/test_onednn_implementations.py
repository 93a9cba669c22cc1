"""Which oneDNN implementations run: a target's preferred implementation replaces oneDNN's
first choice, a reference implementation (ref:any) is refused and the stem retried, the zoo's
convolutions run the implementation they were chosen for and ResNet's never a reference
one, the small zoo models keep their results, and the zoo table and the implementations
benchmark name what runs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import onnx
import pytest

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.examples.make_models import ZOO, build
from nnlayout.frontends.onnx import import_model
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn.common import ANY
from nnlayout.kernels.onednn.convolution import conv_choice, conv_chosen, conv_geometry, conv_pd
from nnlayout.kernels.onednn.prepared import compiled_for
from nnlayout.kernels.onednn.target_options import OneDNNOptions
from nnlayout.kernels.targets import TARGETS, get_target
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    check_semantics,
    compile_module,
    parse,
    random_inputs,
    tiered,
)
from nnlayout.tests.kernels.test_onednn_kernels import check, conv_program, conv_tags

pytestmark = pytest.mark.onednn


def test_a_preferred_implementation_replaces_onednns_first_choice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """oneDNN offers several implementations of a 1x1 convolution (`next_implementation`,
    ending at its reference one). A target preferring a later one gets it, on the same
    activation formats, and the compiled program runs it with the same results; a preference
    oneDNN does not offer, or offers only for another instruction set (the avx2 code it also
    lists on an AVX-512 machine, or its sse41 code), keeps its first choice."""
    module = parse(conv_program(16, 24, 9, 1, "[1, 1]", "[0, 0, 0, 0]", "[1, 1]", 1, 9))
    (op,) = [op for op in module.walk() if op.name == "nn.conv2d"]
    geometry = conv_geometry(op)
    first = conv_choice(geometry)
    assert not isinstance(first, str)
    pd = conv_pd(geometry, first.formats[0].value, ANY, first.formats[2].value)
    offered = [pd.implementation]
    while pd.next_implementation():
        offered.append(pd.implementation)
    assert offered[0] == first.implementation and offered[-1].startswith("ref")
    assert pd.implementation == offered[-1]  # the last one stays when there is no next
    isa = first.implementation.rpartition(":")[2]
    later = next(
        name for name in offered[1:] if name != first.implementation and name.endswith(f":{isa}")
    )
    chosen = conv_choice(geometry, "", (later,))
    assert not isinstance(chosen, str) and chosen.implementation == later
    assert (chosen.formats[0], chosen.formats[2]) == (first.formats[0], first.formats[2])
    assert conv_choice(geometry, "", ("no_such_implementation",)) == first
    other_isa = [name for name in offered[1:-1] if not name.endswith(f":{isa}")]
    assert other_isa  # sse41 code at least, on AVX2 and AVX-512 machines alike
    assert conv_choice(geometry, "", tuple(other_isa)) == first

    onednn = get_target("onednn")
    later_first = replace(OneDNNOptions.of(onednn), preferred_implementations=(later,))
    target = replace(onednn.with_options(later_first), name="onednn-later")
    monkeypatch.setitem(TARGETS, target.name, target)
    compiled = check(module, random_inputs(module), onednn_ops=1, target=target.name)
    (conv,) = [op for op in compiled.walk() if op.name == "nn.conv2d"]
    assert compiled_for(conv)[0].pd.implementation == later


@pytest.mark.parametrize(
    ("window", "dnnl_type", "jit_dw"),
    [(3, b.dnnl_f32, True), (5, b.dnnl_f32, True), (1, b.dnnl_f32, False), (3, b.dnnl_bf16, False)],
    ids=["3x3", "5x5", "1x1", "3x3-bf16"],
)
def test_depthwise_convolutions_with_a_window_prefer_jit_dw_in_nhwc(
    window: int, dnnl_type: int, jit_dw: bool
) -> None:
    """On AVX-512 oneDNN's first choice for a channels-last depthwise convolution is
    brdgmm_dw; the built-in targets take jit_dw on the same formats for f32 windows larger
    than 1x1, where it was measured faster, and keep brdgmm_dw for 1x1 windows (DenseNet's
    batch norms) and bf16 (whose weights oneDNN chooses when it binds: its first choice is
    what runs). The compiled program runs the choice, with the same results."""
    pad = f"[{window // 2}, {window // 2}, {window // 2}, {window // 2}]"
    module = parse(conv_program(32, 32, 14, window, "[1, 1]", pad, "[1, 1]", 32, 14))
    (op,) = [op for op in module.walk() if op.name == "nn.conv2d"]
    geometry = replace(conv_geometry(op), data_type=dnnl_type)
    first = conv_choice(geometry)
    if isinstance(first, str) or not first.implementation.startswith("brdgmm_dw:avx512_core"):
        pytest.skip(f"oneDNN's first choice here is not brdgmm_dw on AVX-512: {first}")
    preferred = OneDNNOptions.of(get_target("onednn")).preferred_implementations
    chosen = conv_choice(geometry, "", preferred)
    assert not isinstance(chosen, str)
    assert chosen.implementation.startswith("jit_dw:") == jit_dw, chosen.implementation
    assert chosen.formats[0] == chosen.formats[2] == first.formats[0]
    assert first.formats[0].layout == "NHWC"
    if dnnl_type == b.dnnl_f32:
        compiled = check(module, random_inputs(module), onednn_ops=1)
        (conv,) = [op for op in compiled.walk() if op.name == "nn.conv2d"]
        assert compiled_for(conv)[0].pd.implementation == chosen.implementation


@pytest.mark.parametrize("name", sorted(ZOO))
def test_every_zoo_convolution_runs_the_implementation_it_was_chosen_for(name: str) -> None:
    """The primitive as it is run, built from the layouts on the op's types (post-ops
    included), is oneDNN's fast choice, not ref:any: a brgconv chosen with format `any`
    came back as ref:any once named (a plain destination with a sigmoid post-op)."""
    module = import_model(build(name, small=True), inline_limit=1 << 30).module
    planned = compile_module(module, "onednn", padding=True, pipeline=DEFAULT_PIPELINE)
    convs = [
        op
        for op in planned.walk()
        if isinstance(op, nn.Conv2dOp | nn.FusedConv2dOp | nn.ConvTranspose2dOp) and kernel_of(op)
    ]
    assert convs
    for op in convs:
        implementation = compiled_for(op)[0].pd.implementation
        assert not implementation.startswith("ref"), (op.name, implementation)
        if not isinstance(op, nn.ConvTranspose2dOp):
            assert implementation == conv_chosen(op, get_target("onednn")).implementation


def test_resnet_convolutions_never_keep_a_reference_implementation() -> None:
    module = import_model(build("resnet50", small=True), inline_limit=1 << 30).module
    compiled = compile_module(module, "onednn", padding=True)
    convs = [op for op in compiled.walk() if op.name == "nn.conv2d"]
    assert convs and all(kernel_of(op).kernel_name.data == "conv2d_onednn" for op in convs)
    for op in convs:
        geometry = conv_geometry(op)
        choice = conv_chosen(op, get_target("onednn"))
        assert not choice.implementation.startswith("ref"), choice
        # The primitive as it is run, rebuilt from the layouts now on the op's types, is the
        # one oneDNN chose (1x1 weights named Oihw16o used to get ref:any here).
        tags = conv_tags(op, geometry)
        assert conv_pd(geometry, *tags).implementation == choice.implementation


@pytest.mark.parametrize("name", tiered(sorted(ZOO), ["resnet50", "unet"]))
def test_small_zoo_models_keep_their_results(name: str) -> None:
    """With and without channel padding; concats, residual adds, depthwise convolutions,
    batch norms, poolings, relus, clips and transposed convolutions run in oneDNN, the rest
    in numpy, with reorders between."""
    module = import_model(build(name, small=True), inline_limit=1 << 30).module
    check_semantics(module, random_inputs(module), targets=["onednn"])


def test_a_reference_implementation_is_refused_and_the_stem_retried(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Forcing oneDNN's 'any' source to nChw8c reproduces the slow stem (ref:any for 3
    padded channels): the kernel says so, then retries with other sources (nchw, then the
    same channels-last format in and out)."""
    from nnlayout.kernels.onednn import convolution
    from nnlayout.kernels.onednn.formats import by_layout

    blocked = by_layout("data", "NCHW8c").value
    real = convolution.conv_pd

    def forced(g, src, weights, dst, only_blocked=False):
        return real(g, blocked if src == ANY or only_blocked else src, weights, dst)

    module = parse(conv_program(3, 16, 12, 3, "[1, 1]", "[1, 1, 1, 1]", "[1, 1]", 1, 12))
    (op,) = [op for op in module.walk() if op.name == "nn.conv2d"]
    geometry = conv_geometry(op)
    try:
        monkeypatch.setattr(convolution, "conv_pd", forced)
        conv_choice.cache_clear()
        choice = conv_choice(geometry)
        assert not isinstance(choice, str) and choice.formats[0].value != blocked
        assert not choice.implementation.startswith("ref")
        monkeypatch.setattr(convolution, "conv_pd", lambda *a: forced(*a, only_blocked=True))
        conv_choice.cache_clear()
        reason = conv_choice(geometry)
        assert isinstance(reason, str)
        assert "oneDNN chose ref:any for a 3-channel nChw8c source" in reason
        target = get_target("onednn")
        assert convolution.conv_accepts(op, target, True) == reason
    finally:
        conv_choice.cache_clear()


def test_the_zoo_table_marks_every_implementation_that_is_not_onednns_fast_code() -> None:
    from nnlayout.benchmarks.zoo_latency import counts

    assert counts(
        {
            "jit:avx2": 3,
            "conv:any+ref:any": 1,
            "numpy (oneDNN: ref:any)": 2,
            "ref:any": 1,
            "conv:any+jit:avx2": 1,
        },
        mark_ref=True,
    ) == (
        "jit:avx2 x3, REF numpy (oneDNN: ref:any) x2, conv:any+jit:avx2 x1, "
        "REF conv:any+ref:any x1, REF ref:any x1"
    )


def test_the_implementations_benchmark_times_what_the_target_chooses(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`benchmarks/onednn_implementations` lists, per convolution, oneDNN's implementations
    with the first (*) and the target's (>) marked, and totals for both."""
    from nnlayout.benchmarks import onednn_implementations
    from nnlayout.benchmarks.startup import THREAD_VARIABLES

    for variable in THREAD_VARIABLES:
        monkeypatch.setenv(variable, "1")  # restored after the test (main pins them)
    assert onednn_implementations.main(["resnet50", "--small", "--repeats", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split(": ", 1)[1].split("  ") for line in lines if " x " in line]
    assert len(rows) > 5
    preferred = OneDNNOptions.of(get_target("onednn")).preferred_implementations
    for cells in rows:
        (first,) = [cell for cell in cells if cell.startswith("*")]
        (chosen,) = [cell for cell in cells if cell.lstrip("*").startswith(">")]
        assert chosen == first or chosen[1:].startswith(preferred)
    assert lines[-1].startswith("total, ms: oneDNN's first ")
    with pytest.raises(SystemExit) as refused:  # a usage error (benchmarks/startup.py)
        onednn_implementations.main(["no_such_model"])
    assert refused.value.code == 2
    assert "unknown model(s) no_such_model" in capsys.readouterr().err


def test_the_implementations_benchmark_reads_an_onnx_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """An .onnx file is imported as `nnlayout-import` would (a torchvision export, say); one
    it cannot read is a located error and status 1, not a traceback."""
    from nnlayout.benchmarks import onednn_implementations
    from nnlayout.benchmarks.startup import THREAD_VARIABLES

    for variable in THREAD_VARIABLES:
        monkeypatch.setenv(variable, "1")
    path = tmp_path / "mobile.onnx"
    onnx.save(build("mobilenet_v2", small=True), path)
    assert onednn_implementations.main([str(path), "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"\n{path}: ") and "dw" in out
    assert out.splitlines()[-1].startswith("total, ms: oneDNN's first ")
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model")
    assert onednn_implementations.main([str(broken)]) == 1
    assert f"{broken}: " in capsys.readouterr().err
