"""`#nn.kernel<...>`: the implementation `select-dispatch` chose for an op, with what later
passes need to know about it, so that no pass has to look the kernel up again:

    #nn.kernel<"conv2d_nchwc", operands = ["NCHW8c", "IHW8iO8o", "C8c"], results = ["NCHW8c"],
               workspace = 0>
    #nn.kernel<"relu_any", operands = ["*"], results = ["*"], in_place = 0>

`operands`/`results` give the layout the kernel wants for each operand and produces for each
result: a layout string, `""` for the plain (logical, row-major) layout, `"csr"` for CSR
storage, or `"*"` for "any layout its producer gives" (all `"*"` operands and results then
take operand 0's layout). `in_place` names the
operand whose buffer the result may overwrite; `workspace` is scratch bytes per call.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from xdsl.dialects.builtin import ArrayAttr, IntAttr, StringAttr
from xdsl.ir import Attribute, Operation, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from nnlayout.dialects.layout import LayoutSpec

ANY_LAYOUT = "*"
PLAIN_LAYOUT = ""
CSR_LAYOUT = "csr"
SPECIAL_LAYOUTS = (ANY_LAYOUT, PLAIN_LAYOUT, CSR_LAYOUT)
NO_IN_PLACE = -1
KERNEL_ATTR = "kernel"


@irdl_attr_definition
class KernelAttr(ParametrizedAttribute):
    name = "nn.kernel"

    kernel_name: StringAttr = param_def()
    operand_layouts: ArrayAttr[StringAttr] = param_def()
    result_layouts: ArrayAttr[StringAttr] = param_def()
    in_place: IntAttr = param_def()
    workspace: IntAttr = param_def()

    def __init__(
        self,
        kernel_name: str,
        operand_layouts: Sequence[str],
        result_layouts: Sequence[str],
        in_place: int | None = None,
        workspace: int = 0,
    ):
        for what, layouts in (
            ("operand_layouts", operand_layouts),
            ("result_layouts", result_layouts),
        ):
            if isinstance(layouts, str):  # else read letter by letter: "layout '8': ..."
                raise TypeError(
                    f"{what} must be a sequence of layout strings, one per "
                    f"{what.split('_')[0]}, e.g. ['NCHW8c'], not the string "
                    f"{layouts!r}"
                )
        super().__init__(
            StringAttr(kernel_name),
            ArrayAttr(StringAttr(text) for text in operand_layouts),
            ArrayAttr(StringAttr(text) for text in result_layouts),
            IntAttr(NO_IN_PLACE if in_place is None else in_place),
            IntAttr(workspace),
        )

    @property
    def operands(self) -> tuple[str, ...]:
        return tuple(a.data for a in self.operand_layouts.data)

    @property
    def results(self) -> tuple[str, ...]:
        return tuple(a.data for a in self.result_layouts.data)

    @property
    def in_place_operand(self) -> int | None:
        return None if self.in_place.data == NO_IN_PLACE else self.in_place.data

    def with_layouts(self, operands: Sequence[str], results: Sequence[str]) -> KernelAttr:
        """The same kernel, in-place rule and workspace, with these layouts (a pass that
        settles "any" layouts, or moves a result into a layout the kernel also writes)."""
        return KernelAttr(
            self.kernel_name.data, operands, results, self.in_place_operand, self.workspace.data
        )

    def verify(self) -> None:
        for text in self.operands + self.results:
            if text not in SPECIAL_LAYOUTS:
                LayoutSpec.parse(text)
        if self.in_place.data != NO_IN_PLACE and not (
            0 <= self.in_place.data < len(self.operand_layouts.data)
        ):
            raise VerifyException(
                f'#nn.kernel<"{self.kernel_name.data}">: in_place operand {self.in_place.data} '
                f"does not exist (the kernel has {len(self.operand_layouts.data)} operands)"
            )
        if self.workspace.data < 0:
            raise VerifyException(
                f'#nn.kernel<"{self.kernel_name.data}">: workspace must be >= 0 bytes'
            )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        def string_list() -> ArrayAttr[StringAttr]:
            return ArrayAttr(
                StringAttr(s)
                for s in parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, lambda: parser.parse_str_literal(" for a layout")
                )
            )

        with parser.in_angle_brackets():
            name = parser.parse_str_literal(" for the kernel name")
            operands: ArrayAttr[StringAttr] = ArrayAttr(())
            results: ArrayAttr[StringAttr] = ArrayAttr(())
            in_place, workspace = NO_IN_PLACE, 0
            seen: set[str] = set()
            while parser.parse_optional_punctuation(",") is not None:
                key_start = parser.pos
                key = parser.parse_identifier()
                if key in seen:
                    parser.raise_error(
                        f"#nn.kernel parameter '{key}' is given twice", key_start, parser.pos
                    )
                seen.add(key)
                parser.parse_punctuation("=")
                if key == "operands":
                    operands = string_list()
                elif key == "results":
                    results = string_list()
                elif key == "in_place":
                    in_place = parser.parse_integer(allow_negative=False, allow_boolean=False)
                elif key == "workspace":
                    workspace = parser.parse_integer(allow_negative=False, allow_boolean=False)
                else:
                    parser.raise_error(
                        f"unknown #nn.kernel parameter '{key}' (expected operands, results, "
                        "in_place or workspace)",
                        key_start,
                        parser.pos,
                    )
        for text in (a.data for a in (*operands.data, *results.data)):
            if text not in SPECIAL_LAYOUTS:
                try:
                    LayoutSpec.parse(text)
                except VerifyException as error:
                    parser.raise_error(str(error))
        return [StringAttr(name), operands, results, IntAttr(in_place), IntAttr(workspace)]

    def print_parameters(self, printer: Printer) -> None:
        def string_list(values: tuple[str, ...]) -> None:
            printer.print_string("[")
            printer.print_list(values, printer.print_string_literal)
            printer.print_string("]")

        with printer.in_angle_brackets():
            printer.print_string_literal(self.kernel_name.data)
            printer.print_string(", operands = ")
            string_list(self.operands)
            printer.print_string(", results = ")
            string_list(self.results)
            if self.in_place_operand is not None:
                printer.print_string(f", in_place = {self.in_place.data}")
            if self.workspace.data:
                printer.print_string(f", workspace = {self.workspace.data}")


@lru_cache(maxsize=1024)
def kernel_attr(
    kernel_name: str,
    operand_layouts: tuple[str, ...],
    result_layouts: tuple[str, ...],
    in_place: int | None,
    workspace: int,
) -> KernelAttr:
    """`KernelAttr(...)`, built once per distinct choice: attributes are immutable, a model
    makes few distinct choices, and building one (xDSL verifies its parameters) costs as
    much as making the choice."""
    return KernelAttr(kernel_name, operand_layouts, result_layouts, in_place, workspace)


def verify_kernel_fits(op: Operation) -> None:
    """An op's `kernel` attribute is an #nn.kernel<...> with a layout for each of its operands
    and results (a hand-written one that is not was silently ignored, or misread later)."""
    kernel = op.attributes.get(KERNEL_ATTR)
    if kernel is None:
        return
    if not isinstance(kernel, KernelAttr):
        raise VerifyException(
            f"{op.name}: attribute '{KERNEL_ATTR}' must be an #nn.kernel<...>, got {kernel}"
        )
    if (len(kernel.operands), len(kernel.results)) != (len(op.operands), len(op.results)):
        raise VerifyException(
            f'{op.name}: #nn.kernel<"{kernel.kernel_name.data}"> gives layouts for '
            f"{len(kernel.operands)} operand(s) and {len(kernel.results)} result(s); the op "
            f"has {len(op.operands)} and {len(op.results)}"
        )


def kernel_of(op: Operation) -> KernelAttr | None:
    """The kernel `select-dispatch` chose for `op`, if any."""
    kernel = op.attributes.get(KERNEL_ATTR)
    return kernel if isinstance(kernel, KernelAttr) else None
