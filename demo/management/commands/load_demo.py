"""manage.py load_demo: the shipped sample batches (one of each kind), published, their
model scores, a login, and the shipped One-Word Census with its human norms, analysed.

Idempotent: a demo batch (or the demo census) that exists is left as it is. Prints the
worker links.
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
from diversity.census.models import Census
from diversity.census.services.analyses import analyse_now, analysis_params
from diversity.census.services.analyses import latest_report as latest_census_report
from diversity.census.services.imports import CensusUpload, import_census, uploads_of_paths

DEMO_DIR = Path(__file__).resolve().parents[2] / "data"
DEMO_CENSUS = "one-word-census"
DEMO_CENSUS_DIR = Path(__file__).resolve().parents[3] / "diversity/demo/one-word-census"
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
    {
        # six prompts of the One-Word Census (diversity/demo/one-word-census), asked of people
        "slug": "demo-short-text",
        "kind": "short_text",
        "title": "Name the first thing that comes to mind (demo)",
        "items": "short_text.jsonl",
        "instructions": "instructions-short-text.md",
        "kind_settings": {"max_words": 1, "max_chars": 40, "normaliser": "census"},
    },
    {
        # the Infinity-Chat protocol: each participant rates all five answers to one prompt
        "slug": "demo-bundled",
        "kind": "absolute",
        "title": "Rate five answers to one prompt (demo)",
        "items": "bundled.jsonl",
        "instructions": "instructions.md",
        "design": {"bundle_by": "query", "bundles_per_participant": 1, "bundle_order": "balanced"},
    },
    {
        "slug": "demo-similarity",
        "kind": "similarity",
        "title": "How similar are the two answers? (demo)",
        "items": "similarity.jsonl",
        "instructions": "instructions-similarity.md",
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
                    kind_settings=spec.get("kind_settings"),
                    actor=DEMO_ACTOR,
                    **spec.get("design", {}),
                )
                import_items(batch, DEMO_DIR / spec["items"], actor=DEMO_ACTOR)
                change_state(batch, "live", actor=DEMO_ACTOR)
        self._import_demo_scores()
        self._load_demo_census()
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
        self.stdout.write(f"One-Word Census: {base_url}/manage/census/{DEMO_CENSUS}/")

    def _load_demo_census(self) -> None:
        """The 44 shipped census transcripts with the published human norms, analysed (in
        this process, so that its page is ready whatever runs the background jobs)."""
        census = Census.objects.filter(name=DEMO_CENSUS).first()
        if census is None:
            census = import_census(
                DEMO_CENSUS,
                uploads_of_paths([DEMO_CENSUS_DIR / "transcripts"]),
                norms=CensusUpload(DEMO_CENSUS_DIR / "humannorms.json", "humannorms.json"),
                description="The shipped One-Word Census: 44 models, 31 categories, with the "
                "human norms of Van Overschelde et al. (2004).",
                actor=DEMO_ACTOR,
            )
        if latest_census_report(census) is None:
            analyse_now(census, analysis_params(), DEMO_ACTOR)

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
