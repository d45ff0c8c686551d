"""Through nginx on a random, non-default port: a browser's login POST passes Django's
CSRF origin check, and absolute links the app builds keep the port."""

import http.cookiejar
import json
import re
import urllib.parse
import urllib.request

import pytest
from django.contrib.auth.models import Group, User
from rest_framework.authtoken.models import Token

from tests.factories import make_batch

pytestmark = pytest.mark.slow


def test_login_through_nginx_on_a_non_default_port(stack_db, settings):
    fault_stack = stack_db
    # the stack's web checks passwords with the production hasher, not the tests' fast one
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    assert fault_stack.proxy_port != 80
    user, _ = User.objects.get_or_create(username="port-admin", is_staff=True)
    user.set_password("pw-port-123456")
    user.save()
    user.groups.add(Group.objects.get(name="admin"))
    jar = http.cookiejar.CookieJar()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    login_url = f"{fault_stack.url}/accounts/login/"
    page = browser.open(login_url, timeout=10).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    form = urllib.parse.urlencode(
        {"username": "port-admin", "password": "pw-port-123456", "csrfmiddlewaretoken": token}
    ).encode()
    # a browser sends the page's origin, with the port
    request = urllib.request.Request(
        login_url, data=form, headers={"Origin": fault_stack.url, "Referer": login_url}
    )
    try:
        answer = browser.open(request, timeout=10)
    except urllib.error.HTTPError as refused:
        pytest.fail(f"login refused with {refused.code}: {refused.read()[:300]!r}")
    assert answer.geturl().startswith(f"{fault_stack.url}/manage/"), answer.geturl()
    # links the app builds keep the port: a job's status_url
    batch = make_batch(n_items=1, per_item=1)
    key = Token.objects.get_or_create(user=user)[0].key
    request = urllib.request.Request(
        f"{fault_stack.url}/api/v1/batches/{batch.slug}/export-jobs",
        data=urllib.parse.urlencode({"layout": "long", "format": "csv"}).encode(),
        headers={"Authorization": f"Token {key}", "Accept": "application/json"},
    )
    job = json.loads(urllib.request.urlopen(request, timeout=10).read())
    assert job["status_url"].startswith(f"{fault_stack.url}/api/v1/jobs/"), job["status_url"]
