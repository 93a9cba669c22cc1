"""Where the values of `nn.constant external "name"` live.

A module whose constants are stored outside the IR text carries the attribute
`nn.weights = "model.npz"` on its `builtin.module`. The path is relative to the directory of the
.mlir file the module was read from (the current directory for stdin); `nnlayout-opt -o` in
another directory rewrites it to stay right. The file is a numpy .npz archive, read with
`allow_pickle=False`, mapping each external name to its array.

A module and its weights file are a pair written together: the tool that writes both
(`nnlayout-import`, `nnlayout-translate`) records the SHA-256 of the weights file's bytes in
the module attribute `nn.weights_sha256`, and loading checks it, so that a weights file of
another write (a tool killed between renaming the two files, a copy of another build) or a
truncated one is refused in one line naming both files. Each member's .npy header (shape and
dtype) is compared with the IR before its data is allocated: a header claiming 10^10 floats
costs nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import BinaryIO

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.utils.exceptions import DiagnosticException

from nnlayout.diagnostics import os_error_reason
from nnlayout.dialects.nn import ConstantOp, numpy_dtype, tensor_type
from nnlayout.files import check_path, open_input, read_npy_header

WEIGHTS_ATTR = "nn.weights"
WEIGHTS_HASH_ATTR = "nn.weights_sha256"
# What `load_weights` gives a module without a weights file (told apart from an empty one).
NO_WEIGHTS: Mapping[str, np.ndarray] = MappingProxyType({})


class WeightsError(DiagnosticException):
    """A missing or inconsistent weights file or entry."""


def attach_weights_file(module: ModuleOp, relative_path: str, sha256: str | None = None) -> None:
    """Names the weights file of `module`, and the SHA-256 of its bytes when given (else
    the module keeps the one it records)."""
    module.attributes[WEIGHTS_ATTR] = StringAttr(relative_path)
    if sha256 is not None:
        module.attributes[WEIGHTS_HASH_ATTR] = StringAttr(sha256)


class WeightsArchive(Mapping[str, np.ndarray]):
    """The arrays of an .npz weights file, read one at a time (as numpy's NpzFile), each
    header checked before its data is allocated (`read`)."""

    def __init__(self, path: Path, handle: BinaryIO):
        self.path = path
        self.zip = zipfile.ZipFile(handle)
        self.members = {
            name.removesuffix(".npy"): name for name in self.zip.namelist() if name.endswith(".npy")
        }

    def __getitem__(self, name: str) -> np.ndarray:
        return self.read(name)

    def __contains__(self, name: object) -> bool:  # (Mapping's would read the array)
        return name in self.members

    def __iter__(self) -> Iterator[str]:
        return iter(self.members)

    def __len__(self) -> int:
        return len(self.members)

    def header(self, name: str) -> tuple[tuple[int, ...], np.dtype]:
        """The shape and (native) dtype the member `name` declares, read without its data."""
        member = self.members[name]
        with self.zip.open(member) as handle:
            try:
                return read_npy_header(handle)
            except ValueError as error:
                raise ValueError(f"its member '{member}' {error}") from None

    def read(self, name: str) -> np.ndarray:
        self.header(name)  # refuses a pickle in our words
        with self.zip.open(self.members[name]) as handle:
            array = np.lib.format.read_array(handle, allow_pickle=False)
        return array.astype(array.dtype.newbyteorder("="), copy=False)


def weights_path(module: ModuleOp, source_path: str | None) -> Path | None:
    """The weights file of `module`, resolved against the directory of `source_path`."""
    attribute = module.attributes.get(WEIGHTS_ATTR)
    if attribute is None:
        return None
    if not isinstance(attribute, StringAttr):
        raise WeightsError(f"module attribute {WEIGHTS_ATTR} must be a string, got {attribute}")
    if "\0" in attribute.data:
        shown = attribute.data.replace("\0", "\\0")
        raise WeightsError(
            f"module attribute {WEIGHTS_ATTR} = '{shown}' holds a NUL byte, which no file name can"
        )
    base = Path(source_path).parent if source_path and source_path != "-" else Path.cwd()
    return base / attribute.data


def move_weights_reference(module: ModuleOp, source_path: str | None, output_path: str) -> None:
    """Makes a relative weights path, read against `source_path`'s directory, relative to
    `output_path`'s instead: where the printed module will be read from."""
    path = weights_path(module, source_path)  # checks that the attribute is a string
    attribute = module.attributes.get(WEIGHTS_ATTR)
    if (
        path is not None
        and isinstance(attribute, StringAttr)
        and not Path(attribute.data).is_absolute()
    ):
        attach_weights_file(module, os.path.relpath(path, Path(output_path).parent))


def load_weights(module: ModuleOp, source_path: str | None) -> Mapping[str, np.ndarray]:
    """The arrays of `module`'s weights file (NO_WEIGHTS when it has none)."""
    path = weights_path(module, source_path)
    if path is None:
        return NO_WEIGHTS
    try:
        check_path(path)
        handle = open_input(path)  # (a FIFO or device refused before it can block)
        if handle.read(4) != b"PK\x03\x04":  # (np.load would call text "pickled data")
            handle.close()
            raise WeightsError(f"weights file '{path}' is not an .npz archive")
        handle.seek(0)
        _check_pair(module, source_path, path, handle)
        return WeightsArchive(path, handle)
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        reason = os_error_reason(error) if isinstance(error, OSError) else error
        raise WeightsError(f"cannot read weights file '{path}': {reason}") from None


def _check_pair(module: ModuleOp, source_path: str | None, path: Path, handle: BinaryIO) -> None:
    """Refuses a weights file whose SHA-256 is not the one `module` records (if any)."""
    if WEIGHTS_HASH_ATTR in module.attributes:
        actual = hashlib.file_digest(handle, "sha256").hexdigest()
        handle.seek(0)
        check_weights_hash(module, source_path, path, actual)


def check_weights_hash(module: ModuleOp, source_path: str | None, path: Path, actual: str) -> None:
    """Raises a WeightsError naming both files unless `actual`, the SHA-256 of the weights
    file `path`, is the one `module` (read from `source_path`) records (if any)."""
    recorded = module.attributes.get(WEIGHTS_HASH_ATTR)
    if recorded is None:
        return
    if not isinstance(recorded, StringAttr) or recorded.data != actual:
        expected = recorded.data if isinstance(recorded, StringAttr) else str(recorded)
        source = "<stdin>" if source_path in (None, "-") else source_path
        raise WeightsError(
            f"'{source}' and its weights file '{path}' are not a pair: the weights' SHA-256 "
            f"is {actual[:16]}..., the module records {expected[:16]}... (files of two "
            "different writes, or one truncated); write both again"
        )


def constant_value(op: ConstantOp, weights: Mapping[str, np.ndarray]) -> np.ndarray:
    """The value of a constant, inline or external, checked against its result type."""
    if op.value is not None:
        return op.inline_array()
    assert op.external is not None
    name = op.external.data
    quoted = json.dumps(name, ensure_ascii=False)  # a name may hold quotes or line breaks
    if weights is NO_WEIGHTS:
        raise WeightsError(
            f"nn.constant: external constant {quoted} needs a weights file, but "
            f"the module names none (module attribute {WEIGHTS_ATTR})"
        )
    if name not in weights:
        raise WeightsError(f"nn.constant: external constant {quoted} is not in the weights file")
    expected = tuple(tensor_type(op.output).get_shape())
    expected_dtype = numpy_dtype(tensor_type(op.output).element_type)
    try:
        if isinstance(weights, WeightsArchive):  # the header checked before allocating
            shape, dtype = weights.header(name)
            fits = shape == expected and dtype == expected_dtype
            array = weights.read(name) if fits else None
        else:
            array = np.asarray(weights[name])
            shape, dtype = array.shape, array.dtype
    # A pickled member (never unpickled), a corrupt or truncated one (read only now).
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
        raise WeightsError(
            f"nn.constant: external constant {quoted} cannot be read from the weights file: {error}"
        ) from None
    if array is None or shape != expected or dtype != expected_dtype:
        raise WeightsError(
            f"nn.constant: external constant {quoted} has shape {list(shape)} and dtype "
            f"{dtype}; the IR expects {list(expected)} {expected_dtype}"
        )
    return array
