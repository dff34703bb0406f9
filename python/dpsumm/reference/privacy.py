"""Numpy twins of the quantizer, MWEM and noise samplers (to be written)."""

__all__: list[str] = []
