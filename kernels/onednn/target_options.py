"""oneDNN's options on a target (`OneDNNOptions`), read by its convolution kernels alone: the
activation format asked of oneDNN first, and the implementations preferred to its first
choice. Importing this module does not load the library."""

from __future__ import annotations

from dataclasses import dataclass

from nnlayout.kernels.registry import ProviderOptions


@dataclass(frozen=True)
class OneDNNOptions(ProviderOptions):
    """How a target asks oneDNN for its convolutions."""

    # The activation format (a layout of ours) asked of oneDNN's convolutions first; empty:
    # oneDNN's own choice. Which is fastest depends on the network (see the README).
    data_format: str = ""
    # oneDNN implementations (name prefixes) taken over its first choice for a convolution
    # where it offers one of them for the same instruction set and activation formats (the
    # built-in targets prefer jit_1x1 to brgconv_1x1 on AVX2 machines, and jit_dw to
    # brdgmm_dw for depthwise windows on AVX-512 ones, where each was measured faster;
    # docs/tools.md).
    preferred_implementations: tuple[str, ...] = ()

    def check(self, target: str) -> None:
        # A list would not hash (choices are cached by it), a string would match by prefix.
        if not isinstance(self.preferred_implementations, tuple) or not all(
            isinstance(name, str) for name in self.preferred_implementations
        ):
            raise TypeError(
                f"target {target}: preferred_implementations must be a tuple "
                f"of implementation names, got {self.preferred_implementations!r}"
            )
