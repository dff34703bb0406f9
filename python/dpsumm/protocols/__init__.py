"""The summarization protocols, each in its own module over the shared parties, messages and transport.

* :mod:`dpsumm.protocols.nominations` - owners nominate, the aggregator chooses (the recommended method).
* :mod:`dpsumm.protocols.paper` - Sarpatwar et al. (2019), Alg. 3 (reproduction).
* :mod:`dpsumm.protocols.baselines` - non-private baselines.
"""
