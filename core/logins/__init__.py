"""Login throttling for staff accounts (the crowdworkers have no login).

* ``throttle`` — failed logins counted per account and per client address in the shared
  cache (Redis when ``REDIS_URL`` is set, so every web process and node sees them);
* ``backends`` — the authentication backend refuses a locked account or address before
  looking at the password, for every way in (login page, admin, any other form);
* ``forms`` and ``views`` — the login pages say why (``429``) instead of "wrong password".
"""
