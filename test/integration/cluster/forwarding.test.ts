import assert from 'node:assert/strict';
import { type AuditActor, SYSTEM_ACTOR } from '../../../src/domain/audit.ts';
import { after, before, describe, it } from 'node:test';
import net from 'node:net';
import { parseSettingInput } from '../../../src/domain/send-policy.ts';
import { operatorScope, withinAccount } from '../../../src/domain/tenant-scope.ts';
import { startClusterNode, type ClusterNode } from '../../support/cluster-node.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';
import { seedAccount, uniquePhone } from '../../support/gateway.ts';
import { ignoreCleanupFailure } from '../../support/ignore.ts';
import { ignoreCutOff } from '../../support/ignore.ts';
import { waitUntil } from '../../support/waiting.ts';

const TTL_MS = 1_500;

type Node = ClusterNode;

/** A node on the shared database, with a short lease term so that takeovers come quickly. */
function startNode(database: TestDatabase, name: string, env: Record<string, string> = {}): Promise<Node> {
  return startClusterNode(database, name, { WAGW_LEASE_TTL_MS: String(TTL_MS), WAGW_OWNER_WAIT_MS: '600', ...env });
}

/**
 * Which node serves the number, once one does. Nodes claim on their ticks, and under load either
 * may claim first (or a tick may not have run yet), so a test asks for ticks until one holds it
 * rather than assuming the first node started is the owner.
 */
async function holderOf(nodes: readonly Node[], numberId: string): Promise<{ holder: Node; asker: Node }> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const holders = nodes.filter((node) => node.gateway.keeper.leaseOf(numberId) !== undefined);
    if (holders.length === 1) return { holder: holders[0]!, asker: nodes.find((node) => node !== holders[0])! };
    assert.ok(holders.length === 0, 'two nodes believe they hold the same number');
    assert.ok(Date.now() < deadline, `no node claimed ${numberId} within 15 s of ticks`);
    await Promise.all(nodes.map((node) => node.gateway.keeper.tickSoon()));
  }
}

const send = (node: Node, apiKey: string, body: object, headers: Record<string, string> = {}) =>
  fetch(`${node.url}/send_message`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, ...headers },
    body: JSON.stringify(body),
  });

