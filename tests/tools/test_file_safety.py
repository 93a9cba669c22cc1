"""One test per file-safety rule of docs/robustness-files.md (the cases of issue 29): what a
tool reads (only regular files, valid paths, headers before data, live values before
running) and what it writes (atomically, nothing left on failure, never through a link or
over an input, a module and its weights as one pair, stdout errors as one line). The tools
run in-process through `run_tool`, the console scripts' entry, except where the case needs
a process of its own (stdout, signals).
"""

from __future__ import annotations

import builtins
import errno
import io
import os
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from onnx import helper

from nnlayout import limits
from nnlayout.diagnostics import UserError
from nnlayout.files import Outputs, file_sha256
from nnlayout.lowering.to_numpy import import_generated
from nnlayout.runtime import limits as runtime_limits
from nnlayout.tests.helpers import (
    assert_one_clean_error,
    onnx_model,
    run_in_process,
    tool_process,
)
from nnlayout.tools import translate
from nnlayout.tools.driver import run_tool

NET = """func.func @net(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %m = nn.matmul %x, %y : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return %m : tensor<2x4xf32>
}
"""
WEIGHTS_MODULE = """builtin.module attributes {nn.weights = "WEIGHTS"} {
  func.func @f(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
    %w = nn.constant external "w" : tensor<2x2xf32>
    %0 = nn.add %x, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    func.return %0 : tensor<2x2xf32>
  }
}
"""


def conv_model(scale: float) -> bytes:
    """An ONNX Conv whose 4x3x3x3 weight (all `scale`) goes to the weights file."""
    weight = np.full((4, 3, 3, 3), scale, np.float32)
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv")
    return onnx_model([node], {"x": [1, 3, 8, 8]}, ["y"], {"w": weight}).SerializeToString()


def imported(folder: Path, scale: float = 1.0, name: str = "m") -> Path:
    """`name`.onnx imported to `name`.mlir and `name`.npz in `folder`."""
    (folder / f"{name}.onnx").write_bytes(conv_model(scale))
    status = run_tool(
        _main("nnlayout-import"), [str(folder / f"{name}.onnx"), "-o", str(folder / f"{name}.mlir")]
    )
    assert status == 0
    return folder / f"{name}.mlir"


def _main(tool: str):  # noqa: ANN202 - the tools' main functions
    from nnlayout.tests.helpers import TOOLS

    return TOOLS[tool]


def tool(
    name: str, args: list[str], capsys: pytest.CaptureFixture[str], mp: pytest.MonkeyPatch
) -> tuple[int, str, str]:
    if name == "nnlayout-translate":
        mp.delenv("NNLAYOUT_TRACEBACK", raising=False)
        status = run_tool(translate.main, args)
        captured = capsys.readouterr()
        return status, captured.out, captured.err
    return run_in_process(name, args, capsys, mp)


