"""Homogeneity of response pools: intra-/inter-model similarity, top-N unique models.

Pure computation (numpy/scipy, no Django), one query's pool at a time:

- ``similarity``: unit rows, per-model block sums, intra-/inter-model means, typicality;
- ``neighbours``: nearest neighbours and the top-N unique-models curve;
- ``lexical``: distinct-n, exact duplicates, the TF-IDF fallback embedding;
- ``stats``: histograms, shares, bootstrap over queries, model clustering order;
- ``pipeline``: per-query measures, pooled and per-category summaries;
- ``report``: the JSON-ready dict;
- ``embedding``: the optional local sentence-embedding model (``embed`` extra).
"""
