"""Genie against people: ``genie_batch`` makes a ``similarity`` batch of the set's pairs,
three workers label it with known values, and the analysis scores the human judgments and
measures their agreement with the LLM's (checked against ``scipy.stats.spearmanr``, the
platform's Krippendorff's alpha, and alpha computed here from its definition)."""

import json

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from scipy.stats import spearmanr

from analysis.stats.agreement import krippendorff_alpha
from annotation.models import Batch
from annotation.services.batches import change_state
from diversity.genie.models import GenieSet
from diversity.genie.services.imports import import_genie
from tests.diversity import genie_set as hand
from tests.diversity.genie_set import HUMAN_LABELS
from tests.factories import make_batch
from tests.staff import staff_client

pytestmark = pytest.mark.django_db


def alpha_by_definition(first: np.ndarray, second: np.ndarray) -> float:
    """Interval alpha of two raters with no missing value: 1 - D_o / D_e, D_o the mean
    squared difference within a unit over its ordered value pairs, D_e over all ordered
    pairs of distinct values in the pool (Krippendorff 2011)."""
    pooled = np.concatenate([first, second])
    n = pooled.size
    observed = 2 * ((first - second) ** 2).sum() / n
    expected = ((pooled[:, None] - pooled[None, :]) ** 2).sum() / (n * (n - 1))
    return 1 - observed / expected


@pytest.fixture
def labelled():
    """The hand set, its similarity batch (all 12 judgeable pairs, 3 labels each), labelled."""
    import_genie("hand", hand.upload(hand.jsonl()), filename="judgments.jsonl")
    call_command("genie_batch", "hand", "people-sim", "--per-item", "3")
    batch = change_state(Batch.objects.get(slug="people-sim"), "live")
    hand.label_as_the_people_did(batch)
    return batch


def test_genie_batch_makes_one_item_per_judgeable_pair(labelled):
    batch = labelled
    assert batch.kind == "similarity" and batch.annotations_per_item == 3
    assert GenieSet.objects.get(name="hand").human_batch == batch
    items = {item.item_id: item for item in batch.items.select_related("query")}
    assert len(items) == 12  # 17 pairs, 5 with a missing answer
    item = items["pair-00000"]
    assert item.query.text == "What happens in the story?"
    assert item.content == {"reference": "d1 answers q1", "candidate": "e1 answers q1"}
    assert item.metadata == {
        "prompt_id": "p1",
        "question_id": "q1",
        "feature": "Plot",
        "document_id": "d1",
        "population_id": "e1",
    }
    keys = {
        (i.metadata["question_id"], i.metadata["document_id"], i.metadata["population_id"])
        for i in items.values()
    }
    assert keys == set(HUMAN_LABELS)


