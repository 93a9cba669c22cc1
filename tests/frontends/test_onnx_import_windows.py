"""The ONNX importer's convolution and pooling windows: auto_pad SAME (upper and lower, odd
padding, output_padding of transposed convolutions) and VALID as explicit pads, ceil_mode's
last and first windows, and the attributes that cannot hold, named."""

from __future__ import annotations

import re

import numpy as np
import pytest

from nnlayout.diagnostics import UserError
from nnlayout.frontends.onnx import import_model, same_pads
from nnlayout.tests.frontends.test_onnx_import import (
    CASES,
    X4,
    assert_matches,
    make_model,
    node,
    round_trip,
    run_both,
    weight,
)


def test_conv_transpose_same_upper_odd_padding_follows_the_onnx_spec() -> None:
    """SAME_UPPER puts the odd padding at the end (onnxruntime puts it at the start; onnx's
    reference evaluator and the spec agree with us)."""
    model = make_model(
        [node("ConvTranspose", ["x", "w"], strides=[2, 2], auto_pad="SAME_UPPER")],
        X4,
        ["y"],
        {"w": weight(4, 2, 3, 3)},
    )
    assert "pads [0, 0, 1, 1]" in round_trip(model)
    assert_matches(model, oracle="reference")


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_ceil_mode_drops_a_last_window_that_starts_in_the_padding(op: str) -> None:
    """Width 6, kernel 3, stride 4, pads 1: ceil_mode's third window would start at 8, in
    the end padding; ONNX's spec, its reference evaluator and onnxruntime drop it (width 2),
    as nn does. onnx's shape inference says 3, and the importer refused the model ('nn
    computes shape [1, 4, 4, 2] ... ONNX infers [1, 4, 4, 3]'), then the Relu after it."""
    model = make_model(
        [
            node(
                op,
                ["x"],
                ["p"],
                kernel_shape=[2, 3],
                strides=[2, 4],
                pads=[0, 1, 0, 1],
                ceil_mode=1,
            ),
            node("Relu", ["p"]),
        ],
        {"x": (1, 4, 8, 6)},
        ["y"],
        opset=19,
    )
    assert_matches(model)
    assert_matches(model, oracle="reference")


def test_only_a_window_starting_in_the_padding_excuses_onnx_inference() -> None:
    """The same pool: one more window on W (it would start at 8 >= 6 + 1) is onnx's known
    overcount; one more on H (it would start at 6, inside the 8 rows) would be an nn bug."""
    from nnlayout.frontends.onnx.inference import ceil_mode_overcount

    pool = node(
        "MaxPool", ["x"], ["p"], kernel_shape=[2, 3], strides=[2, 4], pads=[0, 1, 0, 1], ceil_mode=1
    )
    assert ceil_mode_overcount(pool, [1, 4, 4, 3], [1, 4, 4, 2], (1, 4, 8, 6))
    assert not ceil_mode_overcount(pool, [1, 4, 4, 2], [1, 4, 3, 2], (1, 4, 8, 6))
    assert not ceil_mode_overcount(pool, [1, 5, 4, 3], [1, 4, 4, 2], (1, 4, 8, 6))


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
def test_conv_transpose_same_with_output_padding_is_input_times_stride(auto_pad: str) -> None:
    """The spec, onnxruntime and onnx's reference evaluator give 12 x 12 (4 x 3); onnx's
    shape inference adds output_padding (13 x 14), and the importer refused the model."""
    model = make_model(
        [
            node(
                "ConvTranspose",
                ["x", "w"],
                ["t"],
                strides=[3, 3],
                auto_pad=auto_pad,
                output_padding=[1, 2],
            ),
            node("Relu", ["t"]),
        ],
        {"x": (1, 3, 4, 4)},
        ["y"],
        {"w": weight(3, 2, 3, 3)},
    )
    ours, expected = run_both(model, oracle="reference")
    assert ours[0].shape == expected[0].shape == (1, 2, 12, 12)
    np.testing.assert_allclose(ours[0], expected[0], atol=1e-4)


