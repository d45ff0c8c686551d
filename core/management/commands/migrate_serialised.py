"""``manage.py migrate`` that several web instances may run at the same time.

``docker compose up --scale web=N`` starts N web containers at once, and each applies the
migrations before serving. Two ``migrate`` runs racing on one database can both try to
create the same table; here each first takes a PostgreSQL advisory lock, so they run one
after the other and the later ones find nothing left to do. An advisory lock belongs to
a database session, so behind a transaction pooler both go through PostgreSQL itself
(``settings.DIRECT_DATABASE``). On SQLite (one process, the embedded run) it is plain
``migrate``.
"""

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import connections

# an arbitrary 64-bit key naming "this project's migrations" among advisory locks
MIGRATION_LOCK_KEY = 0x64656E73656A7564


class Command(BaseCommand):
    help = "Apply migrations, one instance at a time (PostgreSQL advisory lock)."

    def handle(self, *args, **options):
        verbosity = options["verbosity"]
        alias = settings.DIRECT_DATABASE
        migrate = dict(interactive=False, verbosity=verbosity, stdout=self.stdout, database=alias)
        connection = connections[alias]
        if connection.vendor != "postgresql":
            call_command("migrate", **migrate)
            return
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", [MIGRATION_LOCK_KEY])
            try:
                call_command("migrate", **migrate)
            finally:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [MIGRATION_LOCK_KEY])
