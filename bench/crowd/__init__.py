"""Crowd load benchmark: the platform against a no-database Django ceiling.

Run ``python -m bench.crowd --help``; what it does and what each figure means is in
``bench/crowd/README.md``.
"""
