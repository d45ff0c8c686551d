"""manage.py create_staff_user USERNAME --role admin|researcher [--password P] [--token]"""

import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from rest_framework.authtoken.models import Token

from core.roles import ADMIN_GROUP, RESEARCHER_GROUP


class Command(BaseCommand):
    help = "Create (or update) a staff user with a role, and optionally print an API token."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--role", choices=[ADMIN_GROUP, RESEARCHER_GROUP], required=True)
        parser.add_argument("--password", help="default: a random one, printed")
        parser.add_argument("--email", default="")
        parser.add_argument("--token", action="store_true", help="print an API token")

    def handle(self, *args, username, role, password, email, token, **options):
        group = Group.objects.filter(name=role).first()
        if group is None:
            raise CommandError(f"role {role!r} is missing; run 'manage.py migrate' first")
        User = get_user_model()
        user, created = User.objects.get_or_create(username=username, defaults={"email": email})
        shown_password = password or (secrets.token_urlsafe(9) if created else None)
        if shown_password:
            user.set_password(shown_password)
        user.is_staff = True
        user.save()
        user.groups.add(group)
        action = "Created" if created else "Updated"
        line = f"{action} {role} {username}"
        if shown_password and not password:
            line += f" with password {shown_password}"
        self.stdout.write(line)
        if token:
            key = Token.objects.get_or_create(user=user)[0].key
            self.stdout.write(f"API token: {key}")
