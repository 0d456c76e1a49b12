#!/usr/bin/env bash
# Starts and stops a private PostgreSQL cluster for the tests, from Debian's `postgresql`
# package. It listens on 127.0.0.1 only, on a free port, with fsync on (the durability tests
# need real commits), and is deleted afterwards.

find_postgres_bin() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

ensure_postgres_installed() {
  if [ -n "$(find_postgres_bin)" ]; then return 0; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "PostgreSQL is not installed; installing Debian's postgresql package for the tests." >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  else
    echo "The tests need PostgreSQL: install it (apt-get install postgresql) or set WAGW_TEST_POSTGRES_URL." >&2
    return 1
  fi
}

# PostgreSQL refuses to run as root, so as root the cluster belongs to the postgres user.
as_cluster_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start_throwaway_postgres() {
  ensure_postgres_installed
  local bin port
  bin=$(find_postgres_bin)
  WAGW_PG_DIR=$(mktemp -d /tmp/wagw-test-pg.XXXXXX)
  [ "$(id -u)" = 0 ] && chown postgres: "$WAGW_PG_DIR"
  port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  as_cluster_owner "$bin/initdb" -D "$WAGW_PG_DIR/data" -U postgres -A trust --no-sync >/dev/null
  as_cluster_owner "$bin/pg_ctl" -D "$WAGW_PG_DIR/data" -l "$WAGW_PG_DIR/server.log" -w \
    -o "-p $port -k $WAGW_PG_DIR -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=on" start >/dev/null
  export WAGW_PG_BIN=$bin WAGW_PG_DIR
  export WAGW_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/postgres"
  echo "PostgreSQL for the tests: $WAGW_TEST_POSTGRES_URL" >&2
}

stop_throwaway_postgres() {
  if [ -n "${WAGW_PG_DIR:-}" ] && [ -d "$WAGW_PG_DIR/data" ]; then
    as_cluster_owner "$WAGW_PG_BIN/pg_ctl" -D "$WAGW_PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$WAGW_PG_DIR"
  fi
}
