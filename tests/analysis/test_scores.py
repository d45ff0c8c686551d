"""Importing model scores (analysis.services.scores, import_scores command, API) and coverage.

Every rejected import must name FILE:LINE: field and leave ScoreSource/Score untouched.
"""

import io
import json

import pytest
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from analysis.models import Score, ScoreSource
from analysis.selectors import coverage
from analysis.services.scores import ScoreImportSummary, import_scores
from annotation.models import Item
from core.errors import InvalidInput
from core.tabular import ImportRejected
from tests.factories import make_batch
from tests.files import write_csv, write_jsonl
from tests.staff import staff_client, token_client

pytestmark = pytest.mark.django_db


# --------------------------------------------------------------------------- helpers


def rid(batch, index, side=""):
    """The factory's response id: ``r-<n>-<index>-<side>``."""
    number = batch.slug.rsplit("-", 1)[-1] if batch.slug.startswith("batch-") else None
    item = Item.objects.get(batch=batch, item_id=f"item-{index}")
    if side:
        response = item.response_a if side == "a" else item.response_b
    else:
        response = item.response
    if number is not None:
        assert response.response_id == f"r-{number}-{index}-{side}"
    return response.response_id


def row(source="rm-1", kind="reward_model", score=1.0, **changes):
    values = {"source": source, "kind": kind, "score": score}
    values.update(changes)
    return {key: value for key, value in values.items() if value is not DROP}


DROP = object()


def counts():
    return ScoreSource.objects.count(), Score.objects.count()


def rejected(path, *, batch=None, filename=None) -> list[str]:
    before = counts()
    with pytest.raises(ImportRejected) as caught:
        import_scores(path, batch=batch, filename=filename)
    assert counts() == before, "a rejected import must write nothing"
    return caught.value.problems


# --------------------------------------------------------------------------- good imports


def test_jsonl_import_creates_sources_and_scores(tmp_path, absolute):
    rows = [row(response_id=rid(absolute, i), score=i / 2) for i in range(4)]
    rows += [row("ppl-model", "lm", -12.5, response_id=rid(absolute, 0))]
    path = write_jsonl(tmp_path / "scores.jsonl", rows)

    summary = import_scores(path)

    assert summary == ScoreImportSummary(
        sources_created=2, sources_updated=0, scores_created=5, scores_unchanged=0
    )
    rm = ScoreSource.objects.get(name="rm-1")
    assert rm.kind == "reward_model"
    assert ScoreSource.objects.get(name="ppl-model").kind == "lm"
    values = dict(Score.objects.filter(source=rm).values_list("response__response_id", "value"))
    assert values == {rid(absolute, i): i / 2 for i in range(4)}
    assert not Score.objects.filter(item__isnull=False).exists()


def test_csv_import_parses_numbers_and_flags(tmp_path, absolute):
    path = write_csv(
        tmp_path / "scores.csv",
        ["source", "kind", "response_id", "item_id", "score", "higher_is_better", "note"],
        [
            ["judge-x", "judge", rid(absolute, 0), "", "4.5", "", "kept out"],
            ["judge-x", "judge", rid(absolute, 1), "", " 3 ", "true", ""],
            ["ppl", "lm", rid(absolute, 0), "", "7.25", "false", ""],
            ["ppl", "lm", rid(absolute, 1), "", "1e1", "0", ""],
            ["ppl", "lm", rid(absolute, 2), "", "2", "1", ""],
            ["ppl", "lm", rid(absolute, 3), "", "-3", "FALSE", ""],
        ],
    )

    summary = import_scores(path)

    assert summary.sources_created == 2 and summary.scores_created == 6
    judged = dict(
        Score.objects.filter(source__name="judge-x").values_list("response__response_id", "value")
    )
    assert judged == {rid(absolute, 0): 4.5, rid(absolute, 1): 3.0}
    ppl = dict(
        Score.objects.filter(source__name="ppl").values_list("response__response_id", "value")
    )
    assert ppl == {
        rid(absolute, 0): -7.25,
        rid(absolute, 1): -10.0,
        rid(absolute, 2): 2.0,
        rid(absolute, 3): 3.0,
    }