def test_analysis_scores_people_and_measures_agreement(labelled, tmp_path):
    out = tmp_path / "report.json"
    call_command("analyze_genie", "hand", "--json", str(out), "--bootstrap", "200")
    report = json.loads(out.read_text())
    assert report["settings"]["human_source"] == "batch"
    assert report["settings"]["human_batch"] == "people-sim"  # the set's own batch
    assert report["human_batch"] == {
        "batch": "people-sim",
        "n_items": 12,
        "n_matched_items": 12,
        "n_labels": 36,
        "n_annotators": 3,
    }
    assert report["n_judged_pairs"] == {"llm": 12, "human": 12}

    # Human similarity = mean of the pair's labels; d1 Plot by hand:
    # q1: 1 - ((11/3 - 1) + (4/3 - 1) + (7/3 - 1)) / 9 = 14/27; q2: 1 - ((8/3 - 1) + (10/3 - 1)) / 6
    # = 1/3; Plot = (14/27 + 1/3) / 2 = 23/54.
    human = {e["document_id"]: e["features"] for e in report["scores"]["human"]["per_document"]}
    assert human["d1"]["Plot"]["novelty"] == pytest.approx(23 / 54)
    assert human["d2"]["Setting"]["novelty"] == pytest.approx(1 - ((4 / 3 - 1) + (11 / 3 - 1)) / 6)

    pairs = sorted(HUMAN_LABELS)
    llm = np.array([hand.LLM[(q, d)][e] for q, d, e in pairs], dtype=float)
    people = np.array([np.mean(HUMAN_LABELS[key]) for key in pairs])
    overall = report["agreement"]["overall"]
    expected = spearmanr(llm, people)
    assert overall["n_pairs"] == 12
    assert overall["spearman"]["rho"] == pytest.approx(expected.statistic)
    assert overall["spearman"]["p"] == pytest.approx(expected.pvalue)
    units = np.concatenate([np.arange(12), np.arange(12)])
    raters = np.repeat([0, 1], 12)
    values = np.concatenate([llm, people])
    assert overall["alpha_interval"] == pytest.approx(krippendorff_alpha(units, raters, values))
    assert overall["alpha_interval"] == pytest.approx(alpha_by_definition(llm, people))
    assert overall["alpha_ordinal"] == pytest.approx(
        krippendorff_alpha(units, raters, values, level="ordinal")
    )

    plot = report["agreement"]["per_feature"]["Plot"]
    in_plot = [i for i, (q, _, _) in enumerate(pairs) if q != "q3"]
    assert plot["n_pairs"] == 10
    assert plot["spearman"]["rho"] == pytest.approx(
        spearmanr(llm[in_plot], people[in_plot]).statistic
    )
    setting = report["agreement"]["per_feature"]["Setting"]
    assert setting["n_pairs"] == 2 and setting["spearman"] is None
    assert setting["spearman_reason"].startswith("fewer than 3")


def test_page_shows_agreement_and_the_linked_batch(labelled, django_capture_on_commit_callbacks):
    client = staff_client("researcher")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/manage/genie/hand/run", {"bootstrap": 50, "seed": 7})
    assert response.status_code == 302
    html = client.get("/manage/genie/hand/").content.decode()
    assert 'id="agreement-table"' in html
    assert html.count('<tr data-feature="') == 3  # Plot, Setting, all features
    assert 'id="linked-batch"' in html and "people-sim" in html
    assert 'id="chart-profiles-llm"' in html and 'id="chart-profiles-human"' in html
    agreement_csv = b"".join(client.get("/manage/genie/hand/agreement.csv").streaming_content)
    assert agreement_csv.decode().splitlines()[0] == (
        "feature,n_pairs,spearman_rho,spearman_p,alpha_interval,alpha_ordinal,reason"
    )


def test_a_sample_of_pairs_and_the_need_for_question_texts(tmp_path):
    import_genie("hand", hand.upload(hand.jsonl()), filename="judgments.jsonl")
    call_command("genie_batch", "hand", "five", "--pairs", "5", "--seed", "1", "--per-item", "2")
    batch = Batch.objects.get(slug="five")
    assert batch.items.count() == 5 and batch.state == "draft"
    keys = {
        (i.metadata["question_id"], i.metadata["document_id"], i.metadata["population_id"])
        for i in batch.items.all()
    }
    assert keys <= set(HUMAN_LABELS)
    # the same draw again gives the same pairs
    call_command("genie_batch", "hand", "five-again", "--pairs", "5", "--seed", "1")
    again = {
        (i.metadata["question_id"], i.metadata["document_id"], i.metadata["population_id"])
        for i in Batch.objects.get(slug="five-again").items.all()
    }
    assert again == keys

    import_genie("no-texts", hand.upload(hand.jsonl(with_questions=False)), filename="j.jsonl")
    with pytest.raises(CommandError, match="no text for question p1/q1, p1/q2, p1/q3"):
        call_command("genie_batch", "no-texts", "unasked")
    assert not Batch.objects.filter(slug="unasked").exists()
    with pytest.raises(CommandError, match="slug"):
        call_command("genie_batch", "hand", "Bad Slug")
    with pytest.raises(CommandError, match="pairs: must be a positive integer"):
        call_command("genie_batch", "hand", "zero", "--pairs", "0")


def test_a_batch_of_another_kind_is_refused(labelled):
    make_batch(slug="ratings")
    with pytest.raises(CommandError, match="is a absolute batch"):
        call_command("analyze_genie", "hand", "--human-batch", "ratings")
