import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  backoffDelayMs,
  decideReconnect,
  DEFAULT_RECONNECT_POLICY,
  type ReconnectPolicyOptions,
} from '../../../../src/engines/baileys/reconnect-policy.ts';

const linked = { linking: false, consecutiveFailures: 0 };
const options: ReconnectPolicyOptions = { baseDelayMs: 1_000, maxDelayMs: 60_000, jitterRatio: 0.2, maxConsecutiveFailures: 5 };

describe('the reconnect policy', () => {
  it('treats 401 and 403 as a logged-out session that needs a new link', () => {
    for (const statusCode of [401, 403]) {
      assert.equal(decideReconnect({ ...linked, statusCode }).action, 'logged_out');
      assert.equal(decideReconnect({ statusCode, linking: true, consecutiveFailures: 3 }).action, 'logged_out');
    }
  });

  it('reconnects at once on 515, the restart WhatsApp asks for after pairing', () => {
    assert.equal(decideReconnect({ ...linked, statusCode: 515 }).action, 'restart_now');
    assert.equal(decideReconnect({ statusCode: 515, linking: true, consecutiveFailures: 0 }).action, 'restart_now');
  });

  it('does not reconnect blindly when another client replaced the session (440)', () => {
    assert.equal(decideReconnect({ ...linked, statusCode: 440 }).action, 'conflict');
  });

  it('ends a linking attempt whose QR codes ran out (408 while linking), instead of looping', () => {
    assert.equal(decideReconnect({ statusCode: 408, linking: true, qrShown: true, consecutiveFailures: 0 }).action, 'link_expired');
  });

  it('does not call a connection that never came up while linking an expired QR', () => {
    assert.equal(decideReconnect({ statusCode: 408, linking: true, qrShown: false, consecutiveFailures: 0 }).action, 'retry');
  });

  it('retries a lost connection of a linked number (408 after linking) and other codes with backoff', () => {
    for (const statusCode of [408, 428, 500, 503, 411, undefined]) {
      const decision = decideReconnect({ ...linked, statusCode }, options, () => 0.5);
      assert.equal(decision.action, 'retry', `code ${String(statusCode)}`);
      assert.equal(decision.action === 'retry' && decision.delayMs, 1_000);
    }
  });

  it('doubles the delay per failure, caps it, and spreads it by the jitter ratio only', () => {
    const nominal = [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000];
    for (const [index, expected] of nominal.entries())
      assert.equal(
        backoffDelayMs(index + 1, options, () => 0.5),
        expected,
      );
    assert.equal(
      backoffDelayMs(3, options, () => 0),
      3_200,
    );
    assert.equal(
      backoffDelayMs(3, options, () => 0.999_999),
      4_800,
    );
    assert.ok(backoffDelayMs(40, options, () => 0.999_999) <= options.maxDelayMs, 'never above the cap');
  });

  it('gives up after the configured number of failures in a row, until an operator restarts it', () => {
    assert.equal(
      decideReconnect({ statusCode: 428, linking: false, consecutiveFailures: options.maxConsecutiveFailures - 2 }, options).action,
      'retry',
    );
    const decision = decideReconnect({ statusCode: 428, linking: false, consecutiveFailures: options.maxConsecutiveFailures - 1 }, options);
    assert.equal(decision.action, 'give_up');
    assert.match(decision.reason, /operator must restart/);
  });

  it('has defaults that back off to minutes, not hours, and give up after a bounded number of tries', () => {
    assert.ok(DEFAULT_RECONNECT_POLICY.maxDelayMs <= 10 * 60_000);
    assert.ok(DEFAULT_RECONNECT_POLICY.maxConsecutiveFailures >= 3);
  });
});
