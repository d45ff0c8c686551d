"""``manage.py invitations SLUG --count N [--prefix P] [--base-url URL] [-o FILE]``: signed
personal invitation links for a batch, as CSV (invitee, link)."""

import sys

from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from annotation.models import Batch
from annotation.services.invitations import invitation_table, new_invitations
from core import csv_files
from core.audit import Actor, record
from core.commands import existing
from core.errors import ServiceError


class Command(BaseCommand):
    help = "Make signed personal invitation links for a batch (CSV: invitee, link)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--count", type=int, required=True, help="how many links")
        parser.add_argument("--prefix", default="invitee", help="invitee ids start with this")
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")
        parser.add_argument("-o", "--output", help="CSV file (default: standard output)")

    def handle(self, *args, slug, count, prefix, base_url, output, **options):
        batch = existing(Batch, "batch", slug=slug)
        try:
            pairs = new_invitations(batch, count, prefix)
        except ServiceError as error:
            raise CommandError(str(error)) from error
        entry = base_url.rstrip("/") + reverse("work-entry", args=[batch.slug])
        stream = open(output, "w", newline="", encoding="utf-8") if output else sys.stdout
        try:
            csv_files.write_table(stream, *invitation_table(entry, pairs))
        finally:
            if output:
                stream.close()
        record(
            "invitations.create",
            subject=batch,
            actor=Actor.command_line(),
            changes={"count": count, "prefix": prefix},
        )
        if output:
            self.stdout.write(f"Wrote {count} invitation links for {batch.slug} to {output}")
