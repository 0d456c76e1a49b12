import { accountScope } from '../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { after, before, describe, it, type TestContext } from 'node:test';
import type { Message } from '../../src/domain/model.ts';
import { listMessages } from '../../src/store/repositories/message-pages.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../support/databases.ts';
import { seedAccount, type SeededAccount } from '../support/gateway.ts';
import { WebhookReceiver, type ReceivedRequest } from '../support/webhook-receiver.ts';
import { verifiedPayload, webhookEnv } from '../support/delivery-support.ts';
import type { LedgerEntry, LoadCommand, LoadKind, LoadOrder, LoadReport } from './crash-load-process.ts';
import { sleep, waitFor, withTimeout } from './raw-http.ts';
import { killAllServerProcesses, openDatabase, startServerProcess, withGateway, type ServerProcess } from './server-process.ts';

const ROUNDS = 20;
/**
 * Only a hang should reach this. A dialect's rounds take about two minutes on a busy 2-core
 * machine, most of it in the 21 server starts (about 2.5 s of CPU each).
 */
const TEST_TIMEOUT_MS = 300_000;
const LOOPS_PER_KIND = 6;
const KILL_DELAY_MIN_MS = 100;
const KILL_DELAY_MAX_MS = 1_000;
/** Each round's kill waits until at least this many of each kind have been answered 200. */
const MIN_ANSWERED_PER_KIND = 5;
/** The final server's outbox must empty within this; leases of the last kill lapse in 7 s. */
const DRAIN_TIMEOUT_MS = 60_000;
const STRANGER_PHONE = '+14155550100';

/**
 * A fast retry schedule and a short attempt timeout: a delivery the kill caught mid-attempt
 * stays leased for the timeout plus a 5 s margin, and is then attempted again. The schedule is
 * long enough that a busy machine's slow attempts do not use up a delivery's retries.
 */
const SERVER_ENV = webhookEnv({
  WAGW_SECRET_KEY: process.env.WAGW_SECRET_KEY ?? '7e57'.repeat(16),
  WAGW_WEBHOOK_RETRY_SCHEDULE: '0.2,0.5,1,1,1,1,1,1',
  WAGW_WEBHOOK_TIMEOUT_MS: '2000',
  WAGW_WEBHOOK_POLL_INTERVAL_MS: '100',
  // The load simulates incoming messages far faster than a tenant may; the limit has tests of its own.
  WAGW_SANDBOX_RECEIVES_PER_MINUTE: '1000000',
  // Every recipient here is connected: on a busy machine its store can take longer than the
  // network's usual 2 s, and a send answered before it would not be the one the rounds count.
  WAGW_SANDBOX_DELIVERY_WAIT_MS: '60000',
});

/** Drives test/process/crash-load-process.ts, one round at a time. */
class LoadProcess {
  private readonly waiting = new Map<LoadReport['type'], (report: LoadReport) => void>();

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (report: LoadReport) => {
      const resolve = this.waiting.get(report.type);
      this.waiting.delete(report.type);
      resolve?.(report);
    });
  }

  static start(): LoadProcess {
    return new LoadProcess(fork(new URL('./crash-load-process.ts', import.meta.url).pathname, [], { execArgv: ['--import', 'tsx'] }));
  }

  /** Starts a round and resolves once both kinds of request have been answered 200 enough times. */
  async begin(order: LoadOrder, server: ServerProcess): Promise<void> {
    const flowing = this.next('flowing');
    this.command({ type: 'start', ...order });
    const died = server.exited.then((status) => {
      throw new Error(`the server exited (${JSON.stringify(status)}) before the load flowed:\n${server.output()}`);
    });
    await withTimeout(Promise.race([flowing, died]), 30_000, `round ${order.round}'s load to be answered`);
  }

  /** Ends the round and returns what each of its requests was told. */
  async end(round: number): Promise<LedgerEntry[]> {
    const ledger = this.next('ledger');
    this.command({ type: 'stop' });
    const report = await withTimeout(ledger, 30_000, `round ${round}'s ledger`);
    return report.type === 'ledger' ? report.entries : [];
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    if (this.child.connected) this.child.disconnect();
    await withTimeout(exited, 5_000, 'the load process to exit').catch(() => this.child.kill('SIGKILL'));
  }

  private next(type: LoadReport['type']): Promise<LoadReport> {
    return new Promise((resolve) => this.waiting.set(type, resolve));
  }

  private command(command: LoadCommand): void {
    if (!this.child.connected) throw new Error(`the load process is gone (exit ${this.child.exitCode ?? this.child.signalCode})`);
    this.child.send(command);
  }
}

