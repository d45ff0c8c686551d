"""The Markdown data card of a batch: what it is, how much it holds, how it was cleaned."""

from django.db.models import Count, Max, Min, Q
from django.utils import timezone

from annotation.models import Batch, Label, LabelStatus, Participation
from annotation.selectors import (
    NO_FILTER,
    CategoryFilter,
    batch_items,
    batch_labels,
    category_counts,
)
from annotation.services import languages
from annotation.services.exports.rows import iso_utc
from annotation.services.exports.schema import TABLE_LAYOUTS, columns
from core.audit import history
from core.extensions import card_sections

# a text kind can have as many distinct answers as labels: the card shows the commonest
MAX_DISTRIBUTION_ROWS = 50

EXCLUSION_RULE = "labels of excluded annotators are kept with status excluded and not counted"


def data_card(batch: Batch, categories: CategoryFilter = NO_FILTER) -> str:
    """The Markdown data card of a batch: what it is, how much it holds, how it was cleaned.

    With a category filter the card describes that subset: it says so at the top, and
    its counts, categories and label distribution cover the subset's items only."""
    n = batch.annotations_per_item
    items = batch_items(batch, categories).aggregate(
        total=Count("pk"),
        complete=Count("pk", filter=Q(counted_count__gte=n)),
        empty=Count("pk", filter=Q(counted_count=0)),
        checks=Count("pk", filter=Q(gold__isnull=False)),
    )
    labels = batch_labels(batch, categories).aggregate(
        counted=Count("pk", filter=Q(status=LabelStatus.COUNTED)),
        surplus=Count("pk", filter=Q(status=LabelStatus.SURPLUS)),
        excluded=Count("pk", filter=Q(status=LabelStatus.EXCLUDED)),
        first=Min("submitted_at"),
        last=Max("submitted_at"),
    )
    people = Participation.objects.filter(batch=batch).aggregate(
        total=Count("pk"),
        excluded=Count("pk", filter=Q(status=Participation.Status.EXCLUDED)),
    )
    contributors = batch_labels(batch, categories).values("annotator_id").distinct().count()
    counted_contributors = (
        batch_labels(batch, categories)
        .filter(status=LabelStatus.COUNTED)
        .values("annotator_id")
        .distinct()
        .count()
    )
    kind = batch.task_kind
    key = kind.distribution_column
    distribution = dict(
        batch_labels(batch, categories)
        .filter(status=LabelStatus.COUNTED)
        .order_by()
        .values(key)
        .annotate(count=Count("pk"))
        .values_list(key, "count")
    )
    labels_total = labels["counted"] + labels["surplus"] + labels["excluded"]

    def when(moment) -> str:
        return iso_utc(moment) or "—"

    lines = [
        f"# Data card: {batch.title or batch.slug}",
        "",
        f"- Batch: `{batch.slug}`",
        f"- Kind: `{batch.kind}` ({batch.task_kind.label})",
        f"- Labels per item (N): {n}",
        f"- State: {batch.state}",
        *_label_set_line(batch),
        *_subset_lines(categories),
        "",
        "## Dates (UTC)",
        "",
        f"- Created: {when(batch.created_at)}",
        f"- Published: {when(batch.published_at)}",
        f"- Closed: {when(batch.closed_at)}",
        f"- First label: {when(labels['first'])}",
        f"- Last label: {when(labels['last'])}",
        f"- Card written: {when(timezone.now())}",
        "",
        "## Instructions shown to annotators",
        "",
    ]
    instructions = (batch.instructions or "").strip()
    if instructions:
        lines += [("> " + line).rstrip() for line in instructions.splitlines()]
    else:
        lines.append("_None._")
    lines += [
        "",
        "## Counts",
        "",
        "| what | count |",
        "|---|---:|",
        f"| items | {items['total']} |",
        f"| items with N counted labels | {items['complete']} |",
        f"| items with no counted label | {items['empty']} |",
        f"| attention-check items (with a gold answer) | {items['checks']} |",
        f"| labels, all statuses | {labels_total} |",
        f"| labels counted | {labels['counted']} |",
        f"| labels surplus | {labels['surplus']} |",
        f"| labels excluded | {labels['excluded']} |",
        f"| annotators who entered the batch | {people['total']} |",
        f"| annotators who contributed a label | {contributors} |",
        f"| annotators with a counted label | {counted_contributors} |",
        f"| annotators excluded | {people['excluded']} |",
        "",
        *_categories_section(batch, categories),
        "## Label distribution (counted labels)",
        "",
        "| value | meaning | labels | share |",
        "|---:|---|---:|---:|",
    ]
    for value, meaning, count in kind.label_distribution(batch, distribution)[
        :MAX_DISTRIBUTION_ROWS
    ]:
        share = f"{count / labels['counted']:.1%}" if labels["counted"] else "—"
        lines.append(f"| {_markdown_cell(value)} | {_markdown_cell(meaning)} | {count} | {share} |")
    lines += [
        "",
        "## Rules applied",
        "",
        f"- Exclusion: {EXCLUSION_RULE}. An excluded annotator's slots were given back and "
        "filled by other annotators, so complete items still hold exactly N counted labels.",
        "- Surplus: a label that arrived after its item already held N counted labels (a late "
        "answer to an expired lease) is kept with status surplus and not counted.",
        "- No annotator labels an item twice; every label is one independent judgment.",
        "",
    ]
    lines += card_sections("batch", batch)  # e.g. how another app selected the items
    lines += _design_section(batch)
    lines += _history_section(batch)
    lines += _files_section(batch)
    return "\n".join(lines)


