"""What every reader and writer of modules shares: the context with nnlayout's dialects, the
located parser, the one verifier, the printer, and `read_module` (a file to a verified
module)."""

from nnlayout.ir.context import make_context
from nnlayout.ir.module import read_module
from nnlayout.ir.parser import parse_module
from nnlayout.ir.printer import print_module
from nnlayout.ir.verify import verify_module

__all__ = ["make_context", "parse_module", "print_module", "read_module", "verify_module"]
