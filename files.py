"""The files a user names, read and written safely (the rules: docs/robustness-files.md).

Reading: `open_input` opens only regular files (a FIFO or a device is refused before it can
block a read; a path holding a NUL byte is an error, not a ValueError); `read_text` reads an
input as UTF-8 with located decoding errors.

Writing: `Outputs` writes a group of files, each to a temporary file beside its target, and
renames them over their targets (in order, with SIGTERM, SIGINT and SIGHUP held back) only
once all are written; on any failure, or a SIGTERM while writing, the temporaries are removed
and no target is touched. A target that is a symbolic link to a file is refused (the tool
never writes through a link it did not make); a device (`/dev/null`, `/dev/stdout`) is written
directly. `refuse_overwriting_inputs` refuses an output that is one of the tool's inputs (by
path or by inode: a hard link). `write_stdout` and `flush_stdout` make a full disk, a closed
stdout or a failed write one error line.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import signal
import stat
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FrameType
from typing import IO, TYPE_CHECKING, BinaryIO, TextIO

from nnlayout.diagnostics import UserError, os_error_reason

if TYPE_CHECKING:
    import numpy as np

# The signals a group of outputs holds back while renaming (the default action of each ends
# the process between two renames) and turns into an exit while writing (the temporaries
# removed). SIGKILL cannot be caught: the content hash of a module and its weights
# (`dialects/weights.py`) tells such a half-renamed pair at load.
_TERMINATING = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
# Output paths that name a file descriptor the caller opened (`-o /dev/stdout` with stdout
# redirected to a file): written as they are, never replaced.
_DESCRIPTOR_ALIAS = re.compile(r"/dev/(stdout|stderr|fd/\d+)|/proc/(self|\d+)/fd/\d+")


class NotARegularFile(OSError):
    """An input path names a FIFO, a device, a socket or a directory (an OSError, so that
    every reader's `cannot read 'PATH': REASON` reports it)."""


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "is a directory"),
        (stat.S_ISFIFO, "is a FIFO (named pipe), not a regular file"),
        (stat.S_ISCHR, "is a character device, not a regular file"),
        (stat.S_ISBLK, "is a block device, not a regular file"),
        (stat.S_ISSOCK, "is a socket, not a regular file"),
    ):
        if test(mode):
            return name
    return "is not a regular file"


def check_path(path: str | os.PathLike[str]) -> None:
    """Raises an OSError (EINVAL) for a path the system cannot name: one holding a NUL byte
    (Python's own error is a ValueError, which no reader expects)."""
    if "\0" in os.fspath(path):
        raise OSError(errno.EINVAL, "the path holds a NUL byte", os.fspath(path))


def open_input(path: str | os.PathLike[str]) -> BinaryIO:
    """Opens a file the user names for reading, in binary. Only a regular file is opened:
    the path is opened without blocking (a FIFO with no writer would hang an ordinary open or
    read) and refused by what it is, a `NotARegularFile`, before a byte is read."""
    check_path(path)
    return open(path, "rb", opener=_open_regular)  # noqa: SIM115 (the caller closes it)


