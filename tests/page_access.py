"""Who may open the staff pages of the census, Genie and corpus sections: their addresses,
the visitors who are not staff, and the checks each section's page tests make alike."""

from django.test import Client

from tests.factories import make_batch


def section_urls(section: str, name: str, *paths: str) -> list[str]:
    """The section's list page, the page of its entry ``name``, then that entry's ``paths``
    (downloads and the like) in the order given."""
    base = f"/manage/{section}/{name}/"
    return [f"/manage/{section}/", base, *(base + path for path in paths)]


def crowdworker_session() -> Client:
    """A crowdworker's browser session, opened by a worker link: a session, but no login."""
    worker = Client()
    batch = make_batch(slug="rating-study")
    assert worker.get(f"/work/{batch.slug}/?worker=w1").status_code == 200
    assert worker.session.get("_auth_user_id") is None
    return worker


def outsiders() -> list[Client]:
    """An anonymous visitor and a crowdworker, neither of them logged in."""
    return [Client(), crowdworker_session()]


def assert_sent_to_log_in(client: Client, urls: list[str]) -> None:
    for url in urls:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/accounts/login/?next="), url


def assert_every_status(client: Client, urls: list[str], status: int) -> None:
    for url in urls:
        assert client.get(url).status_code == status, url
