#!/bin/sh
# The user list PgBouncer authenticates clients with (the database's own user and
# password, from the environment), then PgBouncer itself.
set -eu
printf '"%s" "%s"\n' "${POSTGRES_USER:?}" "${POSTGRES_PASSWORD:?}" > /tmp/userlist.txt
exec pgbouncer /etc/pgbouncer/pgbouncer.ini