def test_higher_is_better_false_negates_jsonl(tmp_path, absolute):
    path = write_jsonl(
        tmp_path / "ppl.jsonl",
        [
            row("ppl", "lm", 12.5, response_id=rid(absolute, 0), higher_is_better=False),
            row("ppl", "lm", 3, response_id=rid(absolute, 1), higher_is_better=0),
            row("ppl", "lm", 4, response_id=rid(absolute, 2), higher_is_better="false"),
            row("ppl", "lm", 5, response_id=rid(absolute, 3), higher_is_better=True),
        ],
    )
    import_scores(path)
    values = dict(Score.objects.values_list("response__response_id", "value"))
    assert values == {
        rid(absolute, 0): -12.5,
        rid(absolute, 1): -3.0,
        rid(absolute, 2): -4.0,
        rid(absolute, 3): 5.0,
    }


def test_reimport_of_identical_scores_is_idempotent(tmp_path, absolute):
    rows = [row(response_id=rid(absolute, i), score=0.1 * i) for i in range(4)]
    rows.append(row("ppl", "lm", 2.0, response_id=rid(absolute, 0), higher_is_better=False))
    path = write_jsonl(tmp_path / "scores.jsonl", rows)
    import_scores(path)
    stored = list(Score.objects.order_by("pk").values_list("pk", "value"))
    created_at = ScoreSource.objects.get(name="rm-1").updated_at

    again = import_scores(path)

    assert again == ScoreImportSummary(
        sources_created=0, sources_updated=0, scores_created=0, scores_unchanged=5
    )
    assert list(Score.objects.order_by("pk").values_list("pk", "value")) == stored
    assert ScoreSource.objects.get(name="rm-1").updated_at == created_at

    # a superset: the known scores are unchanged, the new one is added, rm-1 is updated
    more = write_jsonl(
        tmp_path / "more.jsonl",
        [*rows, row("rm-1", "reward_model", 9.0, response_id=rid(make_batch(n_items=1), 0))],
    )
    third = import_scores(more)
    assert third == ScoreImportSummary(
        sources_created=0, sources_updated=1, scores_created=1, scores_unchanged=5
    )


def test_repeated_identical_row_in_file_counts_once(tmp_path, absolute):
    same = row(response_id=rid(absolute, 0), score=2)
    path = write_jsonl(tmp_path / "dup.jsonl", [same, same, row(response_id=rid(absolute, 1))])
    summary = import_scores(path)
    assert summary.scores_created == 2 and Score.objects.count() == 2


def test_item_scores_for_a_pairwise_batch(tmp_path, pairwise):
    path = write_jsonl(
        tmp_path / "judge.jsonl",
        [
            row("judge-pair", "judge", 1, item_id="item-0"),
            row("judge-pair", "judge", -2, item_id="item-1"),
            row("rm-1", "reward_model", 0.5, response_id=rid(pairwise, 0, "a")),
            row("rm-1", "reward_model", 0.25, response_id=rid(pairwise, 0, "b")),
        ],
    )

    summary = import_scores(path, batch=pairwise)

    assert summary.scores_created == 4
    direct = dict(
        Score.objects.filter(source__name="judge-pair").values_list("item__item_id", "value")
    )
    assert direct == {"item-0": 1.0, "item-1": -2.0}
    assert all(
        s.item.batch_id == pairwise.pk and s.response_id is None
        for s in Score.objects.filter(source__name="judge-pair").select_related("item")
    )
    # a slug works as well as a Batch; the same scores again are unchanged
    assert import_scores(path, batch=pairwise.slug).scores_unchanged == 4


