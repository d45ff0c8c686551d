"""Template context every staff page needs: the navigation and the user's role."""

from core import extensions, roles


def staff(request) -> dict:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {
        "staff_role": roles.role_of(user),
        "staff_nav": extensions.nav_links(user, request.path),
    }
