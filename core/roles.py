"""Staff roles: two groups whose permissions each app declares, refreshed after migrate.

* ``researcher`` — reads and analyses (each app grants what that means for it);
* ``admin`` — everything a researcher may do, plus what apps grant admins only.

Each app declares what it grants on its ``AppConfig``: ``researcher_permissions`` and
``admin_permissions``, tuples of ``"app_label.codename"``; ``ensure_roles`` (connected to
``post_migrate``) gives the groups exactly the declared permissions. Crowdworkers have no
Django login and hold neither role.
"""

ADMIN_GROUP = "admin"
RESEARCHER_GROUP = "researcher"
ROLES = (RESEARCHER_GROUP, ADMIN_GROUP)

# the AppConfig attribute that declares each role's own permissions
DECLARED_BY = {RESEARCHER_GROUP: "researcher_permissions", ADMIN_GROUP: "admin_permissions"}


def _declared(role: str) -> list[str]:
    from django.apps import apps

    attribute = DECLARED_BY[role]
    found = []
    for config in apps.get_app_configs():
        found += [name for name in getattr(config, attribute, ()) if name not in found]
    return found


def role_permissions(role: str) -> list[str]:
    """What the apps grant ``role``; admins hold researchers' permissions too."""
    if role not in DECLARED_BY:
        raise ValueError(f"unknown role {role!r}; roles are {', '.join(ROLES)}")
    if role == ADMIN_GROUP:
        return _declared(RESEARCHER_GROUP) + _declared(ADMIN_GROUP)
    return _declared(RESEARCHER_GROUP)


def ensure_roles(sender=None, **kwargs) -> None:
    """Create/refresh the groups (idempotent); connected to ``post_migrate``.

    ``migrate`` (and a test's flush) sends ``post_migrate`` once per app with models, in
    the order of ``INSTALLED_APPS``, each after that app's permissions were created: the
    groups are set once, for the last of them, when every app's permissions exist."""
    from django.apps import apps
    from django.contrib.auth.models import Group

    if sender is not None and sender is not _last_app_with_models(apps):
        return
    for role in ROLES:
        group, _ = Group.objects.get_or_create(name=role)
        group.permissions.set(_permissions(role_permissions(role)))


def _last_app_with_models(apps):
    with_models = [config for config in apps.get_app_configs() if config.models_module]
    return with_models[-1] if with_models else None


def _permissions(dotted_names: list[str]) -> list:
    """The permissions named ``"app_label.codename"`` that exist, in one query."""
    from django.contrib.auth.models import Permission
    from django.db.models import Q

    if not dotted_names:
        return []
    wanted = Q()
    for dotted in dotted_names:
        app_label, codename = dotted.split(".", 1)
        wanted |= Q(content_type__app_label=app_label, codename=codename)
    return list(Permission.objects.filter(wanted))


def has_permission(user, permission: str) -> bool:
    """Whether a logged-in staff user holds ``"app_label.codename"``."""
    return bool(user and user.is_authenticated and user.has_perm(permission))


def role_of(user) -> str | None:
    """The highest role the user holds through a group (or as superuser), for display."""
    if not (user and user.is_authenticated):
        return None
    if user.is_superuser:
        return ADMIN_GROUP
    names = set(user.groups.values_list("name", flat=True))
    for role in (ADMIN_GROUP, RESEARCHER_GROUP):
        if role in names:
            return role
    return None
