"""Measurement validity: balanced pairwise order, attention checks that do not touch N,
quality flags and policies, admission, the lease heartbeat, the questionnaire, repeats.

Everything goes through the services (and, where the rule lives there, the HTTP views),
against the real database.
"""

import io
import json
from datetime import timedelta

import pytest
from django.test import Client, override_settings
from django.utils import timezone

from annotation.models import Assignment, Item, Label, Participation
from annotation.services.admission import Admission, admit
from annotation.services.annotators import include_annotator
from annotation.services.importing import import_items
from annotation.services.labelling import submit_label
from annotation.services.leasing import expire_leases, extend_lease, lease_next_item
from core.audit import history
from core.errors import Conflict, InvalidInput
from tests.factories import make_batch, make_participant

pytestmark = pytest.mark.django_db


def lease(batch, person, now=None):
    return lease_next_item(batch, person, now=now)


def answer(person, outcome, value, duration=2000):
    return submit_label(person.annotator, outcome.assignment.pk, value, duration)


def answer_all(batch, person, value, at_most: int) -> None:
    """``person`` answers ``value`` to each item handed, until none is (``at_most`` items)."""
    for _ in range(at_most):
        outcome = lease(batch, person)
        if outcome.assignment is None:
            return
        answer(person, outcome, value)


def as_shown(assignment, canonical: int) -> int:
    """The value a worker picks on the page to mean ``canonical`` (relative to A/B)."""
    return -canonical if assignment.shown_order == "ba" else canonical


# --------------------------------------------------------------------------- pairwise order


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 25])
def test_a_complete_pair_is_shown_in_both_orders_equally(n):
    batch = make_batch(kind="pairwise", n_items=3, per_item=n)
    people = [make_participant(batch) for _ in range(n)]
    for person in people:
        for _ in range(3):
            outcome = lease(batch, person)
            answer(person, outcome, 1)
    for item in Item.objects.filter(batch=batch):
        orders = list(item.labels.filter(status="counted").values_list("shown_order", flat=True))
        assert len(orders) == n
        assert abs(orders.count("ab") - orders.count("ba")) <= 1, orders


def test_late_labels_never_unbalance_an_item():
    """Leases of one order expire and their late answers arrive after the other order
    refilled the item: the late ones become surplus rather than tip the balance."""
    batch = make_batch(kind="pairwise", n_items=1, per_item=2, lease_seconds=30)
    later = timezone.now() + timedelta(seconds=31)
    first, second = make_participant(batch), make_participant(batch)
    held = [lease(batch, first), lease(batch, second)]
    assert {o.assignment.shown_order for o in held} == {"ab", "ba"}
    expire_leases(batch, now=later)
    third, fourth = make_participant(batch), make_participant(batch)
    refill = [lease(batch, third, now=later), lease(batch, fourth, now=later)]
    expire_leases(batch, now=later + timedelta(seconds=31))
    # both stale answers come in: whatever their orders, the item stays within ceil(N/2)
    outcomes = [
        answer(p, o, 2) for p, o in zip([first, second, third, fourth], held + refill, strict=True)
    ]
    item = Item.objects.get(batch=batch)
    counted = list(item.labels.filter(status="counted").values_list("shown_order", flat=True))
    assert item.counted_count == len(counted) <= 2
    assert counted.count("ab") <= 1 and counted.count("ba") <= 1
    assert sorted(o.status for o in outcomes).count("counted") == len(counted)


def test_canonical_sign_does_not_depend_on_the_order_shown():
    """A worker who always prefers the longer response gives the same stored sign for
    an item, whichever response the page showed first."""
    batch = make_batch(kind="pairwise", n_items=2, per_item=6)
    item_a_longer = Item.objects.filter(batch=batch).order_by("position").first()
    response = item_a_longer.response_a
    response.text = "A much longer and more complete answer than the other one."
    response.save()
    for _ in range(6):
        person = make_participant(batch)
        for _ in range(2):
            outcome = lease(batch, person)
            item = Item.objects.select_related("response_a", "response_b").get(
                pk=outcome.assignment.item_id
            )
            a_longer = len(item.response_a.text) > len(item.response_b.text)
            first_is_a = outcome.assignment.shown_order == "ab"
            # on the page: +2 = "Response 1 is much better"
            picks_first = a_longer == first_is_a
            answer(person, outcome, 2 if picks_first else -2)
    values = set(item_a_longer.labels.values_list("value", flat=True))
    assert values == {2}  # always "A much better", stored relative to A/B
    orders = list(item_a_longer.labels.values_list("shown_order", flat=True))
    assert orders.count("ab") == orders.count("ba") == 3


