#!/usr/bin/env bash
# The README's first send, as a new user runs it, on whatever Node.js is on PATH: start the
# gateway on the embedded defaults (SQLite, the sandbox), create an account, a number and a key
# with the CLI, send once, then stop the gateway with SIGTERM. Exits non-zero unless the send
# answers 200 and the gateway exits 0. CI runs it on each supported Node.js release.
#   bash scripts/first-send.sh
set -euo pipefail
cd "$(dirname "$0")/.."

workdir=$(mktemp -d /tmp/wagw-first-send.XXXXXX)
export WAGW_DATA_DIR="$workdir/data"
# The database's default file is ./data/wagw.db whatever WAGW_DATA_DIR says; it goes here too,
# so that a run starts from nothing and leaves nothing in the working tree.
export DATABASE_URL="sqlite:$workdir/data/wagw.db"
export PORT="${PORT:-$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')}"
base="http://127.0.0.1:$PORT"
server=""
cleanup() {
  if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then kill -9 "$server" 2>/dev/null || true; fi
  rm -rf "$workdir"
}
trap cleanup EXIT
fail() { echo "first send on Node.js $(node --version): $*" >&2; sed 's/^/  gateway: /' "$workdir/server.log" >&2 || true; exit 1; }

node bin/wagw serve >"$workdir/server.log" 2>&1 &
server=$!
for _ in $(seq 1 300); do
  curl -fsS "$base/health" >/dev/null 2>&1 && break
  kill -0 "$server" 2>/dev/null || fail "the gateway exited before it served"
  sleep 0.2
done
curl -fsS "$base/health" >/dev/null || fail "the gateway did not answer /health within 60 s"

json_field() { node -pe "JSON.parse(require('fs').readFileSync(0)).$1"; }
account=$(node bin/wagw account create --name "First send" --plan starter --json | json_field id)
node bin/wagw number add --account "$account" --phone "+44 7700 900123" --json >/dev/null
key=$(node bin/wagw key create --account "$account" --name "first key" --json | json_field key)

status=$(curl -s -o "$workdir/answer.json" -w '%{http_code}' "$base/send_message" \
  -H "Authorization: Bearer $key" -H "Content-Type: application/json" \
  -d '{"from_phone": "+447700900123", "to_phone": "+1 415 555 0100", "message": "Hello from wa-gateway"}')
[ "$status" = 200 ] || fail "the send answered $status: $(cat "$workdir/answer.json")"
[ "$(json_field status <"$workdir/answer.json")" = sent ] || fail "the send was not sent: $(cat "$workdir/answer.json")"

kill -TERM "$server"
set +e
wait "$server"
code=$?
set -e
server=""
[ "$code" = 0 ] || fail "SIGTERM ended the gateway with exit code $code"
echo "first send on Node.js $(node --version): served, sent (200), and stopped on SIGTERM with exit code 0"
