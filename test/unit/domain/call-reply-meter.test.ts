import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CallReplyMeter } from '../../../src/domain/call-reply-meter.ts';

describe('replies to rejected calls are bounded per caller and per number', () => {
  it('a caller who rings again and again is replied to once in six hours', () => {
    const meter = new CallReplyMeter();
    const now = Date.parse('2026-11-28T10:00:00Z');
    assert.equal(meter.tryReply('num_a', '+14155550100', now), true);
    for (let call = 1; call < 50; call++) assert.equal(meter.tryReply('num_a', '+14155550100', now + call * 1_000), false);
    assert.equal(meter.tryReply('num_b', '+14155550100', now), true, "another number's reply is its own");
    assert.equal(meter.tryReply('num_a', '+14155550100', now + 6 * 3_600_000 + 60_000), true, 'six hours later, once more');
  });

  it('a number replies to at most 20 distinct callers at once, then one every three minutes', () => {
    const meter = new CallReplyMeter();
    const now = Date.parse('2026-11-28T10:00:00Z');
    const replied = Array.from({ length: 100 }, (_, caller) => meter.tryReply('num_a', `+1415555${String(caller).padStart(4, '0')}`, now));
    assert.equal(replied.filter(Boolean).length, 20);
    assert.equal(meter.tryReply('num_a', '+14155559999', now + 180_000), true);
  });
});