@pytest.mark.parametrize(
    ("op", "attrs", "weights", "message"),
    [
        # onnxruntime and onnx's shape inference give 7 x 9, the spec 8 x 10: refused, named
        (
            "ConvTranspose",
            {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
            (2, 3, 1, 1),
            "auto_pad SAME_UPPER with kernel extent + output_padding below stride 2 on spatial "
            "axis 0: the ONNX spec makes the output input * stride (8), onnxruntime and onnx's "
            "shape inference 7; give pads or output_shape",
        ),
        # was "output_padding [2, 0] must be smaller than the stride", of a model without one
        (
            "ConvTranspose",
            {"strides": [2, 2], "output_shape": [9, 9]},
            (2, 3, 1, 1),
            "output_shape 9 on spatial axis 0 is 2 beyond the transposed convolution's size 7; "
            "ONNX allows up to stride - 1 = 1",
        ),
        # was "nn computes shape [1, 4, 4, 5] for output 'y' but ONNX infers [1, 4, 3, 4]"
        (
            "Conv",
            {"kernel_shape": [2, 2]},
            (4, 2, 1, 1),
            "kernel_shape [2, 2] is not the weight's spatial shape [1, 1]",
        ),
    ],
)
def test_transposed_and_plain_convolution_attributes_that_cannot_hold_are_named(
    op: str, attrs: dict, weights: tuple[int, ...], message: str
) -> None:
    model = make_model(
        [node(op, ["x", "w"], **attrs)], {"x": (1, 2, 4, 5)}, ["y"], {"w": weight(*weights)}
    )
    with pytest.raises(UserError, match=re.escape(message)):
        import_model(model)


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_same_pooling_whose_negative_padding_crops_the_start_is_refused(op: str) -> None:
    """kernel 1, stride 3 on 6 columns: SAME's total padding is -2. onnxruntime's
    AveragePool-19 crops one column at the start (its MaxPool, and AveragePool before opset
    19, refuse); the importer clamped the padding to 0, which crops only the end: other
    windows, other numbers."""
    model = make_model(
        [node(op, ["x"], kernel_shape=[1, 1], strides=[1, 3], auto_pad="SAME_UPPER")],
        {"x": (1, 2, 4, 6)},
        ["y"],
    )
    with pytest.raises(
        UserError,
        match=re.escape(
            "auto_pad SAME_UPPER on spatial axis 1 needs padding -2 (kernel extent 1, stride "
            "3): onnxruntime crops 1 at the start, which nn's pooling cannot; give pads"
        ),
    ):
        import_model(model)


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
def test_same_average_pooling_cropping_only_the_end_matches_onnxruntime(auto_pad: str) -> None:
    """Total padding -1 (kernel 1, stride 2 on 6 columns) or -2 with SAME_LOWER (stride 3):
    onnxruntime's AveragePool-19 crops nothing at the start, as padding clamped to 0 does
    (before opset 19, and for MaxPool, it refuses negative padding)."""
    for strides in ([1, 2], [1, 3]) if auto_pad == "SAME_LOWER" else ([1, 2],):
        assert_matches(
            make_model(
                [
                    node(
                        "AveragePool",
                        ["x"],
                        kernel_shape=[1, 1],
                        strides=strides,
                        auto_pad=auto_pad,
                    )
                ],
                {"x": (1, 2, 4, 6)},
                ["y"],
                opset=19,
            )
        )


@pytest.mark.parametrize(
    ("auto_pad", "expected"),
    [
        ("SAME_UPPER", [1, 0, 1, 1]),  # [top, left, bottom, right]: total 2 on H, 1 on W (odd)
        ("SAME_LOWER", [1, 1, 1, 0]),
    ],
)
def test_same_pads(auto_pad: str, expected: list[int]) -> None:
    assert same_pads([9, 8], [3, 3], [2, 2], [1, 1], auto_pad) == expected


def test_auto_pad_valid_and_same_appear_as_explicit_pads() -> None:
    assert "pads [0, 0, 0, 0]" in round_trip(CASES["conv-valid"])
    assert "pads [1, 1, 2, 2]" in round_trip(CASES["conv-same-upper"])
    assert "pads [2, 2, 1, 1]" in round_trip(CASES["conv-same-lower"])
