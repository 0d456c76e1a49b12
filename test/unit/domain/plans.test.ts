import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { effectiveMonthlyLimit, isPlanName, planNames, usagePeriod, usagePeriodResetAt } from '../../../src/domain/plans.ts';

// Runs alone: it changes the process's time zone.

describe('monthly limits', () => {
  it('each plan carries its documented volume: starter 10,000, pro 60,000, enterprise unlimited', () => {
    assert.equal(effectiveMonthlyLimit('starter', null), 10_000);
    assert.equal(effectiveMonthlyLimit('pro', null), 60_000);
    assert.equal(effectiveMonthlyLimit('enterprise', null), null);
  });

  it('a custom limit replaces the plan limit, whether lower or higher', () => {
    assert.equal(effectiveMonthlyLimit('starter', 5), 5);
    assert.equal(effectiveMonthlyLimit('starter', 1_000_000), 1_000_000);
    assert.equal(effectiveMonthlyLimit('pro', 12), 12);
  });

  it('a custom limit gives an unlimited plan a limit', () => {
    assert.equal(effectiveMonthlyLimit('enterprise', 7), 7);
  });

  it('a custom limit of 0 blocks sending, rather than falling back to the plan', () => {
    assert.equal(effectiveMonthlyLimit('starter', 0), 0);
    assert.equal(effectiveMonthlyLimit('enterprise', 0), 0);
  });

  it('the plan names are exactly starter, pro and enterprise', () => {
    assert.deepEqual([...planNames], ['starter', 'pro', 'enterprise']);
    for (const name of planNames) assert.equal(isPlanName(name), true);
    for (const name of ['Starter', 'free', '', 'pro ', 'constructor', 'toString']) assert.equal(isPlanName(name), false, name);
  });
});

describe('usage periods are calendar months in UTC', () => {
  const cases: [string, string][] = [
    ['2026-01-01T00:00:00.000Z', '2026-01'],
    ['2026-01-31T23:59:59.999Z', '2026-01'],
    ['2026-02-01T00:00:00.000Z', '2026-02'],
    ['2024-02-29T12:00:00.000Z', '2024-02'],
    ['2026-12-31T23:59:59.999Z', '2026-12'],
    ['2027-01-01T00:00:00.000Z', '2027-01'],
  ];
  for (const [instant, period] of cases) {
    it(`${instant} is in ${period}`, () => {
      assert.equal(usagePeriod(new Date(instant)), period);
    });
  }

  it('an instant written with a local offset falls in its UTC month', () => {
    // 23:30 on 31 January in New York is already February in UTC.
    assert.equal(usagePeriod(new Date('2026-01-31T23:30:00-05:00')), '2026-02');
    // 00:30 on 1 March in Tokyo is still February in UTC.
    assert.equal(usagePeriod(new Date('2026-03-01T00:30:00+09:00')), '2026-02');
  });
});

describe("periods do not depend on the server's time zone", () => {
  // Node applies a change to process.env.TZ at once; the machine running the tests is likely
  // on UTC, where a local-time slip would go unnoticed.
  for (const zone of ['Pacific/Kiritimati', 'America/Los_Angeles', 'Asia/Kolkata']) {
    it(`in ${zone}, months still turn at midnight UTC`, () => {
      const previous = process.env.TZ;
      process.env.TZ = zone;
      try {
        assert.notEqual(new Date('2026-02-01T00:00:00.000Z').getHours(), 0, 'the zone took effect');
        assert.equal(usagePeriod(new Date('2026-01-31T23:59:59.999Z')), '2026-01');
        assert.equal(usagePeriod(new Date('2026-02-01T00:00:00.000Z')), '2026-02');
        assert.equal(usagePeriodResetAt(new Date('2026-01-31T23:59:59.999Z')).toISOString(), '2026-02-01T00:00:00.000Z');
        assert.equal(usagePeriodResetAt(new Date('2026-02-01T00:00:00.000Z')).toISOString(), '2026-03-01T00:00:00.000Z');
        assert.equal(usagePeriodResetAt(new Date('2026-12-31T23:59:59.999Z')).toISOString(), '2027-01-01T00:00:00.000Z');
      } finally {
        if (previous === undefined) delete process.env.TZ;
        else process.env.TZ = previous;
      }
    });
  }
});

describe('the reset instant is the first millisecond of the next UTC month', () => {
  it('any instant in a month resets at 00:00 UTC on the 1st of the next', () => {
    assert.equal(usagePeriodResetAt(new Date('2026-01-01T00:00:00.000Z')).toISOString(), '2026-02-01T00:00:00.000Z');
    assert.equal(usagePeriodResetAt(new Date('2026-01-31T23:59:59.999Z')).toISOString(), '2026-02-01T00:00:00.000Z');
    assert.equal(usagePeriodResetAt(new Date('2024-02-29T23:59:59.999Z')).toISOString(), '2024-03-01T00:00:00.000Z');
  });

  it('December resets on 1 January of the next year', () => {
    assert.equal(usagePeriodResetAt(new Date('2026-12-01T00:00:00.000Z')).toISOString(), '2027-01-01T00:00:00.000Z');
    assert.equal(usagePeriodResetAt(new Date('2026-12-31T23:59:59.999Z')).toISOString(), '2027-01-01T00:00:00.000Z');
  });

  it('the reset instant starts the next period and the millisecond before it ends this one', () => {
    for (const instant of ['2026-01-15T10:00:00Z', '2026-12-31T23:59:59.999Z', '2028-02-10T00:00:00Z']) {
      const at = new Date(instant);
      const reset = usagePeriodResetAt(at);
      assert.notEqual(usagePeriod(reset), usagePeriod(at));
      assert.equal(usagePeriod(new Date(reset.getTime() - 1)), usagePeriod(at));
    }
  });
});