// Forwarding is between nodes on one PostgreSQL database; SQLite serves a single node, which
// test/process/cluster/single-node.test.ts covers.
describe('a request for a number served by another node (postgres)', { skip: !dialects.includes('postgres') }, () => {
  let database: TestDatabase;
  let first: Node;
  let second: Node;
  let seeded: Awaited<ReturnType<typeof seedAccount>>;
  let seededNumberId: string;

  before(async () => {
    database = await createTestDatabase('postgres');
    first = await startNode(database, 'first');
    seeded = await seedAccount(first.gateway, { numbers: 1, plan: 'pro' });
    second = await startNode(database, 'second');
    seededNumberId = (await first.gateway.numbers.findNumber(operatorScope(), seeded.phones[0]!)).id;
  });
  after(async () => {
    for (const node of [second, first]) await node?.server.stop().catch(ignoreCleanupFailure);
    await database?.drop();
  });

  it("is forwarded to the owner, whose answer is the client's", async () => {
    const { holder: owner, asker: other } = await holderOf([first, second], seededNumberId);
    assert.equal(other.gateway.keeper.leaseOf(seededNumberId), undefined, 'the other node does not hold the number');
    const response = await send(other, seeded.apiKey, {
      from_phone: seeded.phones[0],
      to_phone: '+14155550100',
      message: 'through another node',
    });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { message_id: string; status: string };
    assert.equal(body.status, 'sent');
    const row = await owner.gateway.store.db
      .selectFrom('messages')
      .select(['status', 'engine_message_id'])
      .where('id', '=', body.message_id)
      .executeTakeFirstOrThrow();
    assert.ok(row.status === 'sent' || row.status === 'delivered', `stored as sent (or already delivered), not ${row.status}`);
    const sent = (owner.gateway.sandboxNetwork as unknown as { journal(): { kind: string; id?: string; node: string }[] })
      .journal()
      .filter((entry) => entry.kind === 'send' && entry.id === row.engine_message_id);
    assert.equal(sent.length, 1, "the owner's session sent it, once");
    assert.equal(sent[0]!.node, owner.gateway.keeper.nodeId);
  });

  it('keeps Idempotency-Key semantics across nodes, and the error table', async () => {
    const body = { from_phone: seeded.phones[0], to_phone: '+14155550101', message: 'once only' };
    const { holder: owner, asker: other } = await holderOf([first, second], seededNumberId);
    const original = await send(other, seeded.apiKey, body, { 'idempotency-key': 'cluster-1' });
    const again = await send(owner, seeded.apiKey, body, { 'idempotency-key': 'cluster-1' });
    const third = await send(other, seeded.apiKey, body, { 'idempotency-key': 'cluster-1' });
    assert.equal(original.status, 200);
    const id = ((await original.json()) as { message_id: string }).message_id;
    for (const replay of [again, third]) {
      assert.equal(replay.status, 200);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.equal(((await replay.json()) as { message_id: string }).message_id, id);
    }
    const conflict = await send(other, seeded.apiKey, { ...body, message: 'different' }, { 'idempotency-key': 'cluster-1' });
    assert.equal(conflict.status, 422);
    assert.equal(((await conflict.json()) as { error: string }).error, 'idempotency_key_reused');
    const bad = await send(other, seeded.apiKey, { ...body, to_phone: 'not a phone' });
    assert.equal(bad.status, 400);
  });

  it('forwards reactions, edits, read marks and revocations to the owner, whose session makes them', async () => {
    const post = (node: Node, path: string, body: object) =>
      fetch(`${node.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${seeded.apiKey}` },
        body: JSON.stringify(body),
      });
    // Its own customer and its own messages: nothing here rests on an earlier test's send.
    const customer = '+14155550112';
    const { holder: owner, asker: other } = await holderOf([first, second], seededNumberId);
    const sending = await send(other, seeded.apiKey, { from_phone: seeded.phones[0], to_phone: customer, message: 'to change' });
    assert.equal(sending.status, 200, await sending.clone().text());
    const sent = (await sending.json()) as { message_id: string };
    const receiving = await post(owner, '/sandbox/receive', { from_phone: customer, to_phone: seeded.phones[0], message: 'hello' });
    assert.equal(receiving.status, 200, await receiving.clone().text());
    const received = (await receiving.json()) as { message_id: string };
    const calls: [string, object][] = [
      ['/send_reaction', { from_phone: seeded.phones[0], message_id: received.message_id, emoji: '👍' }],
      [`/messages/${sent.message_id}/edit`, { message: 'changed' }],
      [`/api/messages/${received.message_id}/read`, {}],
      [`/messages/${sent.message_id}/revoke`, {}],
    ];
    for (const [path, body] of calls) {
      const response = await post(other, path, body);
      assert.equal(response.status, 200, `${path}: ${await response.text()}`);
    }
    const journal = (owner.gateway.sandboxNetwork as unknown as { journal(): { kind: string; to?: string; node: string }[] }).journal();
    const toCustomer = journal.filter((entry) => (entry.kind === 'send' || entry.kind === 'read') && entry.to === customer);
    assert.deepEqual(
      toCustomer.map((entry) => entry.kind),
      ['send', 'send', 'send', 'read', 'send'],
      'the message, the reaction, the edit, the read mark and the revocation',
    );
    assert.ok(
      toCustomer.every((entry) => entry.node === owner.gateway.keeper.nodeId),
      "all through the owner's session",
    );
    const stored = await owner.gateway.store.db
      .selectFrom('messages')
      .select(['text', 'revoked_at'])
      .where('id', '=', sent.message_id)
      .executeTakeFirstOrThrow();
    assert.deepEqual([stored.text, stored.revoked_at !== null], ['', true]);
  });

  it('answers every internal route as an unknown path to a caller without the cluster key', async () => {
    for (const route of [
      '/internal/operations/sendMessage',
      '/internal/operations/sendReaction',
      '/internal/operations/showTyping',
      '/internal/operations/checkNumbers',
      '/internal/operations/listGroups',
      '/internal/operations/controlRestart',
      '/internal/operations/controlLogout',
      '/internal/operations/controlStartLink',
      '/internal/operations/controlLinkState',
      '/internal/operations/controlCancelLink',
      '/internal/operations/pauseNumber',
      '/internal/operations/resumeNumber',
      '/internal/operations/clearNumberQueue',
    ]) {
      const response = await fetch(`${first.url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.equal(response.status, 404, route);
      assert.equal(((await response.json()) as { error: string }).error, 'not_found', route);
    }
  });

  it('refuses an internal call without a valid signature as an unknown path', async () => {
    const response = await fetch(`${first.url}/internal/operations/sendMessage`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-wagw-node-time': String(Date.now()),
        'x-wagw-node-nonce': '0'.repeat(32),
        'x-wagw-node-signature': 'f'.repeat(64),
      },
      body: JSON.stringify({
        account_id: seeded.accountId,
        params: {},
        query: {},
        body: { from_phone: seeded.phones[0], to_phone: '+14155550100', message: 'forged' },
        idempotency_key: null,
      }),
    });
    assert.equal(response.status, 404);
    assert.equal(((await response.json()) as { error: string }).error, 'not_found');
  });

  it("drops a key revoked on one node from every node's cache", async () => {
    // Which node serves the number does not matter here: the key is revoked through one node and refused by the other.
    const [revoking, cached] = [first, second];
    const key = await revoking.gateway.apiKeys.createKey({ accountId: seeded.accountId, name: 'revoked elsewhere' });
    const before = await send(cached, key.plaintext, { from_phone: seeded.phones[0], to_phone: '+14155550102', message: 'cached now' });
    assert.equal(before.status, 200);
    await revoking.gateway.apiKeys.revokeKey(withinAccount(operatorScope(), seeded.accountId), key.apiKey.id);
    const deadline = Date.now() + 2_000;
    let status = 200;
    while (status !== 401 && Date.now() < deadline) {
      status = (await send(cached, key.plaintext, { from_phone: seeded.phones[0], to_phone: '+14155550102', message: 'after revoking' }))
        .status;
    }
    assert.equal(status, 401, 'the other node refuses the key it had cached');
  });

  // The person behind the console's and the CLI's number actions: each row names them, whichever node wrote it.
  const consoleUser: AuditActor = { kind: 'user', id: 'usr_console', label: 'ops@example.test', address: '203.0.113.9' };
  const asConsoleUser = { scope: operatorScope(), actor: consoleUser };

  /** The number's audit rows, oldest first, as any node reads them (one database). */
  async function numberAudit(node: ClusterNode, numberId: string) {
    const rows = await node.gateway.audit.list(operatorScope(), { accountId: seeded.accountId, limit: 500 });
    return rows.filter((row) => row.targetId === numberId).reverse();
  }

  it('links a real number on the node that owns it, whichever node the console asks', async () => {
    const number = await first.gateway.numbers.addNumber(operatorScope(), {
      accountId: seeded.accountId,
      phone: uniquePhone(),
      engine: 'baileys',
    });
    const { holder, asker } = await holderOf([first, second], number.id);
    const started = await asker.gateway.numberControl.start(asConsoleUser, number, 'qr');
    assert.equal(started.numberId, number.id);
    // On a loaded machine the number may have moved since it was looked up: the attempt is on
    // whichever node owned it when asked, and that one is still its owner.
    const withAttempt = [first, second].filter((node) => node.gateway.linking.current(number.id) !== undefined);
    assert.equal(withAttempt.length, 1, 'the attempt lives on one node');
    const owner = withAttempt[0]!;
    assert.ok(owner.gateway.keeper.leaseOf(number.id) !== undefined, 'the node that owns the number');
    if (owner === holder) assert.equal(asker.gateway.linking.current(number.id), undefined, 'not on the node that was asked');
    const seen = await asker.gateway.numberControl.current(operatorScope(), number);
    assert.equal(seen?.numberId, number.id, 'and the asking node reads it from the owner');
    await asker.gateway.numberControl.cancel(asConsoleUser, number);
    assert.equal(owner.gateway.linking.current(number.id)?.active, false, 'cancelled on the owner');
    const rows = await numberAudit(owner, number.id);
    assert.deepEqual(
      rows.filter((row) => row.action.startsWith('number.link')).map((row) => [row.action, row.actor.label, row.details?.method ?? null]),
      [
        ['number.link_started', 'ops@example.test', 'qr'],
        ['number.link_cancelled', 'ops@example.test', null],
      ],
      'each action is one row naming the person, written once',
    );
  });

  it("clears a number's queue on the node that owns it, whichever node the dashboard asks", async () => {
    const phone = uniquePhone();
    const number = await first.gateway.numbers.addNumber(operatorScope(), { accountId: seeded.accountId, phone });
    const { holder, asker } = await holderOf([first, second], number.id);
    await holder.gateway.sendQueues.setNumberPolicy(
      number,
      parseSettingInput({ min_gap_ms: 3_600_000, max_gap_ms: 3_600_000 }, 'send_policy'),
      SYSTEM_ACTOR,
    );
    assert.equal((await send(holder, seeded.apiKey, { from_phone: phone, to_phone: '+14155550100', message: 'leaves now' })).status, 200);
    const queued = await send(holder, seeded.apiKey, { from_phone: phone, to_phone: '+14155550100', message: 'waits' });
    assert.equal(queued.status, 202);
    const { message_id: queuedId } = (await queued.json()) as { message_id: string };
    // A client waiting on the owner for its message hears of the cancellation only if the owner made it.
    const heardOnOwner = holder.gateway.governor.waitForLeave(queuedId, 5_000);
    assert.deepEqual(await asker.gateway.numberControl.clearQueue(asConsoleUser, number), { cancelled: 1, pending: 0 });
    assert.equal(await heardOnOwner, 'cancelled');
    const cleared = (await numberAudit(asker, number.id)).filter((row) => row.action === 'number.queue_cleared');
    assert.deepEqual(
      cleared.map((row) => [row.actor.label, row.actor.address, row.details?.cancelled]),
      [['ops@example.test', '203.0.113.9', 1]],
      "the owner's row names the person who asked on the other node",
    );
  });

  it('pauses and resumes a number on the node that owns it, and relays its refusals, whichever node the console asks', async () => {
    const number = await first.gateway.numbers.addNumber(operatorScope(), { accountId: seeded.accountId, phone: uniquePhone() });
    const { holder, asker } = await holderOf([first, second], number.id);
    await asker.gateway.numberControl.pause(asConsoleUser, number, 'by hand elsewhere');
    assert.equal(holder.gateway.pauses.holdOf(number.id)?.reason, 'manual', 'the pause is held by the owner');
    assert.equal(asker.gateway.pauses.holdOf(number.id), null, 'not by the node that was asked');
    await asker.gateway.numberControl.resume(asConsoleUser, number);
    assert.equal(holder.gateway.pauses.holdOf(number.id), null, 'resumed on the owner');
    await asker.gateway.numberControl.resume(asConsoleUser, number);
    // The owner's refusal comes back as the error it was there: a connected session is not restarted
    // (once it has connected: a loaded machine may still be starting it, which a restart would take).
    await waitUntil(() => holder.gateway.supervisor.sessionStatus(number) === 'connected', 'the new number connected on its owner');
    await assert.rejects(
      asker.gateway.numberControl.restart(asConsoleUser, number),
      (error: Error & { code?: string }) => error.code === 'invalid_argument' && /is connected/.test(error.message),
    );
    assert.deepEqual(
      (await numberAudit(asker, number.id)).map((row) => [row.action, row.actor.label, row.details?.detail ?? row.details?.was_paused]),
      [
        ['number.added', null, undefined],
        ['number.paused', 'ops@example.test', 'by hand elsewhere'],
        ['number.resumed', 'ops@example.test', true],
        ['number.resumed', 'ops@example.test', false],
      ],
      'a pause and each resume are rows (the second resume changed nothing, and says so); the refused restart is none',
    );
  });

  it("keeps a rehearsal template added through another node on the number's owner, which lists it and sends it", async () => {
    const request = (node: Node, method: string, path: string, body?: object) =>
      fetch(`${node.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${seeded.apiKey}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
    const { holder: owner, asker: other } = await holderOf([first, second], seededNumberId);
    const added = await request(other, 'POST', '/sandbox/templates', {
      phone: seeded.phones[0],
      name: 'cluster_notice',
      language: 'en_US',
      category: 'UTILITY',
      body: 'Node {{1}} says hello.',
    });
    assert.equal(added.status, 200, await added.clone().text());
    for (const node of [owner, other]) {
      const listed = (await (await request(node, 'GET', `/templates?from_phone=${encodeURIComponent(seeded.phones[0]!)}`)).json()) as {
        templates: { name: string }[];
      };
      assert.ok(
        listed.templates.some((each) => each.name === 'cluster_notice'),
        'either node lists it, from the owner',
      );
    }
    const sent = await send(other, seeded.apiKey, {
      from_phone: seeded.phones[0],
      to_phone: '+14155550113',
      template: { name: 'cluster_notice', language: 'en_US', body_parameters: ['two'] },
    });
    assert.equal(sent.status, 200, await sent.clone().text());
    const engineId = (
      await owner.gateway.store.db
        .selectFrom('messages')
        .select('engine_message_id')
        .where('id', '=', ((await sent.json()) as { message_id: string }).message_id)
        .executeTakeFirstOrThrow()
    ).engine_message_id;
    const carried = (owner.gateway.sandboxNetwork as unknown as { journal(): { kind: string; id?: string }[] })
      .journal()
      .filter((entry) => entry.kind === 'send' && entry.id === engineId);
    assert.equal(carried.length, 1, "the owner's session sent it, once");
  });

  it('answers 503 with Retry-After while the owner cannot be reached', async () => {
    const phone = uniquePhone();
    const number = await first.gateway.numbers.addNumber(operatorScope(), { accountId: seeded.accountId, phone });
    const { holder, asker } = await holderOf([first, second], number.id);
    // The holder stops answering while it still holds its leases (the chaos test kills whole processes).
    await holder.server.app.close();
    const gone = await send(asker, seeded.apiKey, { from_phone: phone, to_phone: '+14155550100', message: 'owner gone' });
    assert.equal(gone.status, 503);
    assert.ok(Number(gone.headers.get('retry-after')) >= 1);
    const envelope = (await gone.json()) as { error: string; meta: { status: string } };
    assert.equal(envelope.error, 'number_not_connected');
    assert.equal(envelope.meta.status, 'no_owner');
  });
});

/** A stand-in for a frozen node: its kernel accepts connections, and nothing ever answers. */
async function startSilentServer(): Promise<{ url: string; connections(): number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('error', ignoreCutOff);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    connections: () => accepted,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('a send forwarded to an owner that stops answering (postgres)', { skip: !dialects.includes('postgres') }, () => {
  const OWNER_WAIT_MS = 2_000;
  let database: TestDatabase;
  let first: Node;
  let second: Node;
  let seeded: Awaited<ReturnType<typeof seedAccount>>;
  let silent: Awaited<ReturnType<typeof startSilentServer>>;

  before(async () => {
    database = await createTestDatabase('postgres');
    first = await startNode(database, 'first', { WAGW_OWNER_WAIT_MS: String(OWNER_WAIT_MS) });
    seeded = await seedAccount(first.gateway, { numbers: 0, plan: 'pro' });
    second = await startNode(database, 'second', { WAGW_OWNER_WAIT_MS: String(OWNER_WAIT_MS) });
    silent = await startSilentServer();
  });
  after(async () => {
    for (const node of [second, first]) await node?.server.stop().catch(ignoreCleanupFailure);
    await silent?.close();
    await database?.drop();
  });

  /** A number of its own whose holder, as the other nodes see it, is frozen: its address leads to the silent server. */
  async function numberWithFrozenOwner(): Promise<{ phone: string; owner: Node; asker: Node }> {
    const phone = uniquePhone();
    const number = await first.gateway.numbers.addNumber(operatorScope(), { accountId: seeded.accountId, phone });
    const { holder: owner, asker } = await holderOf([first, second], number.id);
    await owner.gateway.keeper.announceUrl(silent.url);
    return { phone, owner, asker };
  }

  const timedSend = async (node: Node, body: object, headers: Record<string, string> = {}) => {
    const startedAt = Date.now();
    const response = await fetch(`${node.url}/send_message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${seeded.apiKey}`, ...headers },
      body: JSON.stringify(body),
      // Far past the bound, so that a send that is not bounded fails here rather than hanging the suite.
      signal: AbortSignal.timeout(OWNER_WAIT_MS + 5_000),
    });
    return { response, elapsedMs: Date.now() - startedAt };
  };

  it('answers within WAGW_OWNER_WAIT_MS + 1 s with 503 and Retry-After while nobody takes the number over', async () => {
    const { phone, asker } = await numberWithFrozenOwner();
    const connectionsBefore = silent.connections();
    for (const headers of [{}, { 'idempotency-key': `frozen-${phone}` }] as Record<string, string>[]) {
      const { response, elapsedMs } = await timedSend(
        asker,
        { from_phone: phone, to_phone: '+14155550140', message: 'to a frozen owner' },
        headers,
      );
      assert.ok(elapsedMs <= OWNER_WAIT_MS + 1_000, `answered after ${elapsedMs} ms`);
      assert.equal(response.status, 503, await response.clone().text());
      assert.ok(Number(response.headers.get('retry-after')) >= 1, 'Retry-After says when');
      const envelope = (await response.json()) as { error: string; meta: { status: string } };
      assert.deepEqual([envelope.error, envelope.meta.status], ['number_not_connected', 'no_owner']);
    }
    assert.ok(silent.connections() > connectionsBefore, 'the sends were forwarded to the frozen owner');
  });

  it('sends a keyed send on the node that takes the number over, once, within WAGW_OWNER_WAIT_MS + 1 s', async () => {
    const { phone, owner, asker } = await numberWithFrozenOwner();
    const pending = timedSend(
      asker,
      { from_phone: phone, to_phone: '+14155550141', message: 'after the takeover' },
      { 'idempotency-key': `takeover-${phone}` },
    );
    // The frozen owner's lease ends while the send waits for its answer; the asker takes the number.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await owner.gateway.keeper.stop();
    const { response, elapsedMs } = await pending;
    assert.equal(response.status, 200, await response.clone().text());
    assert.ok(elapsedMs <= OWNER_WAIT_MS + 1_000, `answered after ${elapsedMs} ms`);
    const sent = (await response.json()) as { message_id: string };
    const row = await asker.gateway.store.db
      .selectFrom('messages')
      .select(['engine_message_id'])
      .where('id', '=', sent.message_id)
      .executeTakeFirstOrThrow();
    const onNetwork = (asker.gateway.sandboxNetwork as unknown as { journal(): { kind: string; id?: string; node: string }[] })
      .journal()
      .filter((entry) => entry.kind === 'send' && entry.id === row.engine_message_id);
    assert.deepEqual(
      onNetwork.map((entry) => entry.node),
      [asker.gateway.keeper.nodeId],
      'sent once, by the new owner',
    );
  });
});
