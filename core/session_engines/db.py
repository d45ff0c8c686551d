"""``django.contrib.sessions.backends.db`` without the query before a new session
(``core.session_engines``)."""

from django.contrib.sessions.backends import db

from core.session_engines import new_session_key


class SessionStore(db.SessionStore):
    def _get_new_session_key(self):
        return new_session_key()