def test_item_ids_are_looked_up_in_the_given_batch_only(tmp_path, pairwise):
    other = make_batch(kind="pairwise", n_items=1)
    path = write_jsonl(tmp_path / "judge.jsonl", [row("j", "judge", 1, item_id="item-0")])
    import_scores(path, batch=other)
    assert Score.objects.get().item.batch_id == other.pk
    assert coverage(pairwise) == []


def test_unknown_batch_is_an_input_error(tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [row(item_id="item-0")])
    with pytest.raises(InvalidInput) as caught:
        import_scores(path, batch="no-such-batch")
    assert caught.value.field == "batch"


# --------------------------------------------------------------------------- rejections


def test_non_numeric_and_non_finite_scores(tmp_path, absolute):
    r0 = rid(absolute, 0)
    literal = '{"source": "rm-1", "kind": "reward_model", "response_id": "%s", "score": %s}'
    path = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            row(response_id=r0, score="high"),
            literal % (r0, "NaN"),
            literal % (r0, "Infinity"),
            literal % (r0, "1e999"),
            row(response_id=r0, score=True),
            row(response_id=r0, score=None),
            row(response_id=r0, score=[1]),
        ],
    )
    assert rejected(path, filename="bad.jsonl") == [
        "bad.jsonl:1: score: must be a number, not a string",
        "bad.jsonl:2: score: must be a finite number, not NaN",
        "bad.jsonl:3: score: must be a finite number, not Infinity",
        "bad.jsonl:4: score: must be a finite number, not Infinity",
        "bad.jsonl:5: score: must be a number, not a boolean",
        "bad.jsonl:6: score: must not be empty",
        "bad.jsonl:7: score: must be a number, not a list",
    ]


def test_scores_too_large_to_analyse_are_refused(tmp_path, absolute):
    # finite, but their squares overflow: the source's statistics would be undefined
    r0, r1, r2 = (rid(absolute, index) for index in range(3))
    path = write_jsonl(
        tmp_path / "huge.jsonl",
        [
            row(response_id=r0, score=1e100),  # the largest taken
            row(response_id=r1, score=-1e308),
            row(response_id=r2, score=10**200),  # an integer
        ],
    )
    assert rejected(path, filename="huge.jsonl") == [
        "huge.jsonl:2: score: -1e+308 is beyond ±1e+100, too large to analyse (rescale the "
        "source, e.g. log-perplexity for perplexity)",
        "huge.jsonl:3: score: 1e+200 is beyond ±1e+100, too large to analyse (rescale the "
        "source, e.g. log-perplexity for perplexity)",
    ]


def test_non_numeric_and_non_finite_scores_csv(tmp_path, absolute):
    r0, r1 = rid(absolute, 0), rid(absolute, 1)
    path = write_csv(
        tmp_path / "bad.csv",
        ["source", "kind", "response_id", "score"],
        [
            ["rm-1", "reward_model", r0, "abc"],
            ["rm-1", "reward_model", r0, "nan"],
            ["rm-1", "reward_model", r1, "-inf"],
            ["rm-1", "reward_model", r1, ""],
        ],
    )
    problems = rejected(path, filename="bad.csv")
    assert problems == [
        "bad.csv:2: score: 'abc' is not a number",
        "bad.csv:3: score: must be a finite number, not NaN",
        "bad.csv:4: score: must be a finite number, not -Infinity",
        "bad.csv:5: score: must not be empty",
    ]


def test_unknown_response_and_item_ids(tmp_path, pairwise):
    path = write_jsonl(
        tmp_path / "unknown.jsonl",
        [
            row(response_id="no-such-response"),
            row("judge", "judge", 1, item_id="no-such-item"),
            row(response_id=rid(pairwise, 0, "a")),
        ],
    )
    problems = rejected(path, batch=pairwise, filename="unknown.jsonl")
    assert problems == [
        "unknown.jsonl:1: response_id: 'no-such-response' is not a known response",
        f"unknown.jsonl:2: item_id: 'no-such-item' is not an item of batch {pairwise.slug}",
    ]


