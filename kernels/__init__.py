"""Kernel registry: descriptors and implementations shared by compile time and run time."""
