"""nnlayout as an xDSL plugin: its dialects and passes for stock `xdsl-opt`.

pyproject.toml names `NNLAYOUT_UNIVERSE` as an `xdsl.universe` entry point, which xDSL's
`Universe.get_multiverse()` finds in every installed package, so that

    xdsl-opt -p fold-batch-norm model.mlir

reads the `nn` and `layout` dialects and runs nnlayout's passes. Dialects and passes are
imported on first use, as xDSL's own are: listing them costs `xdsl-opt` nothing. xDSL's
dialects (builtin, func, arith, memref) and passes (canonicalize, cse, dce) are xDSL's own
universe's: a name offered twice is an error in xDSL.
"""

from __future__ import annotations

from xdsl.ir import Dialect
from xdsl.universe import Universe

from nnlayout.transforms import own_passes


def _nn() -> Dialect:
    from nnlayout.dialects.nn import NN

    return NN


def _layout() -> Dialect:
    from nnlayout.dialects.layout import Layout

    return Layout


NNLAYOUT_UNIVERSE = Universe(
    all_dialects={"nn": _nn, "layout": _layout},
    all_passes=own_passes(),
)
