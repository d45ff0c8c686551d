"""Container health check: ``python deploy/healthcheck.py [path]`` exits 0 when the app
answers 200 on ``/healthz`` (or the given path) at 127.0.0.1:8000.

It asks with the first of ``ALLOWED_HOSTS`` as Host (the settings refuse other names)
and as if over HTTPS, so neither the host check nor SECURE_SSL_REDIRECT gets in the way.
"""

import os
import sys
import urllib.request


def main() -> int:
    path = sys.argv[1] if len(sys.argv) > 1 else "/healthz"
    host = os.environ.get("ALLOWED_HOSTS", "localhost").split(",")[0].strip().lstrip(".")
    if not host or host == "*":
        host = "localhost"
    request = urllib.request.Request(
        f"http://127.0.0.1:8000{path}", headers={"Host": host, "X-Forwarded-Proto": "https"}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return 0 if response.status == 200 else 1
    except OSError as error:
        print(f"{path}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
