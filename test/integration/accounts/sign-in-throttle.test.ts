import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addressKey, FREE_FAILURES_PER_PAIR, SIGN_IN_LIMITS, SignInThrottle } from '../../../src/accounts/sign-in-throttle.ts';
import { dialects, openMigratedTestStore, type MigratedTestStore } from '../../support/databases.ts';

describe('sign-in throttle address keys', () => {
  it('counts an IPv4 address on its own, also when it arrives IPv4-mapped', () => {
    assert.equal(addressKey('203.0.113.7'), 'ip:203.0.113.7');
    assert.equal(addressKey('::ffff:203.0.113.7'), 'ip:203.0.113.7');
    assert.notEqual(addressKey('203.0.113.7'), addressKey('203.0.113.8'));
  });

  it('counts a whole IPv6 /64 as one client, so rotating addresses inside it gains nothing', () => {
    assert.equal(addressKey('2001:db8:1:2::1'), addressKey('2001:db8:1:2:ffff:ffff:ffff:fffe'));
    assert.equal(addressKey('2001:db8:1:2::1'), 'ip:2001:db8:1:2::/64');
    assert.notEqual(addressKey('2001:db8:1:2::1'), addressKey('2001:db8:1:3::1'));
  });
});

const DIGEST_KEY = Buffer.alloc(32, 7);
const SECOND_MS = 1_000;

for (const dialect of dialects) {
  describe(`sign-in throttle counters (${dialect})`, () => {
    let opened: MigratedTestStore;
    let throttle: SignInThrottle;
    const start = new Date('2026-11-24T10:00:00Z');
    const at = (ms: number) => new Date(start.getTime() + ms);

    before(async () => {
      opened = await openMigratedTestStore(dialect);
      throttle = new SignInThrottle(opened.store, DIGEST_KEY);
    });
    after(() => opened?.close());

    const storedKeys = async () =>
      (await opened.store.db.selectFrom('sign_in_failures').select('throttle_key').execute()).map((row) => row.throttle_key);

    it('a pair gets a few free failures, then growing waits; an attempt during a wait is refused and does not lengthen it', async () => {
      const email = 'pair@throttle.test';
      for (let failure = 0; failure < FREE_FAILURES_PER_PAIR; failure += 1)
        assert.equal(await throttle.admit(email, '203.0.113.1', at(failure)), undefined);
      const firstWait = SIGN_IN_LIMITS.pairDelaysMs[FREE_FAILURES_PER_PAIR - 1]!;
      const refused = await throttle.admit(email, '203.0.113.1', at(10 * SECOND_MS));
      assert.ok(refused !== undefined, 'the next attempt waits');
      assert.equal(refused.getTime(), at(FREE_FAILURES_PER_PAIR - 1).getTime() + firstWait);
      // Hammering during the wait neither gets through nor moves the end of the wait.
      for (let retry = 0; retry < 5; retry += 1)
        assert.equal((await throttle.admit(email, '203.0.113.1', at(11 * SECOND_MS)))?.getTime(), refused.getTime());
      // After the wait one more attempt goes through, and the wait after it is longer.
      const afterWait = refused.getTime() - start.getTime() + SECOND_MS;
      assert.equal(await throttle.admit(email, '203.0.113.1', at(afterWait)), undefined);
      const secondWait = (await throttle.admit(email, '203.0.113.1', at(afterWait + SECOND_MS)))!.getTime() - at(afterWait).getTime();
      assert.ok(secondWait > firstWait, `${secondWait} ms after ${firstWait} ms`);
      // The same email from an address that has not failed is not held at all.
      assert.equal(await throttle.admit(email, '198.51.100.9', at(afterWait + SECOND_MS)), undefined);
    });

    it('the per-email ceiling holds against guesses spread over many addresses', async () => {
      const email = 'spread@throttle.test';
      for (let guess = 0; guess < SIGN_IN_LIMITS.failuresPerEmail; guess += 1) {
        assert.equal(await throttle.admit(email, `10.${guess >> 8}.${guess & 255}.1`, at(guess)), undefined, `guess ${guess}`);
      }
      const fresh = await throttle.admit(email, '192.0.2.200', at(SIGN_IN_LIMITS.failuresPerEmail));
      assert.ok(fresh !== undefined, 'past the ceiling even a fresh address waits');
    });

    it('an address over its limit is refused before anything about the email is stored', async () => {
      for (let guess = 0; guess < SIGN_IN_LIMITS.failuresPerAddress; guess += 1)
        await throttle.admit(`spray${guess}@throttle.test`, '203.0.113.50', at(guess));
      const before = (await storedKeys()).length;
      for (let guess = 0; guess < 50; guess += 1) {
        assert.ok((await throttle.admit(`more${guess}@throttle.test`, '203.0.113.50', at(100 + guess))) !== undefined);
      }
      assert.equal((await storedKeys()).length, before, 'refused attempts added no rows');
    });

    it('stores keyed digests, never an email or an address', async () => {
      await throttle.admit('visible@throttle.test', '203.0.113.99', at(0));
      for (const key of await storedKeys()) {
        assert.match(key, /^[A-Za-z0-9_-]{43}$/);
        assert.doesNotMatch(key, /@|throttle|203\.0/);
      }
    });

    it('the sweep prunes counters whose windows are over and that hold no wait', async () => {
      assert.ok((await storedKeys()).length > 0);
      const longest = Math.max(SIGN_IN_LIMITS.addressWindowMs, SIGN_IN_LIMITS.pairWindowMs, SIGN_IN_LIMITS.emailWindowMs);
      assert.equal(await throttle.prune(at(0)), 0, 'nothing current is pruned');
      assert.ok((await throttle.prune(at(longest + 60 * 60 * SECOND_MS))) > 0);
      assert.deepEqual(await storedKeys(), []);
    });
  });
}