def _design_section(batch: Batch) -> list[str]:
    """The study design and quality control as configured, and what they did."""
    labels = Label.objects.filter(batch=batch)
    checks = labels.filter(status=LabelStatus.CHECK)
    passed = checks.filter(check_passed=True).count()
    automatic = Participation.objects.filter(batch=batch, excluded_automatically=True).count()
    lines = ["## Study design and quality control", ""]
    if batch.task_kind.comparison:
        lines.append(
            "- Pair order: each pair was shown as Response 1 / Response 2 in a random order, "
            "balanced per item (|A first − B first| ≤ 1 among its counted labels); labels are "
            "stored relative to the imported A and B, with `shown_order`."
        )
    if batch.check_every:
        lines.append(
            f"- Attention checks: one after about every {batch.check_every} items (never "
            f"counted toward N); {checks.count()} answered, {passed} passed."
        )
    else:
        lines.append("- Attention checks: none interleaved.")
    if batch.exclude_after_failed_checks:
        lines.append(
            f"- Exclusion after {batch.exclude_after_failed_checks} failed checks "
            "(automatic, through the exclusion rule above)."
        )
    flags = []
    if batch.min_seconds_per_item:
        flags.append(f"labels under {batch.min_seconds_per_item} s flagged too fast")
    if batch.straightline_run:
        flags.append(f"runs of {batch.straightline_run} identical labels flagged")
    if flags:
        policy = (
            f"annotators with more than {batch.flagged_share_to_exclude:.0%} flagged labels "
            "excluded automatically"
            if batch.flag_policy == "exclude"
            else "flags reported only"
        )
        lines.append(f"- Quality flags: {'; '.join(flags)}; {policy}.")
    lines.append(f"- Annotators excluded automatically by a policy: {automatic}.")
    if batch.repeat_every:
        repeats = labels.filter(status=LabelStatus.REPEAT).count()
        lines.append(
            f"- Repeats for test–retest: about every {batch.repeat_every} items; {repeats} "
            "repeat labels (never counted)."
        )
    if batch.review_lowest_competence:
        lines.append(
            f"- Competence review list: the analysis lists the {batch.review_lowest_competence} "
            "annotators of lowest competence (MACE) for someone to read their labels; nobody "
            "is excluded by it."
        )
    if batch.bundle_by and batch.bundle_by != "none":
        per_person = batch.bundles_per_participant
        lines.append(
            f"- Bundles: items grouped by `{_markdown_cell(batch.bundle_by)}`, each "
            f"participant rating a whole bundle in one sitting"
            + (f", at most {per_person} per participant" if per_person else "")
            + f"; order within a bundle: {batch.bundle_order} (`position_in_bundle`, 0 first)."
        )
    if batch.max_concurrent_annotators:
        lines.append(f"- At most {batch.max_concurrent_annotators} workers at once.")
    lines.append(
        f"- Leases: {batch.lease_seconds} s, extended by the page's heartbeat while visible "
        f"up to {batch.lease_cap_seconds} s."
    )
    if batch.invitations_required:
        also = " and ".join(PLATFORM_NAMES[name] for name in batch.accept_platforms)
        lines.append(
            "- Entry by signed personal invitation only"
            + (f", and by {also} links." if also else ".")
        )
    if batch.prolific_study_id:
        lines.append(f"- Prolific study: `{_markdown_cell(batch.prolific_study_id)}`.")
    lines.append(
        f"- Waiting for a slot held by another worker's lease: up to "
        f"{batch.wait_for_release_seconds} s before a newcomer is told the study is full."
    )
    if batch.reward_per_participant is not None:
        lines.append(
            f"- Reward per participant: {batch.reward_per_participant} {batch.reward_currency}."
        )
    lines.append(_languages_line(batch))
    if batch.questionnaire:
        lines += ["", "Background questionnaire (asked once after consent; `q_<id>` columns):", ""]
        for question in batch.questionnaire:
            options = f" ({', '.join(question['options'])})" if question.get("options") else ""
            lines.append(
                f"- `{question['id']}` ({question['type']}): "
                f"{_markdown_cell(question['text'])}{_markdown_cell(options)}"
            )
    lines.append("")
    return lines


