#!/bin/sh
set -eu
if [ "${1:-}" = "redis-server" ]; then
    shift
    exec redis-server --bind 0.0.0.0 --protected-mode no "$@"
fi
exec "$@"
