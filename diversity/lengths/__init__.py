"""Length statistics of a corpus's responses (ANALYSIS.md, "Length statistics"): how long
each model answers, in characters and words, overall and query by query.

A study type of its own (``study``) over the corpora the corpus app imports; its figures
come from the pure ``core``, the rest from the scaffold every study type shares
(``core.jobs.study_types``)."""