def test_the_pair_page_names_responses_by_position():
    batch = make_batch(kind="pairwise", n_items=1, per_item=2)
    client = Client()
    client.get(f"/work/{batch.slug}/", {"worker": "pos-worker"})
    client.post(f"/work/{batch.slug}/consent")
    csrf = client.cookies["csrftoken"].value
    body = client.post(f"/api/v1/work/{batch.slug}/next", HTTP_X_CSRFTOKEN=csrf).json()
    html = body["item"]["html"]
    assert "Response 1" in html and "Response 2" in html and "Response A" not in html
    assignment = Assignment.objects.get(pk=body["assignment"])
    item = assignment.item
    first = item.response_a if assignment.shown_order == "ab" else item.response_b
    assert html.index(first.text) < html.index("Response 2")
    page = client.get(f"/work/{batch.slug}/task").content.decode()
    assert "Response 1 is much better" in page and "A is much better" not in page


# --------------------------------------------------------------------------- attention checks


def make_checked_batch(*, n_regular=6, n_checks=3, per_item=2, **settings):
    batch = make_batch(n_items=n_regular + n_checks, per_item=per_item, **settings)
    checks = list(Item.objects.filter(batch=batch).order_by("position")[:n_checks])
    Item.objects.filter(pk__in=[item.pk for item in checks]).update(
        is_check=True, gold=[5], target=0
    )
    return batch, {item.pk for item in checks}


def work_through(batch, person, check_pks, *, check_answer=5, regular_answer=3, limit=50):
    seen = []
    for _ in range(limit):
        outcome = lease(batch, person)
        if outcome.assignment is None:
            return seen, outcome
        is_check = outcome.assignment.item_id in check_pks
        seen.append(outcome.assignment.item_id)
        answer(person, outcome, check_answer if is_check else regular_answer)
    raise AssertionError("the annotator never ran out of work")


def test_checks_are_interleaved_never_counted_and_never_repeated():
    batch, checks = make_checked_batch(check_every=2)
    people = [make_participant(batch) for _ in range(2)]
    for person in people:
        seen, outcome = work_through(batch, person, checks)
        assert outcome.reason in ("drained", "nothing_left_for_you")
        met = [pk for pk in seen if pk in checks]
        assert len(met) == len(set(met)) >= 1  # met at least one, none twice
    for item in Item.objects.filter(batch=batch):
        if item.pk in checks:
            assert (item.counted_count, item.reserved_count) == (0, 0)
            assert not item.labels.filter(status="counted").exists()
        else:
            assert item.counted_count == item.labels.filter(status="counted").count() == 2
    statuses = set(Label.objects.filter(item_id__in=checks).values_list("status", flat=True))
    assert statuses == {"check"}
    assert set(Label.objects.filter(status="check").values_list("check_passed", flat=True)) == {
        True
    }


def test_checks_cannot_be_learned_from_their_position():
    batch, checks = make_checked_batch(n_regular=40, n_checks=12, per_item=1, check_every=6)
    gaps = set()
    for _ in range(3):
        person = make_participant(batch)
        seen, _ = work_through(batch, person, checks, limit=60)
        positions = [index for index, pk in enumerate(seen) if pk in checks]
        gaps.update(b - a for a, b in zip(positions, positions[1:], strict=False))
        if len(gaps) > 1:
            break
    assert len(gaps) > 1  # jittered: not always the same number of items in between


