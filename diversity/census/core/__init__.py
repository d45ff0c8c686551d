"""The census's figures, pure Python and numpy: no Django, no database, no file reading.

* ``records`` is the cell every reader produces (``CensusRecord``);
* ``normalise`` is the junk guard, reply -> answer, and the plural merge (the rule itself
  lives in ``annotation.normalisers.census``, shared with the ``short_text`` kind);
* ``field`` builds the ``AnswerField`` (answers by category and answerer, in census order);
* ``metrics`` scores answerers (surprisal, modal avoidance, novelty, self-distinctness, type,
  bootstrap interval); ``categories`` summarises categories (mode, shares, runner-up);
* ``comparison`` sets a model field against human norms;
* ``study`` runs the whole census; ``report`` turns results into JSON-able dicts.

``tests/test_layers.py`` keeps it that way.
"""
