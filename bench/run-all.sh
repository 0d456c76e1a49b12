#!/usr/bin/env bash
# npm run bench: every benchmark in turn, each rewriting its own section of docs/benchmarks.md.
# package.json runs this under scripts/with-postgres.sh, so all of them share one throwaway
# PostgreSQL server. Set BENCH_DIALECTS=sqlite (or postgres) to measure one dialect only.
set -euo pipefail
cd "$(dirname "$0")/.."

run() {
  echo "== $1" >&2
  node --import tsx "$1"
}

run bench/floor.ts       # echo, durable floor and send in one run: CPU per answer
run bench/send.ts        # send throughput and latency against the ceiling; durability cost
run bench/webhooks.ts    # incoming → endpoint latency; sustained deliveries
run bench/sinks.ts       # events/s and CPU per event to RabbitMQ beside webhooks
run bench/many-numbers.ts  # start-up time, lease ticks and memory with 10,000 owned numbers
run bench/cluster.ts       # a send through another node; failover times of the chaos rounds
run bench/media.ts         # uploads and downloads against bare routes; memory under big uploads; media sends
run bench/message-reads.ts # GET /messages pages on an account of 1,000,000 messages, per filter
# Not here: bench/node-releases.ts (npm run bench:node-releases), which compares this tree with an
# older commit on other Node.js releases; it installs that commit's dependencies on first use.
