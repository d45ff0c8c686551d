"""The forms of the batch pages under ``/manage/``: create a batch, edit its settings.

The study-design settings' fields come from their declarations
(``annotation.settings_spec``); the kind's own settings from the kind (``KindSetting``);
the texts of the rating buttons from the kind's scale.
"""

import json

from django import forms
from django.core.exceptions import ValidationError

from annotation import settings_spec
from annotation.kinds import all_kinds, kind_choices
from annotation.kinds.base import KindSetting, TaskKind
from annotation.models import DEFAULT_ANNOTATIONS_PER_ITEM, DEFAULT_LEASE_SECONDS, Batch
from annotation.services import languages
from annotation.services import questionnaire as questionnaire_service
from core.errors import InvalidInput


class _BatchSettingsForm(forms.Form):
    title = forms.CharField(max_length=300)
    annotations_per_item = forms.IntegerField(
        label="Labels per item (N)",
        min_value=1,
        initial=DEFAULT_ANNOTATIONS_PER_ITEM,
        help_text="Independent annotators per item.",
    )
    lease_seconds = forms.IntegerField(
        label="Lease time (seconds)",
        min_value=1,
        initial=DEFAULT_LEASE_SECONDS,
        help_text="How long a worker holds an item before it goes back to the pool.",
    )
    quota_per_annotator = forms.IntegerField(
        label="Quota per annotator",
        min_value=1,
        required=False,
        help_text="Most items one person may label; empty means no limit.",
    )
    instructions = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 8}),
        required=False,
        help_text="Markdown; shown before the first item and on every rating page.",
    )
    consent_text = forms.CharField(
        label="Consent",
        widget=forms.Textarea(attrs={"rows": 5}),
        required=False,
        help_text="Markdown; when set, workers start with “I agree — start”.",
    )
    completion_code = forms.CharField(
        max_length=100, help_text="Shown to workers at the end (e.g. Prolific's code)."
    )
    completion_url = forms.URLField(
        label="Completion URL",
        max_length=500,
        required=False,
        assume_scheme="https",
        help_text="Where the button at the end leads, e.g. https://app.prolific.com/submissions/complete?cc=…",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # the study-design settings, each from its declaration; the questionnaire last
        for setting in settings_spec.DESIGN:
            if setting.name != "questionnaire":
                self.fields[setting.name] = setting.form_field()
        self.fields["questionnaire"] = settings_spec.BY_NAME["questionnaire"].form_field()

    def clean(self):
        cleaned = super().clean()
        for setting in settings_spec.DESIGN:
            if setting.name in cleaned and setting.name != "questionnaire":
                cleaned[setting.name] = setting.from_form(cleaned[setting.name])
        return cleaned

    def clean_translations(self):
        try:
            return languages.parse_translations(self.cleaned_data.get("translations") or "")
        except InvalidInput as wrong:
            raise ValidationError(wrong.message) from wrong

    def clean_questionnaire(self):
        text = self.cleaned_data.get("questionnaire") or ""
        try:
            return questionnaire_service.clean_definition(
                questionnaire_service.parse_file_text(text, "the questionnaire")
            )
        except InvalidInput as wrong:
            raise ValidationError(wrong.message) from wrong


class BatchCreateForm(_BatchSettingsForm):
    slug = forms.CharField(
        max_length=100,
        help_text="Lower-case letters, digits and hyphens; part of the worker link.",
    )
    kind = forms.ChoiceField(choices=[])
    field_order = ["slug", "kind", "title"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["kind"].choices = kind_choices()
        self.fields["title"].required = False
        self.fields["title"].help_text = "Shown to workers; empty uses the slug."
        self.fields["completion_code"].required = False
        self.fields["completion_code"].help_text = "Empty: a random code."
        # every kind's own settings and button texts; only the chosen kind's are used (and,
        # with the page's script, shown)
        for kind in all_kinds().values():
            for setting in kind.settings:
                field = _kind_setting_field(kind, setting)
                field.widget.attrs["data-for-kind"] = kind.name
                self.fields[f"{kind.name}__{setting.name}"] = field
            texts = kind.default_texts() if hasattr(kind, "default_texts") else {}
            for key, (value, text) in enumerate(texts.items(), start=1):
                field = forms.CharField(
                    label=f"Button {key} text ({kind.name} batches)",
                    max_length=100,
                    required=False,
                    initial=text,
                    help_text=f"Key {key}; empty keeps the default, “{text}”.",
                )
                field.widget.attrs["data-for-kind"] = kind.name
                self.fields[f"{kind.name}__button_{value}"] = field

    def service_arguments(self) -> dict:
        """The cleaned form as ``create_batch`` arguments: the chosen kind's settings
        grouped, and its button texts that differ from the defaults as ``scale_labels``."""
        data = dict(self.cleaned_data)
        chosen = data["kind"]
        settings, buttons = {}, {}
        chosen_kind = all_kinds().get(chosen)
        defaults = chosen_kind.default_texts() if hasattr(chosen_kind, "default_texts") else {}
        for name in list(data):
            if "__" in name:
                kind, setting = name.split("__", 1)
                value = data.pop(name)
                if kind != chosen or value is None:
                    continue
                if setting.startswith("button_"):
                    value_key = int(setting.removeprefix("button_"))
                    text = str(value).strip()
                    if text and text != defaults.get(value_key):
                        buttons[str(value_key)] = text
                else:
                    settings[setting] = value
        data["kind_settings"] = settings
        if buttons:
            data["scale_labels"] = buttons
        return data


def _kind_setting_field(kind: TaskKind, setting: KindSetting) -> forms.Field:
    if setting.choices:
        return forms.ChoiceField(
            label=f"{setting.label} ({kind.name} batches)",
            choices=[(choice, choice) for choice in setting.choices],
            required=False,
            initial=setting.default,
            help_text=setting.help,
        )
    return forms.IntegerField(
        label=f"{setting.label} ({kind.name} batches)",
        min_value=1,
        max_value=setting.maximum,
        required=False,
        initial=setting.default,
        help_text=setting.help,
    )


class BatchEditForm(_BatchSettingsForm):
    """The settings plus the text of each rating button (``Batch.scale_labels``)."""

    @classmethod
    def for_batch(cls, batch: Batch, data=None) -> "BatchEditForm":
        names = [*cls.base_fields, *settings_spec.DESIGN_SETTING_NAMES]
        initial = {name: getattr(batch, name) for name in names}
        initial["questionnaire"] = (
            json.dumps(batch.questionnaire, indent=2, ensure_ascii=False)
            if batch.questionnaire
            else ""
        )
        initial["translations"] = (
            json.dumps(batch.translations, indent=2, ensure_ascii=False)
            if batch.translations
            else ""
        )
        form = cls(data=data, initial=initial)
        form.batch = batch
        kind = batch.task_kind
        current = kind.clean_settings(batch.kind_settings)
        for setting in kind.settings:
            field = _kind_setting_field(kind, setting)
            field.label, field.initial = setting.label, current[setting.name]
            form.fields[f"setting__{setting.name}"] = field
        signed = any(option.value < 0 for option in kind.options(batch))
        for option in kind.options(batch):
            stored = f"{option.value:+d}" if signed else str(option.value)
            form.fields[f"button_{option.value}"] = forms.CharField(
                label=f"Button {option.key} text",
                max_length=100,
                required=False,
                initial=option.text,
                help_text=f"Key {option.key}, stored as {stored}; empty restores the default.",
            )
        return form

    def changes(self) -> dict:
        """Changed settings; the button texts become ``scale_labels`` when they changed,
        the kind's settings ``kind_settings``."""
        changes = {
            name: self.cleaned_data[name]
            for name in self.changed_data
            if not name.startswith(("button_", "setting__"))
        }
        settings = {
            name.removeprefix("setting__"): self.cleaned_data[name]
            for name in self.changed_data
            if name.startswith("setting__") and self.cleaned_data[name] is not None
        }
        if settings:
            changes["kind_settings"] = settings
        kind = self.batch.task_kind
        if not kind.options(self.batch):
            return changes
        defaults = kind.default_texts()
        wanted = {
            value: (self.cleaned_data.get(f"button_{value}") or "").strip() or defaults[value]
            for value in defaults
        }
        if wanted != kind.button_texts(self.batch):
            changes["scale_labels"] = {
                str(value): text for value, text in wanted.items() if text != defaults[value]
            }
        return changes
