#!/bin/sh
set -eu
mkdir -p "$PGDATA" /var/run/postgresql
chown postgres "$PGDATA" /var/run/postgresql
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    printf '%s\n' "${POSTGRES_PASSWORD:?}" > /tmp/pwfile
    chown postgres /tmp/pwfile
    runuser -u postgres -- initdb -D "$PGDATA" -U "${POSTGRES_USER:?}" --pwfile=/tmp/pwfile \
        --encoding=UTF8 --locale=C.UTF-8 \
        --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm /tmp/pwfile
    echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
    runuser -u postgres -- pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    runuser -u postgres -- createdb -U "$POSTGRES_USER" "${POSTGRES_DB:-$POSTGRES_USER}"
    runuser -u postgres -- pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec runuser -u postgres -- postgres -D "$PGDATA" -c listen_addresses='*'