def test_item_id_without_batch(tmp_path, pairwise):
    path = write_jsonl(tmp_path / "s.jsonl", [row("judge", "judge", 1, item_id="item-0")])
    problems = rejected(path, filename="s.jsonl")
    assert len(problems) == 1
    assert problems[0].startswith("s.jsonl:1: item_id: item_id needs --batch")


def test_one_source_with_two_kinds_in_the_file(tmp_path, absolute):
    path = write_jsonl(
        tmp_path / "kinds.jsonl",
        [
            row("gpt-4o:overall", "judge", response_id=rid(absolute, 0)),
            row("gpt-4o:overall", "lm", response_id=rid(absolute, 1)),
            row("gpt-4o:overall", "judge", response_id=rid(absolute, 2)),
            row("gpt-4o:overall", "lm", response_id=rid(absolute, 3)),
        ],
    )
    problems = rejected(path, filename="kinds.jsonl")
    assert problems == [
        "kinds.jsonl:2: kind: source 'gpt-4o:overall' is 'lm' here (and on 1 more line) "
        "but 'judge' on line 1; a source has one kind"
    ]


def test_one_source_with_a_kind_other_than_the_stored_one(tmp_path, absolute):
    import_scores(write_jsonl(tmp_path / "a.jsonl", [row(response_id=rid(absolute, 0))]))
    path = write_jsonl(
        tmp_path / "b.jsonl",
        [row(response_id=rid(absolute, 1)), row("rm-1", "judge", response_id=rid(absolute, 2))],
    )
    # the file agrees with the store on line 1, then contradicts itself
    assert rejected(path, filename="b.jsonl") == [
        "b.jsonl:2: kind: source 'rm-1' is 'judge' here but 'reward_model' on line 1; "
        "a source has one kind"
    ]
    # the file's kind contradicts the stored one
    path = write_jsonl(tmp_path / "c.jsonl", [row("rm-1", "judge", response_id=rid(absolute, 2))])
    assert rejected(path, filename="c.jsonl") == [
        "c.jsonl:1: kind: source 'rm-1' is already stored with kind 'reward_model', not "
        "'judge'; a source has one kind"
    ]


def test_same_target_twice_with_different_scores_in_the_file(tmp_path, pairwise):
    path = write_jsonl(
        tmp_path / "twice.jsonl",
        [
            row(response_id=rid(pairwise, 0, "a"), score=1),
            row(response_id=rid(pairwise, 0, "a"), score=1.0),  # identical: fine
            row(response_id=rid(pairwise, 0, "a"), score=2),
            row("j", "judge", 1, item_id="item-0"),
            row("j", "judge", 1, item_id="item-0", higher_is_better=False),
        ],
    )
    problems = rejected(path, batch=pairwise, filename="twice.jsonl")
    assert problems == [
        f"twice.jsonl:3: score: 2.0 differs from the score 1.0 that source 'rm-1' gives "
        f"response_id '{rid(pairwise, 0, 'a')}' on line 1",
        "twice.jsonl:5: score: -1.0 differs from the score 1.0 that source 'j' gives "
        "item_id 'item-0' on line 4",
    ]


def test_same_target_with_a_score_other_than_the_stored_one(tmp_path, pairwise):
    first = write_jsonl(
        tmp_path / "first.jsonl",
        [row(response_id=rid(pairwise, 1, "b"), score=0.5), row("j", "judge", 2, item_id="item-1")],
    )
    import_scores(first, batch=pairwise)
    path = write_jsonl(
        tmp_path / "second.jsonl",
        [
            row(response_id=rid(pairwise, 2, "b"), score=9),
            row(response_id=rid(pairwise, 1, "b"), score=0.75),
            row("j", "judge", 2, item_id="item-1", higher_is_better=False),
        ],
    )
    problems = rejected(path, batch=pairwise, filename="second.jsonl")
    assert problems == [
        f"second.jsonl:2: score: 0.75 differs from the score 0.5 already stored for source "
        f"'rm-1' and response_id '{rid(pairwise, 1, 'b')}'",
        "second.jsonl:3: score: -2.0 differs from the score 2.0 already stored for source 'j' "
        "and item_id 'item-1'",
    ]


