"""What every HTTP request passes through, before and after the apps' views.

* ``limits`` — the request guard: body size caps (413), JSON nesting depth and control
  characters in query parameters, form fields and JSON strings (400 naming the field);
* ``errors`` — errors nobody handled become a clear answer: a service error its status,
  a database outage 503 with ``Retry-After``, anything else 500 — JSON on the API;
* ``headers`` — Content-Security-Policy and ``Cache-Control: no-store`` on every page;
* ``client`` — the client's address, also behind the proxy (``CLIENT_IP_HEADER``);
* ``responses`` — the one way these answer: JSON ``{"detail": ...}`` under ``/api/``, a
  short page elsewhere.
"""
