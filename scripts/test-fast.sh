#!/usr/bin/env bash
# The fast tier, for the edit-test loop: domain, config and in-process tests on SQLite only, with
# no PostgreSQL, browser or child processes. `npm test` (CI's command) stays the full suite; this
# never replaces it.
#   npm run test:fast
set -euo pipefail
cd "$(dirname "$0")/.."
export WAGW_TEST_DIALECTS=sqlite
export WAGW_SECRET_KEY="${WAGW_SECRET_KEY:-7e57000000000000000000000000000000000000000000000000000000007e57}"

# Domain rules, configuration, the stores, and the API's promises through Fastify's inject: what
# an edit most often breaks. Left to the full suite: the dashboard (each sign-in pays for scrypt),
# child processes, browsers, real sockets, fuzzing and webhook delivery timing.
mapfile -t files < <(
  ls test/domain/*.test.ts test/config.test.ts test/accounts/*.test.ts test/store/*.test.ts \
    test/engines/baileys/mappers.test.ts test/engines/baileys/reconnect-policy.test.ts \
    test/http/send-message.test.ts test/http/errors.test.ts test/http/quota.test.ts test/http/security.test.ts \
    test/http/idempotency.test.ts test/http/authorization-matrix.test.ts \
    test/webhooks/retry-policy.test.ts test/webhooks/ssrf.test.ts 2>/dev/null |
    grep -v -e 'compiled-statement' -e 'password-policy' # PostgreSQL's prepared statements; a test that runs the CLI
)
exec node --import tsx --test --test-concurrency=2 --test-reporter=dot "${files[@]}"
