"""The human side of a diversity analysis: the batch of people's labels that a census, a
Genie set or a corpus is set against, named by its slug in the analysis's parameters.

Which batches may serve is decided by their kind (``annotation.kinds``: the kinds whose
``analyses`` name the analysis); the run forms offer those, and ``human_batch_of`` refuses
any other with the reason."""

from django import forms

from annotation.kinds import kinds_reading, kinds_reading_text
from annotation.models import Batch
from core.errors import InvalidInput
from core.parameters import integer_parameter

__all__ = ["batch_exists", "human_batch_field", "human_batch_of"]


def _choices(analysis: str) -> list[tuple[str, str]]:
    slugs = Batch.objects.filter(kind__in=kinds_reading(analysis)).order_by("slug")
    return [("", "none")] + [(slug, slug) for slug in slugs.values_list("slug", flat=True)]


def human_batch_field(analysis: str, help_text: str) -> forms.ChoiceField:
    """A run form's "Human batch" choice: none, or a batch of a kind that ``analysis``
    reads. The choices are read each time a form shows or checks them, so a batch made
    since start-up is offered."""
    return forms.ChoiceField(
        label="Human batch",
        required=False,
        choices=lambda: _choices(analysis),
        help_text=help_text,
    )


def human_batch_of(slug, analysis: str, source: str) -> Batch | None:
    """The batch named ``slug`` (``None`` for none); ``InvalidInput`` if it does not exist or
    is of a kind ``analysis`` does not read. ``source`` says what the batch would give, for
    the refusal: "human answers come from a" (… ``short_text`` batch)."""
    if slug is None or (isinstance(slug, str) and not slug.strip()):
        return None
    if not isinstance(slug, str):
        raise InvalidInput("human_batch", f"must be a batch slug, got {slug!r}")
    batch = Batch.objects.filter(slug=slug.strip()).first()
    if batch is None:
        raise InvalidInput("human_batch", f"there is no batch {slug.strip()!r}")
    if batch.kind not in kinds_reading(analysis):
        raise InvalidInput(
            "human_batch",
            f"batch {batch.slug!r} is a {batch.kind} batch; {source} "
            f"{kinds_reading_text(analysis)} batch",
        )
    return batch


def batch_exists(slug: str | None) -> bool:
    """Whether the batch a report names still exists (the page links it, else says it was
    deleted since)."""
    return bool(slug) and Batch.objects.filter(slug=slug).exists()


def bootstrap_params(bootstrap, seed, human_batch, *, max_draws: int, human_batch_of) -> dict:
    """Checked parameters of an analysis with a bootstrap and an optional human batch (the
    census's, Genie's): ``{"bootstrap", "seed", "human_batch"}``, the batch checked by the
    analysis's own ``human_batch_of`` (slug -> batch or None; ``InvalidInput``)."""
    batch = human_batch_of(human_batch)
    return {
        "bootstrap": integer_parameter("bootstrap", bootstrap, 1, max_draws),
        "seed": integer_parameter("seed", seed, 0, None),
        "human_batch": batch.slug if batch else None,
    }
