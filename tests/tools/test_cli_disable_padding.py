"""NNLAYOUT_DISABLE_PADDING in the tools: a yes or a no (anything else an error naming the
variable and the pass it would set), it sets padding=false where the pipeline leaves the
option unset, and nnlayout-run and nnlayout-translate read it as nnlayout-opt does."""

from pathlib import Path

import pytest

# 20 output channels: padded to 32 in NCHW16c, so padding decides the kernel.
STEM = (
    "func.func @stem(%x: tensor<1x3x32x32xf32>, %w: tensor<20x3x3x3xf32>, "
    "%b: tensor<20xf32>) -> tensor<1x20x30x30xf32> {\n"
    "  %y = nn.conv2d %x, %w, %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1"
    " : (tensor<1x3x32x32xf32>, tensor<20x3x3x3xf32>, tensor<20xf32>) -> "
    "tensor<1x20x30x30xf32>\n"
    "  func.return %y : tensor<1x20x30x30xf32>\n}\n"
)


@pytest.mark.parametrize(
    ("value", "kernel"),
    [
        ("1", "conv2d_ref"),
        ("True", "conv2d_ref"),
        ("ON", "conv2d_ref"),
        (" yes ", "conv2d_ref"),
        ("0", "conv2d_nchwc"),
        ("Off", "conv2d_nchwc"),
        ("false", "conv2d_nchwc"),
        ("", "conv2d_nchwc"),
        ("maybe", None),
        ("11", None),
    ],
)
def test_disable_padding_variable_is_a_yes_or_a_no(
    value: str,
    kernel: str | None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In any case, spaced or not; anything else is an error naming the variable (True, on,
    " 1" are yeses: none is ignored, leaving padding on)."""
    from nnlayout.tools import opt as opt_tool
    from nnlayout.tools.driver import run_tool

    (tmp_path / "stem.mlir").write_text(STEM)
    monkeypatch.setenv("NNLAYOUT_DISABLE_PADDING", value)
    status = run_tool(
        opt_tool.main, [str(tmp_path / "stem.mlir"), "-p", "select-dispatch{target=avx512}"]
    )
    out, err = capsys.readouterr()
    if kernel is None:
        assert status == 1
        assert err == (
            f"error: select-dispatch: NNLAYOUT_DISABLE_PADDING={value!r}: expected "
            "1, true, yes or on (padding off) or 0, false, no, off or empty (padding "
            "on)\n"
        )
    else:
        assert status == 0, err
        assert f'#nn.kernel<"{kernel}"' in out


def test_disable_padding_variable_sets_what_the_pipeline_leaves_unset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The tools' pipeline parsing turns padding off in each pass with a padding option that
    the spec does not set (a composite such as default-pipeline included); a pass the spec
    gives `padding=true` keeps it, and passes without the option are left as they are."""
    from nnlayout.tools.driver import parse_pipeline
    from nnlayout.transforms import get_all_passes

    spec = "select-dispatch{target=avx2},fuse-post-ops{padding=true},default-pipeline,canonicalize"
    passes = get_all_passes()
    monkeypatch.setenv("NNLAYOUT_DISABLE_PADDING", "1")
    disabled = parse_pipeline(spec, passes).passes
    assert [getattr(p, "padding", None) for p in disabled] == [False, True, False, None]
    assert disabled[0] == passes["select-dispatch"]()(target="avx2", padding=False)
    assert disabled[3] == passes["canonicalize"]()()
    steps = disabled[2].passes()  # type: ignore[attr-defined]
    # default-pipeline's select-dispatch records padding=false; its fuse-post-ops and
    # fuse-matmul-post-ops read that record (their own options stay unset).
    assert [s.padding for s in steps if hasattr(s, "padding")] == [False, None, None]
    monkeypatch.setenv("NNLAYOUT_DISABLE_PADDING", "0")
    assert [getattr(p, "padding", None) for p in parse_pipeline(spec, passes).passes] == [
        True,
        True,
        True,
        None,
    ]


@pytest.mark.parametrize(
    ("spec", "label"),
    [
        ("default-pipeline{target=avx2}", "default-pipeline (select-dispatch)"),
        ("canonicalize,select-dispatch", "select-dispatch"),
    ],
)
def test_bad_disable_padding_value_is_named_by_the_pass_it_would_set(
    spec: str, label: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Named by the step that would take padding=false; a pipeline with no padding option
    left unset does not read the variable."""
    from nnlayout.diagnostics import UserError
    from nnlayout.tools.driver import parse_pipeline
    from nnlayout.transforms import get_all_passes

    monkeypatch.setenv("NNLAYOUT_DISABLE_PADDING", "maybe")
    with pytest.raises(UserError) as raised:
        parse_pipeline(spec, get_all_passes())
    assert raised.value.message == (
        f"{label}: NNLAYOUT_DISABLE_PADDING='maybe': expected 1, true, yes or on (padding off) "
        "or 0, false, no, off or empty (padding on)"
    )
    assert parse_pipeline("canonicalize,select-dispatch{padding=true}", get_all_passes())
    assert parse_pipeline("fuse-post-ops", get_all_passes())  # it reads the module's record


def test_disable_padding_variable_reaches_run_and_translate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """nnlayout-run and nnlayout-translate parse their pipelines as nnlayout-opt does."""
    from nnlayout.tools import run as run_tool_module
    from nnlayout.tools import translate as translate_tool
    from nnlayout.tools.driver import run_tool

    (tmp_path / "stem.mlir").write_text(STEM)
    monkeypatch.setenv("NNLAYOUT_DISABLE_PADDING", "1")
    args = [str(tmp_path / "stem.mlir"), "-p", "default-pipeline{target=avx512}"]
    args.append("--print-ir-after=select-dispatch")
    for main, more in (
        (run_tool_module.main, ["--random-inputs", "0", "--output-dir", str(tmp_path / "out")]),
        (translate_tool.main, ["-o", str(tmp_path / "stem.py")]),
    ):
        assert run_tool(main, args + more) == 0
        dumped = capsys.readouterr().err
        assert '#nn.kernel<"conv2d_ref"' in dumped and "conv2d_nchwc" not in dumped
