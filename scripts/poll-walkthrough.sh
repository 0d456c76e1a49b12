#!/usr/bin/env bash
# The README's poll step against a live server, as a user runs it: start `wagw serve` on the
# embedded defaults with a webhook receiver on this machine, send a poll from a sandbox number,
# have the customer's phone vote (POST /sandbox/poll_vote), and wait until the receiver hears
# the signed poll.vote event with the vote and the totals. Exits non-zero otherwise.
#   bash scripts/poll-walkthrough.sh
set -euo pipefail
cd "$(dirname "$0")/.."

workdir=$(mktemp -d /tmp/wagw-poll.XXXXXX)
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
export WAGW_DATA_DIR="$workdir/data"
export DATABASE_URL="sqlite:$workdir/data/wagw.db"
export PORT="${PORT:-$(free_port)}"
receiver_port=$(free_port)
export WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS="127.0.0.1:$receiver_port"
base="http://127.0.0.1:$PORT"
server=""
receiver=""
cleanup() {
  for pid in $server $receiver; do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$workdir"
}
trap cleanup EXIT
fail() { echo "poll walk-through: $*" >&2; sed 's/^/  gateway: /' "$workdir/server.log" >&2 || true; exit 1; }

node bin/wagw serve >"$workdir/server.log" 2>&1 &
server=$!
# The receiver of the README: it prints each delivery's body, one a line.
node -e 'require("http").createServer((q,s)=>{let b="";q.on("data",d=>b+=d);q.on("end",()=>{console.log(b);s.end()})}).listen(Number(process.argv[1]),"127.0.0.1")' "$receiver_port" >"$workdir/received.log" &
receiver=$!
for _ in $(seq 1 300); do
  curl -fsS "$base/health" >/dev/null 2>&1 && break
  kill -0 "$server" 2>/dev/null || fail "the gateway exited before it served"
  sleep 0.2
done

json_field() { node -pe "JSON.parse(require('fs').readFileSync(0)).$1"; }
account=$(node bin/wagw account create --name "Polls" --plan starter --json | json_field id)
node bin/wagw number add --account "$account" --phone "+44 7700 900123" --json >/dev/null
key=$(node bin/wagw key create --account "$account" --name "poll key" --json | json_field key)
node bin/wagw webhook create --account "$account" --url "http://127.0.0.1:$receiver_port/polls" --events poll.vote --json >/dev/null

poll=$(curl -sS --fail-with-body "$base/send_message" -H "Authorization: Bearer $key" -H "Content-Type: application/json" \
  -d '{"from_phone": "+447700900123", "to_phone": "+4915112345678", "poll": {"question": "Which day suits you?", "options": ["Monday", "Tuesday", "Friday"]}}' \
  | json_field message_id) || fail "the poll was not sent"
curl -sS --fail-with-body "$base/sandbox/poll_vote" -H "Authorization: Bearer $key" -H "Content-Type: application/json" \
  -d "{\"from_phone\": \"+4915112345678\", \"to_phone\": \"+447700900123\", \"message_id\": \"$poll\", \"options\": [\"Tuesday\"]}" >"$workdir/vote.json" \
  || fail "the vote was refused: $(cat "$workdir/vote.json")"

for _ in $(seq 1 100); do
  grep -q '"event":"poll.vote"' "$workdir/received.log" && break
  sleep 0.1
done
event=$(grep '"event":"poll.vote"' "$workdir/received.log" | head -1) || fail "the receiver never heard poll.vote"
echo "$event" | node -e '
  const event = JSON.parse(require("fs").readFileSync(0));
  const ok = event.message_id === process.argv[1] && event.voter_phone === "+4915112345678" && event.options.join() === "Tuesday"
    && event.poll.results.voters === 1 && event.poll.results.options.map((entry) => entry.votes).join() === "0,1,0";
  if (!ok) { console.error("poll.vote is not as expected:", JSON.stringify(event)); process.exit(1); }
' "$poll" || fail "the event was not the vote"
tally=$(curl -sS "$base/messages/$poll" -H "Authorization: Bearer $key" | node -pe 'JSON.stringify(JSON.parse(require("fs").readFileSync(0)).poll.results)')
echo "poll walk-through: sent $poll, the vote was heard on the webhook as poll.vote, and GET /messages/{id} tallies $tally"
