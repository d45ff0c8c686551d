"""Batches made from a corpus selection (rules ``typicality`` and ``random``), the rule in
the batch's data card, and the link from the batch's ratings back to typicality."""

import io
import json
import tracemalloc

import numpy as np
import pytest
from django.contrib.messages import get_messages

from analysis.stats.correlation import spearman
from analysis.stats.per_item import entropy_bits
from annotation.models import Batch, BatchState, Item, Label, LabelStatus
from annotation.services.batches import change_state, create_batch
from annotation.services.exports.card import data_card
from annotation.services.importing import import_items
from core.errors import InvalidInput
from diversity.corpora.models import CorpusResponse, CorpusSelection
from diversity.corpora.services import batches
from diversity.corpora.services.analyses import (
    analysis_params,
    latest_analysis,
    typicality_of,
)
from diversity.corpora.services.batches import make_batch, select_items
from diversity.corpora.services.imports import import_corpus
from tests.corpora.analysis_corpora import make_corpus, random_rows, run_analysis
from tests.factories import label_every_item
from tests.files import write_jsonl
from tests.staff import staff_client, token_client

pytestmark = pytest.mark.django_db


def label_all(batch, workers: int, value_of) -> None:
    batch = change_state(batch, BatchState.LIVE)
    ids = [f"{batch.slug}-w{worker}" for worker in range(workers)]
    label_every_item(batch, ids, value_of, lambda worker: 1500)


# --------------------------------------------------------------------------- the rules


def test_typicality_rule_takes_the_most_and_least_typical_and_says_so_in_the_card():
    corpus = make_corpus("hand")
    job = run_analysis(corpus)
    batch, selection = make_batch(
        corpus, slug="from-hand", rule="typicality", per_query=1, title="Typical or not"
    )
    assert batch.state == BatchState.DRAFT and batch.kind == "absolute"
    items = list(Item.objects.filter(batch=batch).order_by("position"))
    # "same": every typicality is 1, ties by response id; "apart": every typicality is 0
    assert [item.metadata["corpus_response_id"] for item in items] == [
        "s-a1",
        "s-a2",
        "p-a1",
        "p-a2",
    ]
    assert [item.metadata["chosen_as"] for item in items] == ["most typical", "least typical"] * 2
    assert items[0].metadata["corpus"] == "hand"
    assert items[0].metadata["typicality"] == pytest.approx(1.0, abs=1e-6)
    assert items[0].item_id == "hand/s-a1" and items[0].query.query_id == "hand/same"
    assert items[0].query.category == "creative"
    assert selection.rule == "typicality" and selection.analysis_job_id == job.pk
    assert selection.counts["items"] == 4 and selection.counts["queries"] == 2
    card = data_card(batch)
    assert "## Selection from a corpus" in card
    assert "typicality — for each query, the 1 most and the 1 least typical" in card
    assert f"analysis `{job.pk}`" in card and "Corpus: `hand`" in card


def test_a_query_with_few_responses_gives_each_once():
    corpus = make_corpus("few")
    run_analysis(corpus)
    _, selection = make_batch(corpus, slug="all-of-few", rule="typicality", per_query=3)
    assert selection.counts["items"] == 8  # 4 responses per query, at most 2 x 3 wanted


def test_random_rule_is_reproducible_and_filters_categories():
    corpus = make_corpus("rand", random_rows())
    first, _ = select_items(corpus, "random", 2, seed=5)
    again, _ = select_items(corpus, "random", 2, seed=5)
    other, _ = select_items(corpus, "random", 2, seed=6)
    assert first == again and first != other
    assert len(first) == 6 * 3 * 2  # 6 queries x 3 models x 2 of 3 samples
    per_pair = {(item.query_id, item.model) for item in first}
    assert len(per_pair) == 18
    batch, selection = make_batch(
        corpus, slug="rand-odd", rule="random", per_query=1, seed=5, categories=["odd"]
    )
    items = Item.objects.filter(batch=batch)
    assert items.count() == 3 * 3 and {i.query.category for i in items} == {"odd"}
    assert selection.seed == 5 and selection.categories == ["odd"]
    card = data_card(batch)
    assert "random — for each query and model, 1 of its responses" in card
    assert "default_rng(5)" in card and "Categories: `odd`" in card