def test_a_failing_annotator_is_excluded_at_the_f_th_failure_and_backfilled():
    batch, checks = make_checked_batch(
        n_regular=6, n_checks=4, per_item=1, check_every=1, exclude_after_failed_checks=2,
        screen_out_code="SCREENED",
    )  # fmt: skip
    spammer = make_participant(batch, "spammer", platform="prolific")
    seen, outcome = work_through(batch, spammer, checks, check_answer=1)
    assert outcome.reason == "excluded"
    failed = Label.objects.filter(annotator=spammer.annotator, status="check", check_passed=False)
    assert failed.count() == 2
    spammer.refresh_from_db()
    assert spammer.status == "excluded" and spammer.excluded_automatically
    assert "failed 2 of 2 attention checks" in spammer.exclusion_reason
    event = history(batch).get(action="annotator.exclude")
    assert event.actor_name == "policy: attention checks"
    # the spammer's labels no longer count; others fill every item to exactly N
    helper = make_participant(batch, "careful")
    work_through(batch, helper, checks)
    for item in Item.objects.filter(batch=batch, is_check=False):
        assert item.counted_count == 1
        assert item.labels.filter(status="counted").get().annotator == helper.annotator
    # the worker's next request: the screen-out page with its code
    client = Client()
    page = client.get(f"/work/{batch.slug}/", {"PROLIFIC_PID": "spammer", "STUDY_ID": "s"})
    assert "SCREENED" in page.content.decode()
    # and the admin can undo it
    outcome = include_annotator(batch, spammer.annotator)
    spammer.refresh_from_db()
    assert spammer.status == "active" and not spammer.excluded_automatically
    assert (
        outcome["counted"] + outcome["surplus"]
        == spammer.annotator.labels.filter(status__in=["counted", "surplus"]).count()
    )


def test_check_items_are_imported_with_check_true_and_need_gold(tmp_path):
    batch = make_batch(n_items=0, live=False, per_item=3)
    rows = [
        {"item_id": "c1", "query_id": "cq", "query": "Pick 5", "response_id": "cr",
         "response": "R", "check": True, "gold": 5},
        {"item_id": "c2", "query_id": "cq", "query": "Pick 5", "response_id": "cr",
         "response": "R", "check": True},
    ]  # fmt: skip
    path = tmp_path / "checks.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    from core.tabular import ImportRejected

    with pytest.raises(ImportRejected) as rejected:
        import_items(batch, path)
    assert rejected.value.problems == [
        f"{path}:2: gold: an attention check (check: true) needs its gold answer"
    ]
    path.write_text(json.dumps(rows[0]) + "\n")
    import_items(batch, path)
    item = Item.objects.get(batch=batch)
    assert item.is_check and item.target == 0 and item.gold == [5]


def test_a_check_looks_like_a_regular_item_in_the_payload():
    batch, checks = make_checked_batch(n_regular=2, n_checks=1, per_item=1, check_every=1)
    client = Client()
    client.get(f"/work/{batch.slug}/", {"worker": "looker"})
    client.post(f"/work/{batch.slug}/consent")
    csrf = client.cookies["csrftoken"].value
    payloads = []
    for _ in range(3):
        body = client.post(f"/api/v1/work/{batch.slug}/next", HTTP_X_CSRFTOKEN=csrf).json()
        if body["assignment"] is None:
            break
        payloads.append(body)
        client.post(
            f"/api/v1/assignments/{body['assignment']}/label",
            {"value": 5},
            content_type="application/json",
            HTTP_X_CSRFTOKEN=csrf,
        )
    keys = {frozenset(body) for body in payloads} | {frozenset(b["item"]) for b in payloads}
    assert len({frozenset(body) for body in payloads}) == 1 and keys
    assert len({frozenset(body["item"]) for body in payloads}) == 1
    assert not any("check" in json.dumps(body).lower() for body in payloads)


# --------------------------------------------------------------------------- flags and policy


def test_speeders_and_straight_liners_are_flagged():
    batch = make_batch(n_items=6, per_item=1, min_seconds_per_item=4, straightline_run=3)
    person = make_participant(batch)
    durations = iter([1000, 5000, 5000, 5000, 300, 5000])
    values = iter([4, 4, 4, 4, 2, 2])
    for _ in range(6):
        outcome = lease(batch, person)
        answer(person, outcome, next(values), next(durations))
    labels = list(Label.objects.filter(batch=batch).order_by("submitted_at", "pk"))
    assert [label.too_fast for label in labels] == [True, False, False, False, True, False]
    assert [label.straightlined for label in labels] == [False, False, True, True, False, False]


