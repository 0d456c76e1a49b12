import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PRESETS, parsePolicyBody, parseSettingInput, type SendPolicy } from '../../../src/domain/send-policy.ts';
import { decide, firstContactCap, type SendHistory, type SendMark } from '../../../src/messaging/governor/decision.ts';
import { AppError } from '../../../src/domain/errors.ts';
import { SendLedger } from '../../../src/messaging/governor/send-ledger.ts';

const NOW = new Date('2026-03-10T12:00:00.000Z');
const LONG_AGO = new Date('2025-01-01T00:00:00.000Z');
const none: SendPolicy = parsePolicyBody({}, 'p');
const zero = () => 0;

function history(marks: SendMark[], linkedAt = LONG_AGO): SendHistory {
  // A mark after NOW is a message waiting in the queue; the ledger keeps the two apart.
  const planned = marks
    .filter((mark) => mark.at > NOW.getTime())
    .map((mark, index) => ({ ...mark, id: `msg_${index}`, scheduled: false, bytes: 0 }));
  return {
    marks: SendLedger.of(
      marks.filter((mark) => mark.at <= NOW.getTime()),
      planned,
    ).withQueue,
    linkedAt,
  };
}

function sent(secondsAgo: number, recipient = '+15550000001', firstContact = false): SendMark {
  return { at: NOW.getTime() - secondsAgo * 1_000, recipient, firstContact };
}

const to = (recipient = '+15559999999', firstContact = false) => ({ recipient, firstContact, notBefore: null });

describe('the governor decides when a message may leave', () => {
  it('a policy with no limits lets every message go at once', () => {
    const marks = Array.from({ length: 500 }, (_, index) => sent(index / 10));
    assert.deepEqual(decide(none, history(marks), to(), NOW, zero), { kind: 'now' });
  });

  it('the gap: the next send waits until min_gap_ms after the last one', () => {
    const policy = { ...none, minGapMs: 5_000, maxGapMs: 5_000 };
    assert.deepEqual(decide(policy, history([sent(2)]), to(), NOW, zero), {
      kind: 'wait',
      until: new Date(NOW.getTime() + 3_000),
      reason: 'gap',
    });
    assert.deepEqual(decide(policy, history([sent(5)]), to(), NOW, zero), { kind: 'now' });
  });

  it('the jitter: the gap is drawn between min_gap_ms and max_gap_ms with the given randomness', () => {
    const policy = { ...none, minGapMs: 10_000, maxGapMs: 30_000 };
    const at = (r: number) => (decide(policy, history([sent(0)]), to(), NOW, () => r) as { until: Date }).until.getTime() - NOW.getTime();
    assert.equal(at(0), 10_000);
    assert.equal(at(0.5), 20_000);
    assert.equal(at(0.999999), 29_999);
  });

  it('per_minute, per_hour and per_day: a full window waits until its oldest send leaves it', () => {
    const perMinute = { ...none, perMinute: 3 };
    assert.deepEqual(decide(perMinute, history([sent(50), sent(40), sent(10)]), to(), NOW, zero), {
      kind: 'wait',
      until: new Date(NOW.getTime() + 10_000),
      reason: 'per_minute',
    });
    assert.deepEqual(decide(perMinute, history([sent(61), sent(40), sent(10)]), to(), NOW, zero), { kind: 'now' });
    const perHour = { ...none, perHour: 2 };
    assert.deepEqual(decide(perHour, history([sent(3_000), sent(100)]), to(), NOW, zero), {
      kind: 'wait',
      until: new Date(NOW.getTime() + 600_000),
      reason: 'per_hour',
    });
    const perDay = { ...none, perDay: 1 };
    assert.deepEqual(decide(perDay, history([sent(86_000)]), to(), NOW, zero), {
      kind: 'wait',
      until: new Date(NOW.getTime() + 400_000),
      reason: 'per_day',
    });
  });

  it('per_recipient_gap_ms holds for the same recipient only', () => {
    const policy = { ...none, perRecipientGapMs: 6_000 };
    const marks = [sent(1, '+15550000001')];
    assert.deepEqual(decide(policy, history(marks), to('+15550000001'), NOW, zero), {
      kind: 'wait',
      until: new Date(NOW.getTime() + 5_000),
      reason: 'recipient_gap',
    });
    assert.deepEqual(decide(policy, history(marks), to('+15550000002'), NOW, zero), { kind: 'now' });
  });

  it('first_contacts_per_day caps new recipients only; known ones still go', () => {
    const policy = { ...none, firstContactsPerDay: 2 };
    const marks = [sent(7_200, '+15550000001', true), sent(3_600, '+15550000002', true)];
    assert.deepEqual(decide(policy, history(marks), to('+15550000003', true), NOW, zero), {
      kind: 'wait',
      until: new Date(NOW.getTime() + 86_400_000 - 7_200_000),
      reason: 'first_contacts',
    });
    assert.deepEqual(decide(policy, history(marks), to('+15550000001', false), NOW, zero), { kind: 'now' });
  });

  it("warm-up: a new number's first-contact cap starts low and grows each day, up to the policy's cap", () => {
    const policy = { ...none, firstContactsPerDay: 50, warmUp: { start: 10, dailyIncrease: 15 } };
    const linked = new Date(NOW.getTime() - 3_600_000);
    assert.equal(firstContactCap(policy, linked, NOW.getTime()), 10);
    assert.equal(firstContactCap(policy, linked, NOW.getTime() + 86_400_000), 25);
    assert.equal(firstContactCap(policy, linked, NOW.getTime() + 10 * 86_400_000), 50);
    const marks = Array.from({ length: 10 }, (_, index) => sent(100 + index, `+1555000010${index}`, true));
    assert.equal(decide(policy, history(marks, linked), to('+15550000999', true), NOW, zero).kind, 'wait');
    assert.equal(decide(policy, history(marks, LONG_AGO), to('+15550000999', true), NOW, zero).kind, 'now');
  });

  it("quiet hours: a message inside them waits for their end in the policy's time zone, across midnight", () => {
    const policy = { ...none, quietHours: { start: '22:00', end: '08:00', timeZone: 'Europe/Berlin' } };
    // 12:00 UTC is 13:00 in Berlin (winter time): outside.
    assert.deepEqual(decide(policy, history([]), to(), NOW, zero), { kind: 'now' });
    assert.deepEqual(decide(policy, history([]), to(), new Date('2026-03-10T22:30:00.000Z'), zero), {
      kind: 'wait',
      until: new Date('2026-03-11T07:00:00.000Z'),
      reason: 'quiet_hours',
    });
    assert.deepEqual(decide(policy, history([]), to(), new Date('2026-03-11T06:59:30.000Z'), zero), {
      kind: 'wait',
      until: new Date('2026-03-11T07:00:00.000Z'),
      reason: 'quiet_hours',
    });
  });

  it('send_at: a message scheduled later waits for its time, then for the rules at that time', () => {
    const policy = { ...none, minGapMs: 5_000, maxGapMs: 5_000 };
    const later = new Date(NOW.getTime() + 60_000);
    assert.deepEqual(decide(policy, history([]), { ...to(), notBefore: later }, NOW, zero), {
      kind: 'wait',
      until: later,
      reason: 'scheduled',
    });
    const planned = { at: later.getTime() - 1_000, recipient: '+15550000001', firstContact: false };
    assert.deepEqual(decide(policy, history([planned]), { ...to(), notBefore: later }, NOW, zero), {
      kind: 'wait',
      until: new Date(later.getTime() + 4_000),
      reason: 'gap',
    });
  });

  it('rules combine: the time found holds every rule at once', () => {
    const policy = { ...none, minGapMs: 1_000, maxGapMs: 1_000, perMinute: 2, perRecipientGapMs: 30_000 };
    const marks = [sent(59, '+15550000001'), sent(5, '+15559999999')];
    const decision = decide(policy, history(marks), to('+15559999999'), NOW, zero);
    assert.deepEqual(decision, { kind: 'wait', until: new Date(NOW.getTime() + 25_000), reason: 'recipient_gap' });
  });
});

