"""``manage.py genie_batch NAME SLUG [--per-item N] [--pairs K] [--seed S] [--title T]``"""

from django.core.management.base import BaseCommand

from annotation.models import DEFAULT_ANNOTATIONS_PER_ITEM
from core.audit import Actor
from core.commands import existing, refused_input_as_command_error
from diversity.genie.models import GenieSet
from diversity.genie.services.batches import create_similarity_batch


class Command(BaseCommand):
    help = (
        "Make a draft similarity batch SLUG whose items are the Genie set's (question, target "
        "answer, population answer) pairs with both answers given, and link it to the set; "
        "publish it on the batch page. Needs the question texts (the file's 'question' column)."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="the Genie set")
        parser.add_argument("slug", help="the new batch's slug")
        parser.add_argument(
            "--per-item", type=int, default=DEFAULT_ANNOTATIONS_PER_ITEM, help="labels per pair"
        )
        parser.add_argument("--pairs", type=int, help="draw this many pairs (default: all)")
        parser.add_argument("--seed", type=int, default=0, help="seed of the draw")
        parser.add_argument("--title", default="")

    def handle(self, *args, name, slug, per_item, pairs, seed, title, **options):
        genie_set = existing(GenieSet, "Genie set", name=name)
        with refused_input_as_command_error(f"the pairs of {name}"):
            batch = create_similarity_batch(
                genie_set,
                slug,
                per_item=per_item,
                pairs=pairs,
                seed=seed,
                title=title,
                actor=Actor.command_line(),
            )
        self.stdout.write(
            f"Created draft similarity batch {batch.slug} with {batch.items.count()} pairs of "
            f"{genie_set.name}, {batch.annotations_per_item} labels each; publish it on "
            f"/manage/{batch.slug}/"
        )
