"""Genie: feature-level novelty of a document against a population.

Pure Python and numpy, no Django: ``records`` is the judgment record and its file format
(documented there), read by ``rows`` (JSON lines, JSON, CSV); ``native`` and ``native_pairs``
read GENIE's own files (similarity, answers, questions); ``pairs`` reduces judgments to one
similarity per answer pair and
aligns the ``llm`` and ``human`` sources; ``scoring`` computes question and feature novelty and
their bootstrap summaries; ``comparison`` compares models and methods (two-stage bootstrap,
paired permutation over prompts); ``exports`` writes GENIE's ``genie.jsonl``/``q_genie.jsonl``;
``agreement`` measures how far human and LLM judgments of the
same pairs agree; ``report`` turns results into JSON-able dicts.

The package is also the ``genie`` Django app (``apps``), which builds on those modules and is
the only part that touches the database: ``models`` (a set and its judgment rows),
``services`` (``imports``; ``analyses``: the ``genie_analysis`` job and its report;
``batches``: a ``similarity`` batch of the set's pairs), ``loading`` (database -> judgments,
a batch's labels -> human judgments), ``selectors``, ``presentation`` and ``plots`` (the
page), ``views``/``urls`` (``/manage/genie/``), ``api`` (``/api/v1/genie/``), ``access``,
``pages`` and ``management/commands`` (``import_genie``, ``analyze_genie``,
``genie_batch``, ``export_genie``).
"""
