"""Staff roles: groups with permissions, created after every migrate.

* admin — everything on batches and annotators (create, edit, publish, upload items,
  exclude annotators), plus what a researcher may do;
* researcher — read batches, export labels, import scores, run analyses.

Crowdworkers have no Django login and hold neither. Checks go through the ``can_*``
helpers below so that every page and API endpoint asks the same question.
"""

from django.contrib.auth.models import Group, Permission

ADMIN_GROUP = "admin"
RESEARCHER_GROUP = "researcher"

RESEARCHER_PERMISSIONS = [
    "annotation.view_batch",
    "annotation.view_item",
    "annotation.view_label",
    "annotation.view_job",
    "annotation.add_job",
    "annotation.export_batch",
    "annotation.analyse_batch",
]
ADMIN_EXTRA_PERMISSIONS = [
    "annotation.add_batch",
    "annotation.change_batch",
    "annotation.add_item",
    "annotation.view_annotator",
    "annotation.view_participation",
    "annotation.change_participation",
    "annotation.view_assignment",
    "annotation.view_query",
    "annotation.view_response",
    "annotation.manage_annotators",
]
# Other apps add their permissions here (e.g. the analysis app's score sources).
EXTRA_RESEARCHER_PERMISSIONS: list[str] = []


def ensure_roles(**kwargs) -> None:
    """Create/refresh the two groups; connected to ``post_migrate`` (idempotent)."""
    researcher = RESEARCHER_PERMISSIONS + EXTRA_RESEARCHER_PERMISSIONS
    for name, codenames in [
        (RESEARCHER_GROUP, researcher),
        (ADMIN_GROUP, researcher + ADMIN_EXTRA_PERMISSIONS),
    ]:
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.set(_permissions(codenames))


def _permissions(dotted_names: list[str]) -> list[Permission]:
    found = []
    for dotted in dotted_names:
        app_label, codename = dotted.split(".", 1)
        permission = Permission.objects.filter(
            content_type__app_label=app_label, codename=codename
        ).first()
        if permission is not None:  # an app not migrated yet adds it on its own migrate
            found.append(permission)
    return found


def can_view_batches(user) -> bool:
    return bool(user and user.is_authenticated and user.has_perm("annotation.view_batch"))


def can_manage_batches(user) -> bool:
    return bool(user and user.is_authenticated and user.has_perm("annotation.change_batch"))


def can_manage_annotators(user) -> bool:
    return bool(user and user.is_authenticated and user.has_perm("annotation.manage_annotators"))


def can_export(user) -> bool:
    return bool(user and user.is_authenticated and user.has_perm("annotation.export_batch"))


def can_analyse(user) -> bool:
    return bool(user and user.is_authenticated and user.has_perm("annotation.analyse_batch"))
