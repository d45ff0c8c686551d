"""``{% table_section %}`` and ``{% data_table %}``: the staff pages' data tables, written once.

Every staff report page (a batch's report, a census, a Genie set, a corpus, a query, a
study type's own page) shows its tables in the same card: a heading with a short note,
then the table in a wrapper that scrolls sideways on a narrow screen. Because it may
scroll, the wrapper is a labelled region that takes the keyboard focus (axe's
"scrollable-region-focusable"); the table sorts itself when asked (``sortable``, by the
staff script). A page writes only what is its own::

    {% load table_sections %}
    {% table_section "models" "Models" sortable scroll %}
      <span class="muted small">Ranked by surprisal.</span>
    {% table_body %}
      <thead>…</thead><tbody>…</tbody>
    {% endtable_section %}

renders ``<section id="models">`` with the heading ``models-title`` and the table
``models-table`` (``table_id="…"`` names it otherwise; ``label="…"`` names the region,
"<title> table" by default). The part before ``{% table_body %}`` goes in the card's head
after the heading; it may be empty. A ``{% table_foot %}`` part, when given, goes below the
table (a footnote to it).
"""

from django import template
from django.utils.html import format_html

register = template.Library()


def _wrapped_table(wrap_class: str, label: str, table_class: str, table_id: str, body) -> str:
    """The table in its labelled region, which takes the keyboard focus: it scrolls
    sideways when the screen is narrower than the table."""
    id_attribute = format_html(' id="{}"', table_id) if table_id else ""
    return format_html(
        '<div class="{}" role="region" aria-label="{}" tabindex="0">\n'
        '    <table class="{}"{}>{}</table>\n'
        "  </div>",
        wrap_class,
        label,
        table_class,
        id_attribute,
        body,
    )


FLAGS = {"sortable", "scroll"}
OPTIONS = {"table_id", "label"}


class TableSectionNode(template.Node):
    # a page that extends another may fill a {% block %} inside any part
    child_nodelists = ("note", "body", "foot")

    def __init__(self, section_id, title, flags: set[str], options: dict, note, body, foot):
        self.section_id = section_id
        self.title = title
        self.flags = flags
        self.options = options
        self.note = note
        self.body = body
        self.foot = foot

    def render(self, context) -> str:
        section_id = str(self.section_id.resolve(context))
        title = str(self.title.resolve(context))
        options = {name: str(value.resolve(context)) for name, value in self.options.items()}
        table_id = options.get("table_id") or f"{section_id}-table"
        label = options.get("label") or f"{title} table"
        wrap_class = "table-wrap scroll-table" if "scroll" in self.flags else "table-wrap"
        table_class = "data compact sortable" if "sortable" in self.flags else "data compact"
        table = _wrapped_table(wrap_class, label, table_class, table_id, self.body.render(context))
        return format_html(
            '<section class="card flush" aria-labelledby="{0}-title" id="{0}">\n'
            '  <div class="card-head card-pad"><h2 id="{0}-title">{1}</h2>{2}</div>\n'
            "  {3}{4}\n"
            "</section>",
            section_id,
            title,
            self.note.render(context),
            table,
            self.foot.render(context) if self.foot is not None else "",
        )


@register.tag
def table_section(parser, token):
    bits = token.split_contents()
    tag = bits.pop(0)
    if len(bits) < 2:
        raise template.TemplateSyntaxError(f"{tag} needs the section's id and its title")
    section_id, title = (parser.compile_filter(bit) for bit in bits[:2])
    flags, options = set(), {}
    for bit in bits[2:]:
        name, equals, value = bit.partition("=")
        if equals and name in OPTIONS:
            options[name] = parser.compile_filter(value)
        elif not equals and bit in FLAGS:
            flags.add(bit)
        else:
            known = ", ".join(sorted(FLAGS | {f"{option}=…" for option in OPTIONS}))
            raise template.TemplateSyntaxError(f"{tag}: unknown {bit!r} (known: {known})")
    note = parser.parse(("table_body",))
    parser.delete_first_token()
    body = parser.parse(("table_foot", "endtable_section"))
    foot = None
    if parser.next_token().contents == "table_foot":
        foot = parser.parse(("endtable_section",))
        parser.delete_first_token()
    return TableSectionNode(section_id, title, flags, options, note, body, foot)


class DataTableNode(template.Node):
    child_nodelists = ("body",)

    def __init__(self, label, options: dict, body):
        self.label = label
        self.options = options
        self.body = body

    def render(self, context) -> str:
        options = {name: str(value.resolve(context)) for name, value in self.options.items()}
        wrap_class = " ".join(["table-wrap", options.get("wrap", "")]).strip()
        table_class = " ".join(["data", options.get("classes", "")]).strip()
        label = str(self.label.resolve(context))
        body = self.body.render(context)
        return _wrapped_table(wrap_class, label, table_class, options.get("table_id", ""), body)


DATA_TABLE_OPTIONS = {"classes", "wrap", "table_id"}


@register.tag
def data_table(parser, token):
    """``{% data_table "Label" classes="compact" wrap="card flush" table_id="x" %}`` …
    ``{% enddata_table %}``: a table in its labelled, focusable region alone, where the
    page writes its own card around it (or none)."""
    bits = token.split_contents()
    tag = bits.pop(0)
    if not bits:
        raise template.TemplateSyntaxError(f"{tag} needs the region's label")
    label = parser.compile_filter(bits[0])
    options = {}
    for bit in bits[1:]:
        name, equals, value = bit.partition("=")
        if not equals or name not in DATA_TABLE_OPTIONS:
            known = ", ".join(f"{option}=…" for option in sorted(DATA_TABLE_OPTIONS))
            raise template.TemplateSyntaxError(f"{tag}: unknown {bit!r} (known: {known})")
        options[name] = parser.compile_filter(value)
    body = parser.parse(("enddata_table",))
    parser.delete_first_token()
    return DataTableNode(label, options, body)
