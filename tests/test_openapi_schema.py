"""The OpenAPI document is generated as the docs page and a client generator would get
it: ``manage.py spectacular --fail-on-warn --validate``, which fails on any warning or
error (a view whose answer cannot be described, an undocumented path parameter, two
components with one name) and on a document that breaks the OpenAPI specification."""

import pytest
import yaml
from django.core.management import call_command
from django.urls import path
from drf_spectacular.drainage import GENERATOR_STATS
from rest_framework.response import Response
from rest_framework.views import APIView


def test_the_schema_command_is_clean_with_fail_on_warn(tmp_path, capsys):
    target = tmp_path / "schema.yml"
    call_command("spectacular", "--fail-on-warn", "--validate", "--file", str(target))
    assert "Warning" not in capsys.readouterr().err
    schema = yaml.safe_load(target.read_text())
    assert schema["openapi"].startswith("3.")
    assert {"/api/v1/work/{slug}/next", "/api/v1/jobs/{job_id}/download"} <= set(schema["paths"])
    # every successful answer but "no content" describes its body (a list of subjects once
    # went out as "No response body")
    undescribed = [
        f"{method.upper()} {route} {code}"
        for route, operations in schema["paths"].items()
        for method, operation in operations.items()
        for code, answer in operation.get("responses", {}).items()
        if code.startswith("2") and code != "204" and "content" not in answer
    ]
    assert undescribed == []


class Undescribed(APIView):
    """An answer the generator cannot describe (no serializer, no ``extend_schema``)."""

    def get(self, request):
        return Response({})


urlpatterns = [path("api/v1/undescribed", Undescribed.as_view())]


def test_a_view_the_generator_cannot_describe_fails_the_command(tmp_path):
    # the check above cannot pass by accident: this module as the URLconf has such a view
    try:
        with pytest.raises(Exception, match="Failing as requested due to warnings"):
            call_command(
                "spectacular", "--fail-on-warn", "--urlconf", __name__,
                "--file", str(tmp_path / "schema.yml"),
            )  # fmt: skip
    finally:
        GENERATOR_STATS.reset()
