"""Length statistics as a study type (``core.jobs.study_types``): a page per corpus under
``/manage/lengths/``, ``POST /api/v1/lengths/<corpus>/analyses`` and ``GET …/report``,
``manage.py analyze_study lengths CORPUS [--set tail=95]``; who may see and analyse corpora may
see and analyse their lengths."""

from django import forms

from core.errors import InvalidInput
from core.jobs.study_types import StudyType
from core.jobs.subject_pages import analysed_at
from core.parameters import integer_parameter
from diversity.corpora.access import can_analyse_corpora, can_view_corpora
from diversity.corpora.models import Corpus, CorpusResponse
from diversity.lengths.core.lengths import DEFAULT_TAIL, Response, length_report

JOB_KIND = "length_statistics"


class RunLengthsForm(forms.Form):
    tail = forms.IntegerField(
        label="Tail percentile",
        min_value=1,
        max_value=99,
        initial=DEFAULT_TAIL,
        help_text="The long tail's length shown per model (90: nine in ten responses are "
        "shorter or as long).",
    )


def params(tail=DEFAULT_TAIL) -> dict:
    return {"tail": integer_parameter("tail", tail, 1, 99)}


def analyse(corpus: Corpus, checked: dict, progress) -> dict:
    progress(0, None, "Reading the responses")
    # in the corpus's order, so the report's queries and its tables keep one order
    rows = (
        CorpusResponse.objects.filter(corpus=corpus)
        .order_by("query__position", "model__name", "sample")
        .values_list("query__query_id", "model__name", "text")
    )
    responses = (Response(query, model, text) for query, model, text in rows.iterator(2000))
    progress(1, None, "Counting")
    report = length_report(responses, checked["tail"])
    if not report["n_responses"]:
        raise InvalidInput("corpus", f"corpus {corpus.name!r} has no responses to measure")
    return {"corpus": corpus.name, **report}


def rows() -> list[dict]:
    corpora = list(Corpus.objects.order_by("name"))
    finished = analysed_at(Corpus, corpora, JOB_KIND)
    return [{"subject": corpus, "analysed_at": finished.get(corpus.pk)} for corpus in corpora]


def model_table(report: dict) -> tuple[list[str], list[list]]:
    columns = ["model", "n_responses", "mean_characters", "median_characters",
               "tail_characters", "mean_words", "median_words", "tail_words"]  # fmt: skip
    table = [
        [model, figures["n_responses"]]
        + [figures["characters"][key] for key in ("mean", "median", "tail")]
        + [figures["words"][key] for key in ("mean", "median", "tail")]
        for model, figures in report["per_model"].items()
    ]
    return columns, table


def query_table(report: dict) -> tuple[list[str], list[list]]:
    columns = ["query_id", "n_responses", "mean_characters", "median_characters",
               "longest_model"]  # fmt: skip
    table = [
        [
            query,
            figures["n_responses"],
            figures["mean_characters"],
            figures["median_characters"],
            figures["longest_model"],
        ]
        for query, figures in report["per_query"].items()
    ]
    return columns, table


def page_context(request, corpus: Corpus, job, report: dict | None) -> dict:
    if report is None:
        return {}
    return {"model_rows": model_table(report)[1]}


def command_lines(corpus: Corpus, report: dict, seconds: float) -> list[str]:
    lines = [
        f"Analysed the lengths of corpus {corpus.name}: {report['n_responses']} responses "
        f"of {report['n_models']} models to {report['n_queries']} queries in {seconds:.1f} s"
    ]
    for model, figures in report["per_model"].items():
        characters = figures["characters"]
        lines.append(
            f"  {model}: mean {characters['mean']:.1f} characters, median "
            f"{characters['median']:.1f}, p{report['settings']['tail']} {characters['tail']:.1f}"
        )
    return lines


LENGTHS = StudyType(
    slug="lengths",
    label="Lengths",
    subject_label="corpus",
    subject_model=Corpus,
    job_kind=JOB_KIND,
    can_view=can_view_corpora,
    can_analyse=can_analyse_corpora,
    params=params,
    analyse=analyse,
    summary=lambda report: {"n_responses": report["n_responses"]},
    run_form=RunLengthsForm,
    rows=rows,
    list_template="lengths/lengths_list.html",
    page_template="lengths/lengths_page.html",
    page_context=page_context,
    tables={"models": model_table, "queries": query_table},
    command_lines=command_lines,
    rerun_note="With another tail percentile.",
    nav_order=75,
)
