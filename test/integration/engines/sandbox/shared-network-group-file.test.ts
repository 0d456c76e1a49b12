import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RemoteSandboxNetwork } from '../../../../src/engines/sandbox/remote-sandbox-network.ts';
import { serveTestNetwork, testNetworkClient } from '../../../support/shared-network.ts';

const ADMIN = '+447700900821';
const MEMBER = '+447700900822';
const OUTSIDER = '+14155550191';

// `wagw sandbox-network --groups FILE` keeps the shared network's groups in a file, so that a
// restart of the network (which has no database) does not lose them.
describe('the shared sandbox network keeps its groups in a file across its restarts', () => {
  let directory: string;
  let groupsFile: string;

  before(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-network-groups-'));
    groupsFile = path.join(directory, 'groups.json');
  });

  after(() => {
    fs.rmSync(directory, { recursive: true, force: true });
  });

  /** Runs `work` against a network started on the file, then stops that network. */
  async function onNetwork<T>(work: (network: RemoteSandboxNetwork) => Promise<T>): Promise<T> {
    const shared = await serveTestNetwork({ groupsFile });
    const network = testNetworkClient(shared.port);
    try {
      return await work(network);
    } finally {
      network.close();
      await shared.close();
    }
  }

  it('a group, its changes and its invite link come back after the network restarts, and a group left empty does not', async () => {
    const { kept, code } = await onNetwork(async (network) => {
      const kept = (await network.createGroup(ADMIN, 'Crew', [MEMBER, OUTSIDER])).id;
      await network.manageGroup(ADMIN, kept, { kind: 'settings', settings: { subject: 'Night crew', description: 'Pier 4' } });
      await network.manageGroup(ADMIN, kept, { kind: 'participants', action: 'promote', phones: [MEMBER] });
      await network.manageGroup(ADMIN, kept, { kind: 'participants', action: 'remove', phones: [OUTSIDER] });
      const { code } = await network.manageGroup(ADMIN, kept, { kind: 'invite', revoke: true });
      const emptied = (await network.createGroup(ADMIN, 'Short-lived', [MEMBER])).id;
      await network.manageGroup(MEMBER, emptied, { kind: 'leave' });
      await network.manageGroup(ADMIN, emptied, { kind: 'leave' });
      return { kept, emptied, code };
    });

    await onNetwork(async (network) => {
      const group = await network.groupSeenBy(MEMBER, kept);
      assert.deepEqual(
        [group?.subject, group?.description, group?.participants.map((member) => [member.phone, member.role])],
        [
          'Night crew',
          'Pier 4',
          [
            [ADMIN, 'superadmin'],
            [MEMBER, 'admin'],
          ],
        ],
      );
      assert.equal((await network.manageGroup(ADMIN, kept, { kind: 'invite', revoke: false })).code, code, 'the revoked link came back');
      assert.deepEqual(
        (await network.groupsOf(ADMIN)).map((each) => each.id),
        [kept],
        'the group left empty came back',
      );
    });
    const file = JSON.parse(fs.readFileSync(groupsFile, 'utf8')) as { id: string }[];
    assert.deepEqual(
      file.map((record) => record.id),
      [kept],
    );
    assert.equal(fs.statSync(groupsFile).mode & 0o777, 0o600, 'the file is readable by its owner alone');
  });

  it("a file that is not the network's groups stops the network from starting, naming the file", async () => {
    fs.writeFileSync(groupsFile, '{ not json');
    await assert.rejects(serveTestNetwork({ groupsFile }), (error: Error) => error.message.includes(groupsFile));
  });
});
