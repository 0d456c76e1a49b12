import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CLI_ACTOR } from '../../../src/domain/audit.ts';
import { startClusterNode, type ClusterNode } from '../../support/cluster-node.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';
import { ignoreCleanupFailure } from '../../support/ignore.ts';

type Node = ClusterNode;

const auditStatus = async (node: Node, token: string) =>
  (await fetch(`${node.url}/admin/audit_events?limit=1`, { headers: { authorization: `Bearer ${token}` } })).status;

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
});
