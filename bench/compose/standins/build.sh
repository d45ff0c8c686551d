#!/bin/sh
# Stand-ins for the public images docker-compose.yml starts from (python:3.11-slim,
# postgres:15, redis:7, nginx:1.27-alpine, debian:*-slim), built from Debian's own
# packages, for a machine that reaches Debian's mirrors and PyPI but no image registry.
# Each keeps the interface the compose file relies on (commands on PATH, the official
# images' POSTGRES_* variables, data folders, ports) — not the official images' contents.
# Usage: bench/compose/standins/build.sh   (as root; needs debootstrap and a Docker daemon)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# Debian's own minimal systems: 12 for the stand-ins below, 13 for the PgBouncer image
for release in bookworm trixie; do
    if ! docker image inspect "debian:$release-slim" >/dev/null 2>&1; then
        root=$(mktemp -d "/tmp/$release-rootfs.XXXXXX")
        debootstrap --variant=minbase "$release" "$root" http://deb.debian.org/debian
        tar -C "$root" -c . | docker import - "debian:$release-slim"
        rm -rf "$root"
    fi
done
# the machine's own extra certificate authorities (an egress proxy's, say), which pip in
# the images built from this one must trust as the machine does
context=$(mktemp -d /tmp/python-standin.XXXXXX)
cp -r "$here/python/." "$context/"
mkdir -p "$context/ca-certificates"
cp /usr/local/share/ca-certificates/*.crt "$context/ca-certificates/" 2>/dev/null || true
docker build -q -t python:3.11-slim "$context"
rm -rf "$context"
docker build -q -t postgres:15 "$here/postgres"
docker build -q -t redis:7 "$here/redis"
docker build -q -t nginx:1.27-alpine "$here/nginx"