def test_missing_keys_jsonl(tmp_path, absolute):
    r0 = rid(absolute, 0)
    path = write_jsonl(
        tmp_path / "missing.jsonl",
        [
            row(source=DROP, response_id=r0),
            row(kind=DROP, response_id=r0),
            row(score=DROP, response_id=r0),
            row(),
            row(source="  ", response_id=r0),
            row(response_id=r0, item_id="item-0"),
        ],
    )
    problems = rejected(path, batch=absolute, filename="missing.jsonl")
    assert problems == [
        "missing.jsonl:1: source: required key is missing",
        "missing.jsonl:2: kind: required key is missing",
        "missing.jsonl:3: score: required key is missing",
        "missing.jsonl:4: response_id: one of response_id or item_id is required",
        "missing.jsonl:5: source: must not be empty",
        "missing.jsonl:6: item_id: give either response_id or item_id, not both "
        "(one score per row)",
    ]


def test_missing_columns_csv(tmp_path, absolute):
    path = write_csv(tmp_path / "cols.csv", ["source", "score"], [["rm-1", "1"]])
    problems = rejected(path, filename="cols.csv")
    assert problems == [
        "cols.csv:1: kind: required column is missing from the header",
        "cols.csv:1: header: needs a response_id or an item_id column",
    ]
    path = write_csv(
        tmp_path / "empty.csv",
        ["source", "kind", "response_id", "item_id", "score"],
        [["rm-1", "reward_model", "", "", "1"]],
    )
    assert rejected(path, filename="empty.csv") == [
        "empty.csv:2: response_id: one of response_id or item_id is required"
    ]


def test_unknown_kind(tmp_path, absolute):
    path = write_jsonl(
        tmp_path / "kind.jsonl",
        [row(kind="reward-model", response_id=rid(absolute, 0)), row(kind=3, response_id="x")],
    )
    problems = rejected(path, filename="kind.jsonl")
    assert problems[:2] == [
        "kind.jsonl:1: kind: 'reward-model' is not one of lm, reward_model, judge, other",
        "kind.jsonl:2: kind: 3 is not one of lm, reward_model, judge, other",
    ]


def test_bad_higher_is_better(tmp_path, absolute):
    path = write_jsonl(
        tmp_path / "hib.jsonl", [row(response_id=rid(absolute, 0), higher_is_better="maybe")]
    )
    assert rejected(path, filename="hib.jsonl") == [
        "hib.jsonl:1: higher_is_better: 'maybe' is not true or false (or 1 or 0)"
    ]


def test_bad_json_lines(tmp_path, absolute):
    path = write_jsonl(
        tmp_path / "broken.jsonl",
        [row(response_id=rid(absolute, 0)), '{"source": "rm-1", ', "[1, 2]", ""],
    )
    problems = rejected(path, filename="broken.jsonl")
    assert len(problems) == 2
    assert problems[0].startswith("broken.jsonl:2: row: not valid JSON:")
    assert problems[1] == "broken.jsonl:3: row: not a JSON object (found a list)"


def test_wrong_csv_field_count(tmp_path, absolute):
    path = write_csv(
        tmp_path / "fields.csv",
        ["source", "kind", "response_id", "score"],
        [["rm-1", "reward_model", rid(absolute, 0), "1"], ["rm-1", "reward_model", "x"]],
    )
    assert rejected(path, filename="fields.csv") == [
        "fields.csv:3: row: expected 4 fields as in the header, found 3"
    ]


