"""`nnlayout-run` as a user sees it: files written, summary printed, and every bad input one
clean error (exit 1, a message naming the argument, no traceback)."""

from __future__ import annotations

import re
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from nnlayout.tests.helpers import tool_process

NET = """func.func @net(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>)
    -> (tensor<2x4xf32>, tensor<2x3xf32>) {
  %m = nn.matmul %x, %y : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %r = nn.relu %m : tensor<2x4xf32>
  %n = nn.neg %x : tensor<2x3xf32>
  func.return %r, %n : tensor<2x4xf32>, tensor<2x3xf32>
}
"""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """nnlayout-run in this process (tool_process); the first test starts it as a process."""
    return tool_process("nnlayout-run", args)


def run_process(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nnlayout.tools.run", *args], capture_output=True, text=True
    )


@pytest.fixture
def net(tmp_path: Path) -> Path:
    path = tmp_path / "net.mlir"
    path.write_text(NET)
    return path


def save(path: Path, array: np.ndarray) -> str:
    np.save(path, array)
    return str(path)


def inputs(tmp_path: Path) -> tuple[np.ndarray, np.ndarray, list[str]]:
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    y = rng.standard_normal((3, 4)).astype(np.float32)
    return x, y, [save(tmp_path / "x.npy", x), save(tmp_path / "y.npy", y)]


def clean_error(result: subprocess.CompletedProcess[str], message: str) -> None:
    assert result.returncode == 1, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_good_run_writes_results_and_summaries(net: Path, tmp_path: Path) -> None:
    x, y, paths = inputs(tmp_path)
    out = tmp_path / "out" / "nested"
    result = run_process(str(net), "--input", *paths, "--output-dir", str(out))
    assert result.returncode == 0, result.stderr
    first, second = np.load(out / "result0.npy"), np.load(out / "result1.npy")
    np.testing.assert_allclose(first, np.maximum(x @ y, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(second, -x)
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    for index, (line, saved) in enumerate(zip(lines, (first, second), strict=True)):
        assert line.startswith(f"result{index}: {list(saved.shape)} float32 sum=")
        assert line.endswith(f"crc32={zlib.crc32(saved.tobytes()):08x}")
        assert float(line.split("sum=")[1].split()[0]) == pytest.approx(saved.sum(), 1e-6)


def test_a_result_holding_both_infinities_sums_to_nan_without_a_warning(
    net: Path, tmp_path: Path
) -> None:
    """numpy's "invalid value encountered in reduce" reached stderr as a warning."""
    x = np.array([[np.inf, -np.inf, 1.0]] * 2, np.float32)
    y = np.ones((3, 4), np.float32)
    result = run(
        str(net),
        "--input",
        save(tmp_path / "x.npy", x),
        save(tmp_path / "y.npy", y),
        "--output-dir",
        str(tmp_path / "out"),
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert "result1: [2, 3] float32 sum=nan " in result.stdout


def test_random_inputs_are_reproducible(net: Path, tmp_path: Path) -> None:
    outputs = {}
    for seed in ("3", "3", "4"):
        result = run(str(net), "--random-inputs", seed, "--output-dir", str(tmp_path / seed))
        assert result.returncode == 0, result.stderr
        outputs.setdefault(seed, []).append(result.stdout)
    assert outputs["3"][0] == outputs["3"][1]
    assert outputs["3"][0] != outputs["4"][0]
    x = np.load(tmp_path / "3" / "result1.npy") * -1  # the second result is -x
    assert x.dtype == np.float32 and abs(float(x.mean())) < 1.5 and x.std() > 0.1


def test_pipeline_and_entry(net: Path, tmp_path: Path) -> None:
    text = NET + NET.replace("@net", "@other").replace("nn.relu", "nn.abs")
    net.write_text(text)
    _, _, paths = inputs(tmp_path)
    ambiguous = run(str(net), "--input", *paths, "--output-dir", str(tmp_path))
    clean_error(
        ambiguous,
        "error: the module has 2 public functions (@net, @other); "
        "name the one to run (--entry NAME)",
    )
    chosen = run(
        str(net),
        "-p",
        "canonicalize,cse",
        "--entry",
        "other",
        "--input",
        *paths,
        "--output-dir",
        str(tmp_path),
    )
    assert chosen.returncode == 0, chosen.stderr
    assert (np.load(tmp_path / "result0.npy") >= 0).all()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda d, x, y: [x],
            "error: @net takes 2 input(s) (argument 1 (%x): [2, 3] float32, "
            "argument 2 (%y): [3, 4] float32), got 1",
        ),
        (lambda d, x, y: [x, y, x], "error: @net takes 2 input(s)"),
        (
            lambda d, x, y: [x, save(d / "bad.npy", np.zeros((4, 3), np.float32))],
            "error: argument 2 (%y): expected shape [3, 4] float32, got [4, 3] float32",
        ),
        (
            lambda d, x, y: [save(d / "bad.npy", np.zeros((2, 3), np.float64)), y],
            "error: argument 1 (%x): expected shape [2, 3] float32, got [2, 3] float64",
        ),
        (
            lambda d, x, y: [x, str(d / "net.mlir")],
            "error: argument 2 (%y): '{d}/net.mlir' is not a .npy file",
        ),
        (
            lambda d, x, y: [x, str(d / "missing.npy")],
            "error: argument 2 (%y): cannot read '{d}/missing.npy': no such file or directory",
        ),
    ],
)
def test_bad_inputs(
    net: Path, tmp_path: Path, make: Callable[[Path, str, str], list[str]], message: str
) -> None:
    _, _, (x, y) = inputs(tmp_path)
    result = run(str(net), "--input", *make(tmp_path, x, y), "--output-dir", str(tmp_path))
    clean_error(result, message.format(d=tmp_path))
    assert not (tmp_path / "result0.npy").exists()