def test_the_exclude_policy_excludes_a_straight_liner():
    batch = make_batch(
        n_items=14, per_item=1, straightline_run=3, flag_policy="exclude",
        flagged_share_to_exclude=0.5,
    )  # fmt: skip
    person = make_participant(batch)
    answer_all(batch, person, 5, at_most=12)
    person.refresh_from_db()
    assert person.status == "excluded" and person.excluded_automatically
    assert "straight-lined" in person.exclusion_reason
    # judged only once there are enough labels to judge
    assert Label.objects.filter(annotator=person.annotator).count() == 10


# --------------------------------------------------------------------------- admission


def test_consent_is_enforced_by_the_server():
    batch = make_batch(n_items=1, per_item=1)
    batch.consent_text = "I agree to take part."
    batch.save()
    client = Client()
    client.get(f"/work/{batch.slug}/", {"worker": "no-consent"})
    csrf = client.cookies["csrftoken"].value
    refused = client.post(f"/api/v1/work/{batch.slug}/next", HTTP_X_CSRFTOKEN=csrf)
    assert refused.status_code == 403 and "consent" in refused.json()["detail"]
    assert not Assignment.objects.exists()
    client.post(f"/work/{batch.slug}/consent")
    assert client.post(f"/api/v1/work/{batch.slug}/next", HTTP_X_CSRFTOKEN=csrf).json()[
        "assignment"
    ]


def test_a_late_arrival_sees_study_full_before_any_consent_and_no_code():
    batch = make_batch(n_items=1, per_item=1)
    early = make_participant(batch, "early")
    answer(early, lease(batch, early), 3)
    batch.consent_text = "I agree."
    batch.save()
    client = Client()
    page = client.get(f"/work/{batch.slug}/", {"PROLIFIC_PID": "late", "STUDY_ID": "s"})
    html = page.content.decode()
    assert "This study is full" in html and "I agree" not in html
    assert batch.completion_code not in html and "return the study" in html
    assert not Participation.objects.filter(annotator__platform_id="late").exists()


def test_no_completion_code_for_zero_items_done():
    batch = make_batch(n_items=1, per_item=1)
    person = make_participant(batch, "prolific-zero", platform="prolific")
    other = make_participant(batch, "prolific-one", platform="prolific")
    answer(other, lease(batch, other), 3)
    client = Client()
    client.get(f"/work/{batch.slug}/", {"PROLIFIC_PID": "prolific-zero", "STUDY_ID": "s"})
    body = client.post(
        f"/api/v1/work/{batch.slug}/next", HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value
    ).json()
    assert body["assignment"] is None and body["completion_code"] is None
    assert body["return_study"] is True
    assert person.annotator.labels.count() == 0


def test_wait_while_the_remaining_slots_are_merely_leased():
    batch = make_batch(n_items=1, per_item=1, lease_seconds=60)
    holder, waiter = make_participant(batch), make_participant(batch)
    assert lease(batch, holder).assignment is not None
    outcome = lease(batch, waiter)
    assert outcome.reason == "wait" and 5 <= outcome.retry_after <= 60
    later = timezone.now() + timedelta(seconds=61)
    assert lease(batch, waiter, now=later).assignment is not None  # the slot came back


def test_the_concurrency_cap():
    batch = make_batch(n_items=5, per_item=2, max_concurrent_annotators=1)
    first, second = make_participant(batch), make_participant(batch)
    assert lease(batch, first).assignment is not None
    assert admit(batch, second) == Admission.BUSY
    outcome = lease(batch, second)
    assert outcome.reason == "busy" and outcome.retry_after


def test_invitation_link_workers_get_a_plain_thank_you():
    batch = make_batch(n_items=1, per_item=1)
    person = make_participant(batch, "invited")
    answer(person, lease(batch, person), 3)
    client = Client()
    page = client.get(f"/work/{batch.slug}/", {"worker": "invited"}).content.decode()
    assert "Thank you" in page
    assert batch.completion_code not in page and "Back to your platform" not in page


# --------------------------------------------------------------------------- heartbeat


