"""Template tags that show what apps registered in ``core.extensions``."""

from django import template

from core import extensions

register = template.Library()


@register.simple_tag(takes_context=True)
def page_tabs(context, family: str, *url_args) -> list[dict]:
    """``{% page_tabs "batch" batch.slug as tabs %}``: the family's tabs for this user."""
    request = context["request"]
    return extensions.tabs(family, request.user, request.path, *url_args)


@register.simple_tag(takes_context=True)
def page_panels(context, family: str, subject):
    """``{% page_panels "batch" batch %}``: the panels other apps add to the page."""
    return extensions.render_panels(
        family, context["request"], subject, context.get("panel_state") or {}
    )
