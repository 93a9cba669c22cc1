"""Bad inputs that are not MLIR text: .npy arrays, weights archives and ONNX models, built in
a temporary folder (`FILE_CASES`). Every one ends in one short error that names the problem
and where it is, exit status 1, and no traceback. The tools run in-process through
`run_tool`, the console scripts' own entry (test_bad_processes.py runs them as real
processes). Odd but valid inputs (CRLF line ends, big-endian or column-major .npy) are read.

Bad MLIR text is tested by lit, in `lit/errors/`."""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnlayout.files import read_text
from nnlayout.tests.helpers import assert_one_clean_error, onnx_file, onnx_model, run_in_process

pytestmark = pytest.mark.slow  # bad files through real processes (full tier)


NET = """func.func @net(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %m = nn.matmul %x, %y : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return %m : tensor<2x4xf32>
}
"""


def npy(folder: Path, name: str, array: np.ndarray, allow_pickle: bool = False) -> str:
    np.save(folder / name, array, allow_pickle=allow_pickle)
    return str(folder / name)


def good_inputs(folder: Path) -> list[str]:
    return [
        npy(folder, "x.npy", np.ones((2, 3), np.float32)),
        npy(folder, "y.npy", np.ones((3, 4), np.float32)),
    ]


def with_y(make_y: Callable[[Path], str]) -> Callable[[Path], list[str]]:
    """nnlayout-run arguments of NET whose second input is `make_y(folder)`."""

    def args(folder: Path) -> list[str]:
        (folder / "net.mlir").write_text(NET)
        return [str(folder / "net.mlir"), "--input", good_inputs(folder)[0], make_y(folder)]

    return args


def raw(name: str, data: bytes) -> Callable[[Path], str]:
    def write(folder: Path) -> str:
        (folder / name).write_bytes(data)
        return str(folder / name)

    return write


def npy_with_header(shape: tuple[int, ...], data: bytes) -> Callable[[Path], str]:
    """A .npy file whose header claims `shape` (float32) but holds only `data`."""

    def write(folder: Path) -> str:
        with open(folder / "lying.npy", "wb") as handle:
            np.lib.format.write_array_header_1_0(
                handle, {"descr": "<f4", "fortran_order": False, "shape": shape}
            )
            handle.write(data)
        return str(folder / "lying.npy")

    return write


def pickled_weights(folder: Path) -> list[str]:
    """A module whose weights archive holds an object array (a pickle) for its constant."""
    with zipfile.ZipFile(folder / "w.npz", "w") as archive, archive.open("w.npy", "w") as member:
        np.lib.format.write_array(
            member, np.array([{"a": 1}] * 4, dtype=object).reshape(2, 2), allow_pickle=True
        )
    return weights_module(folder)


def corrupt_weights(damage: Callable[[bytes], bytes]) -> Callable[[Path], list[str]]:
    """A module whose weights archive (a zip, by its signature) is damaged by `damage`."""

    def args(folder: Path) -> list[str]:
        np.savez(folder / "w.npz", w=np.arange(4, dtype=np.float32).reshape(2, 2))
        (folder / "w.npz").write_bytes(damage((folder / "w.npz").read_bytes()))
        return weights_module(folder)

    return args


def flip_a_data_byte(archive: bytes) -> bytes:
    at = archive.index(b"\x00\x00\x80\x3f")  # the float 1.0, in the member's data
    return archive[:at] + b"\xff" + archive[at + 1 :]


def weights_module(folder: Path) -> list[str]:
    """w.mlir: a function returning the constant "w" (2x2) of the weights file w.npz."""
    (folder / "w.mlir").write_text(
        'builtin.module attributes {nn.weights = "w.npz"} {\n'
        "  func.func @f() -> tensor<2x2xf32> {\n"
        '    %0 = nn.constant external "w" : tensor<2x2xf32>\n'
        "    func.return %0 : tensor<2x2xf32>\n  }\n}\n"
    )
    return [str(folder / "w.mlir")]