def test_the_heartbeat_extends_up_to_the_cap_and_never_revives():
    batch = make_batch(n_items=2, per_item=1, lease_seconds=60, max_lease_seconds=150)
    person = make_participant(batch)
    outcome = lease(batch, person)
    start = outcome.assignment.leased_at
    extended = extend_lease(
        person.annotator, outcome.assignment.pk, now=start + timedelta(seconds=50)
    )
    assert extended.expires_at == start + timedelta(seconds=110)
    extended = extend_lease(
        person.annotator, outcome.assignment.pk, now=start + timedelta(seconds=100)
    )
    assert extended.expires_at == start + timedelta(seconds=150)  # the cap
    with pytest.raises(Conflict):
        extend_lease(person.annotator, outcome.assignment.pk, now=start + timedelta(seconds=151))
    answer(person, lease(batch, person, now=start + timedelta(seconds=152)), 3)
    submitted = Assignment.objects.filter(annotator=person.annotator, state="submitted").get()
    with pytest.raises(Conflict):
        extend_lease(person.annotator, submitted.pk, now=start + timedelta(seconds=153))


def test_a_heartbeat_keeps_a_careful_reader_past_the_base_lease_through_http():
    batch = make_batch(n_items=2, per_item=1, lease_seconds=3)
    client = Client()
    client.get(f"/work/{batch.slug}/", {"worker": "reader"})
    client.post(f"/work/{batch.slug}/consent")
    csrf = client.cookies["csrftoken"].value
    body = client.post(f"/api/v1/work/{batch.slug}/next", HTTP_X_CSRFTOKEN=csrf).json()
    assert body["heartbeat_seconds"] == 1
    beat = client.post(f"/api/v1/assignments/{body['assignment']}/heartbeat", HTTP_X_CSRFTOKEN=csrf)
    assert beat.status_code == 200
    stranger = Client()
    stranger.get(f"/work/{batch.slug}/", {"worker": "stranger"})
    denied = stranger.post(
        f"/api/v1/assignments/{body['assignment']}/heartbeat",
        HTTP_X_CSRFTOKEN=stranger.cookies["csrftoken"].value,
    )
    assert denied.status_code == 404


# --------------------------------------------------------------------------- questionnaire

QUESTIONS = [
    {"id": "english", "text": "Is English your first language?", "type": "choice",
     "options": ["yes", "no"]},
    {"id": "age", "text": "Your age", "type": "number", "min": 18, "max": 99},
]  # fmt: skip


def test_the_questionnaire_is_asked_once_after_consent_and_validated():
    batch = make_batch(n_items=2, per_item=1, questionnaire=QUESTIONS)
    client = Client()
    client.get(f"/work/{batch.slug}/", {"worker": "q-worker"})
    response = client.post(f"/work/{batch.slug}/consent")
    assert response.url.endswith("/questionnaire")
    csrf = client.cookies["csrftoken"].value
    assert client.post(f"/api/v1/work/{batch.slug}/next", HTTP_X_CSRFTOKEN=csrf).status_code == 403
    wrong = client.post(f"/work/{batch.slug}/questionnaire", {"english": "maybe", "age": "12"})
    assert wrong.status_code == 400 and "choose one of the options" in wrong.content.decode()
    wrong = client.post(f"/work/{batch.slug}/questionnaire", {"english": "no", "age": "12"})
    assert "between 18 and 99" in wrong.content.decode()
    ok = client.post(f"/work/{batch.slug}/questionnaire", {"english": "no", "age": "42"})
    assert ok.status_code == 302 and ok.url.endswith("/task")
    participation = Participation.objects.get(annotator__platform_id="q-worker")
    assert participation.questionnaire_answers == {"english": "no", "age": 42}
    assert client.post(f"/api/v1/work/{batch.slug}/next", HTTP_X_CSRFTOKEN=csrf).json()[
        "assignment"
    ]


