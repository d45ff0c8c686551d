"""Genie: feature-level novelty of a document against a population.

The figures live in ``core`` (pure Python and numpy, no Django: pairs, scoring, comparison,
agreement, exports, report). Beside it, the readers: ``records`` is the judgment file format
(documented there), read by ``rows`` (JSON lines, JSON, CSV); ``native`` and ``native_pairs``
read GENIE's own files (similarity, answers, questions).

The package is also the ``genie`` Django app (``apps``), which builds on those modules and is
the only part that touches the database: ``models`` (a set and its judgment rows),
``services`` (``imports``; ``analyses``: the ``genie_analysis`` job and its report;
``batches``: a ``similarity`` batch of the set's pairs), ``loading`` (database -> judgments,
a batch's labels -> human judgments), ``selectors``, ``presentation`` and ``plots`` (the
page), ``views``/``urls`` (``/manage/genie/``), ``api`` (``/api/v1/genie/``), ``access``,
``pages`` and ``management/commands`` (``import_genie``, ``analyze_genie``,
``genie_batch``, ``export_genie``).
"""
