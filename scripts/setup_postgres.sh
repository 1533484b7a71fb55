#!/usr/bin/env bash
# Install the PostgreSQL server binaries (Debian package) for the distributed-search test.
# Idempotent: does nothing when /usr/lib/postgresql/*/bin/initdb already exists. The test
# (tests/test_search_postgres.py) starts its own throw-away server on 127.0.0.1; nothing here
# starts or configures a server.
set -euo pipefail

if compgen -G "/usr/lib/postgresql/*/bin/initdb" > /dev/null; then
    echo "PostgreSQL server binaries present: $(ls -d /usr/lib/postgresql/*/bin | tail -n 1)"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
elif command -v sudo > /dev/null; then
    SUDO="sudo"
else
    echo "PostgreSQL is missing and this user cannot install packages; run as root:" >&2
    echo "  apt-get update && apt-get install -y postgresql" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q postgresql
compgen -G "/usr/lib/postgresql/*/bin/initdb" > /dev/null
echo "PostgreSQL installed: $(ls -d /usr/lib/postgresql/*/bin | tail -n 1)"
