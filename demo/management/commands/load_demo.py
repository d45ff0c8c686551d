"""manage.py load_demo: the shipped sample batches, published, their model scores, a login.

Idempotent: a demo batch that exists is left as it is. Prints the worker links.
"""

import os
import secrets
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from analysis.models import ScoreSource
from analysis.services.scores import import_scores
from annotation.models import Batch
from annotation.services.batches import change_state, create_batch
from annotation.services.importing import import_items
from core.audit import Actor

DEMO_DIR = Path(__file__).resolve().parents[2] / "data"
DEMO_BATCHES = [
    {
        "slug": "demo-absolute",
        "kind": "absolute",
        "title": "Rate an assistant's answers (demo)",
        "items": "absolute.jsonl",
        "instructions": "instructions.md",
    },
    {
        "slug": "demo-pairwise",
        "kind": "pairwise",
        "title": "Which answer is better? (demo)",
        "items": "pairwise.jsonl",
        "instructions": "instructions-pairwise.md",
    },
]
DEMO_ACTOR = Actor("load_demo")
DEMO_CONSENT = (
    "This is a demonstration study. Your answers are stored under a pseudonym and used "
    "only to show how the platform works. You may stop at any time."
)


class Command(BaseCommand):
    help = "Create and publish the demo batches and a staff user; print the links."

    def add_arguments(self, parser):
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")
        parser.add_argument("--per-item", type=int, default=3)

    def handle(self, *args, base_url, per_item, **options):
        for spec in DEMO_BATCHES:
            if Batch.objects.filter(slug=spec["slug"]).exists():
                continue
            with transaction.atomic():
                batch = create_batch(
                    slug=spec["slug"],
                    kind=spec["kind"],
                    title=spec["title"],
                    annotations_per_item=per_item,
                    instructions=(DEMO_DIR / spec["instructions"]).read_text(encoding="utf-8"),
                    consent_text=DEMO_CONSENT,
                    completion_url="https://app.prolific.com/submissions/complete?cc=DEMO",
                    completion_code="DEMO",
                    actor=DEMO_ACTOR,
                )
                import_items(batch, DEMO_DIR / spec["items"], actor=DEMO_ACTOR)
                change_state(batch, "live", actor=DEMO_ACTOR)
        self._import_demo_scores()
        password = self._ensure_admin()
        self.stdout.write("Demo batches are live. Worker links (any id works for 'worker'):")
        for spec in DEMO_BATCHES:
            self.stdout.write(f"  {base_url}/work/{spec['slug']}/?worker=demo-worker-1")
        self.stdout.write(
            f"  {base_url}/work/demo-absolute/?PROLIFIC_PID=p123&STUDY_ID=s1&SESSION_ID=x1"
        )
        self.stdout.write(
            f"Staff pages: {base_url}/manage/  (Django admin: {base_url}/admin/)  "
            f"user 'admin'  password {password}"
        )

    def _import_demo_scores(self) -> None:
        """Three score sources (reward model, LM perplexity, judge) for the analysis page."""
        if not ScoreSource.objects.filter(name__startswith="demo-").exists():
            import_scores(DEMO_DIR / "scores.jsonl")

    def _ensure_admin(self) -> str:
        User = get_user_model()
        password = os.environ.get("DEMO_ADMIN_PASSWORD", "")
        user = User.objects.filter(username="admin").first()
        if user is not None and not password:
            return "(unchanged; set DEMO_ADMIN_PASSWORD to reset it)"
        password = password or secrets.token_urlsafe(9)
        if user is None:
            User.objects.create_superuser("admin", "admin@example.org", password)
        else:
            user.set_password(password)
            user.save(update_fields=["password"])
        return password
