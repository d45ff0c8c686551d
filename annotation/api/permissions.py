"""DRF permission classes for staff endpoints, all asking ``annotation.roles``."""

from rest_framework.permissions import BasePermission

from annotation import roles


class _RolePermission(BasePermission):
    check = staticmethod(lambda user: False)

    def has_permission(self, request, view):
        return self.check(request.user)


class CanViewBatches(_RolePermission):
    check = staticmethod(roles.can_view_batches)


class CanManageBatches(_RolePermission):
    """Reading needs the researcher role; any change needs the admin role."""

    def has_permission(self, request, view):
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return roles.can_view_batches(request.user)
        return roles.can_manage_batches(request.user)


class CanManageAnnotators(_RolePermission):
    check = staticmethod(roles.can_manage_annotators)


class CanExport(_RolePermission):
    check = staticmethod(roles.can_export)


class CanAnalyse(_RolePermission):
    check = staticmethod(roles.can_analyse)
