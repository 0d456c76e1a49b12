/**
 * node --import tsx bench/statements-per-send.ts (under scripts/with-postgres.sh for PostgreSQL)
 *
 * Counts what the database is asked per send: every statement and every transaction's begin and
 * commit (a round trip each on PostgreSQL), for ROUNDS rounds of CONCURRENT sends at once on an
 * in-process gateway, without a webhook and with one subscribed to message.status, until each
 * send's delivered receipt is recorded. The counters wrap pg's client and better-sqlite3's statements.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { accountScope } from '../src/domain/tenant-scope.ts';
import { dialects, type Dialect } from '../test/support/databases.ts';
import { seedAccount, startTestGateway } from '../test/support/gateway.ts';

const CONCURRENT = Number(process.env.BENCH_SENDS_AT_ONCE ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);

let counted = 0;
let counting = false;
/** With BENCH_STATEMENTS_BY_TEXT set, the count of each statement's text is printed too. */
const byText = new Map<string, number>();
function count(text: unknown): void {
  if (!counting) return;
  counted += 1;
  if (process.env.BENCH_STATEMENTS_BY_TEXT === undefined) return;
  const key = String(typeof text === 'object' && text !== null ? (text as { text?: string }).text : text).slice(0, 90);
  byText.set(key, (byText.get(key) ?? 0) + 1);
}
const queryOf = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  count(args[0]);
  return (queryOf as (...a: unknown[]) => unknown).apply(this, args);
} as typeof pg.Client.prototype.query;
const statementPrototype = Object.getPrototypeOf(new Database(':memory:').prepare('select 1')) as Record<string, unknown>;
for (const method of ['run', 'all', 'get', 'iterate']) {
  const original = statementPrototype[method] as (...a: unknown[]) => unknown;
  statementPrototype[method] = function (this: { source?: string }, ...args: unknown[]) {
    count(this.source);
    return original.apply(this, args);
  };
}

async function measure(dialect: Dialect, withWebhook: boolean): Promise<number> {
  const test = await startTestGateway(dialect, { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true' });
  try {
    const account = await seedAccount(test.gateway, { plan: 'enterprise' });
    if (withWebhook)
      await test.gateway.webhooks.createWebhook(accountScope(account.accountId), {
        url: 'http://127.0.0.1:9/hook',
        eventTypes: ['message.status'],
      });
    const send = (index: number) =>
      test.post('/send_message', { from_phone: account.phones[0], to_phone: '+14155550100', message: `m${index}` }, account.apiKey);
    // Warm: the caches and the compiled statements, off the count.
    await Promise.all(Array.from({ length: CONCURRENT }, (_, index) => send(index)));
    await new Promise((resolve) => setTimeout(resolve, 500));
    counted = 0;
    byText.clear();
    counting = true;
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all(Array.from({ length: CONCURRENT }, (_, index) => send(index)));
      for (const answer of answers) if (answer.statusCode !== 200) throw new Error(answer.body);
    }
    // The receipts of the last round.
    await new Promise((resolve) => setTimeout(resolve, 300));
    counting = false;
    for (const [text, times] of [...byText].sort((a, b) => b[1] - a[1]))
      console.log(`  ${(times / (CONCURRENT * ROUNDS)).toFixed(2)}  ${text}`);
    return counted / (CONCURRENT * ROUNDS);
  } finally {
    await test.close();
  }
}

for (const dialect of dialects) {
  for (const withWebhook of [false, true]) {
    const perSend = await measure(dialect, withWebhook);
    const hearing = withWebhook ? 'one webhook hearing statuses' : 'no webhook';
    console.log(
      `${dialect}, ${hearing}: ${perSend.toFixed(2)} statements (with begin and commit) per send, ${CONCURRENT} at once × ${ROUNDS}`,
    );
  }
}