def test_not_utf8(tmp_path, absolute):
    good = json.dumps(row(response_id=rid(absolute, 0))).encode()
    bad = b'{"source": "caf\xe9", "kind": "lm", "response_id": "x", "score": 1}'
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(good + b"\n" + bad + b"\n")
    problems = rejected(path, filename="latin1.jsonl")
    assert len(problems) == 1
    assert problems[0].startswith("latin1.jsonl:2: encoding: not valid UTF-8 (byte 0xe9")


def test_unsupported_extension_and_empty_file(tmp_path):
    path = tmp_path / "scores.txt"
    path.write_text("x\n")
    assert rejected(path, filename="scores.txt")[0].startswith("scores.txt:1: file: unsupported")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    assert rejected(empty, filename="empty.jsonl") == ["empty.jsonl:1: file: contains no scores"]


def test_many_problems_are_capped_at_fifty(tmp_path, absolute):
    path = write_jsonl(tmp_path / "many.jsonl", [row(response_id=f"nope-{i}") for i in range(60)])
    problems = rejected(path, filename="many.jsonl")
    assert len(problems) == 51
    assert problems[0] == "many.jsonl:1: response_id: 'nope-0' is not a known response"
    assert problems[49].startswith("many.jsonl:50: response_id:")
    assert problems[-1] == "... and 10 more problems"


def test_validation_uses_chunked_lookups(tmp_path):
    batch = make_batch(n_items=40)
    rows = [row(response_id=rid(batch, i), score=i) for i in range(40)]
    rows += [row("j", "judge", 1, item_id=f"item-{i}") for i in range(40)]
    path = write_jsonl(tmp_path / "many.jsonl", rows)
    with CaptureQueriesContext(connection) as queries:
        import_scores(path, batch=batch)
    assert Score.objects.count() == 80
    assert len(queries) < 20, [q["sql"] for q in queries]


# --------------------------------------------------------------------------- coverage


def test_coverage_absolute(tmp_path, absolute):
    path = write_jsonl(
        tmp_path / "cov.jsonl",
        [
            *[row("rm-1", "reward_model", i, response_id=rid(absolute, i)) for i in range(4)],
            row("ppl", "lm", 1, response_id=rid(absolute, 0)),
            row("ppl", "lm", 1, item_id="item-0"),  # the same item twice: counted once
            row("ppl", "lm", 1, item_id="item-1"),
            row("elsewhere", "other", 1, response_id=rid(make_batch(n_items=1), 0)),
        ],
    )
    import_scores(path, batch=absolute)
    with CaptureQueriesContext(connection) as queries:
        result = coverage(absolute)
    assert len(queries) <= 6
    assert result == [
        {"source": "ppl", "kind": "lm", "n_items_scored": 2, "n_items": 4, "coverage": 0.5},
        {
            "source": "rm-1",
            "kind": "reward_model",
            "n_items_scored": 4,
            "n_items": 4,
            "coverage": 1.0,
        },
    ]


def test_coverage_pairwise(tmp_path, pairwise):
    path = write_jsonl(
        tmp_path / "cov.jsonl",
        [
            # rm-1: both sides of item-0 and item-1, only side a of item-2
            row(response_id=rid(pairwise, 0, "a")),
            row(response_id=rid(pairwise, 0, "b")),
            row(response_id=rid(pairwise, 1, "a")),
            row(response_id=rid(pairwise, 1, "b")),
            row(response_id=rid(pairwise, 2, "a")),
            # half: only one side anywhere -> no item covered, not listed
            row("half", "lm", 1, response_id=rid(pairwise, 0, "a")),
            # judge: item-2 directly, item-0 through both responses and directly
            row("judge", "judge", 2, item_id="item-2"),
            row("judge", "judge", 1, item_id="item-0"),
            row("judge", "judge", 1, response_id=rid(pairwise, 0, "a")),
            row("judge", "judge", 1, response_id=rid(pairwise, 0, "b")),
        ],
    )
    import_scores(path, batch=pairwise)
    assert coverage(pairwise) == [
        {
            "source": "judge",
            "kind": "judge",
            "n_items_scored": 2,
            "n_items": 3,
            "coverage": pytest.approx(2 / 3),
        },
        {
            "source": "rm-1",
            "kind": "reward_model",
            "n_items_scored": 2,
            "n_items": 3,
            "coverage": pytest.approx(2 / 3),
        },
    ]
    assert coverage(make_batch(kind="pairwise", n_items=0, live=False)) == []


