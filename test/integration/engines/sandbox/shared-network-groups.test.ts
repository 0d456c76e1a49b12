import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { GroupChange } from '../../../../src/domain/groups.ts';
import type { RemoteSandboxNetwork } from '../../../../src/engines/sandbox/remote-sandbox-network.ts';
import { GroupRefusedError } from '../../../../src/engines/sandbox/sandbox-groups.ts';
import { serveTestNetwork, stopTestNetwork, testNetworkClient } from '../../../support/shared-network.ts';
import { NotGroupMemberError, type NetworkConnection, type NetworkMessage } from '../../../../src/engines/sandbox/sandbox-network.ts';

const ADMIN = '+447700900811';
const MEMBER = '+447700900812';
const OUTSIDER = '+14155550190';

// Nodes of a cluster share one simulated network over TCP: a group made on one node is the same
// group on the other, its messages and changes reach members on either, and refusals cross the
// line as the refusals they are.
describe('the shared sandbox network carries groups between nodes', () => {
  let shared: { port: number; close(): Promise<void> };
  let first: RemoteSandboxNetwork;
  let second: RemoteSandboxNetwork;
  let admin: NetworkConnection;
  const received: NetworkMessage[] = [];
  const changes: GroupChange[] = [];
  let groupId: string;

  before(async () => {
    shared = await serveTestNetwork();
    first = testNetworkClient(shared.port);
    second = testNetworkClient(shared.port);
    admin = await first.connect(ADMIN, 'node-a', { incoming: async () => undefined, receipt: () => undefined, replaced: () => undefined });
    await second.connect(MEMBER, 'node-b', {
      incoming: async (message) => void received.push(message),
      receipt: () => undefined,
      replaced: () => undefined,
      groupChanged: (change) => void changes.push(change),
    });
    groupId = (await first.createGroup(ADMIN, 'Crew', [MEMBER, OUTSIDER])).id;
  });

  after(() => stopTestNetwork(shared, first, second));

  const until = async (check: () => boolean) => {
    for (let tries = 0; tries < 200 && !check(); tries++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok(check(), 'it arrived');
  };

  it("a member on the other node hears that it was added, with the group's subject and the date as a date", async () => {
    await until(() => changes.length > 0);
    const [added] = changes;
    assert.deepEqual(
      [added!.kind, added!.groupId, added!.subject, added!.participants.map((member) => member.phone)],
      ['added', groupId, 'Crew', [MEMBER, OUTSIDER]],
    );
    assert.ok(added!.at instanceof Date);
    assert.deepEqual(
      (await second.groupsOf(MEMBER)).map((group) => group.id),
      [groupId],
    );
  });

  it('a group message reaches the member on the other node with its group and mentions', async () => {
    const sent = await admin.send(groupId, 'Briefing at nine', undefined, { mentions: [MEMBER] });
    await until(() => received.some((message) => message.id === sent.id));
    const copy = received.find((message) => message.id === sent.id)!;
    assert.deepEqual([copy.from, copy.to, copy.group, copy.mentions], [ADMIN, MEMBER, { id: groupId, subject: 'Crew' }, [MEMBER]]);
  });

  it('a simulated member writes in the group; a stranger is refused as not a member', async () => {
    await first.inject(OUTSIDER, MEMBER, 'Running late', undefined, undefined, undefined, groupId);
    assert.deepEqual(received.find((message) => message.text === 'Running late')?.group, { id: groupId, subject: 'Crew' });
    await assert.rejects(first.inject('+14155550191', MEMBER, 'hi', undefined, undefined, undefined, groupId), NotGroupMemberError);
  });

  it("admin changes cross the line with per-participant results, and a member's attempt is refused as not an admin", async () => {
    const answer = await first.manageGroup(ADMIN, groupId, {
      kind: 'participants',
      action: 'add',
      phones: ['+14155550403', '+14155550192', MEMBER],
    });
    assert.deepEqual(
      answer.results?.map((result) => result.outcome),
      ['privacy_restricted', 'done', 'already_member'],
    );
    await until(() => changes.some((change) => change.kind === 'added' && change.participants[0]?.phone === '+14155550192'));
    await assert.rejects(
      second.manageGroup(MEMBER, groupId, { kind: 'settings', settings: { subject: 'Mine' } }),
      (error: unknown) => error instanceof GroupRefusedError && error.reason === 'not_admin',
    );
    const link = await first.manageGroup(ADMIN, groupId, { kind: 'invite', revoke: false });
    assert.match(link.code ?? '', /^[A-Za-z0-9_-]{22}$/);
  });

  it('a member removed on one node can no longer send to the group from the other', async () => {
    await first.manageGroup(ADMIN, groupId, { kind: 'participants', action: 'remove', phones: [MEMBER] });
    await until(() => changes.some((change) => change.kind === 'removed'));
    const member = await second.connect(MEMBER, 'node-b', {
      incoming: async () => undefined,
      receipt: () => undefined,
      replaced: () => undefined,
    });
    await assert.rejects(member.send(groupId, 'still here?'), NotGroupMemberError);
  });
});
