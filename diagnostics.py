"""Located diagnostics: where an error is (`Location`), errors a user can cause
(`UserError`, printed as `file:line:col: error: ...` without a traceback, as mlir-opt does) and
`DiagnosticError`, an error at an op that the tools turn into one.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import (
    FileLineColLoc,
)
from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException


@dataclass(order=True)
class Location:
    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class UserError(Exception):
    """An error in the user's input, reported without a traceback."""

    def __init__(
        self,
        message: str,
        location: Location | None = None,
        source_line: str | None = None,
        op: Operation | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.location = location
        self.source_line = source_line
        self.op = op

    def __str__(self) -> str:  # where it escapes as an exception: a generated module's load
        return self.render()

    def render(self) -> str:
        head = (
            f"{self.location}: error: {self.message}"
            if self.location
            else (f"error: {self.message}")
        )
        lines = [head]
        if self.source_line is not None and self.location is not None:
            lines.append(self.source_line)
            lines.append(" " * (self.location.column - 1) + "^")
        elif self.op is not None:
            lines.append(f"note: in operation: {_one_line(self.op)}")
        return "\n".join(lines)


def _one_line(op: Operation) -> str:
    text = str(op).strip().splitlines()
    return text[0] if len(text) == 1 else text[0] + " ..."


def location_of(op: Operation) -> Location | None:
    if isinstance(op.location, FileLineColLoc):
        return Location(op.location.filename.data, op.location.line.data, op.location.column.data)
    return None


def source_line(text: str | None, location: Location | None) -> str | None:
    if text is None or location is None:
        return None
    lines = text.splitlines()
    return lines[location.line - 1] if 0 < location.line <= len(lines) else None


def error_at(op: Operation, message: str, text: str | None = None) -> UserError:
    location = location_of(op)
    return UserError(message, location, source_line(text, location), op)


def first_message(error: Exception) -> str:
    """The first paragraph of an exception's message, on one line."""
    first = str(error).split("\n\n")[0]
    return " ".join(line.strip() for line in first.splitlines() if line.strip()) or (
        type(error).__name__
    )


class DiagnosticError(DiagnosticException):
    """Raised by passes for problems in the program (not bugs): carries the op to blame."""

    def __init__(self, op: Operation, message: str):
        super().__init__(message)
        self.op = op
        self.message = message


def os_error_reason(error: OSError) -> str:
    """What went wrong, without the path (messages name it once): `no such file or
    directory`, as the rest of a message after a colon is in lower case."""
    reason = error.strerror or str(error)
    return reason[:1].lower() + reason[1:]
