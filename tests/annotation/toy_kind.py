"""A kind defined only in the tests: thumbs up / thumbs down on a response.

It is registered through the ``TASK_KINDS`` setting by the test that uses it, and needs no
change to the platform: that is the point of ``test_kind_plugin.py``.
"""

from django.template import Context, Template

from annotation.kinds.base import ChoiceKind, ExportColumn, ResponseSlot, Scale

ITEM = Template(
    '<p class="toy-query">{{ html.query|safe }}</p>'
    '<div class="toy-response">{{ html.response|safe }}</div>'
)


class ThumbsKind(ChoiceKind):
    name = "thumbs"
    label = "Thumbs up or down"
    response_slots = (ResponseSlot("response", "response_id", "response", "model"),)
    scale = Scale(((1, "Thumbs up"), (0, "Thumbs down")))
    question = "Do you like this response?"
    item_columns = (
        ExportColumn("response_id", "string", "the response's id", "response__response_id"),
        ExportColumn("response", "string", "the response's text", "response__text"),
    )

    def render_item(self, context: dict) -> str:
        return ITEM.render(Context(context))