interface RoundSummary {
  round: number;
  killAfterMs: number;
  answered: Record<LoadKind, number>;
  cutOff: Record<LoadKind, number>;
  refused: number;
}

function isAnswered200(entry: LedgerEntry): entry is Extract<LedgerEntry, { outcome: 'answered' }> {
  return entry.outcome === 'answered' && entry.statusCode === 200;
}

function summarize(round: number, killAfterMs: number, entries: LedgerEntry[]): RoundSummary {
  const count = (match: (entry: LedgerEntry) => boolean) => entries.filter(match).length;
  return {
    round,
    killAfterMs,
    answered: {
      send: count((entry) => entry.kind === 'send' && isAnswered200(entry)),
      receive: count((entry) => entry.kind === 'receive' && isAnswered200(entry)),
    },
    cutOff: {
      send: count((entry) => entry.kind === 'send' && entry.outcome === 'cut_off'),
      receive: count((entry) => entry.kind === 'receive' && entry.outcome === 'cut_off'),
    },
    refused: count((entry) => entry.outcome === 'refused'),
  };
}

function groupByText(messages: Message[]): Map<string, Message[]> {
  const byText = new Map<string, Message[]>();
  for (const message of messages) byText.set(message.text, [...(byText.get(message.text) ?? []), message]);
  return byText;
}

function webhookPayload(request: ReceivedRequest): { event?: string; message_id?: string } {
  return JSON.parse(request.body) as { event?: string; message_id?: string };
}

async function storedMessages(databaseUrl: string, accountId: string): Promise<Message[]> {
  const store = openDatabase(databaseUrl);
  try {
    return await listMessages(store.db, { accountId, limit: 1_000_000 });
  } finally {
    await store.close();
  }
}

for (const dialect of dialects) {
  describe(`crash rounds: load, kill -9, restart (${dialect})`, () => {
    let database: TestDatabase;
    let receiver: WebhookReceiver;
    let load: LoadProcess;
    let account: SeededAccount;
    /** Requests whose signature did not verify when they arrived. */
    const badSignatures: string[] = [];

    before(async () => {
      database = await createTestDatabase(dialect);
      // The receiver lives in this process, so it outlives every server the rounds kill.
      receiver = await WebhookReceiver.start();
      const webhookSecret = await withGateway(
        database.url,
        async (gateway) => {
          // Unlimited volume, so that the quota never answers for the server under test.
          account = await seedAccount(gateway, { plan: 'enterprise', numbers: 2 });
          const { secret } = await gateway.webhooks.createWebhook(accountScope(account.accountId), {
            url: receiver.url(),
            eventTypes: ['message'],
          });
          return secret;
        },
        SERVER_ENV,
      );
      // Verified on arrival, while the signature's timestamp is fresh, as a receiver would.
      receiver.responder = (request) => {
        try {
          verifiedPayload(request, webhookSecret);
        } catch (error) {
          badSignatures.push(`${String(request.headers['webhook-id'])}: ${(error as Error).message}`);
        }
        return { status: 200 };
      };
      load = LoadProcess.start();
    });
    after(async () => {
      await killAllServerProcesses();
      await load?.close();
      await receiver?.close();
      await database?.drop();
    });

    it(`after ${ROUNDS} kills mid-load: every 200 is stored once, no send is stored twice, every stored incoming message reaches the webhook`, {
      timeout: TEST_TIMEOUT_MS,
    }, async (t) => {
      const startedAt = Date.now();
      const ledger: LedgerEntry[] = [];
      const rounds: RoundSummary[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        const { entries, summary } = await runRound(round, database.url, account, load);
        ledger.push(...entries);
        rounds.push(summary);
      }

      assertLoadWasReal(rounds, ledger);
      // The last start recovers the last kill's WAL and lets the outbox drain.
      await startServerProcess(database.url, SERVER_ENV);
      const messages = await waitForOutboxToDrain(database.url, account.accountId, receiver);
      assertSendsStoredOnce(ledger, messages, account);
      assertIncomingStoredOnce(ledger, messages);
      assertDeliveries(messages, receiver.requests);
      assert.deepEqual(badSignatures, [], 'every webhook request was signed with the webhook secret');
      report(t, rounds, messages, receiver.requests, Date.now() - startedAt);
    });
  });
}

