"""One-Word Census: answer-choice conformity of a population of answerers.

The rules are in ``docs/CENSUS.md``. The figures live in ``core`` (pure Python and numpy, no
Django: normalisation, the answer field, metrics, category figures, the comparison with
norms, the whole study and its report). Beside it, the readers: ``transcripts`` reads replies
(transcript JSON, flat JSONL/CSV) into ``CensusRecord``s, ``norms`` computes or reads human
category norms, and ``sources`` holds the file opening and ``CensusInputError`` they share.

The package is also the ``census`` Django app (``apps``), which builds on those modules and
is the only part that touches the database: ``models`` (a census, its files, its replies
verbatim, its imported norms), ``services`` (``imports``: all-or-nothing import;
``analyses``: the ``census_analysis`` job and its report), ``loading`` (database -> records,
norms and a ``short_text`` batch's answers), ``selectors``, ``presentation`` and ``plots``
(the page), ``views``/``urls`` (``/manage/census/``), ``api`` (``/api/v1/census/``),
``access``, ``pages`` and ``management/commands`` (``import_census``, ``analyze_census``).
"""
