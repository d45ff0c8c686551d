"""One-Word Census: answer-choice conformity of a population of answerers.

The rules are CENSUS.md's; each lives in one module (pure Python and numpy, no Django):

* ``transcripts`` reads replies (transcript JSON, flat JSONL/CSV) into ``CensusRecord``s;
  ``sources`` holds the file opening and ``CensusInputError`` shared by the readers;
* ``normalise`` is the junk guard, reply -> answer, and the plural merge;
* ``field`` builds the ``AnswerField`` (answers by category and answerer, in census order);
* ``metrics`` scores answerers (surprisal, modal avoidance, novelty, self-distinctness, type,
  bootstrap interval); ``categories`` summarises categories (mode, shares, runner-up);
* ``norms`` computes or reads human category norms; ``comparison`` sets a model field
  against them;
* ``study`` runs the whole census; ``report`` turns results into JSON-able dicts.

The package is also the ``census`` Django app (``apps``), which builds on those modules and
is the only part that touches the database: ``models`` (a census, its files, its replies
verbatim, its imported norms), ``services`` (``imports``: all-or-nothing import;
``analyses``: the ``census_analysis`` job and its report), ``loading`` (database -> records,
norms and a ``short_text`` batch's answers), ``selectors``, ``presentation`` and ``plots``
(the page), ``views``/``urls`` (``/manage/census/``), ``api`` (``/api/v1/census/``),
``access``, ``pages`` and ``management/commands`` (``import_census``, ``analyze_census``).
"""
