import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CLI_ACTOR } from '../../../src/domain/audit.ts';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { seedAccount, uniquePhone } from '../../support/gateway.ts';
import { startClusterNode, type ClusterNode } from '../../support/cluster-node.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';
import { ignoreCleanupFailure } from '../../support/ignore.ts';

type Node = ClusterNode;

const auditStatus = async (node: Node, token: string) =>
  (await fetch(`${node.url}/admin/audit_events?limit=1`, { headers: { authorization: `Bearer ${token}` } })).status;

/** The node that serves the number, once one does: nodes claim on their ticks, so ticks are asked for until one holds it. */
async function holderOf(nodes: readonly Node[], numberId: string): Promise<Node> {
  for (const deadline = Date.now() + 15_000; ; ) {
    const holders = nodes.filter((node) => node.gateway.keeper.leaseOf(numberId) !== undefined);
    if (holders.length === 1) return holders[0]!;
    assert.ok(Date.now() < deadline, `no node claimed ${numberId} within 15 s of ticks`);
    await Promise.all(nodes.map((node) => node.gateway.keeper.tickSoon()));
  }
}

/** What the calls below read of an answer: a session, or the envelope of a refusal. */
interface Answered {
  status?: string;
  error?: string;
  link?: { qr: string | null; pairing_code: string | null } | null;
}

const call = async (node: Node, method: 'GET' | 'POST', path: string, bearer: string, body?: object) => {
  const response = await fetch(`${node.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Answered };
};

// A cluster is nodes on one PostgreSQL database (docs/cluster.md).
describe('an operator token across a three-node cluster (postgres)', { skip: !dialects.includes('postgres') }, () => {
  let database: TestDatabase;
  const nodes: Node[] = [];

  before(async () => {
    database = await createTestDatabase('postgres');
    for (const name of ['one', 'two', 'three']) nodes.push(await startClusterNode(database, name));
  });
  after(async () => {
    for (const node of nodes.reverse()) await node.server.stop().catch(ignoreCleanupFailure);
    await database?.drop();
  });

  it('made on one node, it is taken by every node, and once revoked on one it is refused by every node on the next request', async () => {
    const [one, two, three] = nodes as [Node, Node, Node];
    const { plaintext, token } = await one.gateway.operatorTokens.create('cluster script', CLI_ACTOR);
    for (const node of nodes) assert.equal(await auditStatus(node, plaintext), 200);
    await two.gateway.operatorTokens.revoke(token.id, CLI_ACTOR);
    // No wait, no notice: each node reads the token's row on every call.
    for (const node of [three, one, two]) assert.equal(await auditStatus(node, plaintext), 401);
  });

  it('links a sandbox number by QR and by pairing code through nodes that do not serve it, over the API alone', async () => {
    const account = await seedAccount(nodes[0]!.gateway, { numbers: 1, plan: 'pro' });
    const phone = account.phones[0]!;
    const numberId = (await nodes[0]!.gateway.numbers.findNumber(operatorScope(), phone)).id;
    const owner = await holderOf(nodes, numberId);
    const [asker, reader] = nodes.filter((node) => node !== owner) as [Node, Node];
    const { plaintext: token } = await asker.gateway.operatorTokens.create('cluster onboarding', CLI_ACTOR);
    const session = `/admin/numbers/${numberId}/session`;

    const byQr = await call(asker, 'POST', `${session}/link`, token, { method: 'qr' });
    assert.equal(byQr.status, 200, JSON.stringify(byQr.body));
    const shown = await call(reader, 'GET', `${session}?qr_version_after=0&wait_seconds=50`, token);
    assert.match(shown.body.link?.qr ?? '', /^2@/, JSON.stringify(shown.body));
    const scanned = await call(asker, 'POST', '/sandbox/link_scan', account.apiKey, { phone, code: shown.body.link?.qr });
    assert.equal(scanned.status, 200, JSON.stringify(scanned.body));
    assert.equal((await call(reader, 'GET', session, token)).body.status, 'connected');

    assert.equal((await call(reader, 'POST', `${session}/logout`, token, {})).body.status, 'logged_out');
    assert.equal((await call(reader, 'POST', `${session}/link`, token, { method: 'pairing_code' })).status, 200);
    let code: string | null = null;
    while (code === null)
      code = (await call(asker, 'GET', `${session}?qr_version_after=0&wait_seconds=5`, token)).body.link?.pairing_code ?? null;
    const typed = await call(reader, 'POST', '/sandbox/link_scan', account.apiKey, { phone, code });
    assert.equal(typed.status, 200, JSON.stringify(typed.body));
    assert.equal((await call(asker, 'GET', session, token)).body.status, 'connected');
    assert.equal(owner.gateway.keeper.leaseOf(numberId) !== undefined, true, 'the number stayed with its owner throughout');
  });

  it('onboards an account over the API alone, each step on another node: account, owner, key, number; the number sends through a node that does not serve it', async () => {
    const [one, two, three] = nodes as [Node, Node, Node];
    const { plaintext: token } = await one.gateway.operatorTokens.create('cluster onboarding', CLI_ACTOR);
    const json = async (node: Node, path: string, body: object) => {
      const answer = await call(node, 'POST', path, token, body);
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      return answer.body as unknown as { id: string; key?: string; phone?: string };
    };
    const account = await json(one, '/admin/accounts', { name: 'Onboarded across nodes', plan: 'pro' });
    await json(two, `/admin/accounts/${account.id}/users`, { email: `owner.${Date.now()}@cluster.test`, role: 'owner' });
    const { key } = await json(three, `/admin/accounts/${account.id}/api_keys`, { name: 'onboarded' });
    const number = await json(one, `/admin/accounts/${account.id}/numbers`, { phone: uniquePhone() });
    const owner = await holderOf(nodes, number.id);
    const elsewhere = nodes.find((node) => node !== owner)!;
    const sent = await call(elsewhere, 'POST', '/send_message', key!, {
      from_phone: number.phone,
      to_phone: '+14155550100',
      message: 'hi',
    });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const listed = await fetch(`${two.url}/admin/accounts/${account.id}/numbers`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(((await listed.json()) as { numbers: { id: string }[] }).numbers[0]?.id, number.id, 'every node sees it');
  });
});
