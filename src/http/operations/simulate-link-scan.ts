import { parsePhoneField } from '../message-input.ts';
import { SANDBOX_ERRORS } from './error-responses.ts';
import { defineOperation, ok } from './operation.ts';

export const simulateLinkScan = defineOperation(
  {
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['phone', 'code'],
      properties: {
        phone: { type: 'string', description: 'One of your sandbox numbers (E.164), being linked.' },
        code: {
          type: 'string',
          minLength: 1,
          maxLength: 512,
          description: 'The QR text the linking attempt shows now, or its pairing code (with or without its dash).',
        },
      },
    },
  },
  ['sandboxInbox'],
)({
  method: 'POST',
  scope: 'send',
  path: '/sandbox/link_scan',
  operationId: 'simulateLinkScan',
  summary: "Simulate the number's phone scanning its QR or typing its pairing code",
  description:
    'Rehearses linking (docs/operator-api.md): once an operator started linking a sandbox number (POST /admin/numbers/{id}/session/link), ' +
    'the number is off the network and shows a QR that changes every 20 s, or a pairing code. Showing the current one back here links ' +
    'it, as the phone would: the number connects and its session.status event says connected. A replaced QR, another code, or a ' +
    'number not being linked is refused (400 invalid_request, field code). Counted with your simulated incoming messages per minute.',
  tag: 'sandbox',
  answers: {
    200: {
      type: 'object',
      required: ['phone', 'linked'],
      properties: { phone: { type: 'string' }, linked: { type: 'boolean', const: true } },
    },
  },
  errors: SANDBOX_ERRORS,
  // The attempt lives on the node that owns the number, as the operator's linking does.
  owner: ({ body }) => parsePhoneField(body.phone, 'phone'),
  handle: async ({ scope, body }, { sandboxInbox }) => {
    const number = await sandboxInbox.scanLink(scope, parsePhoneField(body.phone, 'phone'), body.code);
    return ok({ phone: number.phone, linked: true });
  },
});
