"""Reading a module from a file the user names: read, parsed and verified in one step."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from nnlayout.files import read_text
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.ir.verify import verify_module


def read_module(path: str) -> tuple[Context, ModuleOp, str]:
    """Reads, parses and verifies the module in `path` (`-` is stdin): the context it was
    parsed in, the module, and its text (to locate later errors in)."""
    text, name = read_text(path)
    ctx = make_context()
    module = parse_module(ctx, text, name)
    verify_module(module, text)
    return ctx, module, text
