"""``{% table_section %}``: the report pages' table card, rendered from one place."""

import pytest
from django.template import Context, Template, TemplateSyntaxError


def _render(source: str, **context) -> str:
    return Template("{% load table_sections %}" + source).render(Context(context))


def test_a_section_holds_its_heading_note_table_and_foot():
    html = _render(
        '{% table_section "models" title sortable scroll %}<span>{{ note }}</span>'
        "{% table_body %}<tbody><tr><td>{{ cell }}</td></tr></tbody>"
        "{% table_foot %}<p>† footnote</p>{% endtable_section %}",
        title="Models & <b>bold</b>",
        note="ranked",
        cell="<script>",
    )
    assert '<section class="card flush" aria-labelledby="models-title" id="models">' in html
    # the title is text, escaped; the note and body are the page's own template
    assert (
        '<h2 id="models-title">Models &amp; &lt;b&gt;bold&lt;/b&gt;</h2><span>ranked</span>' in html
    )
    assert (
        '<div class="table-wrap scroll-table" role="region" '
        'aria-label="Models &amp; &lt;b&gt;bold&lt;/b&gt; table" tabindex="0">'
    ) in html
    assert '<table class="data compact sortable" id="models-table">' in html
    assert "<td>&lt;script&gt;</td>" in html
    assert html.index("</table>") < html.index("<p>† footnote</p>") < html.index("</section>")


def test_options_name_the_table_and_the_region():
    html = _render(
        '{% table_section "features" "Per feature" table_id="f-table" label="Per-feature" %}'
        "{% table_body %}<tbody></tbody>{% endtable_section %}"
    )
    assert '<div class="table-wrap" role="region" aria-label="Per-feature" tabindex="0">' in html
    assert '<table class="data compact" id="f-table"><tbody></tbody></table>' in html
    assert "</div>\n</section>" in html  # no foot


@pytest.mark.parametrize(
    "tag, problem",
    [
        ('{% table_section "x" %}', "needs the section's id and its title"),
        ('{% table_section "x" "X" wide %}', "unknown 'wide'"),
        ('{% table_section "x" "X" colour="red" %}', "unknown 'colour=\"red\"'"),
    ],
)
def test_a_misspelt_section_fails_when_the_template_is_read(tag, problem):
    with pytest.raises(TemplateSyntaxError, match=problem):
        _render(tag + "{% table_body %}{% endtable_section %}")


def test_a_data_table_alone_is_a_labelled_focusable_region():
    html = _render(
        '{% data_table label classes="history" wrap="card flush" %}'
        "<tbody><tr><td>{{ cell }}</td></tr></tbody>{% enddata_table %}",
        label="History <of> batch",
        cell="<b>",
    )
    assert html.startswith(
        '<div class="table-wrap card flush" role="region" '
        'aria-label="History &lt;of&gt; batch" tabindex="0">'
    )
    assert '<table class="data history"><tbody><tr><td>&lt;b&gt;</td></tr></tbody></table>' in html
    plain = _render('{% data_table "Rows" table_id="rows" %}{% enddata_table %}')
    assert '<div class="table-wrap" role="region" aria-label="Rows" tabindex="0">' in plain
    assert '<table class="data" id="rows"></table>' in plain


@pytest.mark.parametrize("tag", ["{% data_table %}", '{% data_table "x" sortable %}'])
def test_a_misspelt_data_table_fails_when_the_template_is_read(tag):
    with pytest.raises(TemplateSyntaxError):
        _render(tag + "{% enddata_table %}")


def test_a_page_that_extends_another_fills_a_block_inside_a_table():
    from django.template import engines

    django_engine = engines["django"]
    base = django_engine.from_string(
        "{% load table_sections %}"
        '{% data_table "Rows" %}<tr>{% block cells %}<td>base</td>{% endblock %}</tr>'
        "{% enddata_table %}"
        '{% table_section "s" "S" %}{% block note %}base note{% endblock %}{% table_body %}'
        "{% block body %}<tr><td>base body</td></tr>{% endblock %}{% endtable_section %}"
    )
    child = django_engine.engine.from_string(
        "{% extends base %}{% block cells %}{{ block.super }}<td>child</td>{% endblock %}"
        "{% block note %}child note{% endblock %}"
        "{% block body %}<tr><td>child body</td></tr>{% endblock %}"
    )
    html = child.render(Context({"base": base.template}))
    assert "<td>base</td><td>child</td>" in html  # block.super: the page's own block
    assert "child note" in html and "child body" in html and "base note" not in html
