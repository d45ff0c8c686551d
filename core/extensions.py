"""Extension points: how an app adds to another app's pages without being imported by it.

Pages are named by a *page family* (``"batch"`` for a batch's pages, ``"staff"`` for the
staff site as a whole). An app registers, from its ``AppConfig.ready()``:

* ``NavLink`` — an entry of the staff site's main navigation;
* ``Tab`` — a tab in the header of every page of a family (reversed with the page's
  URL arguments);
* ``Panel`` — a section rendered on a family's main page from the app's own template
  and context function; ``state`` carries what a failed form post wants shown (e.g.
  an upload's problems) when the page is rendered again;
* ``Column`` — a column added to a table of another app's page, filled by a function of
  the subject that returns ``{row key: text shown}`` (``None`` shows a dash); a
  ``sortable`` column's text is a number the table can be sorted by.
* ``CardSection`` — Markdown lines added to a family's data card (e.g. how a batch was
  made by another app), from a function of the subject (no lines: nothing added).

Whatever is registered is shown in ``order``, and only to users its ``visible`` admits.
"""

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe


def _anyone(user) -> bool:
    return True


@dataclass(frozen=True)
class NavLink:
    """A link shown as ``label`` to the URL named ``url_name``, to the users ``visible``
    admits, in ``order``."""

    label: str
    url_name: str
    visible: Callable[[object], bool] = _anyone
    order: int = 100


@dataclass(frozen=True)
class Tab(NavLink):
    """A link in the header of a family's pages (its URL takes the page's arguments)."""


@dataclass(frozen=True)
class Panel:
    name: str
    template: str
    context: Callable[..., dict] = field(default=lambda request, subject, state: {})
    visible: Callable[[object], bool] = _anyone
    order: int = 100


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    values: Callable[[object], dict]
    visible: Callable[[object], bool] = _anyone
    title: Callable[[object], str] = field(default=lambda subject: "")
    note: Callable[[object], str] = field(default=lambda subject: "")
    order: int = 100
    sortable: bool = False


@dataclass(frozen=True)
class CardSection:
    name: str
    lines: Callable[[object], list[str]]
    order: int = 100


_NAV: list[NavLink] = []
_TABS: dict[str, list[Tab]] = defaultdict(list)
_PANELS: dict[str, list[Panel]] = defaultdict(list)
_COLUMNS: dict[str, list[Column]] = defaultdict(list)
_CARD_SECTIONS: dict[str, list[CardSection]] = defaultdict(list)


def _add(registry: list, entry) -> None:
    if entry not in registry:
        registry.append(entry)
        registry.sort(key=lambda known: known.order)


def register_nav(link: NavLink) -> None:
    _add(_NAV, link)


def register_tab(family: str, tab: Tab) -> None:
    _add(_TABS[family], tab)


def register_panel(family: str, panel: Panel) -> None:
    _add(_PANELS[family], panel)


def register_column(table: str, column: Column) -> None:
    _add(_COLUMNS[table], column)


def register_card_section(family: str, section: CardSection) -> None:
    _add(_CARD_SECTIONS[family], section)


def card_sections(family: str, subject) -> list[str]:
    """The Markdown lines the apps add to the subject's data card, in order."""
    lines: list[str] = []
    for section in _CARD_SECTIONS[family]:
        lines += section.lines(subject)
    return lines


def nav_links(user, current_path: str) -> list[dict]:
    """The navigation a user may see; the one entry whose address is the longest prefix of
    the current path is current (``/manage/corpora/…`` is Corpora, not Batches)."""
    links = [
        {"label": link.label, "url": reverse(link.url_name), "current": False}
        for link in _NAV
        if link.visible(user)
    ]
    matching = [link for link in links if current_path.startswith(link["url"])]
    if matching:
        max(matching, key=lambda link: len(link["url"]))["current"] = True
    return links


def tabs(family: str, user, current_path: str, *url_args) -> list[dict]:
    shown = []
    for tab in _TABS[family]:
        if tab.visible(user):
            url = reverse(tab.url_name, args=url_args)
            shown.append({"label": tab.label, "url": url, "current": current_path == url})
    return shown


def render_panels(family: str, request, subject, state: dict | None = None) -> SafeString:
    """The family's panels as HTML, each from its own template and context."""
    parts = []
    for panel in _PANELS[family]:
        if not panel.visible(request.user):
            continue
        context = {"subject": subject, "request": request}
        context.update(panel.context(request, subject, (state or {}).get(panel.name, {})))
        parts.append(render_to_string(panel.template, context, request=request))
    return mark_safe("".join(parts))  # noqa: S308 - each part is an autoescaped template


def columns(table: str, user, subject) -> list[dict]:
    """The extra columns of a table that the user may see, with their values."""
    return [
        {
            "key": column.key,
            "header": column.header,
            "title": column.title(subject),
            "note": column.note(subject),
            "values": column.values(subject),
            "sortable": column.sortable,
        }
        for column in _COLUMNS[table]
        if column.visible(user)
    ]
