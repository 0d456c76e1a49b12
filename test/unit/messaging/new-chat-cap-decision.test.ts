import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePolicyBody, type SendPolicy } from '../../../src/domain/send-policy.ts';
import { capMet, capOf, CAP_HOLD_WITHOUT_CYCLE_END_MS, quotaRead, type NewChatQuota } from '../../../src/domain/new-chat-quota.ts';
import { decide, type SendMark } from '../../../src/messaging/governor/decision.ts';
import { SendLedger } from '../../../src/messaging/governor/send-ledger.ts';

const NOW = new Date('2026-03-10T12:00:00.000Z');
const READ_AT = new Date(NOW.getTime() - 600_000);
const CYCLE_END = new Date(NOW.getTime() + 3_600_000);
const none: SendPolicy = parsePolicyBody({}, 'p');
const zero = () => 0;

const quota = (fields: Partial<NewChatQuota>): NewChatQuota => ({
  status: 'none',
  total: 10,
  used: 8,
  cycleStartedAt: null,
  cycleEndsAt: CYCLE_END,
  error: null,
  ...fields,
});
const firstContactsSinceRead = (count: number): SendMark[] =>
  Array.from({ length: count }, (_, index) => ({
    at: READ_AT.getTime() + (index + 1) * 1_000,
    recipient: `+1555000000${index}`,
    firstContact: true,
  }));
const decideFor = (marks: SendMark[], state: ReturnType<typeof quotaRead> | undefined, firstContact: boolean, policy = none) =>
  decide(
    policy,
    { marks: SendLedger.of(marks, []).withQueue, linkedAt: new Date('2025-01-01'), newChatCap: capOf(state, NOW) },
    { recipient: '+15559999999', firstContact, notBefore: null },
    NOW,
    zero,
  );

describe("the governor's first-contact rule with WhatsApp's cap on new chats (ADR 0058)", () => {
  it("a first contact goes while WhatsApp's remaining quota, less the first contacts since its read, lasts", () => {
    const state = quotaRead(undefined, quota({}), READ_AT);
    assert.deepEqual(decideFor(firstContactsSinceRead(1), state, true), { kind: 'now' });
    assert.deepEqual(decideFor(firstContactsSinceRead(2), state, true), { kind: 'wait', until: CYCLE_END, reason: 'new_chat_cap' });
  });

  it('a reply never meets the cap, even when the number is capped', () => {
    const state = capMet(quotaRead(undefined, quota({}), READ_AT), NOW);
    assert.deepEqual(decideFor([], state, false), { kind: 'now' });
    assert.deepEqual(decideFor([], state, true), { kind: 'wait', until: CYCLE_END, reason: 'new_chat_cap' });
  });

  it("a failed read falls back to the policy's own figure, and a 475 met before still holds", () => {
    const failed = quotaRead(
      undefined,
      quota({ status: 'unknown', total: null, used: null, cycleEndsAt: null, error: 'HTTP 500' }),
      READ_AT,
    );
    assert.equal(failed.source, 'fallback');
    assert.deepEqual(decideFor(firstContactsSinceRead(5), failed, true), { kind: 'now' });
    const policy = { ...none, firstContactsPerDay: 5 };
    assert.equal((decideFor(firstContactsSinceRead(5), failed, true, policy) as { reason: string }).reason, 'first_contacts');

    const capped = capMet(quotaRead(undefined, quota({}), READ_AT), NOW);
    const stillCapped = quotaRead(capped, quota({ status: 'unknown', total: null, used: null, cycleEndsAt: null, error: 'HTTP 500' }), NOW);
    assert.deepEqual(decideFor([], stillCapped, true), { kind: 'wait', until: CYCLE_END, reason: 'new_chat_cap' });
  });

  it('a 475 with no cycle end known holds for an hour; a read naming the end then sets it; a new cycle lifts it', () => {
    const capped = capMet(undefined, NOW);
    assert.equal(capped.cappedUntil!.getTime(), NOW.getTime() + CAP_HOLD_WITHOUT_CYCLE_END_MS);
    const named = quotaRead(capped, quota({ status: 'capped', used: 10 }), NOW);
    assert.deepEqual(named.cappedUntil, CYCLE_END);
    assert.equal(capOf(named, new Date(CYCLE_END.getTime() + 1)), undefined, 'the cycle is over: no cap known until read again');
  });
});
