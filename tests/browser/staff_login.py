"""A staff user logging in through the login page, as a person would (tests.staff users)."""

import re

from playwright.sync_api import Page, expect

from tests.staff import PASSWORD


def log_in(page: Page, live_server, user, next_path: str = "/manage/") -> None:
    """Open ``next_path``, get sent to the login page, log in as ``user``, arrive back."""
    page.goto(f"{live_server.url}{next_path}")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next="))
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(f"{live_server.url}{next_path}")
    # the address changes before the page's deferred scripts have run: a click made at
    # once could find no handler yet (a plain download instead of the page's own)
    page.wait_for_load_state("load")
