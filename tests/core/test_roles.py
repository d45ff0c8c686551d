"""The staff roles after ``migrate`` (and after a test's flush): each group holds exactly
the permissions the apps grant it, set once per migrate rather than once per app."""

import pytest
from django.apps import apps
from django.contrib.auth.models import Group
from django.core.management.sql import emit_post_migrate_signal

from core.roles import ADMIN_GROUP, RESEARCHER_GROUP, ensure_roles, role_permissions

pytestmark = pytest.mark.django_db


def _held(role: str) -> set[str]:
    group = Group.objects.get(name=role)
    return {
        f"{app_label}.{codename}"
        for app_label, codename in group.permissions.values_list(
            "content_type__app_label", "codename"
        )
    }


def test_after_migrate_each_group_holds_exactly_what_the_apps_grant():
    Group.objects.all().delete()
    emit_post_migrate_signal(verbosity=0, interactive=False, db="default")
    researcher, admin = _held(RESEARCHER_GROUP), _held(ADMIN_GROUP)
    assert researcher == set(role_permissions(RESEARCHER_GROUP))
    assert admin == set(role_permissions(ADMIN_GROUP))
    assert researcher < admin


def test_the_groups_are_set_for_the_last_app_only_and_in_a_few_queries(
    django_assert_num_queries, django_assert_max_num_queries
):
    with_models = [config for config in apps.get_app_configs() if config.models_module]
    with django_assert_num_queries(0):
        for config in with_models[:-1]:
            ensure_roles(sender=config)
    # per role: the group, its permissions in one query, and what ``set`` changes; not
    # one query per permission
    assert len(role_permissions(ADMIN_GROUP)) > 10
    with django_assert_max_num_queries(12):
        ensure_roles(sender=with_models[-1])
