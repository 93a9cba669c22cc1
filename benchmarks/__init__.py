"""Benchmarks: scripts that print tables."""
