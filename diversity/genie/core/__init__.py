"""Genie's figures, pure Python and numpy: no Django, no database, no file reading.

``judgments`` is the record every reader produces (``Judgment``); ``pairs`` reduces judgments
to one similarity per answer pair and aligns the ``llm`` and ``human`` sources; ``scoring``
computes question and feature novelty and their bootstrap summaries; ``comparison`` compares
models and methods (two-stage bootstrap, paired permutation over prompts); ``agreement``
measures how far human and LLM judgments of the same pairs agree; ``exports`` writes GENIE's
``genie.jsonl``/``q_genie.jsonl``; ``report`` turns results into JSON-able dicts.

``tests/test_layers.py`` keeps it that way.
"""
