"""A file uploaded through a staff page and handed to an all-or-nothing importer.

Pages call ``receive_upload`` and either show the importer's result or render the page
again with ``outcome.problems`` (every ``FILE:LINE: field: message``) — the same for
items, scores and every other import a page offers.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.errors import ServiceError
from core.tabular import ImportRejected


@dataclass
class UploadOutcome:
    filename: str = ""
    result: Any = None
    problems: list[str] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return not self.problems


def receive_upload(
    request, importer: Callable[[Any, str], Any], *, missing: str, field_name: str = "file"
) -> UploadOutcome:
    """Run ``importer(uploaded file, its name)``; refused input becomes ``problems``."""
    upload = request.FILES.get(field_name)
    if upload is None:
        return UploadOutcome(problems=[missing])
    try:
        return UploadOutcome(upload.name, importer(upload, upload.name))
    except ImportRejected as rejected:
        return UploadOutcome(upload.name, problems=list(rejected.problems))
    except ServiceError as error:
        return UploadOutcome(upload.name, problems=[str(error)])
