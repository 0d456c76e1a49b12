import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SendLedger } from '../../../src/messaging/governor/send-ledger.ts';
import { capthNewest, TimeIndex } from '../../../src/messaging/governor/time-index.ts';

/** A small seeded generator, so that a failure can be replayed. */
function randomFrom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

/** The cap-th newest of the items in (after, upTo], by sorting them all: what the ledger must agree with. */
function capthNewestBySorting(items: number[], after: number, upTo: number, cap: number): number | undefined {
  const inWindow = items.filter((at) => at > after && at <= upTo).sort((a, b) => a - b);
  return inWindow.length < cap ? undefined : inWindow[inWindow.length - cap];
}

describe("the governor's ledger answers as a reading of every send would", () => {
  it('the cap-th newest of two indexes, for any window and cap, after adds and removals at both ends and inside', () => {
    const random = randomFrom(41);
    for (let round = 0; round < 200; round++) {
      const first = new TimeIndex();
      const second = new TimeIndex();
      const all: [number[], number[]] = [[], []];
      for (let step = 0; step < 60; step++) {
        const side = random() < 0.5 ? 0 : 1;
        const index = side === 0 ? first : second;
        const at = Math.floor(random() * 100);
        if (random() < 0.7 || all[side].length === 0) {
          index.add(at);
          all[side].push(at);
        } else {
          const gone = all[side].splice(Math.floor(random() * all[side].length), 1)[0]!;
          assert.equal(index.remove(gone), true);
        }
      }
      const cutoff = Math.floor(random() * 30);
      first.dropUpTo(cutoff);
      all[0] = all[0].filter((at) => at > cutoff);
      for (let query = 0; query < 20; query++) {
        const after = Math.floor(random() * 100) - 10;
        const upTo = after + Math.floor(random() * 60);
        const cap = 1 + Math.floor(random() * 12);
        assert.equal(capthNewest(first, second, after, upTo, cap), capthNewestBySorting([...all[0], ...all[1]], after, upTo, cap));
      }
      assert.equal(first.size, all[0].length);
    }
  });

  it('a deferral moves the waiting messages planned before its time to it; they then wait their turn', () => {
    const ledger = SendLedger.of(
      [{ at: 100, recipient: '+1', firstContact: false }],
      [
        { id: 'msg_a', at: 200, recipient: '+2', firstContact: true, scheduled: false, bytes: 10 },
        { id: 'msg_b', at: 300, recipient: '+3', firstContact: false, scheduled: true, bytes: 20 },
        { id: 'msg_c', at: 900, recipient: '+2', firstContact: false, scheduled: false, bytes: 40 },
      ],
    );
    assert.equal(ledger.queueTail(), 900);
    ledger.deferred(500);
    assert.equal(ledger.withQueue.latestTo('+3', 499), undefined);
    assert.equal(ledger.withQueue.latestTo('+3', 500), 500);
    assert.equal(ledger.withQueue.capReachedBy(1_000, 1_000, 3, false), 500, 'the send at 100 and the two moved to 500, newest first');
    assert.equal(ledger.withQueue.capReachedBy(1_000, 1_000, 1, true), 500);
    assert.equal(ledger.queuedBytes, 70, 'a deferral keeps what each message holds');
    ledger.left('msg_c');
    assert.equal(ledger.queueTail(), 500, 'the send_at one moved from its own time waits its turn now');
    assert.equal(ledger.waiting, 2);
    assert.deepEqual([ledger.queuedBytes, ledger.firstPlanned()], [30, 500]);
    ledger.cleared();
    assert.deepEqual([ledger.queuedBytes, ledger.firstPlanned()], [0, undefined]);
  });

  it('a release turns a waiting message into a send made; the day-old sends are forgotten', () => {
    const day = 86_400_000;
    const ledger = SendLedger.of(
      [{ at: 1_000, recipient: '+1', firstContact: true }],
      [{ id: 'msg_a', at: 5_000, recipient: '+2', firstContact: false, scheduled: false, bytes: 0 }],
    );
    assert.equal(ledger.madeOnly.latest(10_000), 1_000);
    ledger.left('msg_a');
    ledger.sent({ at: 6_000, recipient: '+2', firstContact: false });
    assert.equal(ledger.madeOnly.latest(10_000), 6_000);
    assert.equal(ledger.madeOnly.latestTo('+1', 10_000), 1_000);
    assert.equal(ledger.queueTail(), 0);
    ledger.trim(1_000 + day);
    assert.equal(ledger.madeOnly.latestTo('+1', 2 * day), undefined);
    assert.equal(ledger.madeOnly.capReachedBy(2 * day, 2 * day, 1, true), undefined);
    assert.equal(ledger.madeOnly.latestTo('+2', 2 * day), 6_000);
  });

  it('a send decided but never stored is taken back whole, and the recipients it knows are those of the day', () => {
    const day = 86_400_000;
    const ledger = SendLedger.of([
      { at: 1_000, recipient: '+1', firstContact: false },
      { at: 2_000, recipient: '+2', firstContact: false },
    ]);
    const takeBack = ledger.sentTentatively({ at: 3_000, recipient: '+1', firstContact: true });
    assert.deepEqual(
      [ledger.madeOnly.latest(10_000), ledger.madeOnly.latestTo('+1', 10_000), ledger.madeOnly.capReachedBy(10_000, day, 1, true)],
      [3_000, 3_000, 3_000],
      'counted at once, so the next decision sees it',
    );
    takeBack();
    assert.deepEqual(
      [ledger.madeOnly.latest(10_000), ledger.madeOnly.latestTo('+1', 10_000), ledger.madeOnly.capReachedBy(10_000, day, 1, true)],
      [2_000, 1_000, undefined],
      'taken back: the last send to +1 is the one before, and no first contact was made',
    );
    // Trimming still forgets the oldest first: the recipient put back keeps its place in time.
    ledger.trim(1_500 + day);
    assert.deepEqual([ledger.knows('+1'), ledger.knows('+2'), ledger.knows('+3')], [false, true, false]);
    ledger.queued('msg_w', { at: 9_000, recipient: '+3', firstContact: true, scheduled: false, bytes: 0 });
    assert.equal(ledger.knows('+3'), true, 'a message waiting for +3 makes it known');
  });
  it('the last send to each recipient, and which recipients it knows, agree with every send kept, through sends, take-backs and trims in any order', () => {
    const day = 86_400_000;
    const random = randomFrom(4141);
    for (let round = 0; round < 50; round++) {
      const ledger = new SendLedger();
      // What the ledger must agree with: every send counted and not taken back, as (recipient, time).
      let kept: { recipient: string; at: number }[] = [];
      let now = day;
      // Tentative sends not yet stored; one is taken back, if at all, before the next send to its recipient is counted.
      let pending: { takeBack: () => void; recipient: string; at: number }[] = [];
      for (let step = 0; step < 300; step++) {
        const action = random();
        const recipient = `+${Math.floor(random() * 12)}`;
        // Mostly forward in time, sometimes a send recorded at an earlier moment (an engine's late answer, a release).
        const at = now - (random() < 0.2 ? Math.floor(random() * 3 * 3_600_000) : 0);
        if (action < 0.65) {
          pending = pending.filter((send) => send.recipient !== recipient);
          if (action < 0.45) ledger.sent({ at, recipient, firstContact: false });
          else pending.push({ takeBack: ledger.sentTentatively({ at, recipient, firstContact: false }), recipient, at });
          kept.push({ recipient, at });
        } else if (action < 0.8 && pending.length > 0) {
          const { takeBack, recipient: taken, at: takenAt } = pending.splice(Math.floor(random() * pending.length), 1)[0]!;
          takeBack();
          kept.splice(
            kept.findLastIndex((send) => send.recipient === taken && send.at === takenAt),
            1,
          );
        } else {
          now += Math.floor(random() * 4 * 3_600_000);
          ledger.trim(now);
          kept = kept.filter((send) => send.at > now - day);
          pending = [];
        }
        for (let other = 0; other < 12; other++) {
          const phone = `+${other}`;
          const times = kept.filter((send) => send.recipient === phone).map((send) => send.at);
          const last = times.length === 0 ? undefined : Math.max(...times);
          assert.equal(ledger.madeOnly.latestTo(phone, Number.MAX_SAFE_INTEGER), last, `round ${round}, step ${step}, ${phone}`);
          assert.equal(ledger.knows(phone), last !== undefined, `round ${round}, step ${step}, ${phone} known`);
        }
      }
    }
  });

  it('a send with the engine counts as made at every moment until the engine answers, then from the answer', () => {
    let now = 2_000;
    const ledger = new SendLedger(() => now);
    ledger.sending('msg_a', { at: 1_000, recipient: '+1', firstContact: false });
    assert.equal(ledger.madeOnly.latest(5_000), 2_000, 'still with the engine: made now, whatever the decision said');
    assert.equal(ledger.withQueue.latestTo('+1', 5_000), 2_000);
    assert.equal(ledger.madeOnly.capReachedBy(5_000, 60_000, 1, false), 1_000, 'counted against the caps from its decision');
    now = 3_000;
    ledger.answered('msg_a', 2_500);
    assert.equal(ledger.madeOnly.latest(5_000), 2_500, 'the gap counts from the answer');
    assert.equal(ledger.madeOnly.latestTo('+1', 5_000), 2_500);
    assert.equal(ledger.madeOnly.capReachedBy(5_000, 60_000, 2, false), undefined, 'counted once');
    const takeBack = ledger.sending('msg_b', { at: 3_000, recipient: '+2', firstContact: false });
    takeBack();
    assert.equal(ledger.madeOnly.latest(5_000), 2_500, 'a send taken back (its row never stored) is neither made nor in flight');
  });
});