@pytest.mark.parametrize("options", [[True, False], ["yes", None], ["a", {"b": 1}]])
def test_a_choices_options_are_texts_not_json_booleans(options):
    from annotation.services.questionnaire import clean_definition, parse_file_text

    question = {"id": "q", "text": "Native speaker?", "type": "choice", "options": options}
    with pytest.raises(InvalidInput, match="options must be texts"):
        clean_definition([question])
    # the same words in a YAML file stay texts (yes / no are not YAML booleans here)
    parsed = parse_file_text(
        "- id: q\n  text: Native?\n  type: choice\n  options: [yes, no]\n", "q.yaml"
    )
    assert clean_definition(parsed)[0]["options"] == ["yes", "no"]
    numbers = {**question, "options": [1, 2.5]}
    assert clean_definition([numbers])[0]["options"] == ["1", "2.5"]


def test_an_empty_questionnaire_flags_every_missing_answer_and_focuses_the_first():
    batch = make_batch(n_items=1, per_item=1, questionnaire=QUESTIONS)
    client = Client()
    client.get(f"/work/{batch.slug}/", {"worker": "empty-q"})
    client.post(f"/work/{batch.slug}/consent")
    page = client.post(f"/work/{batch.slug}/questionnaire", {})
    html = page.content.decode()
    assert page.status_code == 400
    assert html.count("please answer this question") == 2  # both, not only the first
    assert html.count("autofocus") == 1
    first_radio = html.index('name="english"')
    assert html.index("autofocus") > first_radio > 0
    assert html.index("autofocus") < html.index('name="age"')


def test_a_bad_questionnaire_definition_is_refused_naming_the_question():
    from core.errors import InvalidInput

    with pytest.raises(InvalidInput) as refused:
        make_batch(questionnaire=[{"id": "a", "text": "Pick", "type": "choice", "options": ["x"]}])
    assert refused.value.field == "questionnaire" and "question 'a'" in str(refused.value)


def test_answers_are_exported_in_the_annotators_layout():
    from annotation.services.exports.rows import iter_annotator_rows

    batch = make_batch(n_items=1, per_item=1, questionnaire=QUESTIONS)
    person = make_participant(batch)
    from annotation.services.questionnaire import record_answers

    record_answers(batch, person, {"english": "yes", "age": "30"})
    person.consented_at = timezone.now()
    person.save()
    answer(person, lease(batch, person), 3)
    (row,) = list(iter_annotator_rows(batch))
    assert row["q_english"] == "yes" and row["q_age"] == 30


# --------------------------------------------------------------------------- repeats


def test_repeats_show_an_earlier_item_and_never_count():
    batch = make_batch(n_items=8, per_item=1, repeat_every=2)
    person = make_participant(batch)
    answer_all(batch, person, 4, at_most=20)
    repeats = Label.objects.filter(annotator=person.annotator, status="repeat")
    assert repeats.exists()
    regular_items = set(
        Label.objects.filter(annotator=person.annotator, status="counted").values_list(
            "item_id", flat=True
        )
    )
    assert set(repeats.values_list("item_id", flat=True)) <= regular_items
    for item in Item.objects.filter(batch=batch):
        assert item.counted_count == 1
    assert repeats.count() == len(set(repeats.values_list("item_id", flat=True)))


# --------------------------------------------------------------------------- integrity


def test_a_signed_invitation_batch_refuses_an_invented_id():
    from annotation.services.invitations import invitation_token

    batch = make_batch(n_items=1, per_item=1, invitations_required=True)
    client = Client()
    invented = client.get(f"/work/{batch.slug}/", {"worker": "made-up"})
    assert invented.status_code == 400 and "personal invitation" in invented.content.decode()
    forged = client.get(f"/work/{batch.slug}/", {"invite": "someone:forged"})
    assert forged.status_code == 400
    token = invitation_token(batch, "alice-1")
    ok = client.get(f"/work/{batch.slug}/", {"invite": token})
    assert ok.status_code == 200
    assert Participation.objects.filter(batch=batch, annotator__platform_id="alice-1").exists()


@override_settings(ENTRY_RATE_LIMIT_PER_HOUR=3)
def test_new_entries_per_client_address_are_rate_limited():
    from django.core.cache import cache

    cache.clear()
    batch = make_batch(n_items=20, per_item=20)
    statuses = [
        Client(REMOTE_ADDR="203.0.113.9")
        .get(f"/work/{batch.slug}/", {"worker": f"w{i}"})
        .status_code
        for i in range(5)
    ]
    assert statuses == [200, 200, 200, 429, 429]
    other = Client(REMOTE_ADDR="203.0.113.10").get(f"/work/{batch.slug}/", {"worker": "x"})
    assert other.status_code == 200
    assert Participation.objects.filter(batch=batch).count() == 4