def test_refused_selections_leave_no_batch():
    corpus = make_corpus("refused")
    with pytest.raises(InvalidInput, match="needs a finished analysis"):
        make_batch(corpus, slug="too-early", rule="typicality", per_query=1)
    with pytest.raises(InvalidInput, match="no category 'poems'"):
        make_batch(corpus, slug="bad-cat", rule="random", per_query=1, categories=["poems"])
    with pytest.raises(InvalidInput, match="rule"):
        make_batch(corpus, slug="bad-rule", rule="best", per_query=1)
    with pytest.raises(InvalidInput, match="per_query"):
        make_batch(corpus, slug="bad-k", rule="random", per_query=0)
    assert not Batch.objects.exists() and not CorpusSelection.objects.exists()


def test_a_selection_over_the_limit_is_refused_before_any_work(settings, monkeypatch):
    corpus = make_corpus("capped", random_rows())  # 6 queries x 3 models x 3 samples
    run_analysis(corpus)
    settings.SELECTION_MAX_ITEMS = 35

    def no_texts(*args, **kwargs):
        raise AssertionError("the texts were read before the limit was checked")

    monkeypatch.setattr(batches, "pool_responses", no_texts)
    # random, r = 2: 6 x 3 x 2 = 36 responses
    with pytest.raises(InvalidInput, match="36 responses, more than the limit of 35") as refused:
        make_batch(corpus, slug="too-many", rule="random", per_query=2, seed=1)
    assert refused.value.field == "per_query"
    # typicality, k = 4: each query's 9 responses hold 2k = 8
    with pytest.raises(InvalidInput, match="48 responses, more than the limit of 35"):
        make_batch(corpus, slug="too-typical", rule="typicality", per_query=4)
    api = token_client("admin").post(
        "/api/v1/corpora/capped/batches",
        {"slug": "api-too-many", "rule": "random", "per_query": 2},
        content_type="application/json",
    )
    assert api.status_code == 400 and api.json()["field"] == "per_query"
    assert "36 responses" in api.json()["detail"] and "limit of 35" in api.json()["detail"]
    page = staff_client("admin").post(
        "/manage/corpora/capped/batch", {"slug": "page-too-many", "rule": "random", "per_query": 2}
    )
    assert page.status_code == 302 and page["Location"].endswith("#make-batch")
    said = [str(message) for message in get_messages(page.wsgi_request)]
    assert any("36 responses, more than the limit of 35" in message for message in said)
    assert not Batch.objects.exists() and not CorpusSelection.objects.exists()

    monkeypatch.undo()
    settings.SELECTION_MAX_ITEMS = 36
    _, selection = make_batch(corpus, slug="just-enough", rule="random", per_query=2, seed=1)
    assert selection.counts["items"] == 36