def _open_regular(path: str, flags: int) -> int:
    """`open`'s opener for `open_input`. The descriptor is closed here on any error, signals
    included, and belongs to the file object from the moment it is returned: closing it
    after `os.fdopen` was interrupted (a SIGTERM) closed it twice."""
    descriptor = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFile(
                errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL, _kind(mode), path
            )
        os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def read_npy_header(handle: IO[bytes]) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and dtype (in native byte order) a .npy file's header declares, read from
    `handle` without allocating its data (the header of a hostile file may claim any size).
    A ValueError's message follows the file's name: `is not a .npy file`, ..."""
    import numpy as np

    fmt = np.lib.format
    if handle.read(len(fmt.MAGIC_PREFIX)) != fmt.MAGIC_PREFIX:
        raise ValueError("is not a .npy file")
    version = (handle.read(1) + handle.read(1))[:2]
    readers = {b"\x01\x00": fmt.read_array_header_1_0, b"\x02\x00": fmt.read_array_header_2_0}
    if version not in readers:
        shown = ".".join(str(byte) for byte in version)
        raise ValueError(f"is a .npy file of format version {shown}; float arrays are 1.0 or 2.0")
    try:
        shape, _, dtype = readers[version](handle)
    except (ValueError, EOFError) as error:
        raise ValueError(f"is not a valid .npy file: {error}") from None
    if dtype.hasobject:
        raise ValueError(
            "is not a valid .npy file: it holds Python objects, which are never unpickled"
        )
    return tuple(shape), dtype if dtype.isnative else dtype.newbyteorder("=")


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a regular file's bytes, in hex."""
    with open_input(path) as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def read_text(path: str) -> tuple[str, str]:
    """Reads an input file (`-` is stdin) as UTF-8; returns (text, name for messages). An
    ONNX model (by its name, or by its bytes: on stdin, or under another name) is refused
    with the command that imports it: its bytes may well be UTF-8, and the parser would
    stop at the first control character. A path that names no file is reported as such,
    whatever its name."""
    name = "<stdin>" if path == "-" else path
    model_here = f"'{path}' is an ONNX model; import it first: nnlayout-import {path} -o MODEL.mlir"
    if path.lower().endswith(".onnx") and os.path.isfile(path):
        raise UserError(model_here)
    try:
        if path == "-":
            if sys.stdin is None:  # the process was started with fd 0 closed
                raise UserError("cannot read '<stdin>': stdin is closed")
            data = sys.stdin.buffer.read()
        else:
            with open_input(path) as handle:
                data = handle.read()
    except OSError as error:
        raise UserError(f"cannot read '{name}': {os_error_reason(error)}") from None
    if is_onnx_model(data):
        raise UserError(
            "stdin holds an ONNX model; save it to a file and import it: "
            "nnlayout-import MODEL.onnx -o MODEL.mlir"
            if path == "-"
            else model_here
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UserError(
            f"cannot read '{name}': not UTF-8 text (byte "
            f"0x{data[error.start]:02x} at offset {error.start})"
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n"), name  # as text mode reads it


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Writes an output file as UTF-8, atomically (`Outputs`); an unwritable path is a
    UserError naming it."""
    with Outputs() as outputs:
        outputs.write_text(path, text)


def names_a_file(path: str | os.PathLike[str]) -> bool:
    """Whether writing `path` makes or replaces a regular file (not /dev/stdout, a folder)."""
    try:
        check_path(path)
    except OSError:
        return False
    return os.path.isfile(path) or not os.path.exists(path)


def _identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """(device, inode) of an existing file, None for a path that names none."""
    try:
        check_path(path)
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    return status.st_dev, status.st_ino


def refuse_overwriting_inputs(
    outputs: Sequence[str | os.PathLike[str]],
    inputs: Sequence[str | os.PathLike[str] | None],
    option: str = "-o",
) -> None:
    """Refuses to write any of `outputs` over one of `inputs` (the input file, its weights,
    the arrays it ran on): that would destroy what the tool read. A path is the same file by
    its resolved name or by its inode (a hard link, a link through another folder). `-`,
    None and devices (/dev/stdout) are no files."""
    named = [p for p in inputs if p and p != "-" and names_a_file(p)]
    sources = {Path(p).resolve() for p in named}
    identities = {identity for p in named if (identity := _identity(p)) is not None}
    for written in outputs:
        if not names_a_file(written):
            continue
        identity = _identity(written)
        if Path(written).resolve() in sources or (identity is not None and identity in identities):
            raise UserError(f"'{written}' would overwrite an input; choose another {option} name")


class Outputs:
    """A group of output files written all or nothing (see the module doc):

        with Outputs() as outputs:
            with outputs.open(weights, "wb") as handle: ...
            outputs.write_text(module, text)

    Each file is written to a temporary file beside its target; leaving the block without an
    error renames them over their targets, in the order they were opened (weights before the
    module naming them). An error, or SIGTERM/SIGINT/SIGHUP while writing, removes the
    temporaries: no target is touched. OSErrors become UserErrors naming the target."""

    def __init__(self) -> None:
        self._pending: list[tuple[str, Path]] = []  # (temporary, target), in order
        self._previous: dict[int, object] = {}
        self._renaming = False
        self._deferred: int | None = None  # a signal that came while renaming

    def __enter__(self) -> Outputs:
        self._catch_signals()
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        try:
            if kind is None:
                self._commit()
        finally:
            self._discard()
            self._restore_signals()
        if self._deferred is not None:  # the files are renamed: now end as the signal asks
            raise SystemExit(128 + self._deferred)

    @contextmanager
    def open(self, path: str | os.PathLike[str], mode: str = "wb") -> Iterator[IO]:
        """A handle writing `path` (mode "wb" or "w", UTF-8): a temporary file, or the device
        itself when `path` names one (`/dev/null`, `/dev/stdout`)."""
        target = Path(path)
        try:
            device = _output_kind(target)
            if device:
                with open(target, mode, **_encoding(mode)) as handle:
                    yield handle
                return
            descriptor, temporary = tempfile.mkstemp(
                prefix=f".{target.name}.", suffix=".tmp", dir=target.parent
            )
            self._pending.append((temporary, target))
            os.fchmod(descriptor, _new_file_mode(target))
            with os.fdopen(descriptor, mode, **_encoding(mode)) as handle:
                yield handle
        except OSError as error:
            raise UserError(f"cannot write '{path}': {os_error_reason(error)}") from None

    def write_text(self, path: str | os.PathLike[str], text: str) -> None:
        with self.open(path, "w") as handle:
            handle.write(text)

    def written(self, path: str | os.PathLike[str]) -> Path:
        """Where the bytes of `path` are until the group is committed (to hash them)."""
        return next(
            (Path(temp) for temp, target in self._pending if target == Path(path)), Path(path)
        )

    def _commit(self) -> None:
        """Renames the temporaries over their targets, in order. A terminating signal waits:
        one caught before (its Python handler runs at some later bytecode, possibly between
        two renames) is deferred by `_on_signal`, a new one is blocked."""
        self._renaming = True
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _TERMINATING)
        try:
            for index, (temporary, target) in enumerate(self._pending):
                try:
                    os.replace(temporary, target)
                except OSError as error:
                    del self._pending[:index]
                    raise UserError(f"cannot write '{target}': {os_error_reason(error)}") from None
            self._pending.clear()
        finally:
            self._renaming = False
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def _discard(self) -> None:
        for temporary, _ in self._pending:
            with suppress(OSError):
                os.unlink(temporary)
        self._pending.clear()

    def _catch_signals(self) -> None:
        """While writing, a terminating signal (default action) exits through Python, so
        that the temporaries are removed on the way out."""
        if not _in_main_thread():
            return
        for number in _TERMINATING:
            if signal.getsignal(number) == signal.SIG_DFL:  # (SIGINT: KeyboardInterrupt)
                self._previous[number] = signal.signal(number, self._on_signal)

    def _on_signal(self, number: int, frame: FrameType | None) -> None:
        if self._renaming:
            self._deferred = number
        else:
            raise SystemExit(128 + number)

    def _restore_signals(self) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)  # type: ignore[arg-type]
        self._previous.clear()


def _in_main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _encoding(mode: str) -> dict[str, str]:
    return {} if "b" in mode else {"encoding": "utf-8"}


def _output_kind(target: Path) -> bool:
    """Whether `target` is a device or pipe to write directly (else a regular file to make
    or replace): an alias of an open file descriptor, or a path naming no regular file (a
    device, a FIFO). A directory, and
    a symbolic link to a file or to nothing, are refused: the tool would write through a
    link it did not make."""
    check_path(target)
    if _DESCRIPTOR_ALIAS.fullmatch(os.path.abspath(target)):
        return True  # /dev/stdout, /dev/fd/3: streams the caller set up, whatever they point to
    try:
        status = os.lstat(target)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(status.st_mode):
        try:
            pointed = os.stat(target).st_mode
        except FileNotFoundError:
            pointed = stat.S_IFREG  # dangling: writing would make its target
        if stat.S_ISREG(pointed):
            raise OSError(
                errno.ELOOP,
                f"it is a symbolic link (to '{os.readlink(target)}'); refusing to write through it",
            )
        status = os.stat(target)
    if stat.S_ISDIR(status.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory")
    if stat.S_ISREG(status.st_mode) and not os.access(target, os.W_OK):
        raise PermissionError(errno.EACCES, "permission denied")  # as open() would: no replace
    return not stat.S_ISREG(status.st_mode)


def _new_file_mode(target: Path) -> int:
    """The permissions of a replaced file, or of a new one as open() makes it (0o666 less
    the umask); mkstemp's are 0o600."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def write_stdout(text: str) -> None:
    """Writes `text` to stdout and flushes it: a closed stdout or a failed write (a full
    disk) is a UserError (a closed pipe stays a BrokenPipeError, which tools end quietly)."""
    stream = _stdout()
    try:
        stream.write(text)
    except BrokenPipeError:
        raise
    except OSError as error:
        raise _stdout_error(error) from None
    flush_stdout()


def flush_stdout() -> None:
    """Flushes stdout (what a tool printed): an error is a UserError, once; stdout then
    goes to /dev/null, so that Python's own flush at exit has nothing to fail on."""
    if sys.stdout is None:
        return
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as error:
        raise _stdout_error(error) from None


def silence_stdout() -> None:
    """Points file descriptor 1 at /dev/null: what stays in stdout's buffer goes nowhere."""
    if sys.stdout is not None:
        with suppress(OSError, ValueError):  # (no descriptor: an in-process test's capture)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _stdout() -> TextIO:
    if sys.stdout is None:  # the process was started with fd 1 closed
        raise UserError("cannot write to stdout: stdout is closed")
    return sys.stdout


def _stdout_error(error: OSError) -> UserError:
    silence_stdout()
    return UserError(f"cannot write to stdout: {os_error_reason(error)}")


def print_stdout(*lines: str) -> None:
    """`print` for a tool's output lines (see write_stdout)."""
    write_stdout("".join(f"{line}\n" for line in lines))


def is_onnx_model(data: bytes) -> bool:
    """Whether `data` is a serialised ONNX model with a graph: it starts with the tag of
    ir_version, its first field (no MLIR text starts with that control character, so only
    such bytes pay for importing onnx), and parses as a model."""
    if not data.startswith(b"\x08"):
        return False
    import onnx
    from google.protobuf.message import DecodeError

    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError):
        return False
    return model.HasField("graph")
