"""Fixtures of the crowd tests: a fake Prolific in front, the settings pointing to it."""

import pytest

from tests.crowd.fake_prolific import TOKEN, FakeProlificServer

WEBHOOK_SECRET = "test-webhook-secret"


@pytest.fixture
def prolific(settings):
    """The fake Prolific (its state and the calls it received); the deployment settings
    point the client at it."""
    with FakeProlificServer() as server:
        settings.PROLIFIC_API_TOKEN = TOKEN
        settings.PROLIFIC_API_URL = server.url
        settings.PROLIFIC_WEBHOOK_SECRET = WEBHOOK_SECRET
        settings.PROLIFIC_TIMEOUT_SECONDS = 0.5
        settings.PROLIFIC_AUTO_PLACES = False
        settings.CROWD_PLACES_MARGIN = 0.0
        yield server.fake