def test_npz_and_pickle_files_are_refused(net: Path, tmp_path: Path) -> None:
    _, _, (x, _) = inputs(tmp_path)
    archive = tmp_path / "y.npz"
    np.savez(archive, y=np.zeros((3, 4), np.float32))
    clean_error(
        run(str(net), "--input", x, str(archive), "--output-dir", str(tmp_path)),
        f"error: argument 2 (%y): '{archive}' is not a .npy file",
    )
    objects = tmp_path / "objects.npy"
    np.save(objects, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    clean_error(
        run(str(net), "--input", x, str(objects), "--output-dir", str(tmp_path)),
        f"error: argument 2 (%y): '{objects}' is not a valid .npy file",
    )


def test_missing_inputs_and_bad_module(net: Path, tmp_path: Path) -> None:
    clean_error(
        run(str(net), "--output-dir", str(tmp_path)),
        "error: @net takes 2 input(s): pass them with --input FILE.npy ... "
        "or use --random-inputs SEED",
    )
    net.write_text(
        "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %c = arith.constant dense<1.0> : tensor<2xf32>\n"
        "  %s = nn.add %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
        "  func.return %s : tensor<2xf32>\n}\n"
    )
    clean_error(
        run(str(net), "--random-inputs", "0", "--output-dir", str(tmp_path)),
        f"{net}:2:3: error: the interpreter cannot run 'arith.constant' (no kernel)",
    )
    clean_error(
        run(str(net), "-p", "nope", "--random-inputs", "0", "--output-dir", str(tmp_path)),
        "error: unknown pass 'nope'",
    )


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda d: (d / "file").write_text("") or "file",
            "error: --output-dir '{d}/file' exists and is not a directory",
        ),
        (
            lambda d: (d / "file").write_text("") or "file/sub",
            "error: cannot create --output-dir '{d}/file/sub': not a directory",
        ),
        (
            lambda d: (d / "out" / "result0.npy").mkdir(parents=True) or "out",
            "error: cannot write '{d}/out/result0.npy': is a directory",
        ),
    ],
    ids=["a-file", "under-a-file", "result-is-a-directory"],
)
def test_an_output_dir_that_cannot_be_written_is_named(
    net: Path, tmp_path: Path, make: Callable[[Path], str], message: str
) -> None:
    """It said "File exists", or "'out': Is a directory" for a result0.npy that is one."""
    output_dir = tmp_path / make(tmp_path)
    result = run(str(net), "--random-inputs", "0", "--output-dir", str(output_dir))
    assert result.returncode == 1
    assert result.stderr == message.format(d=tmp_path) + "\n"


def test_profile_times_every_op_of_the_generated_module(net: Path, tmp_path: Path) -> None:
    result = run(
        str(net),
        "-p",
        "default-pipeline{target=avx2}",
        "--random-inputs",
        "0",
        "--output-dir",
        str(tmp_path / "out"),
        "--backend",
        "generated",
        "--profile",
        "3",
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("profile of @net:"))
    assert "3 run(s)" in lines[header]
    rows = lines[header + 2 : lines.index("", header)]
    assert [row.split()[3] for row in rows] == ["nn.matmul", "nn.relu", "nn.neg"]
    assert all(float(row.split()[1]) > 0 for row in rows)
    summary = lines[lines.index("", header) + 2 :]
    assert sum(int(line.split()[2]) for line in summary) == len(rows)


def test_profile_needs_the_generated_backend(net: Path, tmp_path: Path) -> None:
    result = run(str(net), "--random-inputs", "0", "--output-dir", str(tmp_path), "--profile", "2")
    assert result.returncode == 1
    assert result.stderr.startswith("error: --profile times the generated module's ops")


def test_a_wrong_entry_is_reported_before_the_pipeline_fails(tmp_path: Path) -> None:
    path = tmp_path / "calls.mlir"  # bufferize refuses @other's call: the pipeline fails
    path.write_text("""func.func @good(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.relu %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func @other(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @good(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
""")
    wanted = "error: no function @nope in the module (functions: @good, @other)\n"
    ran = run(
        str(path),
        "-p",
        "default-pipeline",
        "--entry",
        "nope",
        "--random-inputs",
        "0",
        "--output-dir",
        str(tmp_path / "out"),
    )
    translated = subprocess.run(
        [
            sys.executable,
            "-m",
            "nnlayout.tools.translate",
            str(path),
            "-p",
            "default-pipeline",
            "--entry",
            "nope",
            "-o",
            str(tmp_path / "m.py"),
        ],
        capture_output=True,
        text=True,
    )
    for result in (ran, translated):
        assert (result.returncode, result.stderr) == (1, wanted)


