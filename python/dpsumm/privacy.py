"""CSPRNG, noise samplers, the h2 quantizer and product-distribution MWEM (to be written)."""

__all__: list[str] = []