# --------------------------------------------------------------------------- command


def test_command_prints_one_summary_line(tmp_path, pairwise):
    path = write_jsonl(
        tmp_path / "cmd.jsonl",
        [row("j", "judge", 1, item_id="item-0"), row(response_id=rid(pairwise, 0, "a"))],
    )
    out = io.StringIO()
    call_command("import_scores", str(path), "--batch", pairwise.slug, stdout=out)
    assert out.getvalue().strip().splitlines() == [
        "Imported 2 scores (0 scores unchanged; 2 sources new, 0 updated)"
    ]
    out = io.StringIO()
    call_command("import_scores", str(path), "--batch", pairwise.slug, stdout=out)
    assert "0 scores (2 scores unchanged" in out.getvalue()


def test_command_rejection_lists_every_problem(tmp_path, absolute):
    path = write_jsonl(
        tmp_path / "cmd.jsonl",
        [row(response_id="nope"), row("j", "judge", 1, item_id="item-0"), row(score="x")],
    )
    before = counts()
    with pytest.raises(CommandError) as caught:
        call_command("import_scores", str(path))
    message = str(caught.value)
    assert "nothing was imported" in message
    assert f"{path}:1: response_id: 'nope' is not a known response" in message
    assert f"{path}:2: item_id: item_id needs --batch" in message
    assert f"{path}:3: score: must be a number, not a string" in message
    assert counts() == before
    with pytest.raises(CommandError, match="does not exist"):
        call_command("import_scores", str(path), "--batch", "no-such-batch")


# --------------------------------------------------------------------------- API


def _client(role: str | None) -> Client:
    if role is None:
        return Client()
    return token_client(role)


def _upload(rows, name="scores.jsonl"):
    body = "\n".join(json.dumps(r) for r in rows).encode()
    return SimpleUploadedFile(name, body, content_type="application/octet-stream")


def test_roles_include_the_score_permissions():
    researcher = Group.objects.get(name="researcher")
    codenames = set(researcher.permissions.values_list("codename", flat=True))
    assert {"add_scoresource", "add_score", "view_score"} <= codenames
    admin = Group.objects.get(name="admin")
    assert admin.permissions.filter(codename="add_score").exists()


@pytest.mark.parametrize("role", ["researcher", "admin"])
def test_api_import_and_coverage(role, pairwise):
    client = _client(role)
    rows = [
        row("j", "judge", 1, item_id="item-0"),
        row(response_id=rid(pairwise, 1, "a")),
        row(response_id=rid(pairwise, 1, "b")),
    ]
    response = client.post("/api/v1/scores", {"file": _upload(rows), "batch": pairwise.slug})
    assert response.status_code == 201, response.content
    assert response.json() == {
        "sources_created": 2,
        "sources_updated": 0,
        "scores_created": 3,
        "scores_unchanged": 0,
    }
    listing = client.get(f"/api/v1/batches/{pairwise.slug}/score-sources")
    assert listing.status_code == 200
    assert [(s["source"], s["n_items_scored"], s["n_items"]) for s in listing.json()] == [
        ("j", 1, 3),
        ("rm-1", 1, 3),
    ]
    assert client.get("/api/v1/batches/no-such-batch/score-sources").status_code == 404


