import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Group, GroupParticipant } from '../../../src/domain/groups.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import { accountKnowsGroup, listKnownGroups, rememberGroups } from '../../../src/store/repositories/groups.ts';
import { dialects, seedNumberRow, suiteStore } from '../../support/databases.ts';

function member(phone: string, role: GroupParticipant['role'] = 'member'): GroupParticipant {
  return { phone: phone as E164, lid: null, role };
}

function groupOf(index: number, participants: GroupParticipant[]): Group {
  return { id: `1203630${String(index).padStart(11, '0')}@g.us`, subject: `Group ${index}`, description: null, participants };
}

for (const dialect of dialects) {
  describe(`each number's groups as it last saw them (${dialect})`, () => {
    const suite = suiteStore(dialect);

    it('remembers more groups than one statement holds, then updates and retires them in place', async () => {
      const number = await seedNumberRow(suite.store);
      const other = '+447700900999';
      // 1,200 groups: more than two batches, so the batching and its seams are exercised.
      const first = Array.from({ length: 1_200 }, (_, index) =>
        groupOf(index, [member(number.phone, index % 3 === 0 ? 'admin' : 'member'), member(other)]),
      );
      await rememberGroups(
        suite.store.db,
        number,
        first,
        new Date('2026-11-01T00:00:00Z'),
        first.map((group) => group.id),
      );

      const listed = await listKnownGroups(suite.store.db, [number.id]);
      assert.equal(listed.length, 1_200);
      const byId = new Map(listed.map((group) => [group.groupId, group]));
      assert.deepEqual(
        { subject: byId.get(first[3]!.id)!.subject, size: byId.get(first[3]!.id)!.size, isAdmin: byId.get(first[3]!.id)!.isAdmin },
        { subject: 'Group 3', size: 2, isAdmin: true },
      );
      assert.equal(byId.get(first[4]!.id)!.isAdmin, false);

      // Seen again: group 3 renamed and demoted, group 4 grown; group 5 gone from the number's list.
      const renamed = { ...first[3]!, subject: 'Renamed', participants: [member(number.phone), member(other)] };
      const grown = { ...first[4]!, participants: [...first[4]!.participants, member('+447700900998')] };
      const remaining = first.filter((group) => group.id !== first[5]!.id).map((group) => group.id);
      await rememberGroups(suite.store.db, number, [renamed, grown], new Date('2026-11-02T00:00:00Z'), remaining);

      const again = new Map((await listKnownGroups(suite.store.db, [number.id])).map((group) => [group.groupId, group]));
      assert.equal(again.size, 1_199);
      assert.deepEqual(
        {
          subject: again.get(first[3]!.id)!.subject,
          isAdmin: again.get(first[3]!.id)!.isAdmin,
          at: again.get(first[3]!.id)!.updatedAt.toISOString(),
        },
        { subject: 'Renamed', isAdmin: false, at: '2026-11-02T00:00:00.000Z' },
      );
      assert.equal(again.get(first[4]!.id)!.size, 3);
      assert.equal(again.get(first[6]!.id)!.updatedAt.toISOString(), '2026-11-01T00:00:00.000Z', 'an unchanged group was rewritten');
      assert.equal(again.has(first[5]!.id), false, 'a group the number left is still listed');
      // The account still knows the group it left: its id answers 403, not 404.
      assert.equal(await accountKnowsGroup(suite.store.db, number.accountId, first[5]!.id), true);
    });

    it('a group the number is not a participant of is remembered as not a member', async () => {
      const number = await seedNumberRow(suite.store);
      const outsider = groupOf(5_000, [member('+447700900997', 'superadmin')]);
      await rememberGroups(suite.store.db, number, [outsider], new Date());
      assert.deepEqual(await listKnownGroups(suite.store.db, [number.id]), []);
      assert.equal(await accountKnowsGroup(suite.store.db, number.accountId, outsider.id), true);
    });
  });
}
