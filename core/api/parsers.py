"""The API's JSON parser: DRF's, with a nesting limit.

Python's ``json`` recurses once per level, so a body nested a few thousand levels deep
raises ``RecursionError`` — a 500 from any parser that does not expect it. The request
guard (``core.http.limits``) refuses such bodies before a view runs; this parser holds
the same limit on its own, for views reached some other way (tests, internal calls).
"""

import io

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError

from core.http.json_body import nests_deeper_than


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read() if stream is not None else b""
        limit = settings.JSON_MAX_DEPTH
        if nests_deeper_than(raw, limit):
            raise ParseError(f"JSON nested deeper than {limit} levels is not accepted.")
        try:
            return super().parse(io.BytesIO(raw), media_type, parser_context)
        except RecursionError as error:
            raise ParseError("JSON nested too deeply to read.") from error