def _languages_line(batch: Batch) -> str:
    """Which languages the pages offered and how many participants saw each (the
    ``language`` column of the long and annotators layouts)."""
    seen = dict(
        Participation.objects.filter(batch=batch)
        .values_list("language")
        .annotate(participants=Count("pk"))
        .values_list("language", "participants")
    )
    offered = ", ".join(languages.offered(batch))
    translated = ", ".join(sorted(batch.translations or {})) or "none"
    counts = "; ".join(f"{code or 'not recorded'}: {count}" for code, count in sorted(seen.items()))
    return (
        f"- Languages: offered {offered} (default {languages.default_language(batch)}; "
        f"the batch's texts translated into: {translated}); participants by the language "
        f"their pages were shown in: {counts or 'none yet'}."
    )


PLATFORM_NAMES = {"prolific": "Prolific", "mturk": "MTurk"}

LAYOUT_ROWS = {
    "long": "one row per label (counted only unless all statuses were requested)",
    "dense": "one row per item in import order",
    "annotators": "one row per annotator who contributed",
    "bundles": "one row per (annotator, bundle), their labels in the bundle's item order",
}
# Exports change nothing and the card is itself an export: the History tab and the API
# list them, the card does not (two cards written a moment apart read the same).
UNLISTED_ACTIONS = {"labels.export", "export.requested"}


def _history_section(batch: Batch) -> list[str]:
    """What was done to the batch, by whom and when (the audit trail), oldest first."""
    events = list(history(batch).order_by("at", "pk"))
    lines = ["## History (UTC)", ""]
    listed = [event for event in events if event.action not in UNLISTED_ACTIONS]
    if not listed:
        lines.append("_Nothing recorded._")
    else:
        lines += ["| when | who | action | details |", "|---|---|---|---|"]
        for event in listed:
            details = "; ".join(
                f"{name}: {_change_text(change)}" for name, change in event.changes.items()
            )
            if event.reason:
                details = f"{details} — {event.reason}" if details else event.reason
            lines.append(
                f"| {iso_utc(event.at)} | {_markdown_cell(event.actor_name)} | "
                f"`{event.action}` | {_markdown_cell(details)} |"
            )
    lines.append("")
    return lines


def _change_text(change) -> str:
    if isinstance(change, list) and len(change) == 2:
        before, after = (_short(value) for value in change)
        return f"{before} → {after}"
    return _short(change)


def _short(value, limit: int = 80) -> str:
    text = "—" if value is None else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _files_section(batch: Batch) -> list[str]:
    lines = ["## Files", ""]
    for layout in TABLE_LAYOUTS:
        lines += [f"### {layout}: {LAYOUT_ROWS[layout]}", "", "| column | type | meaning |"]
        lines.append("|---|---|---|")
        for column in columns(layout, batch):
            lines.append(f"| `{column.name}` | {column.type} | {_markdown_cell(column.meaning)} |")
        lines.append("")
    return lines


def _subset_lines(categories: CategoryFilter) -> list[str]:
    if not categories.active:
        return []
    query = "&".join(f"{name}={value}" for name, value in categories.params().items())
    return [
        f"- **Subset**: only the items of {_markdown_cell(categories.describe())} "
        f"(filter `{query.replace('`', '')}`). The counts, categories, label distribution "
        "and files cover these items; the annotators who entered, the exclusions, the study "
        "design and the history are the whole batch's."
    ]


def _categories_section(batch: Batch, categories: CategoryFilter) -> list[str]:
    """Items and counted labels per category and sub-category (regular items)."""
    rows = category_counts(batch_items(batch, categories))
    lines = ["## Categories", ""]
    if not any(row["category"] for row in rows):
        return [*lines, "_No item has a category._", ""]
    lines += ["| category | sub-category | items | labels counted |", "|---|---|---:|---:|"]
    for row in rows:
        name = _markdown_cell(row["category"]) if row["category"] else "_none_"
        lines.append(f"| {name} | _all_ | {row['items']} | {row['labels_counted']} |")
        for sub in row["subcategories"]:
            sub_name = _markdown_cell(sub["subcategory"]) if sub["subcategory"] else "_none_"
            lines.append(f"| {name} | {sub_name} | {sub['items']} | {sub['labels_counted']} |")
    return [*lines, ""]


def _label_set_line(batch: Batch) -> list[str]:
    options = batch.task_kind.options(batch)
    if not options:
        return []
    return [f"- Label set: {', '.join(str(value) for value in sorted(o.value for o in options))}"]


def _markdown_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")