def test_ids_sharing_an_address_or_device_are_flagged_and_excluded_together():
    from django.contrib.auth.models import Group, User

    batch = make_batch(n_items=4, per_item=4)
    sybil = Client(REMOTE_ADDR="198.51.100.7")
    for name in ("s1", "s2", "s3"):
        sybil.get(f"/work/{batch.slug}/", {"worker": name})
    Client(REMOTE_ADDR="198.51.100.8").get(f"/work/{batch.slug}/", {"worker": "honest"})
    admin = User.objects.create_user("ad", password="pw", is_staff=True)
    admin.groups.add(Group.objects.get(name="admin"))
    staff = Client()
    staff.force_login(admin)
    page = staff.get(f"/manage/{batch.slug}/annotators").content.decode()
    assert "Shared addresses and devices" in page and "198.51.100" not in page
    from annotation.selectors import sharing_groups

    groups = sharing_groups(batch)
    sybils = {p.annotator.pseudonym for p in Participation.objects.filter(
        annotator__platform_id__in=["s1", "s2", "s3"])}  # fmt: skip
    assert any(set(names) == sybils for names in groups.values())
    group, names = next((g, n) for g, n in groups.items() if set(n) == sybils)
    staff.post(
        f"/manage/{batch.slug}/annotators/exclude-group", {"annotator": names, "group": group}
    )
    statuses = dict(
        Participation.objects.filter(batch=batch).values_list("annotator__platform_id", "status")
    )
    assert statuses == {"s1": "excluded", "s2": "excluded", "s3": "excluded", "honest": "active"}


def test_a_participation_is_bound_to_its_browser():
    batch = make_batch(n_items=3, per_item=1)
    first = Client()
    first.get(f"/work/{batch.slug}/", {"worker": "bound"})
    first.post(f"/work/{batch.slug}/consent")
    csrf = first.cookies["csrftoken"].value
    held = first.post(f"/api/v1/work/{batch.slug}/next", HTTP_X_CSRFTOKEN=csrf).json()
    second = Client()
    page = second.get(f"/work/{batch.slug}/", {"worker": "bound"})
    assert page.status_code == 409 and "another browser" in page.content.decode()
    # the second browser gets nothing of the first's: no session for that worker
    assert (
        second.post(
            f"/api/v1/work/{batch.slug}/next", HTTP_X_CSRFTOKEN=second.cookies["csrftoken"].value
        ).status_code
        == 403
    )
    second.post(f"/work/{batch.slug}/switch")
    participation = Participation.objects.get(annotator__platform_id="bound")
    assert participation.browser_switches == 1
    assert Assignment.objects.get(pk=held["assignment"]).state == "expired"
    assert history(batch).filter(action="participation.browser_switch").exists()
    again = second.post(
        f"/api/v1/work/{batch.slug}/next", HTTP_X_CSRFTOKEN=second.cookies["csrftoken"].value
    ).json()
    assert again["assignment"] and again["assignment"] != held["assignment"]