/** One round: a server, the load against it, a kill at a random moment mid-load. */
async function runRound(round: number, databaseUrl: string, account: SeededAccount, load: LoadProcess) {
  const server = await startServerProcess(databaseUrl, SERVER_ENV);
  const order: LoadOrder = {
    port: server.port,
    apiKey: account.apiKey,
    round,
    senderPhone: account.phones[0]!,
    // A send to another sandbox number arrives there as an incoming message too.
    recipientPhone: account.phones[1]!,
    strangerPhone: STRANGER_PHONE,
    loopsPerKind: LOOPS_PER_KIND,
    flowingAfter: MIN_ANSWERED_PER_KIND,
  };
  await load.begin(order, server);
  const killAfterMs = randomInt(KILL_DELAY_MIN_MS, KILL_DELAY_MAX_MS + 1);
  await sleep(killAfterMs);
  server.signalGroup('SIGKILL');
  const exit = await withTimeout(server.exited, 10_000, `round ${round}'s killed server to exit`);
  assert.equal(exit.signal, 'SIGKILL', `round ${round}: the server ended by itself:\n${server.output()}`);
  const entries = await load.end(round);
  return { entries, summary: summarize(round, killAfterMs, entries) };
}

/** Without this the rounds could pass by never loading the server, or by killing it idle. */
function assertLoadWasReal(rounds: RoundSummary[], ledger: LedgerEntry[]): void {
  for (const summary of rounds) {
    assert.ok(
      summary.answered.send >= MIN_ANSWERED_PER_KIND,
      `round ${summary.round} had too few sends answered: ${JSON.stringify(summary)}`,
    );
    assert.ok(
      summary.answered.receive >= MIN_ANSWERED_PER_KIND,
      `round ${summary.round} had too few incoming messages answered: ${JSON.stringify(summary)}`,
    );
    assert.ok(
      summary.cutOff.send > 0 && summary.cutOff.receive > 0,
      `round ${summary.round}'s kill did not land mid-load: ${JSON.stringify(summary)}`,
    );
  }
  // A server that answers at all answers 200 here: the number is connected and the volume unlimited.
  const otherAnswers = ledger.filter((entry) => entry.outcome === 'answered' && entry.statusCode !== 200);
  assert.deepEqual(otherAnswers, [], 'every answer was a 200');
}

/** Polls until every stored incoming message has reached the receiver; returns the stored messages. */
async function waitForOutboxToDrain(databaseUrl: string, accountId: string, receiver: WebhookReceiver): Promise<Message[]> {
  let undelivered: Message[] = [];
  try {
    return await waitFor(
      async () => {
        const messages = await storedMessages(databaseUrl, accountId);
        const delivered = new Set(receiver.requests.map((request) => webhookPayload(request).message_id));
        undelivered = messages.filter((message) => message.direction === 'inbound' && !delivered.has(message.id));
        return undelivered.length === 0 && messages;
      },
      DRAIN_TIMEOUT_MS,
      'every stored incoming message to reach the webhook receiver',
      250,
    );
  } catch (error) {
    const listed = undelivered.slice(0, 20).map((message) => `${message.id} "${message.text}"`);
    throw new Error(`${(error as Error).message}; ${undelivered.length} never arrived, among them:\n${listed.join('\n')}`);
  }
}