def test_api_rejection_lists_problems(pairwise):
    client = _client("researcher")
    before = counts()
    response = client.post(
        "/api/v1/scores",
        {
            "file": _upload(
                [row(response_id="nope"), row("j", "judge", 1, item_id="item-0")], "bad.jsonl"
            )
        },
    )
    assert response.status_code == 400
    problems = response.json()["problems"]
    assert problems[0] == "bad.jsonl:1: response_id: 'nope' is not a known response"
    assert problems[1].startswith("bad.jsonl:2: item_id: item_id needs --batch")
    assert counts() == before
    missing = client.post("/api/v1/scores", {})
    assert missing.status_code == 400 and missing.json()["field"] == "file"
    unknown = client.post(
        "/api/v1/scores", {"file": _upload([row(item_id="item-0")]), "batch": "nope"}
    )
    assert unknown.status_code == 400 and unknown.json()["field"] == "batch"


def test_api_refuses_anonymous_callers(pairwise):
    anonymous = _client(None)
    upload = _upload([row(response_id=rid(pairwise, 0, "a"))])
    assert anonymous.post("/api/v1/scores", {"file": upload}).status_code == 403
    assert anonymous.get(f"/api/v1/batches/{pairwise.slug}/score-sources").status_code == 403
    assert counts() == (0, 0)


def test_schema_documents_the_endpoints():
    user = User.objects.create_superuser("schema-admin", password="pw")
    client = Client()
    client.force_login(user)
    response = client.get("/api/schema/")
    assert response.status_code == 200
    text = response.content.decode()
    assert "/api/v1/scores" in text and "/api/v1/batches/{slug}/score-sources" in text


def test_a_concurrent_import_of_the_same_scores_rejects_the_later_one(tmp_path, absolute):
    from analysis.services import scores as service

    path = write_jsonl(tmp_path / "race.jsonl", [row(response_id=rid(absolute, 0), score=1)])
    with open(path, "rb") as handle:
        plan = service._validate(handle, "race.jsonl", "jsonl", None)
    import_scores(path)  # another import writes the same source and score meanwhile
    before = counts()
    with pytest.raises(ImportRejected) as caught:
        service._write(plan)
    assert caught.value.problems[0].startswith(
        "race.jsonl:1: file: conflicts with data written by a concurrent import"
    )
    assert counts() == before


# --------------------------------------------------------------------------- batch page upload


def _page_file(name: str, content: str):
    return SimpleUploadedFile(name, content.encode(), content_type="application/octet-stream")


def test_batch_page_offers_score_upload_and_report_link():
    batch = make_batch()
    page = staff_client("researcher").get(f"/manage/{batch.slug}/")
    assert page.status_code == 200
    assert f'action="/manage/{batch.slug}/scores"'.encode() in page.content
    assert f'href="/manage/{batch.slug}/report"'.encode() in page.content


def test_batch_page_score_upload_imports_or_lists_problems():
    batch = make_batch(n_items=2)
    client = staff_client("researcher")
    response_id = batch.items.first().response.response_id
    row = {"source": "rm", "kind": "reward_model", "response_id": response_id, "score": 1.5}
    good = json.dumps(row) + "\n"
    done = client.post(f"/manage/{batch.slug}/scores", {"file": _page_file("s.jsonl", good)})
    assert done.status_code == 302 and Score.objects.count() == 1
    bad = '{"source": "rm", "kind": "reward_model", "response_id": "nope", "score": 1}\n'
    rejected = client.post(f"/manage/{batch.slug}/scores", {"file": _page_file("bad.jsonl", bad)})
    assert rejected.status_code == 400
    assert b"bad.jsonl:1: response_id:" in rejected.content
    assert Score.objects.count() == 1


def test_batch_page_score_upload_needs_the_analysis_role():
    batch = make_batch()
    client = staff_client(None)
    response = client.post(f"/manage/{batch.slug}/scores", {"file": _page_file("s.jsonl", "")})
    assert response.status_code == 403