def test_design_settings_through_the_api_and_the_command(tmp_path):
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command

    from annotation.models import Batch

    admin = User.objects.create_user("designer", password="pw", is_staff=True)
    admin.groups.add(Group.objects.get(name="admin"))
    staff = Client()
    staff.force_login(admin)
    created = staff.post(
        "/api/v1/batches/",
        {"slug": "designed", "kind": "pairwise", "title": "D", "check_every": 10,
         "exclude_after_failed_checks": 2, "min_seconds_per_item": 4, "questionnaire": QUESTIONS,
         "repeat_every": 15, "flag_policy": "exclude", "flagged_share_to_exclude": 0.5},
        content_type="application/json",
    )  # fmt: skip
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["check_every"] == 10 and body["questionnaire"][1]["id"] == "age"
    bad = staff.patch(
        "/api/v1/batches/designed/",
        {"flag_policy": "exclude", "flagged_share_to_exclude": None},
        content_type="application/json",
    )
    assert bad.status_code == 400 and bad.json()["field"] == "flagged_share_to_exclude"
    questions = tmp_path / "q.yaml"
    questions.write_text(
        "- id: english\n  text: First language English?\n  type: choice\n  options: [yes, no]\n"
    )
    call_command(
        "create_batch", "from-cli", "--kind", "absolute", "--check-every", "10",
        "--exclude-after-failed-checks", "2", "--min-seconds-per-item", "4",
        "--straightline-run", "5", "--flag-policy", "exclude", "--flagged-share-to-exclude",
        "0.5", "--questionnaire", str(questions), "--repeat-every", "15",
        "--screen-out-code", "SCR", "--max-lease-seconds", "1800",
    )  # fmt: skip
    cli = Batch.objects.get(slug="from-cli")
    assert (cli.check_every, cli.repeat_every, cli.flag_policy) == (10, 15, "exclude")
    assert cli.questionnaire[0]["options"] == ["yes", "no"]  # YAML's yes stays text


def test_data_upload_of_checks_through_the_page(tmp_path):
    from django.contrib.auth.models import Group, User

    batch = make_batch(n_items=0, live=False)
    admin = User.objects.create_user("uploader", password="pw", is_staff=True)
    admin.groups.add(Group.objects.get(name="admin"))
    staff = Client()
    staff.force_login(admin)
    upload = io.BytesIO(
        b'{"item_id": "c", "query_id": "uq", "query": "Q", "response_id": "ur", '
        b'"response": "R", "check": "yes", "gold": [4, 5]}\n'
    )
    upload.name = "items.jsonl"
    assert staff.post(f"/manage/{batch.slug}/items", {"file": upload}).status_code == 302
    assert Item.objects.get(batch=batch).is_check


def test_the_answer_to_a_label_never_tells_which_items_were_checks_or_repeats():
    # a participant told "check" after answering would learn the checks (and could pass
    # them on); an attention check's or a repeat's label is answered as a regular one
    from tests.annotation.test_worker_api import enter, label, next_item

    batch, check_pks = make_checked_batch(
        n_regular=6, n_checks=2, per_item=1, check_every=2, repeat_every=2
    )
    client = enter(batch, "curious")
    answers = {}
    while (body := next_item(client, batch).json())["assignment"] is not None:
        lease = Assignment.objects.get(pk=body["assignment"])
        value = 5 if lease.item_id in check_pks else 3
        answers.setdefault(lease.purpose, set()).add(
            label(client, body["assignment"], value).json()["status"]
        )
    assert {"regular", "check", "repeat"} <= set(answers)
    assert answers["check"] == answers["repeat"] == {"counted"}
    stored = set(Label.objects.filter(batch=batch).values_list("status", flat=True))
    assert {"check", "repeat", "counted"} <= stored  # stored as what they are


def test_a_pass_on_an_attention_check_fails_it():
    # an attention check is made to be answerable: "I can't judge this" on every check
    # would otherwise never fail one
    from tests.annotation.test_worker_api import enter, next_item, post_json

    batch, check_pks = make_checked_batch(
        n_regular=4, n_checks=2, per_item=1, check_every=1, exclude_after_failed_checks=1,
        allow_cant_judge=True,
    )  # fmt: skip
    client = enter(batch, "passer")
    for _ in range(10):
        body = next_item(client, batch).json()
        assert body["assignment"] is not None, body
        lease = Assignment.objects.get(pk=body["assignment"])
        url = f"/api/v1/assignments/{body['assignment']}/label"
        if lease.item_id in check_pks:
            answer = post_json(client, url, {"cant_judge": True})
            assert answer.status_code == 201 and answer.json() == {"status": "cant_judge"}
            assert post_json(client, url, {"cant_judge": True}).status_code == 200  # a retry
            break
        post_json(client, url, {"value": 3, "duration_ms": 1500})
    stored = Label.objects.get(assignment=lease)
    assert (stored.status, stored.check_passed, stored.value) == ("check", False, None)
    participation = Participation.objects.get(batch=batch, annotator__platform_id="passer")
    assert participation.status == "excluded" and participation.excluded_automatically