describe('send policies', () => {
  it('the presets are off (no governor), standard and cautious, each within its own limits', () => {
    assert.equal(PRESETS.off, null);
    for (const preset of [PRESETS.standard!, PRESETS.cautious!]) {
      assert.ok(preset.minGapMs <= preset.maxGapMs);
      assert.ok(preset.perRecipientGapMs >= 6_000, 'at least the pair rate of about one message every 6 s');
    }
    assert.ok(PRESETS.cautious!.firstContactsPerDay! <= 20, 'the 15 to 20 unsaved contacts a day users report');
  });

  it('a policy is refused when its gaps are out of order, its clock is not HH:MM or its time zone is unknown', () => {
    const refused = (body: object, field: string) =>
      assert.throws(
        () => parseSettingInput(body, 'send_policy'),
        (error: unknown) => error instanceof AppError && error.code === 'invalid_send_policy' && error.meta?.field === field,
      );
    refused({ min_gap_ms: 10, max_gap_ms: 5 }, 'send_policy.max_gap_ms');
    refused({ quiet_hours: { start: '24:00', end: '08:00', time_zone: 'UTC' } }, 'send_policy.quiet_hours.start');
    refused({ quiet_hours: { start: '22:00', end: '08:00', time_zone: 'Mars/Olympus' } }, 'send_policy.quiet_hours.time_zone');
    assert.throws(
      () => parseSettingInput('fast', 'send_policy'),
      (error: unknown) => error instanceof AppError && error.code === 'invalid_send_policy',
    );
    assert.deepEqual(parseSettingInput('cautious', 'send_policy'), { preset: 'cautious' });
  });
});
