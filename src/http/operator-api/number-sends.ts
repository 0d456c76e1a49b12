import type { WhatsAppNumber } from '../../domain/model.ts';
import { presentPause } from '../../domain/number-pauses.ts';
import { clearedQueueSchema } from '../operations/number-queue.ts';
import { pausedSchema } from '../operations/number-schema.ts';
import { ok } from '../operations/operation.ts';
import { numberOf, numberParams } from './numbers.ts';
import { defineOperatorOperation, type OperatorServices } from './operator-operation.ts';

// Holding and cancelling a number's sends over the operator API, as `wagw number pause|resume`,
// `wagw number queue --clear` and the console's health cards do: each runs on the node that
// serves the number, from any node, through NumberControl and the registry's one owner dispatch
// (ADR 0064), and its audit row (number.paused, number.resumed, number.queue_cleared) is written
// there, in the change's transaction, naming the token. Under the account's path, so a number of
// another account is not found.

const pauseAnswerSchema = {
  type: 'object',
  required: ['number_id', 'account_id', 'phone', 'paused'],
  additionalProperties: false,
  properties: {
    number_id: { type: 'string' },
    account_id: { type: 'string' },
    phone: { type: 'string', description: 'E.164.' },
    paused: pausedSchema,
  },
} as const;

/** The number's pause as stored now, which every node reads alike. */
async function presentPaused(gateway: OperatorServices, number: WhatsAppNumber) {
  const pauses = await gateway.pauses.pausesOf([number.id]);
  return { number_id: number.id, account_id: number.accountId, phone: number.phone, paused: presentPause(pauses.get(number.id)) };
}

const NUMBER_ERRORS = ['account_not_found', 'number_not_found', 'number_not_connected'] as const;

const pauseNumber = defineOperatorOperation({
  params: numberParams,
  body: {
    type: 'object',
    additionalProperties: false,
    properties: {
      reason: { type: 'string', maxLength: 500, description: "Why, in your words; shown as the pause's detail in number.paused." },
    },
  },
})({
  method: 'POST',
  path: '/admin/accounts/:id/numbers/:number_id/pause',
  operationId: 'pauseAccountNumber',
  summary: 'Pause a number',
  description:
    "Holds the number's sends until it is resumed, as POST /numbers/{id}/pause does for the account's own key: sends are refused " +
    'with 503 number_paused, or queued when a send policy governs the number, and a number.paused event with reason "manual" tells ' +
    "the account's webhooks. Run by the node that serves the number, from any node. An audit row names the token.",
  answers: { 200: pauseAnswerSchema },
  errors: NUMBER_ERRORS,
  handle: async ({ scope, params, body, actor }, gateway) => {
    const number = await numberOf(gateway, scope, params.id, params.number_id);
    await gateway.numberControl.pause({ scope, actor }, number, body?.reason?.trim() || null);
    return ok(await presentPaused(gateway, number));
  },
});

const resumeNumber = defineOperatorOperation({
  params: numberParams,
  body: { type: 'object', additionalProperties: false, properties: {} },
})({
  method: 'POST',
  path: '/admin/accounts/:id/numbers/:number_id/resume',
  operationId: 'resumeAccountNumber',
  summary: 'Resume a paused number',
  description:
    "Ends the number's pause, whatever paused it, and its sends go to WhatsApp again (a number.resumed event says so). A number " +
    'that is not paused is answered as it is, and its audit row says it was not paused. Run by the node that serves the number, ' +
    'from any node. An audit row names the token.',
  answers: { 200: pauseAnswerSchema },
  errors: NUMBER_ERRORS,
  handle: async ({ scope, params, actor }, gateway) => {
    const number = await numberOf(gateway, scope, params.id, params.number_id);
    await gateway.numberControl.resume({ scope, actor }, number);
    return ok(await presentPaused(gateway, number));
  },
});

const clearQueue = defineOperatorOperation({ params: numberParams })({
  method: 'DELETE',
  path: '/admin/accounts/:id/numbers/:number_id/queue',
  operationId: 'clearAccountNumberQueue',
  summary: "Cancel every message waiting in a number's queue",
  description:
    "As DELETE /numbers/{id}/queue does for the account's own key: every waiting message becomes cancelled, none is sent, and its " +
    'unit of quota is given back; a long queue is answered 202 while the rest is settled. Run by the node that serves the number, ' +
    'from any node. An audit row names the token and how many were cancelled.',
  answers: {
    200: clearedQueueSchema('Every waiting message is cancelled, its event written and its unit given back.'),
    202: clearedQueueSchema('Every waiting message is cancelled; `pending` of them are still being settled.'),
  },
  errors: NUMBER_ERRORS,
  handle: async ({ scope, params, actor }, gateway) => {
    const number = await numberOf(gateway, scope, params.id, params.number_id);
    const { cancelled, pending } = await gateway.numberControl.clearQueue({ scope, actor }, number);
    return { statusCode: pending === 0 ? 200 : 202, body: { number_id: number.id, cancelled, pending } };
  },
});

export const numberSendsOperations = [pauseNumber, resumeNumber, clearQueue];
