"""The corpus report's downloads: its JSON, its tables as CSV (one writer,
``core.csv_files``), each figure as SVG/PDF, and everything in one zip."""

import io
import zipfile

import numpy as np
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET

from analysis.plots import FILE_FORMATS
from analysis.presentation import csv_stream
from core import csv_files
from core.access import staff_page
from core.jobs import subject_pages
from core.jobs.execution import job_files_dir
from core.models import Job
from diversity.corpora import plots, presentation
from diversity.corpora.access import can_view_corpora
from diversity.corpora.models import Corpus, CorpusResponse
from diversity.corpora.services.analyses import job_file, latest_analysis, typicality_of

FIGURE_TYPES = {"svg": "image/svg+xml", "pdf": "application/pdf"}
FIGURE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def report_or_404(corpus: Corpus) -> tuple[Job, dict]:
    return subject_pages.report_or_404(latest_analysis(corpus), f"Corpus {corpus.name}")


@staff_page(can_view_corpora)
@require_GET
def report_json(request: HttpRequest, name: str) -> FileResponse:
    corpus = get_object_or_404(Corpus, name=name)
    job, _ = report_or_404(corpus)
    return FileResponse(
        open(job_files_dir() / job.result_path, "rb"),  # FileResponse closes it
        as_attachment=True,
        filename=f"corpus-{corpus.name}-report.json",
        content_type="application/json",
    )


def _csv_response(name: str, columns: list[str], rows) -> StreamingHttpResponse:
    response = StreamingHttpResponse(
        csv_stream(columns, rows), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = content_disposition_header(True, name)
    return response


@staff_page(can_view_corpora)
@require_GET
def table_csv(request: HttpRequest, name: str, table: str) -> HttpResponse:
    """One table of the report as CSV (``presentation.TABLES``, ``queries``, ``responses``)."""
    corpus = get_object_or_404(Corpus, name=name)
    job, report = report_or_404(corpus)
    filename = f"corpus-{corpus.name}-{table}.csv"
    if table == "queries":
        path = job_file(job, "queries")
        if path is None:
            raise Http404("The per-query table of this analysis is no longer kept.")
        return FileResponse(
            open(path, "rb"), as_attachment=True, filename=filename, content_type="text/csv"
        )
    if table == "responses":
        return _csv_response(filename, *response_table(corpus, job))
    if table not in presentation.TABLES:
        raise Http404(f"No table {table!r}.")
    columns, rows = presentation.TABLES[table](report)
    return _csv_response(filename, columns, rows)


def response_table(corpus: Corpus, job: Job) -> tuple[list[str], object]:
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


@staff_page(can_view_corpora)
@require_GET
def report_figure(request: HttpRequest, name: str, key: str, fmt: str) -> HttpResponse:
    """One chart of the report as a standalone SVG or PDF file, for a paper."""
    corpus = get_object_or_404(Corpus, name=name)
    _, report = report_or_404(corpus)
    found = plots.drawings(report).get(key)
    if found is None or fmt not in FIGURE_TYPES:
        raise Http404(f"The report of {corpus.name} has no figure {key}.{fmt}.")
    response = HttpResponse(found[2].file(fmt), content_type=FIGURE_TYPES[fmt])
    response["Content-Disposition"] = content_disposition_header(True, f"{corpus.name}-{key}.{fmt}")
    if fmt == "svg":
        response["Content-Security-Policy"] = FIGURE_CSP
    return response


@staff_page(can_view_corpora)
@require_GET
def report_figures_zip(request: HttpRequest, name: str) -> HttpResponse:
    """Every chart as SVG and PDF, and every table as CSV, in one zip with the captions."""
    corpus = get_object_or_404(Corpus, name=name)
    job, report = report_or_404(corpus)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        captions = [f"Figures of corpus {corpus.name} ({job.finished_at:%Y-%m-%d %H:%M} UTC)\n"]
        for key, (title, caption, drawing) in plots.drawings(report).items():
            for fmt in FILE_FORMATS:
                archive.writestr(f"{corpus.name}-{key}.{fmt}", drawing.file(fmt))
            captions.append(f"{corpus.name}-{key}: {title}\n{caption}\n")
        archive.writestr("captions.txt", "\n".join(captions))
        for key, table in presentation.TABLES.items():
            columns, rows = table(report)
            archive.writestr(f"{corpus.name}-{key}.csv", csv_files.table_text(columns, rows))
    response = HttpResponse(buffer.getvalue(), content_type="application/zip")
    response["Content-Disposition"] = content_disposition_header(
        True, f"corpus-{corpus.name}-figures.zip"
    )
    return response
