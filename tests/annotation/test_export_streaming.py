"""``streaming.unescape_copy_text`` undoes COPY's text format, whatever the text.

The oracle escapes text character by character as PostgreSQL's documentation of COPY's
text format says COPY TO writes it: backslash as ``\\\\``, and backspace, form feed,
newline, carriage return, tab and vertical tab as ``\\b \\f \\n \\r \\t \\v``; other
characters as they are. Lines are escaped one by one and ended by a raw newline, as COPY
sends them. (The round trip through PostgreSQL itself is in ``test_export_database``.)
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.services.exports import streaming
from annotation.services.exports.streaming import unescape_copy_text

ESCAPED = {"\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
ESCAPED["\v"] = "\\v"


def copy_text(line: str) -> bytes:
    return "".join(ESCAPED.get(character, character) for character in line).encode()


# the characters that matter (backslashes, the escapes' letters, the escaped characters),
# other control characters and non-ASCII text
ALPHABET = st.sampled_from(list("\\\\\\nrtbfvN.") + list("\b\f\n\r\t\v\x01\x1f") + ["é", "✓"])
LINES = st.lists(st.text(alphabet=ALPHABET, max_size=30), max_size=8)


@settings(max_examples=500, deadline=None)
@given(LINES)
def test_escaped_lines_come_back_as_they_were(lines):
    data = b"".join(copy_text(line) + b"\n" for line in lines)
    expected = "".join(line + "\n" for line in lines).encode()
    assert unescape_copy_text(data) == expected


def test_an_escaped_backslash_before_an_escape_letter_stays_a_backslash():
    # \\n is a backslash then "n"; \\\n is a backslash then a newline
    assert unescape_copy_text(b"a\\\\nb\\\\\\nc\\\\\n") == b"a\\nb\\\nc\\\n"
    assert unescape_copy_text(b"plain text, nothing escaped\n") == b"plain text, nothing escaped\n"


def test_pieces_are_bounded_by_bytes_whatever_the_length_of_an_item():
    """A 5,000-word response (about 30 kB) shared by 200 labels: each label's line carries
    it, so a piece holds as many lines as fit in PIECE_BYTES, not a fixed number of them."""
    response = ("word " * 5000).encode()
    rows = [memoryview(b"I" + response + b",\n")]
    rows += [memoryview(b"L" + f"ann-{index},5\n".encode()) for index in range(200)]
    pieces = list(streaming._pieces(iter(rows), crlf=True, max_lines=1000))
    line = len(response) + len(b",ann-000,5\r\n")
    assert all(len(data) <= streaming.PIECE_BYTES + line for _, data in pieces)
    assert len(pieces) > 1 and sum(count for count, _ in pieces) == 200
    text = b"".join(data for _, data in pieces)
    expected = b"".join(response + f",ann-{index},5\r\n".encode() for index in range(200))
    assert text == expected