def test_print_time_sums_the_rows_of_time_passes_but_the_profile(net: Path, tmp_path: Path) -> None:
    result = run(
        str(net),
        "-p",
        "default-pipeline{target=avx2}",
        "--random-inputs",
        "0",
        "--output-dir",
        str(tmp_path),
        "--backend",
        "generated",
        "--profile",
        "2",
        "--time-passes",
        "--print-time",
    )
    assert result.returncode == 0, result.stderr
    rows = {
        name: float(seconds)
        for seconds, name in re.findall(
            r"^ +([0-9.]+) \( *[0-9.]+%\)  (.+)$", result.stderr, re.MULTILINE
        )
    }
    phases = re.search(
        r"^time: parse ([0-9.]+) s, passes ([0-9.]+) s, run ([0-9.]+) s$",
        result.stderr,
        re.MULTILINE,
    )
    assert phases is not None, result.stderr
    parse, passes, ran = (float(group) for group in phases.groups())
    assert parse == pytest.approx(rows["parse and verify"], abs=1e-3)
    assert ran == pytest.approx(rows["translate and load"] + rows["run (generated)"], abs=2e-3)
    assert parse + passes + ran == pytest.approx(rows["Total"] - rows["profile"], abs=3e-3)


QUANTIZED_NET = """func.func @net(%q: tensor<2x3xui8>) -> tensor<2x3xui8> {
  %d = nn.dequantize %q {x_scale = dense<0.5> : tensor<f32>, x_zero_point = dense<128> : tensor<ui8>} : tensor<2x3xui8> -> tensor<2x3xf32>
  %r = nn.relu %d : tensor<2x3xf32>
  %y = nn.quantize %r {y_scale = dense<0.25> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : tensor<2x3xf32> -> tensor<2x3xui8>
  func.return %y : tensor<2x3xui8>
}
"""


@pytest.mark.parametrize("backend", ["interpreter", "generated"])
def test_uint8_arguments_and_results(tmp_path: Path, backend: str) -> None:
    """A module taking and giving quantized data (an imported model with u8 graph input and
    output): a u8 input file, a u8 result saved and summarised as such; a float32 file for
    that argument is one clean error."""
    net = tmp_path / "q.mlir"
    net.write_text(QUANTIZED_NET)
    q = np.array([[0, 100, 128], [129, 200, 255]], dtype=np.uint8)
    out = tmp_path / "out"
    args = ["-p", "default-pipeline", "--backend", backend, "--output-dir", str(out)]
    result = run(str(net), "--input", save(tmp_path / "q.npy", q), *args)
    assert result.returncode == 0, result.stderr
    saved = np.load(out / "result0.npy")
    assert saved.dtype == np.uint8
    want = np.clip(np.rint(np.maximum((q.astype(np.float32) - 128) * 0.5, 0) / 0.25) + 10, 0, 255)
    np.testing.assert_array_equal(saved, want.astype(np.uint8))
    assert result.stdout.startswith("result0: [2, 3] uint8 sum=")
    wrong = save(tmp_path / "f.npy", q.astype(np.float32))
    clean_error(
        run(str(net), "--input", wrong, *args),
        "argument 1 (%q): expected shape [2, 3] uint8, got [2, 3] float32",
    )


BFLOAT16_NET = """func.func @net(%x: tensor<1x4xbf16>) -> tensor<1x4xbf16> {
  %f = nn.cast %x : tensor<1x4xbf16> -> tensor<1x4xf32>
  %r = nn.relu %f : tensor<1x4xf32>
  %y = nn.cast %r : tensor<1x4xf32> -> tensor<1x4xbf16>
  func.return %y : tensor<1x4xbf16>
}
"""


def test_a_bfloat16_argument_reads_what_numpy_saves_of_ml_dtypes_bfloat16(tmp_path: Path) -> None:
    """numpy has no bfloat16: `numpy.save` writes an ml_dtypes.bfloat16 array as 2-byte voids
    ('|V2'), which a bfloat16 argument reads as bfloat16 (and its results are saved alike);
    a float32 file is refused, saying what a bfloat16 file is."""
    import ml_dtypes

    net = tmp_path / "bf16.mlir"
    net.write_text(BFLOAT16_NET)
    x = np.array([[1.5, -2.0, 3.25, -4.0]], ml_dtypes.bfloat16)
    done = run(str(net), "--input", save(tmp_path / "x.npy", x), "--output-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    result = np.load(tmp_path / "result0.npy").view(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(result, np.maximum(x, 0))
    wide = save(tmp_path / "x32.npy", x.astype(np.float32))
    done = run(str(net), "--input", wide, "--output-dir", str(tmp_path / "out"))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "expected shape [1, 4] bfloat16 (an array of ml_dtypes.bfloat16" in done.stderr
    assert "got [1, 4] float32" in done.stderr