function assertSendsStoredOnce(ledger: LedgerEntry[], messages: Message[], account: SeededAccount): void {
  const outboundByText = groupByText(messages.filter((message) => message.direction === 'outbound'));
  const inboundByText = groupByText(messages.filter((message) => message.direction === 'inbound'));
  const sendTexts = new Set(ledger.filter((entry) => entry.kind === 'send').map((entry) => entry.text));
  // Cut-off sends may be absent or stored once, never twice; and nothing is stored unasked.
  for (const [text, rows] of outboundByText) {
    assert.equal(rows.length, 1, `the send "${text}" is stored ${rows.length} times`);
    assert.ok(sendTexts.has(text), `"${text}" is stored as sent, but no request asked for it`);
  }
  for (const entry of ledger) {
    if (entry.kind !== 'send' || !isAnswered200(entry)) continue;
    const rows = outboundByText.get(entry.text) ?? [];
    assert.equal(rows.length, 1, `the send "${entry.text}" was answered 200 but is stored ${rows.length} times`);
    assert.equal(rows[0]!.id, entry.messageId, `the send "${entry.text}" is stored under the message_id of its 200`);
    assert.ok(['sent', 'delivered'].includes(rows[0]!.status), `the send "${entry.text}" was answered 200 but is ${rows[0]!.status}`);
    // The sandbox engine accepts a send only once the recipient number has stored it.
    const arrived = inboundByText.get(entry.text) ?? [];
    assert.equal(arrived.length, 1, `the send "${entry.text}" reached its sandbox recipient ${arrived.length} times`);
    assert.equal(arrived[0]!.fromPhone, account.phones[0]);
  }
}

function assertIncomingStoredOnce(ledger: LedgerEntry[], messages: Message[]): void {
  const inboundByText = groupByText(messages.filter((message) => message.direction === 'inbound'));
  for (const [text, rows] of inboundByText) {
    assert.equal(rows.length, 1, `the incoming message "${text}" is stored ${rows.length} times`);
  }
  for (const entry of ledger) {
    if (entry.kind !== 'receive' || !isAnswered200(entry)) continue;
    const rows = inboundByText.get(entry.text) ?? [];
    assert.equal(rows.length, 1, `the incoming message "${entry.text}" was answered 200 but is stored ${rows.length} times`);
    assert.equal(rows[0]!.id, entry.messageId, `the incoming message "${entry.text}" is stored under the message_id of its 200`);
  }
}

/**
 * Every stored incoming message arrived; a redelivery after a crash carries the same
 * webhook-id as the first attempt, so a receiver can drop the repeat; and nothing arrived that
 * is not stored.
 */
function assertDeliveries(messages: Message[], requests: ReceivedRequest[]): void {
  const webhookIdsByMessage = new Map<string, Set<string>>();
  for (const request of requests) {
    const payload = webhookPayload(request);
    assert.equal(payload.event, 'message');
    const webhookId = String(request.headers['webhook-id']);
    webhookIdsByMessage.set(payload.message_id!, (webhookIdsByMessage.get(payload.message_id!) ?? new Set()).add(webhookId));
  }
  const inboundIds = new Set(messages.filter((message) => message.direction === 'inbound').map((message) => message.id));
  for (const id of inboundIds) assert.ok(webhookIdsByMessage.has(id), `the incoming message ${id} never reached the webhook`);
  const seenWebhookIds = new Set<string>();
  for (const [messageId, webhookIds] of webhookIdsByMessage) {
    assert.ok(inboundIds.has(messageId), `a webhook arrived for ${messageId}, which is not a stored incoming message`);
    assert.equal(webhookIds.size, 1, `the deliveries of ${messageId} carry several webhook-ids: ${[...webhookIds].join(', ')}`);
    const [webhookId] = webhookIds;
    assert.ok(!seenWebhookIds.has(webhookId!), `webhook-id ${webhookId} was used for two messages`);
    seenWebhookIds.add(webhookId!);
  }
}

function report(t: TestContext, rounds: RoundSummary[], messages: Message[], requests: ReceivedRequest[], durationMs: number): void {
  const total = (pick: (summary: RoundSummary) => number) => rounds.reduce((sum, summary) => sum + pick(summary), 0);
  const inbound = messages.filter((message) => message.direction === 'inbound').length;
  t.diagnostic(
    `${rounds.length} rounds: ${total((summary) => summary.answered.send)} sends and ${total((summary) => summary.answered.receive)} incoming ` +
      `messages answered 200, ${total((summary) => summary.cutOff.send + summary.cutOff.receive)} requests cut off by kills, ` +
      `${total((summary) => summary.refused)} refused; ${messages.length - inbound} outbound and ${inbound} inbound rows stored; ` +
      `${requests.length} webhook requests for ${inbound} incoming messages; ${Math.round(durationMs / 1000)} s in all`,
  );
}
