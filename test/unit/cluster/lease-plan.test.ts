import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { claimTarget, planRequests } from '../../../src/cluster/lease-plan.ts';
import type { ClusterView } from '../../../src/store/repositories/lease-handovers.ts';

function view(held: Record<string, number>, wanted: Record<string, number> = {}): ClusterView {
  const total = Object.values(held).reduce((sum, count) => sum + count, 0);
  return {
    total,
    liveServers: Object.keys(held),
    heldBy: new Map(Object.entries(held)),
    wantedFrom: new Map(Object.entries(wanted)),
    claimable: 0,
  };
}

const asker = (held: number, budget = 100, outstanding = 0) => ({ nodeId: 'd', held, outstanding, budget, cap: null });

describe('which numbers a node below its share asks for', () => {
  it('a node joining three with 64 numbers asks for exactly the surplus above 16, from each holder', () => {
    const plan = planRequests(view({ a: 22, b: 21, c: 21, d: 0 }), asker(0));
    assert.deepEqual(Object.fromEntries(plan), { a: 6, b: 5, c: 5 });
  });

  it('asks for no more than it can start before its next tick', () => {
    const plan = planRequests(view({ a: 22, b: 21, c: 21, d: 0 }), asker(0, 5));
    assert.equal(
      [...plan.values()].reduce((sum, count) => sum + count, 0),
      5,
    );
  });

  it('counts what it asked for already, and what others asked of each holder', () => {
    const plan = planRequests(view({ a: 22, b: 21, c: 21, d: 0 }, { a: 6, b: 5 }), asker(0, 100, 11));
    assert.deepEqual(Object.fromEntries(plan), { c: 5 });
  });

  it('moves nothing that the even spread does not need', () => {
    // 1,000 over three: 334, 333, 333 is even; a node at the floor takes only from above the ceiling.
    assert.equal(planRequests(view({ a: 334, b: 333, d: 333 }), asker(333)).size, 0);
    assert.deepEqual(Object.fromEntries(planRequests(view({ a: 334, b: 334, d: 332 }), asker(332))), { a: 1 });
    assert.equal(planRequests(view({ a: 17, d: 16 }), asker(16)).size, 0, 'a difference of one is even');
  });

  it('stops at its cap', () => {
    const plan = planRequests(view({ a: 30, d: 0 }), { ...asker(0), cap: 4 });
    assert.deepEqual(Object.fromEntries(plan), { a: 4 });
    assert.equal(claimTarget(view({ a: 30, d: 0 }), 4), 4);
  });
});
