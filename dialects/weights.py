"""Where the values of `nn.constant external "name"` live.

A module whose constants are stored outside the IR text carries the attribute
`nn.weights = "model.npz"` on its `builtin.module`. The path is relative to the directory of the
.mlir file the module was read from (the current directory for stdin); `nnlayout-opt -o` in
another directory rewrites it to stay right. The file is a numpy .npz archive, read with
`allow_pickle=False`, mapping each external name to its array.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.utils.exceptions import DiagnosticException

from nnlayout.diagnostics import os_error_reason
from nnlayout.dialects.nn import ConstantOp, numpy_dtype, tensor_type

WEIGHTS_ATTR = "nn.weights"
# What `load_weights` gives a module without a weights file (told apart from an empty one).
NO_WEIGHTS: Mapping[str, np.ndarray] = MappingProxyType({})


class WeightsError(DiagnosticException):
    """A missing or inconsistent weights file or entry."""


def attach_weights_file(module: ModuleOp, relative_path: str) -> None:
    module.attributes[WEIGHTS_ATTR] = StringAttr(relative_path)


def weights_path(module: ModuleOp, source_path: str | None) -> Path | None:
    """The weights file of `module`, resolved against the directory of `source_path`."""
    attribute = module.attributes.get(WEIGHTS_ATTR)
    if attribute is None:
        return None
    if not isinstance(attribute, StringAttr):
        raise WeightsError(f"module attribute {WEIGHTS_ATTR} must be a string, got {attribute}")
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
        with open(path, "rb") as handle:  # (np.load would call a text file "pickled data")
            is_zip = handle.read(4) == b"PK\x03\x04"
        archive = np.load(path, allow_pickle=False) if is_zip else None
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        reason = os_error_reason(error) if isinstance(error, OSError) else error
        raise WeightsError(f"cannot read weights file '{path}': {reason}") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise WeightsError(f"weights file '{path}' is not an .npz archive")
    return archive


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
    try:
        array = np.asarray(weights[name])
    # A pickled member (never unpickled), a corrupt or truncated one (read only now).
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
        raise WeightsError(
            f"nn.constant: external constant {quoted} cannot be read from the weights file: {error}"
        ) from None
    expected = tuple(tensor_type(op.output).get_shape())
    element_type = tensor_type(op.output).element_type
    dtype = numpy_dtype(element_type)
    if array.shape != expected or array.dtype != dtype:
        raise WeightsError(
            f"nn.constant: external constant {quoted} has shape {list(array.shape)} and dtype "
            f"{array.dtype}; the IR expects {list(expected)} {dtype}"
        )
    return array
