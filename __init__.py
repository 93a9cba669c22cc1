"""nnlayout: a layout-aware neural-network compiler built on xDSL."""
