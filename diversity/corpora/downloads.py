"""The tables a corpus's analysis keeps beside its report (``study.CORPORA.job_tables``):
the per-query table its job wrote, and each response's typicality in it."""

import csv
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from django.http import Http404

from core.csv_files import rewritten_text
from core.models import Job
from diversity.corpora.models import Corpus, CorpusResponse
from diversity.corpora.services.analyses import job_file, typicality_of


def queries_table(corpus: Corpus, job: Job, params: Mapping[str, str]) -> Path | str:
    """The per-query table (``QUERY_COLUMNS``) as the analysis wrote it: the file, or with
    ``category=`` in ``params`` that category's rows as CSV text (the page and the API)."""
    path = job_file(job, "queries")
    if path is None:
        raise Http404("The per-query table of this analysis is no longer kept.")
    category = params.get("category")
    if not category:
        return path
    with open(path, encoding="utf-8", newline="") as stream:
        reader = csv.reader(stream)
        columns = next(reader)
        where = columns.index("category")
        # the cells were written (formulas neutralised) by the job: written again as they are
        return rewritten_text(columns, [row for row in reader if row[where] == category])


def response_table(corpus: Corpus, job: Job, params: Mapping[str, str]) -> tuple[list[str], object]:
    """Per response: its ids, model, sample, category and typicality in this analysis."""
    typicality = typicality_of(job)
    if typicality is None:
        raise Http404("The typicality of this analysis is no longer kept.")
    columns = ["response_id", "query_id", "category", "model", "sample", "typicality"]

    def rows():
        responses = (
            CorpusResponse.objects.filter(corpus=corpus)
            .order_by("row_index")
            .values_list(
                "response_id",
                "query__query_id",
                "query__category",
                "model__name",
                "sample",
                "row_index",
            )
        )
        for response_id, query_id, category, model, sample, row in responses.iterator(5000):
            value = float(typicality[row]) if row < typicality.shape[0] else np.nan
            yield [
                response_id,
                query_id,
                category,
                model,
                sample,
                None if np.isnan(value) else value,
            ]

    return columns, rows()
