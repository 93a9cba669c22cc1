"""Importers from other model formats into the nn dialect."""
