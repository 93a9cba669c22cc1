"""The blocked family's options on a target (`BlockedOptions`): the channel block its kernels
declare layouts in, and how small a convolution stays plain. Read by the blocked kernels
alone."""

from __future__ import annotations

from dataclasses import dataclass

from nnlayout.kernels.registry import ProviderOptions


@dataclass(frozen=True)
class BlockedOptions(ProviderOptions):
    """The block `b` of the layouts the blocked kernels ask for on a target, and the size
    under which a convolution is left to a plain kernel."""

    block: int = 1
    # Convolutions with fewer multiply-accumulates stay plain: the reorders around a blocked
    # kernel would cost more than blocking gains.
    min_blocked_macs: int = 0

    @property
    def activation_layout(self) -> str:
        return f"NCHW{self.block}c"

    @property
    def weight_layout(self) -> str:
        """A convolution's weights as its GEMM's right-hand matrix: reduction axes (input
        channels, taps, input lanes) before output channels."""
        return f"IHW{self.block}iO{self.block}o"

    @property
    def plain_input_weight_layout(self) -> str:
        """The same, for a convolution whose input is plain (not blocked)."""
        return f"IHWO{self.block}o"

    @property
    def depthwise_weight_layout(self) -> str:
        return f"OIHW{self.block}o"

    @property
    def channel_vector_layout(self) -> str:
        return f"C{self.block}c"