@contextmanager
def no_hang(seconds: int = 20) -> Iterator[None]:
    """Fails the test (instead of hanging it) if the block takes longer than `seconds`."""

    def expire(number: int, frame: object) -> None:
        raise TimeoutError(f"hung for {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def leftovers(folder: Path) -> list[str]:
    """Temporary files an interrupted write would leave (`.NAME.XXXX.tmp`)."""
    return [p.name for p in folder.rglob("*.tmp")]


def python_tool(module: str, *args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", f"nnlayout.tools.{module}", *args],
        text=True,
        env={**os.environ, "NNLAYOUT_TRACEBACK": ""},
        timeout=120,
        **kwargs,  # type: ignore[arg-type]
    )


# ------------------------------------------------------------------------- reading
@pytest.mark.parametrize("what", ["input", "weights", "module"])
def test_rule1_fifo_is_refused_at_once(
    what: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FIFO as --input, as the weights file or as the module: refused, not read (it hung)."""
    os.mkfifo(tmp_path / "pipe")
    pipe = str(tmp_path / "pipe")
    (tmp_path / "w.mlir").write_text(WEIGHTS_MODULE.replace("WEIGHTS", "pipe"))
    np.save(tmp_path / "x.npy", np.ones((2, 2), np.float32))
    module = {"module": pipe}.get(what, str(tmp_path / "w.mlir"))
    x = pipe if what == "input" else str(tmp_path / "x.npy")
    args = [module, "--input", x, "--output-dir", str(tmp_path / "out")]
    with no_hang():
        status, out, err = run_in_process("nnlayout-run", args, capsys, monkeypatch)
    reason = "is a FIFO (named pipe), not a regular file"
    expected = {
        "input": f"error: argument 1 (%x): cannot read '{pipe}': {reason}",
        "weights": f"error: cannot read weights file '{pipe}': {reason}",
        "module": f"error: cannot read '{pipe}': {reason}",
    }[what]
    assert_one_clean_error(status, out, err, expected)


def test_rule1_device_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """/dev/zero would be read for ever."""
    status, out, err = run_in_process("nnlayout-import", ["/dev/zero"], capsys, monkeypatch)
    assert_one_clean_error(
        status, out, err, "error: cannot read '/dev/zero': is a character device"
    )


@pytest.mark.parametrize("where", ["external-data", "long-location", "weights-attribute"])
def test_rule2_invalid_path(
    where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A NUL byte in an ONNX external data location or in `nn.weights`, a location too long
    for a file name: an error naming it (a NUL byte was "internal error: embedded null
    byte")."""
    if where == "weights-attribute":
        (tmp_path / "w.mlir").write_text(WEIGHTS_MODULE.replace("WEIGHTS", "w\\00.npz"))
        args = [
            str(tmp_path / "w.mlir"),
            "--random-inputs",
            "0",
            "--output-dir",
            str(tmp_path / "out"),
        ]
        status, out, err = run_in_process("nnlayout-run", args, capsys, monkeypatch)
        expected = "error: module attribute nn.weights = 'w\\0.npz' holds a NUL byte"
        assert_one_clean_error(status, out, err, expected)
        return
    import onnx

    model = onnx.ModelProto.FromString(conv_model(1.0))
    tensor = model.graph.initializer[0]
    tensor.data_location = onnx.TensorProto.EXTERNAL
    tensor.ClearField("raw_data")
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", "w\0.bin" if where == "external-data" else "w" * 300
    (tmp_path / "m.onnx").write_bytes(model.SerializeToString())
    args = [str(tmp_path / "m.onnx"), "-o", str(tmp_path / "m.mlir")]
    status, out, err = run_in_process("nnlayout-import", args, capsys, monkeypatch)
    expected = (
        "error: initializer 'w': its external data location 'w\\x00.bin' holds a NUL byte"
        if where == "external-data"
        else "' is not a usable file name: file name too long"
    )
    assert_one_clean_error(status, out, err, expected)


def test_rule3_weights_header_checked_before_allocating(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A member whose header claims 10^10 floats: named with its shape, nothing allocated (it
    was numpy's MemoryError, "out of memory" naming neither file nor constant)."""
    with zipfile.ZipFile(tmp_path / "w.npz", "w") as archive, archive.open("w.npy", "w") as member:
        np.lib.format.write_array_header_1_0(
            member, {"descr": "<f4", "fortran_order": False, "shape": (100000, 100000)}
        )
        member.write(b"\0" * 64)
    (tmp_path / "w.mlir").write_text(WEIGHTS_MODULE.replace("WEIGHTS", "w.npz"))
    args = [str(tmp_path / "w.mlir"), "--random-inputs", "0", "--output-dir", str(tmp_path / "out")]
    status, out, err = run_in_process("nnlayout-run", args, capsys, monkeypatch)
    assert_one_clean_error(
        status,
        out,
        err,
        f'{tmp_path}/w.mlir:3:5: error: nn.constant: external constant "w" has shape '
        "[100000, 100000] and dtype float32; the IR expects [2, 2] float32",
    )


LIVE = """func.func @f(%x: tensor<16384xf32>) -> tensor<16384xf32> {
BODY  func.return %s : tensor<16384xf32>
}
"""


@pytest.mark.parametrize("shape", ["wide", "chain"])
def test_rule4_live_values_added_up_before_running(
    shape: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """40 values of 64 KiB, with 1 MiB of memory: held all at once (wide) they are refused
    before running; one after another (a chain, each freed after its reader) they run."""
    monkeypatch.setattr(limits, "memory_limit", lambda: 2**20)
    monkeypatch.setattr(runtime_limits, "memory_limit", lambda: 2**20)
    t = "tensor<16384xf32>"
    lines = [
        f"  %v{i} = nn.relu {'%x' if shape == 'wide' or i == 0 else f'%v{i - 1}'} : {t}\n"
        for i in range(40)
    ]
    total = "%v0"
    for i in range(1, 40):
        operand = f"%v{i}" if shape == "wide" else "%v0"
        lines.append(f"  %s{i} = nn.add {total}, {operand} : ({t}, {t}) -> {t}\n")
        total = f"%s{i}"
        if shape == "chain":
            break
    lines.append(f"  %s = nn.neg {total} : {t}\n")
    (tmp_path / "live.mlir").write_text(LIVE.replace("BODY", "".join(lines)))
    args = [
        str(tmp_path / "live.mlir"),
        "--random-inputs",
        "0",
        "--output-dir",
        str(tmp_path / "out"),
    ]
    status, out, err = run_in_process("nnlayout-run", args, capsys, monkeypatch)
    if shape == "chain":
        assert status == 0, err
        return
    # 1 MiB holds the argument and 15 results; the 16th relu (line 17) is one too many.
    assert_one_clean_error(
        status,
        out,
        err,
        f"{tmp_path}/live.mlir:17:3: error: what is live at once after nn.relu (17 values) "
        "needs 1,114,112 bytes (1.1 MiB), more than this machine's memory (1.0 MiB)",
    )


# ------------------------------------------------------------------------- writing
def test_rule5_outputs_replace_atomically(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """-o over an existing file renames a new file over it: a hard link to the old one keeps
    the old bytes (written in place, it would see a half-written file), no temporary stays."""
    (tmp_path / "in.mlir").write_text(NET)
    (tmp_path / "out.mlir").write_text("old\n")
    os.link(tmp_path / "out.mlir", tmp_path / "old.mlir")
    args = [str(tmp_path / "in.mlir"), "-o", str(tmp_path / "out.mlir")]
    status, _, err = run_in_process("nnlayout-opt", args, capsys, monkeypatch)
    assert status == 0, err
    assert (tmp_path / "old.mlir").read_text() == "old\n"
    assert "nn.matmul" in (tmp_path / "out.mlir").read_text()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("failure", ["disk-full", "sigterm"])
def test_rule6_failed_write_leaves_nothing(
    failure: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An import failing while writing its weights (a full disk; SIGTERM) leaves no out.npz,
    no out.mlir and no temporary (it left a partial out.npz)."""
    (tmp_path / "m.onnx").write_bytes(conv_model(1.0))
    write_array = np.lib.format.write_array

    def failing(member: object, array: np.ndarray, **kwargs: object) -> None:
        write_array(member, array[:1], **kwargs)  # some bytes first
        if failure == "sigterm":
            os.kill(os.getpid(), signal.SIGTERM)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np.lib.format, "write_array", failing)
    args = [str(tmp_path / "m.onnx"), "-o", str(tmp_path / "out.mlir")]
    if failure == "sigterm":
        with pytest.raises(SystemExit) as exit_info:
            run_in_process("nnlayout-import", args, capsys, monkeypatch)
        assert exit_info.value.code == 128 + signal.SIGTERM
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # restored
    else:
        status, out, err = run_in_process("nnlayout-import", args, capsys, monkeypatch)
        assert_one_clean_error(
            status, out, err, f"error: cannot write '{tmp_path}/out.npz': no space left on device"
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]


@pytest.mark.parametrize("link", ["weights", "module", "dangling"])
def test_rule7_no_write_through_a_symlink(
    link: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """out.npz (or out.mlir) a link to another file: refused, the file unchanged (the weights
    were written through the link into its target)."""
    (tmp_path / "m.onnx").write_bytes(conv_model(1.0))
    (tmp_path / "precious").write_text("keep\n")
    name = "out.mlir" if link == "module" else "out.npz"
    os.symlink("precious" if link != "dangling" else "nowhere", tmp_path / name)
    args = [str(tmp_path / "m.onnx"), "-o", str(tmp_path / "out.mlir")]
    status, out, err = run_in_process("nnlayout-import", args, capsys, monkeypatch)
    target = "nowhere" if link == "dangling" else "precious"
    assert_one_clean_error(
        status,
        out,
        err,
        f"error: cannot write '{tmp_path}/{name}': it is a symbolic link (to '{target}'); "
        "refusing to write through it",
    )
    assert (tmp_path / "precious").read_text() == "keep\n"
    assert not (tmp_path / "nowhere").exists() and leftovers(tmp_path) == []
    assert not (tmp_path / ("out.npz" if link == "module" else "out.mlir")).exists()


def test_rule7_devices_are_written_directly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """-o /dev/null (a link-free device) and /dev/stdout (a link to one) still work."""
    (tmp_path / "in.mlir").write_text(NET)
    for device in ("/dev/null", "/dev/stdout"):
        status, _, err = run_in_process(
            "nnlayout-opt", [str(tmp_path / "in.mlir"), "-o", device], capsys, monkeypatch
        )
        assert status == 0, err


def test_rule8_run_output_dir_holding_the_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--output-dir` where the --input file is result0.npy: refused before running (the input
    was overwritten by the result, exit 0)."""
    (tmp_path / "net.mlir").write_text(NET)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.save(tmp_path / "result0.npy", x)
    np.save(tmp_path / "y.npy", np.ones((3, 4), np.float32))
    inputs = [str(tmp_path / "result0.npy"), str(tmp_path / "y.npy")]
    args = [str(tmp_path / "net.mlir"), "--input", *inputs, "--output-dir", str(tmp_path)]
    status, out, err = run_in_process("nnlayout-run", args, capsys, monkeypatch)
    assert_one_clean_error(
        status,
        out,
        err,
        f"error: '{tmp_path}/result0.npy' would overwrite an input; choose another "
        "--output-dir name",
    )
    np.testing.assert_array_equal(np.load(tmp_path / "result0.npy"), x)


def test_rule8_translate_weights_copy_over_its_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The input weights named as translate's copy (`net.weights.npz`, also through a hard
    link): used in place, never written over."""
    module = imported(tmp_path)
    planned = tmp_path / "planned.mlir"
    status, _, err = run_in_process(
        "nnlayout-opt",
        [str(module), "-p", "default-pipeline{target=ref}", "-o", str(planned)],
        capsys,
        monkeypatch,
    )
    assert status == 0, err
    os.link(tmp_path / "m.npz", tmp_path / "net.weights.npz")
    before = (tmp_path / "m.npz").read_bytes()
    status, _, err = tool(
        "nnlayout-translate", [str(planned), "-o", str(tmp_path / "net.py")], capsys, monkeypatch
    )
    assert status == 0, err
    assert (tmp_path / "m.npz").read_bytes() == before
    assert os.path.samefile(tmp_path / "m.npz", tmp_path / "net.weights.npz")
    x = np.ones((1, 3, 8, 8), np.float32)
    (result,) = import_generated(tmp_path / "net.py").run(x)
    assert result.shape == (1, 4, 6, 6) and np.allclose(result, 27.0)


def test_rule9_module_and_weights_of_two_writes_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An import killed between renaming its weights and its module leaves new weights
    beside the old module: loading refuses the pair naming both files (it ran with weights
    of another version, silently). A truncated weights file likewise."""
    module = imported(tmp_path, 1.0)
    replace = os.replace
    renamed: list[str] = []

    def killed_after_first(source: str, target: str) -> None:
        if renamed:
            raise SystemExit(128 + signal.SIGKILL)  # what SIGKILL leaves (no cleanup at all)
        renamed.append(target)
        replace(source, target)

    monkeypatch.setattr(os, "replace", killed_after_first)
    (tmp_path / "m.onnx").write_bytes(conv_model(2.0))
    with pytest.raises(SystemExit):
        run_tool(_main("nnlayout-import"), [str(tmp_path / "m.onnx"), "-o", str(module)])
    monkeypatch.setattr(os, "replace", replace)
    assert renamed == [tmp_path / "m.npz"]
    args = [str(module), "--random-inputs", "0", "--output-dir", str(tmp_path / "out")]
    status, out, err = run_in_process("nnlayout-run", args, capsys, monkeypatch)
    assert_one_clean_error(
        status, out, err, f"'{module}' and its weights file '{tmp_path}/m.npz' are not a pair"
    )
    # Nor does translate make a pair of them (its copy would record the new weights' hash).
    args_translate = [str(module), "-p", "default-pipeline{target=ref}", "-o", "net.py"]
    monkeypatch.chdir(tmp_path)
    status, out, err = tool("nnlayout-translate", args_translate, capsys, monkeypatch)
    assert_one_clean_error(status, out, err, "are not a pair")
    assert not list(tmp_path.glob("net*")) and leftovers(tmp_path) == []
    imported(tmp_path, 1.0)  # a good pair again, then truncated
    data = (tmp_path / "m.npz").read_bytes()
    (tmp_path / "m.npz").write_bytes(data[: len(data) // 2])
    status, out, err = run_in_process("nnlayout-run", args, capsys, monkeypatch)
    assert_one_clean_error(status, out, err, "are not a pair")


def test_rule9_generated_module_and_planned_ir_of_two_writes_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A generated module beside the planned IR (or the weights) of another translation."""
    for scale, name in ((1.0, "a"), (2.0, "b")):
        folder = tmp_path / name
        folder.mkdir()
        module = imported(folder, scale)
        status, _, err = tool(
            "nnlayout-translate",
            [str(module), "-p", "default-pipeline{target=ref}", "-o", str(folder / "net.py")],
            capsys,
            monkeypatch,
        )
        assert status == 0, err
    x = np.ones((1, 3, 8, 8), np.float32)
    assert np.allclose(import_generated(tmp_path / "a" / "net.py").run(x)[0], 27.0)
    (tmp_path / "b" / "net.weights.npz").replace(tmp_path / "a" / "net.weights.npz")
    with pytest.raises(UserError, match="and its weights file .* are not a pair"):
        import_generated(tmp_path / "a" / "net.py")
    (tmp_path / "b" / "net.planned.mlir").replace(tmp_path / "a" / "net.planned.mlir")
    with pytest.raises(UserError, match="and its planned IR .* are not a pair"):
        import_generated(tmp_path / "a" / "net.py")


@pytest.mark.parametrize("tool_name", ["opt", "import_onnx"])
@pytest.mark.parametrize("stdout", ["full", "closed"])
def test_rule10_stdout_full_or_closed(tool_name: str, stdout: str, tmp_path: Path) -> None:
    """stdout is /dev/full or closed: one line and exit 1 (it was an internal OSError)."""
    if tool_name == "opt":
        (tmp_path / "in.mlir").write_text(NET * 200)  # more than a stdout buffer
        source = str(tmp_path / "in.mlir")
    else:
        source = str(tmp_path / "m.onnx")
        (tmp_path / "m.onnx").write_bytes(conv_model(1.0))
    args = [source] if tool_name == "opt" else [source, "--inline-weights"]
    if stdout == "full":
        with open("/dev/full", "w") as full:
            done = python_tool(tool_name, *args, stdout=full, stderr=subprocess.PIPE)
        expected = "error: cannot write to stdout: no space left on device"
    else:
        done = python_tool(tool_name, *args, stderr=subprocess.PIPE, preexec_fn=lambda: os.close(1))
        expected = "error: cannot write to stdout: stdout is closed"
    assert_one_clean_error(done.returncode, "", done.stderr, expected)


def test_outputs_group_renames_in_order_and_only_when_complete(tmp_path: Path) -> None:
    """`Outputs` itself: nothing renamed before the block ends, then in order; an error
    inside leaves the old targets and no temporaries."""
    (tmp_path / "a").write_text("old a")
    with pytest.raises(RuntimeError), Outputs() as outputs:
        outputs.write_text(tmp_path / "a", "new a")
        outputs.write_text(tmp_path / "b", "new b")
        assert (tmp_path / "a").read_text() == "old a" and not (tmp_path / "b").exists()
        raise RuntimeError("failed half-way")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]
    with Outputs() as outputs:
        outputs.write_text(tmp_path / "a", "new a")
        outputs.write_text(tmp_path / "b", "new b")
    assert (tmp_path / "a").read_text() == "new a" and (tmp_path / "b").read_text() == "new b"
    assert oct((tmp_path / "b").stat().st_mode & 0o777) != oct(0o600)  # not mkstemp's


@pytest.mark.parametrize("at", ["os.fstat", "os.set_blocking", "io.open"])
def test_rule9_a_signal_while_opening_an_input_ends_as_the_signal(
    at: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A terminating signal (its handler raises SystemExit) while an input is being opened,
    as when hashing the weights just written, at any point up to the file object holding
    the descriptor: the process ends as the signal asks and the descriptor is closed once.
    (Closing it again after `os.fdopen` had made the file object raised EBADF, which
    replaced the SystemExit: status 1 and an internal error.)"""
    (tmp_path / "w.npz").write_bytes(b"bytes")
    module_name, name = at.split(".")
    real = getattr(os if module_name == "os" else builtins, name)

    def interrupted(*args: object, **kwargs: object) -> object:
        real(*args, **kwargs)
        raise SystemExit(128 + signal.SIGTERM)

    before = sorted(os.listdir("/proc/self/fd"))
    for module in (os,) if module_name == "os" else (builtins, io):
        monkeypatch.setattr(module, name, interrupted)
    with pytest.raises(SystemExit) as exit_info:
        file_sha256(tmp_path / "w.npz")
    monkeypatch.undo()
    assert exit_info.value.code == 128 + signal.SIGTERM
    assert sorted(os.listdir("/proc/self/fd")) == before


def test_rule9_sigterm_once_the_weights_are_written_leaves_a_pair(tmp_path: Path) -> None:
    """The case of issue 29 in real processes: re-importing over a model, SIGTERM as soon as
    the new weights reach their full size. Whatever instant the signal lands on, what is
    left is one pair that loads: the old one (killed while writing) or the new one (killed
    while renaming: the signal waits for the renames), never new weights beside the old
    module, and no temporary."""
    weight = np.full((256, 256, 5, 5), 1.0, np.float32)  # 6.5 MB: a write that takes a while
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv")
    model = onnx_model([node], {"x": [1, 256, 5, 5]}, ["y"], {"w": weight})
    (tmp_path / "m.onnx").write_bytes(model.SerializeToString())
    args = [str(tmp_path / "m.onnx"), "-o", str(tmp_path / "out.mlir")]
    assert tool_process("nnlayout-import", args).returncode == 0  # the old pair
    size = (tmp_path / "out.npz").stat().st_size
    outcomes = set()
    for delay in (0.0, 0.001, 0.01, 0.05):
        weight[0, 0, 0, 0] += 1.0  # a new version, of the same size
        model = onnx_model([node], {"x": [1, 256, 5, 5]}, ["y"], {"w": weight})
        (tmp_path / "m.onnx").write_bytes(model.SerializeToString())
        process = subprocess.Popen(
            [sys.executable, "-m", "nnlayout.tools.import_onnx", *args], stderr=subprocess.PIPE
        )
        with no_hang(120):
            while process.poll() is None and not any(
                p.stat().st_size >= size for p in tmp_path.glob(".out.npz.*.tmp")
            ):
                time.sleep(0.0005)  # not a spin: the importer needs the core more
            time.sleep(delay)
            process.send_signal(signal.SIGTERM)
            process.communicate()
        outcomes.add(process.returncode)
        assert leftovers(tmp_path) == []
        text = (tmp_path / "out.mlir").read_text()
        recorded = text.split('nn.weights_sha256 = "')[1].split('"')[0]
        assert file_sha256(tmp_path / "out.npz") == recorded, f"a mixed pair after {delay} s"
    assert outcomes <= {0, -signal.SIGTERM, 128 + signal.SIGTERM}, outcomes