@pytest.mark.slow
def test_a_large_selection_holds_no_extra_copies_of_its_texts(tmp_path):
    rows = [
        {
            "query_id": f"q{q}",
            "query": f"Question {q}?",
            "model": f"m{m}",
            "sample": s,
            "response_id": f"r{q}-{m}-{s}",
            "response": f"{q} {m} {s} " + "word " * 200,
        }
        for q in range(200)
        for m in range(5)
        for s in range(10)
    ]
    corpus = import_corpus("big", write_jsonl(tmp_path / "big.jsonl", rows))
    text_bytes = sum(len(row["response"]) for row in rows)  # about 10 MB
    tracemalloc.start()
    try:
        _, selection = make_batch(corpus, slug="all-of-big", rule="random", per_query=10, seed=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert selection.counts["items"] == 10_000
    # The item import's own validation holds the texts about twice over; joining the whole
    # document in memory held them five times.
    assert peak < 3 * text_bytes, f"peak {peak / 1e6:.1f} MB for {text_bytes / 1e6:.1f} MB"


def test_a_batch_not_from_a_corpus_has_no_selection_lines():
    batch = create_batch(slug="plain", kind="absolute")
    assert "Selection from a corpus" not in data_card(batch)


# --------------------------------------------------------------------------- human judgments


def test_typicality_against_the_ratings_of_a_batch_made_from_the_corpus():
    corpus = make_corpus("rated", random_rows(seed=8))
    batch, _ = make_batch(
        corpus, slug="rated-batch", rule="random", per_query=1, seed=2, annotations_per_item=3
    )
    label_all(batch, 3, lambda item, worker: 1 + (item.position * 3 + worker) % 5)
    job = run_analysis(corpus, bootstrap=300, seed=9)
    _, report = latest_analysis(corpus)
    link = report["human_judgments"]["batches"]
    assert [entry["batch"] for entry in link] == ["rated-batch"]
    entry = link[0]
    assert entry["batch_items"] == entry["items"] == entry["rated_items"] == 18
    # recomputed here: each item's typicality and its counted labels' mean and entropy
    typicality = np.asarray(typicality_of(job))
    row_of = dict(
        CorpusResponse.objects.filter(corpus=corpus).values_list("response_id", "row_index")
    )
    x, mean, entropy = [], [], []
    for item in Item.objects.filter(batch=batch).order_by("position"):
        values = list(
            Label.objects.filter(item=item, status=LabelStatus.COUNTED).values_list(
                "value", flat=True
            )
        )
        x.append(typicality[row_of[item.metadata["corpus_response_id"]]])
        mean.append(np.mean(values))
        entropy.append(entropy_bits(np.bincount(values, minlength=6)[1:][None, :])[0])
    rating = entry["typicality_vs_mean_rating"]
    assert rating["rho"] == pytest.approx(spearman(np.array(x), np.array(mean)).r, abs=1e-12)
    assert rating["n"] == 18 and rating["ci95"][0] <= rating["rho"] <= rating["ci95"][1]
    expected = spearman(np.array(x), np.array(entropy))
    assert entry["typicality_vs_entropy"]["rho"] == pytest.approx(expected.r, abs=1e-12)
    assert sorted(entry["by_category"]) == ["even", "odd"]
    assert entry["by_category"]["odd"]["items"] == 9
    assert entry["by_category"]["odd"]["small"] is True and entry["small"] is False


def test_a_batch_named_by_hand_is_matched_by_response_id():
    corpus = make_corpus("matched")
    batch = create_batch(slug="by-hand", kind="absolute", annotations_per_item=2)
    lines = [
        {
            "item_id": f"i{n}",
            "query_id": "elsewhere",
            "query": "Write a haiku.",
            "response_id": response_id,
            "response": "An old pond.",
        }
        for n, response_id in enumerate(["s-a1", "s-b2", "unknown-id"])
    ]
    document = "\n".join(json.dumps(line) for line in lines).encode()
    import_items(batch, io.BytesIO(document), filename="items.jsonl")
    run_analysis(corpus, bootstrap=50, human_batch="by-hand")
    entry = job_report(corpus)["human_judgments"]["batches"][0]
    assert (entry["batch"], entry["batch_items"], entry["items"]) == ("by-hand", 3, 2)
    assert entry["rated_items"] == 0
    assert entry["typicality_vs_mean_rating"]["rho"] is None
    assert entry["typicality_vs_mean_rating"]["reason"]
    with pytest.raises(InvalidInput, match="absolute"):
        analysis_params(human_batch=create_batch(slug="pairs", kind="pairwise").slug)


def job_report(corpus) -> dict:
    return latest_analysis(corpus)[1]