RELU = onnx_model([helper.make_node("Relu", ["x"], ["y"])], {"x": [2, 3]}, ["y"])
CONV_W = {"w": np.ones((4, 3, 3, 3), np.float32)}
CONV = onnx_model(
    [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1")], {"x": [1, 3, 8, 8]}, ["y"], CONV_W
)


def onnx_bytes(data: bytes) -> Callable[[Path], list[str]]:
    def args(folder: Path) -> list[str]:
        (folder / "m.onnx").write_bytes(data)
        return [str(folder / "m.onnx"), "-o", str(folder / "m.mlir")]

    return args


def external_data(location: Callable[[Path], str | None]) -> Callable[[Path], list[str]]:
    """CONV saved with its weight as external data, then pointed at `location(folder)` (None:
    no location entry); a copy of the data is reachable there (outside the model's folder)
    so that only the folder check can refuse it."""

    def args(folder: Path) -> list[str]:
        model_dir = folder / "model"
        model_dir.mkdir()
        model = onnx.ModelProto.FromString(CONV.SerializeToString())
        onnx.save(
            model,
            model_dir / "m.onnx",
            save_as_external_data=True,
            location="w.bin",
            size_threshold=0,
        )
        (folder / "secret.bin").write_bytes((model_dir / "w.bin").read_bytes())
        proto = onnx.load(model_dir / "m.onnx", load_external_data=False)
        entries = proto.graph.initializer[0].external_data
        (entry,) = (e for e in entries if e.key == "location")
        if (value := location(folder)) is None:
            entries.remove(entry)
        else:
            entry.value = value
        (model_dir / "m.onnx").write_bytes(proto.SerializeToString())
        return [str(model_dir / "m.onnx"), "-o", str(folder / "m.mlir")]

    return args


def symlink_out(folder: Path) -> str:
    (folder / "model").mkdir(exist_ok=True)
    os.symlink(folder / "secret.bin", folder / "model" / "link.bin")
    return "link.bin"


# name -> (tool, arguments built in a temporary folder, the expected first line)
FILE_CASES: dict[str, tuple[str, Callable[[Path], list[str]], str]] = {
    "run-too-many-inputs": (
        "nnlayout-run",
        with_y(lambda d: f"{d}/y.npy {d}/y.npy"),
        "error: @net takes 2 input(s)",
    ),
    "run-mis-shaped-input": (
        "nnlayout-run",
        with_y(lambda d: npy(d, "b.npy", np.ones((4, 3), np.float32))),
        "error: argument 2 (%y): expected shape [3, 4] float32, got [4, 3] float32",
    ),
    "run-mis-typed-input": (
        "nnlayout-run",
        with_y(lambda d: npy(d, "b.npy", np.ones((3, 4), np.float64))),
        "error: argument 2 (%y): expected shape [3, 4] float32, got [3, 4] float64",
    ),
    "run-integer-input": (
        "nnlayout-run",
        with_y(lambda d: npy(d, "b.npy", np.ones((3, 4), np.int32))),
        "error: argument 2 (%y): expected shape [3, 4] float32, got [3, 4] int32",
    ),
    "run-scalar-input": (
        "nnlayout-run",
        with_y(lambda d: npy(d, "b.npy", np.float32(1.0))),
        "error: argument 2 (%y): expected shape [3, 4] float32, got [] float32",
    ),
    "run-structured-input": (
        "nnlayout-run",
        with_y(lambda d: npy(d, "b.npy", np.zeros((3, 4), [("a", "<f4")]))),
        "error: argument 2 (%y): expected shape [3, 4] float32, got [3, 4] void32",
    ),
    "run-text-input": (
        "nnlayout-run",
        with_y(raw("y.txt", b"1 2 3 4\n")),
        "error: argument 2 (%y): '{d}/y.txt' is not a .npy file",
    ),
    "run-empty-input": (
        "nnlayout-run",
        with_y(raw("y.npy", b"")),
        "error: argument 2 (%y): '{d}/y.npy' is not a .npy file",
    ),
    "run-npz-input": (
        "nnlayout-run",
        with_y(lambda d: np.savez(d / "y.npz", y=np.ones((3, 4), np.float32)) or f"{d}/y.npz"),
        "error: argument 2 (%y): '{d}/y.npz' is not a .npy file",
    ),
    "run-pickled-input": (
        "nnlayout-run",
        with_y(
            lambda d: npy(
                d, "p.npy", np.array([{"a": 1}] * 12, dtype=object).reshape(3, 4), allow_pickle=True
            )
        ),
        "error: argument 2 (%y): '{d}/p.npy' is not a valid .npy file: it holds Python objects, which are never unpickled",
    ),
    "run-code-in-npy-header": (
        "nnlayout-run",
        with_y(
            raw(
                "h.npy",
                b"\x93NUMPY\x01\x00\x46\x00{'descr': __import__('os').system('touch PWNED'), 'shape': (3, 4)}      \n",
            )
        ),
        "error: argument 2 (%y): '{d}/h.npy' is not a valid .npy file: ",
    ),
    "run-truncated-npy": (
        "nnlayout-run",
        with_y(npy_with_header((3, 4), b"\0" * 10)),
        "error: argument 2 (%y): '{d}/lying.npy' is not a valid .npy file: ",
    ),
    "run-npy-claims-1e12-elements": (
        "nnlayout-run",
        with_y(npy_with_header((1000000, 1000000), b"\0" * 48)),
        "error: argument 2 (%y): expected shape [3, 4] float32, got [1000000, 1000000] float32",
    ),
    "run-missing-input-file": (
        "nnlayout-run",
        with_y(lambda d: f"{d}/absent.npy"),
        "error: argument 2 (%y): cannot read '{d}/absent.npy': no such file or directory",
    ),
    "run-directory-as-input": (
        "nnlayout-run",
        with_y(lambda d: str(d)),
        "error: argument 2 (%y): cannot read '{d}': is a directory",
    ),
    "run-pickled-weights": (
        "nnlayout-run",
        pickled_weights,
        '{d}/w.mlir:3:5: error: nn.constant: external constant "w" cannot be read from the '
        "weights file: its member 'w.npy' is not a valid .npy file: it holds Python objects, "
        "which are never unpickled",
    ),
    "run-truncated-weights": (
        "nnlayout-run",
        corrupt_weights(lambda archive: archive[:200]),
        "{d}/w.mlir:3:5: error: cannot read weights file '{d}/w.npz': File is not a zip file",
    ),
    "run-weights-with-a-bad-checksum": (
        "nnlayout-run",
        corrupt_weights(flip_a_data_byte),
        "{d}/w.mlir:3:5: error: nn.constant: external constant \"w\" cannot be read from the weights file: Bad CRC-32 for file 'w.npy'",
    ),
    "opt-missing-file": (
        "nnlayout-opt",
        lambda d: [f"{d}/absent.mlir"],
        "error: cannot read '{d}/absent.mlir': no such file or directory",
    ),
    **{
        f"{tool.removeprefix('nnlayout-')}-onnx-model": (
            tool,
            lambda d, extra=extra: [onnx_file(RELU)(d)[0], *extra],
            "error: '{d}/m.onnx' is an ONNX model; import it first: nnlayout-import {d}/m.onnx "
            "-o MODEL.mlir",
        )
        for tool, extra in (("nnlayout-opt", []), ("nnlayout-run", ["--output-dir", "out"]))
    },
    "opt-missing-onnx-file": (
        "nnlayout-opt",
        lambda d: [f"{d}/absent.onnx"],
        "error: cannot read '{d}/absent.onnx': no such file or directory",
    ),
    "opt-onnx-model-upper-case": (
        "nnlayout-opt",
        lambda d: (d / "M.ONNX").write_bytes(RELU.SerializeToString()) and [str(d / "M.ONNX")],
        "error: '{d}/M.ONNX' is an ONNX model; import it first: nnlayout-import {d}/M.ONNX "
        "-o MODEL.mlir",
    ),
    "opt-onnx-model-named-otherwise": (
        "nnlayout-opt",
        lambda d: (d / "m.pb").write_bytes(RELU.SerializeToString()) and [str(d / "m.pb")],
        "error: '{d}/m.pb' is an ONNX model; import it first: nnlayout-import {d}/m.pb "
        "-o MODEL.mlir",
    ),
    "opt-binary-file": (
        "nnlayout-opt",
        lambda d: (d / "in.mlir").write_bytes(b"// \x80") and [str(d / "in.mlir")],
        "error: cannot read '{d}/in.mlir': not UTF-8 text (byte 0x80 at offset 3)",
    ),
    "import-missing-file": (
        "nnlayout-import",
        lambda d: [f"{d}/absent.onnx"],
        "error: cannot read '{d}/absent.onnx': no such file or directory",
    ),
    "import-empty-file": ("nnlayout-import", onnx_bytes(b""), "is not a valid ONNX model"),
    "import-garbage": (
        "nnlayout-import",
        onnx_bytes(bytes(range(256)) * 4),
        "is not a valid ONNX model",
    ),
    "import-truncated": (
        "nnlayout-import",
        onnx_bytes(CONV.SerializeToString()[:150]),
        "is not a valid ONNX model",
    ),
    "import-mlir-as-onnx": (
        "nnlayout-import",
        onnx_bytes(NET.encode()),
        "is not a valid ONNX model",
    ),
    "import-weights-to-stdout": (
        "nnlayout-import",
        lambda d: [onnx_file(CONV)(d)[0], "-o", "-"],
        "error: 1 constants are larger than the inline limit and cannot go to stdout; give -o OUT.mlir",
    ),
    "import-unsupported-op": (
        "nnlayout-import",
        onnx_file(
            onnx_model(
                [helper.make_node("Gelu", ["x"], ["y"], name="act", domain="com.microsoft")],
                {"x": [2]},
                ["y"],
            )
        ),
        "error: node 'act' (Gelu): unsupported operator 'Gelu' of domain 'com.microsoft'",
    ),
    "import-opset-too-new": (
        "nnlayout-import",
        onnx_file(
            onnx_model([helper.make_node("Relu", ["x"], ["y"])], {"x": [2]}, ["y"], opset=99)
        ),
        f"error: the model imports opset 99 of the ONNX domain; the installed onnx {onnx.__version__} knows opsets up to {onnx.defs.onnx_opset_version()}",
    ),
    "import-symbolic-dim": (
        "nnlayout-import",
        onnx_file(onnx_model([helper.make_node("Relu", ["x"], ["y"])], {"x": ["batch", 3]}, ["y"])),
        "error: graph input 'x' has a symbolic dimension 'batch' (axis 0)",
    ),
    "import-unknown-dim": (
        "nnlayout-import",
        onnx_file(onnx_model([helper.make_node("Relu", ["x"], ["y"])], {"x": [None, 3]}, ["y"])),
        "error: graph input 'x' has a symbolic dimension (axis 0)",
    ),
    "import-empty-batch": (
        "nnlayout-import",
        onnx_file(onnx_model([helper.make_node("Relu", ["x"], ["y"])], {"x": [0, 3]}, ["y"])),
        "error: graph input 'x' has a zero-size dimension 0; empty tensors are not supported",
    ),
    "import-int64-max-dim": (
        "nnlayout-import",
        onnx_file(
            onnx_model([helper.make_node("Relu", ["x"], ["y"])], {"x": [2**63 - 1, 2]}, ["y"])
        ),
        "error: graph input 'x'",
    ),
    "import-double-input": (
        "nnlayout-import",
        onnx_file(
            onnx_model(
                [helper.make_node("Relu", ["x"], ["y"])],
                {"x": [2]},
                ["y"],
                input_type=TensorProto.DOUBLE,
            )
        ),
        "error: graph input 'x' has element type DOUBLE; nnlayout imports float32, float16 and bfloat16, uint8 and int8 tensors, bool masks and int64 and int32 indices only",
    ),
    "import-conv-channels": (
        "nnlayout-import",
        onnx_file(
            onnx_model(
                [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1")],
                {"x": [1, 5, 8, 8]},
                ["y"],
                CONV_W,
            )
        ),
        "error: node 'conv1' (Conv): nn.conv2d: input has 5 channels but weight expects 3 (groups=1)",
    ),
    "import-clip-min-not-scalar": (
        "nnlayout-import",
        onnx_file(
            onnx_model(
                [helper.make_node("Clip", ["x", "lo"], ["y"], name="clip")],
                {"x": [1, 3]},
                ["y"],
                {"lo": np.array([0.1, 0.2], np.float32)},
            )
        ),
        "error: node 'clip' (Clip): min 'lo' must be a scalar, got shape [2]",
    ),
    "import-clip-max-not-scalar": (
        "nnlayout-import",
        onnx_file(
            onnx_model(
                [
                    helper.make_node(
                        "Constant",
                        [],
                        ["hi"],
                        value=numpy_helper.from_array(np.ones((2, 1), np.float32)),
                    ),
                    helper.make_node("Clip", ["x", "", "hi"], ["y"], name="clip"),
                ],
                {"x": [1, 3]},
                ["y"],
            )
        ),
        "error: node 'clip' (Clip): max 'hi' must be a scalar, got shape [2, 1]",
    ),
    **{
        f"import-{op.lower()}-auto-pad-lowercase": (
            "nnlayout-import",
            onnx_file(
                onnx_model(
                    [
                        helper.make_node(
                            op, ["x", "w"][:inputs], ["y"], name="n", auto_pad="same_upper", **extra
                        )
                    ],
                    {"x": [1, 3, 8, 8]},
                    ["y"],
                    CONV_W,
                )
            ),
            f"error: node 'n' ({op}): unknown auto_pad 'same_upper' (NOTSET, SAME_UPPER, SAME_LOWER or VALID)",
        )
        for op, inputs, extra in (
            ("Conv", 2, {}),
            ("ConvTranspose", 2, {}),
            ("MaxPool", 1, {"kernel_shape": [2, 2]}),
        )
    },
    "import-cycle": (
        "nnlayout-import",
        onnx_file(
            onnx_model(
                [
                    helper.make_node("Add", ["x", "b"], ["a"], name="add"),
                    helper.make_node("Relu", ["a"], ["b"]),
                    helper.make_node("Relu", ["b"], ["y"]),
                ],
                {"x": [2]},
                ["y"],
            )
        ),
        "error: node 'add' (Add): input 'b' is not a graph input, an initializer or the output of an earlier node (undefined, or the graph has a cycle or is not sorted)",
    ),
    "import-undefined-input": (
        "nnlayout-import",
        onnx_file(
            onnx_model(
                [helper.make_node("Add", ["x", "nowhere"], ["y"], name="add")], {"x": [2]}, ["y"]
            )
        ),
        "error: node 'add' (Add): input 'nowhere' is not a graph input",
    ),
    "import-external-absolute": (
        "nnlayout-import",
        external_data(lambda d: f"{d}/secret.bin"),
        "error: initializer 'w' refers to external data '{d}/secret.bin' outside the model's folder; refusing to read it",
    ),
    "import-external-dotdot": (
        "nnlayout-import",
        external_data(lambda d: "../secret.bin"),
        "error: initializer 'w' refers to external data '../secret.bin' outside the model's folder",
    ),
    "import-external-symlink": (
        "nnlayout-import",
        external_data(symlink_out),
        "error: initializer 'w' refers to external data 'link.bin' outside the model's folder",
    ),
    "import-external-no-location": (
        "nnlayout-import",
        external_data(lambda d: None),
        "error: initializer 'w': its external data has no location",
    ),
    "import-external-directory": (
        "nnlayout-import",
        external_data(lambda d: (d / "model" / "sub").mkdir() or "sub"),
        "error: initializer 'w': external data 'sub' in '{d}/model' is not a regular file",
    ),
    "import-external-fifo": (
        "nnlayout-import",
        external_data(lambda d: os.mkfifo(d / "model" / "pipe") or "pipe"),
        "error: initializer 'w': external data 'pipe' in '{d}/model' is not a regular file",
    ),
    "import-external-missing": (
        "nnlayout-import",
        external_data(lambda d: "nothing.bin"),
        "error: initializer 'w': external data file 'nothing.bin' not found in '{d}/model'",
    ),
}


@pytest.mark.parametrize("case", FILE_CASES.values(), ids=FILE_CASES.keys())
def test_file_corpus(
    case: tuple[str, Callable[[Path], list[str]], str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tool, make_args, expected = case
    monkeypatch.chdir(tmp_path)
    args = [piece for arg in make_args(tmp_path) for piece in arg.split(" ")]
    if tool == "nnlayout-run":
        args += ["--output-dir", str(tmp_path / "out")]
    status, out, err = run_in_process(tool, args, capsys, monkeypatch)
    assert_one_clean_error(status, out, err, expected.replace("{d}", str(tmp_path)))
    assert not (tmp_path / "out").exists() and not (tmp_path / "m.mlir").exists()
    assert not (tmp_path / "PWNED").exists()


def test_corpus_is_large_enough() -> None:
    assert len(FILE_CASES) >= 40


def test_windows_line_ends_read_as_text_mode_does(tmp_path: Path) -> None:
    """Files are read as bytes (to recognise ONNX models), then as text mode would."""
    path = tmp_path / "crlf.mlir"
    path.write_bytes(b"// a comment\r\nfunc.func @f() {\r  func.return\r\n}\r\n")
    assert read_text(str(path)) == ("// a comment\nfunc.func @f() {\n  func.return\n}\n", str(path))


@pytest.mark.parametrize("layout", ["big-endian", "fortran-order"])
def test_odd_but_valid_npy_inputs_run(
    layout: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """float32 in the other byte order, or column-major, is still float32 of the right shape
    (the header check once called '>f4' a mismatch with float32)."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    stored = y.astype(">f4") if layout == "big-endian" else np.asfortranarray(y)
    (tmp_path / "net.mlir").write_text(NET)
    args = [
        str(tmp_path / "net.mlir"),
        "--input",
        npy(tmp_path, "x.npy", x),
        npy(tmp_path, "y.npy", stored),
        "--output-dir",
        str(tmp_path / "out"),
    ]
    status, _, err = run_in_process("nnlayout-run", args, capsys, monkeypatch)
    assert status == 0, err
    np.testing.assert_allclose(np.load(tmp_path / "out" / "result0.npy"), x @ y, rtol=1e-6)
