#!/usr/bin/env bash
# Runs the test suite. Every storage and API test runs on SQLite and on a real PostgreSQL
# server, so this runs under scripts/with-postgres.sh, which brings up a throwaway cluster
# unless WAGW_TEST_POSTGRES_URL points at one already.
#   npm test                            all tests
#   npm test -- test/integration/http/send-message.test.ts  some files
set -euo pipefail
cd "$(dirname "$0")/.."

# Both phases below share one PostgreSQL server: a throwaway one (scripts/with-postgres.sh) unless
# WAGW_TEST_POSTGRES_URL names one of your own.
if [ -z "${WAGW_TEST_POSTGRES_URL:-}" ]; then
  WAGW_TEST_THROWAWAY_SERVER=1 exec bash scripts/with-postgres.sh bash scripts/test.sh "$@"
fi

# One fixed key for every process of a test run, so that a secret sealed by the CLI can be
# opened by a server the test started, and no key file is written into the working tree.
# The full suite always runs every storage and API test on both databases.
unset WAGW_TEST_DIALECTS
export WAGW_SECRET_KEY="${WAGW_SECRET_KEY:-7e57000000000000000000000000000000000000000000000000000000007e57}"

# The dashboard's end-to-end tests drive Debian's Chromium; install it the way postgres.sh
# installs PostgreSQL, so that the test command works on a fresh machine.
if [ ! -x "${WAGW_CHROMIUM_PATH:-/usr/bin/chromium}" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "Chromium is not installed; installing Debian's chromium package for the browser tests." >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
  else
    echo "The browser tests need Chromium: install it (apt-get install chromium) or set WAGW_CHROMIUM_PATH." >&2
  fi
fi

# The RabbitMQ sink's tests start a throwaway broker of Debian's rabbitmq-server (test/support/rabbitmq.ts).
if [ ! -d /usr/lib/rabbitmq/lib ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "RabbitMQ is not installed; installing Debian's rabbitmq-server package for the sink tests." >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends rabbitmq-server >/dev/null
  else
    echo "The RabbitMQ sink tests need RabbitMQ: install it (apt-get install rabbitmq-server)." >&2
  fi
fi

# The metrics lint runs Prometheus' own promtool, from Debian's prometheus package.
if ! command -v promtool >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "promtool is not installed; installing Debian's prometheus package for the metrics lint." >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  else
    echo "The metrics lint needs promtool: install it (apt-get install prometheus) or set WAGW_PROMTOOL_PATH." >&2
  fi
fi

# The n8n node's test runs a real n8n, which scripts/n8n.sh installs from the npm registry into a
# cache outside the repository (once per n8n version; about 3 GB and ten minutes on a new machine).
# A full run installs it in the background and runs that test last, after every tier, so that a
# new machine's install overlaps the rest of the suite instead of holding its start, at the lowest
# CPU and disk priority so that it does not slow the tests it runs beside.
n8n_install_log="${TMPDIR:-/tmp}/wagw-n8n-install.$$.log"
case " $* " in
  "  ") (nice -n 19 ionice -c 2 -n 7 bash scripts/n8n.sh >"$n8n_install_log" 2>&1 || echo "n8n could not be installed; the n8n node's test will fail (log: $n8n_install_log)." >&2) & ;;
  *n8n.test.ts*) bash scripts/n8n.sh >/dev/null || echo "n8n could not be installed; the n8n node's test will fail, the rest still runs." >&2 ;;
esac

if [ "$#" -gt 0 ]; then
  files=("$@")
else
  # The tiers are folders (docs/development.md).
  stray="$(find test -name '*.test.ts' -not -path 'test/unit/*' -not -path 'test/integration/*' -not -path 'test/process/*')"
  if [ -n "$stray" ]; then
    echo "These test files are outside test/unit, test/integration and test/process, so no tier runs them; move them:" >&2
    echo "$stray" >&2
    exit 1
  fi
  mapfile -t files < <(for tier in process integration unit; do find "test/$tier" -name '*.test.ts' | sort; done)
  # A full run records its slowest files and its wall time in docs/development.md.
  export WAGW_TEST_RECORD_TIMES=1
fi

# A migrated test database is a copy of one template that the run's first test process migrates
# (test/support/databases.ts), named here so that every process of the run finds it. A
# throwaway server goes with its template; a server of your own has it dropped at the end.
export WAGW_TEST_POSTGRES_TEMPLATE="wagw_template_$(date +%s)_$$"
if [ -z "${WAGW_TEST_THROWAWAY_SERVER:-}" ]; then
  trap 'node --import tsx scripts/drop-test-template.ts || true' EXIT
fi

# Test files share one PostgreSQL server but each makes its own databases, so files may run
# side by side. The process tier runs first, three files at a time (WAGW_PROCESS_TIER_CONCURRENCY),
# each in a process of its own, since its files start servers and kill them. Most of its time is
# waiting (slow clients trickle bodies past the server's deadlines, leases lapse, servers restart),
# so a third file fills the cores better than two did: the tier's files summed about 1,060 s. The unit and integration tiers then run in
# shards (scripts/test-shards.sh). Each file's time goes to test-artifacts/file-times.md.
export WAGW_TEST_STARTED_AT="$(date +%s%3N)"
logs=test-artifacts/reports
rm -rf "$logs"
mkdir -p "$logs"
process_files=()
in_process_files=()
last_files=()
for file in "${files[@]}"; do
  case "$file" in
    *test/process/integrations/n8n.test.ts) last_files+=("$file") ;;
    *test/process/*) process_files+=("$file") ;;
    *) in_process_files+=("$file") ;;
  esac
done
status=0
if [ "${#process_files[@]}" -gt 0 ]; then
  # Slowest first (by the times test-shard-plan.mjs knows), so that no long file starts last and
  # runs on alone at the end.
  mapfile -t process_files < <(node scripts/test-shard-plan.mjs 1 "${process_files[@]}" | cut -d' ' -f2-)
  node --import tsx --test --test-concurrency="${WAGW_PROCESS_TIER_CONCURRENCY:-3}" \
    --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=./scripts/file-times-reporter.mjs --test-reporter-destination="$logs/process.times.md" \
    "${process_files[@]}" || status=1
fi
if [ "${#in_process_files[@]}" -gt 0 ]; then
  # shellcheck source=scripts/test-shards.sh
  source scripts/test-shards.sh
  run_shards spec "$logs" "${in_process_files[@]}" || status=1
fi
if [ "${#last_files[@]}" -gt 0 ]; then
  node --import tsx --test --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=./scripts/file-times-reporter.mjs --test-reporter-destination="$logs/last.times.md" \
    "${last_files[@]}" || status=1
fi
node scripts/file-times-merge.mjs test-artifacts/file-times.md "$logs"/*.times.md
exit "$status"
