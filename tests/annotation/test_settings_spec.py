"""One declaration per batch setting (``annotation.settings_spec``): each reaches the
model, the API, the create and edit pages and the ``create_batch`` command, and each
interface refuses the same bad values."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation import settings_spec
from annotation.api.staff import BatchSerializer
from annotation.forms import BatchCreateForm, BatchEditForm
from annotation.management.commands.create_batch import Command as CreateBatch
from annotation.models import Batch
from annotation.services.batches import DESIGN_DEFAULTS, DESIGN_SETTINGS, create_batch
from core.errors import InvalidInput
from tests.factories import make_batch

pytestmark = pytest.mark.django_db

# a value each setting accepts, other than its default, as the command line writes it
GOOD = {
    "check_every": ("5", 5),
    "exclude_after_failed_checks": ("2", 2),
    "screen_out_code": ("SO1", "SO1"),
    "full_code": ("FULL1", "FULL1"),
    "min_seconds_per_item": ("3", 3),
    "straightline_run": ("4", 4),
    "flag_policy": ("flag", "flag"),
    "flagged_share_to_exclude": ("0.5", 0.5),
    "max_concurrent_annotators": ("9", 9),
    "max_lease_seconds": ("1800", 1800),
    "repeat_every": ("7", 7),
    "review_lowest_competence": ("5", 5),
    "invitations_required": (None, True),
    "accept_platforms": ("mturk", ["mturk"]),
    "screen_out_url": ("https://x.org/so", "https://x.org/so"),
    "wait_for_release_seconds": ("30", 30),
    "prolific_study_id": ("ABC123", "ABC123"),
    "bundle_by": ("meta:form", "meta:form"),
    "bundles_per_participant": ("1", 1),
    "bundle_order": ("balanced", "balanced"),
    "allow_cant_judge": (None, True),
    "comment_box": ("optional", "optional"),
    "languages": ("en,ja,ar", ["en", "ja", "ar"]),
    "language": ("ja", "ja"),
}
SPECIAL_FLAGS = {"questionnaire", "reward_per_participant", "reward_currency", "translations"}


def test_every_declared_setting_reaches_every_interface():
    names = set(settings_spec.DESIGN_SETTING_NAMES)
    model_fields = {field.name for field in Batch._meta.get_fields()}
    assert names <= model_fields
    assert names <= set(BatchSerializer.Meta.fields)
    assert names == set(DESIGN_SETTINGS) == set(DESIGN_DEFAULTS)
    assert names <= set(BatchCreateForm().fields)
    assert names <= set(BatchEditForm.for_batch(make_batch(n_items=1)).fields)
    parser = CreateBatch().create_parser("manage.py", "create_batch")
    dests = {action.dest for action in parser._actions}
    assert names - SPECIAL_FLAGS <= dests
    assert set(GOOD) | SPECIAL_FLAGS == names  # a new setting gets a case here too


def test_the_model_takes_each_settings_help_and_default_from_its_declaration():
    for setting in settings_spec.DESIGN:
        model_field = Batch._meta.get_field(setting.name)
        assert model_field.help_text == setting.help, setting.name
        if setting.default is None:
            assert model_field.null, setting.name  # no default: empty is "not set"
            continue
        assert model_field.db_default == setting.default, setting.name
        assert model_field.get_default() == setting.default, setting.name
        if isinstance(setting.default, list | dict):  # a fresh one for each batch
            assert model_field.get_default() is not model_field.get_default()


@pytest.mark.parametrize("name", sorted(GOOD))
def test_each_flag_sets_its_setting(name):
    raw, value = GOOD[name]
    setting = settings_spec.BY_NAME[name]
    args = [setting.flag.removesuffix("s") if name == "accept_platforms" else setting.flag]
    if raw is not None:
        args.append(raw)
    if name == "accept_platforms":
        args.append("--invitations-required")
    call_command("create_batch", f"flag-{name.replace('_', '-')}", "--kind", "absolute", *args)
    batch = Batch.objects.get(slug=f"flag-{name.replace('_', '-')}")
    assert getattr(batch, name) == value


@pytest.mark.parametrize(
    ("name", "bad"),
    [
        ("check_every", 0),
        ("wait_for_release_seconds", -1),
        ("wait_for_release_seconds", 10**6),
        ("screen_out_url", "javascript:alert(1)"),
        ("accept_platforms", ["myspace"]),
        ("prolific_study_id", "not an id!"),
        ("reward_per_participant", "2.555"),
        ("reward_currency", "pounds"),
        ("flagged_share_to_exclude", 2),
        ("bundle_by", "meta:"),
        ("bundle_by", "prompt"),
        ("bundle_order", "sideways"),
        ("languages", ["en", "tlh"]),
        ("languages", ["ja", "ja"]),
        ("language", "english"),
        ("translations", {"tlh": {"instructions": "Qapla'"}}),
        ("translations", {"ja": {"tagline": "x"}}),
    ],
)
def test_each_interface_refuses_the_same_bad_value(name, bad):
    with pytest.raises(InvalidInput) as refused:
        create_batch(slug="bad-value", kind="absolute", **{name: bad})
    assert refused.value.field.split(".")[0] == name
    assert not Batch.objects.filter(slug="bad-value").exists()


def test_the_reward_needs_its_currency_and_the_command_takes_both():
    with pytest.raises(InvalidInput) as refused:
        create_batch(slug="no-currency", kind="absolute", reward_per_participant="2.50")
    assert refused.value.field == "reward_currency"
    call_command(
        "create_batch", "paid", "--kind", "absolute", "--reward-per-participant", "2.50", "gbp"
    )
    batch = Batch.objects.get(slug="paid")
    assert (str(batch.reward_per_participant), batch.reward_currency) == ("2.50", "GBP")
    with pytest.raises(CommandError, match="reward_per_participant"):
        call_command(
            "create_batch", "unpaid", "--kind", "absolute", "--reward-per-participant", "x", "GBP"
        )


def test_the_edit_page_saves_a_declared_setting_and_an_empty_field_restores_its_default():
    from tests.annotation.kinds.test_short_text import form_defaults
    from tests.staff import staff_client

    batch = make_batch(n_items=1, live=False)
    staff = staff_client("admin")
    posted = form_defaults(BatchEditForm.for_batch(batch))
    posted.update(
        wait_for_release_seconds="45", accept_platforms=["mturk"], invitations_required="on"
    )
    posted = {key: value for key, value in posted.items() if value is not False}
    response = staff.post(f"/manage/{batch.slug}/edit", posted)
    assert response.status_code in (200, 302)
    batch.refresh_from_db()
    assert (batch.wait_for_release_seconds, batch.accept_platforms) == (45, ["mturk"])
    assert batch.invitations_required is True
    posted["wait_for_release_seconds"] = ""
    staff.post(f"/manage/{batch.slug}/edit", posted)
    batch.refresh_from_db()
    assert (
        batch.wait_for_release_seconds == settings_spec.BY_NAME["wait_for_release_seconds"].default
    )


def test_the_study_design_list_names_languages_not_a_python_list():
    from annotation.settings_spec import design_summary

    batch = make_batch(
        n_items=1,
        languages=["en", "ja", "ar"],
        translations={"ja": {"instructions": "丁寧に評価してください。"}},
    )
    rows = dict(design_summary(batch))
    names = dict(settings_spec.LANGUAGE_CHOICES)  # each language in its own name
    assert rows["Languages offered"] == f"English (en), {names['ja']}, {names['ar']}"
    assert rows["Translations of the batch's texts"] == names["ja"] == "日本語 (ja)"
    assert "[" not in "".join(rows.values()) and "{" not in "".join(rows.values())
