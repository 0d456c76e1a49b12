import { PROXY_URL_MAX_LENGTH, proxySchemes } from '../../domain/proxy-url.ts';
import { numberJson } from '../../accounts/account-json.ts';
import type { WhatsAppNumber } from '../../domain/model.ts';
import type { OperatorScope } from '../../domain/tenant-scope.ts';
import { ok } from '../operations/operation.ts';
import { numberOf, numberParams, numberSchema } from './numbers.ts';
import { defineOperatorOperation, type OperatorServices } from './operator-operation.ts';

// A number's proxy over the operator API (ADR 0063), as `wagw number proxy` and the console set
// it. The URL is checked, sealed at rest and never answered back: the number shows it redacted.
// Each change is an audit row naming the token and the redacted proxy.

/**
 * The session connects again through the changed proxy, on the node that runs it. The proxy is
 * stored either way: a session that cannot be reached now reads it when it next connects.
 */
async function reconnectThrough(gateway: OperatorServices, scope: OperatorScope, number: WhatsAppNumber): Promise<void> {
  await gateway.numberControl.reconnect(scope, number).catch(() => false);
}

const setProxy = defineOperatorOperation({
  params: numberParams,
  body: {
    type: 'object',
    required: ['url'],
    additionalProperties: false,
    properties: {
      url: {
        type: 'string',
        minLength: 1,
        maxLength: PROXY_URL_MAX_LENGTH,
        description: `scheme://[user:password@]host:port, the scheme one of ${proxySchemes.join(', ')} (socks5h: the proxy resolves names).`,
        examples: ['socks5://user:password@proxy.example:1080'],
      },
    },
  },
})({
  method: 'POST',
  path: '/admin/accounts/:id/numbers/:number_id/proxy',
  operationId: 'setAccountNumberProxy',
  summary: "Set a number's proxy",
  description:
    "Sends the number's WhatsApp connection (its websocket, media uploads and downloads) through an HTTP(S) or SOCKS5 proxy, as " +
    '`wagw number proxy` does. The URL is sealed at rest and answered only redacted. A session that is connected, failed or ' +
    'backing off connects again through it at once; one being linked uses it from its next connection. A proxy that cannot be ' +
    "reached or refuses its credentials shows as the number's status failed, with the reason. An audit row names the token.",
  answers: { 200: numberSchema },
  errors: ['account_not_found', 'number_not_found'],
  handle: async ({ scope, params, body, actor }, gateway) => {
    const number = await numberOf(gateway, scope, params.id, params.number_id);
    const updated = await gateway.numbers.setProxy(scope, number.id, body.url, actor);
    await reconnectThrough(gateway, scope, updated);
    return ok(numberJson(updated));
  },
});

const clearProxy = defineOperatorOperation({ params: numberParams })({
  method: 'DELETE',
  path: '/admin/accounts/:id/numbers/:number_id/proxy',
  operationId: 'clearAccountNumberProxy',
  summary: "Clear a number's proxy",
  description:
    'The number connects to WhatsApp directly again; its session reconnects as it does when the proxy is set. An audit row names ' +
    'the token.',
  answers: { 200: numberSchema },
  errors: ['account_not_found', 'number_not_found'],
  handle: async ({ scope, params, actor }, gateway) => {
    const number = await numberOf(gateway, scope, params.id, params.number_id);
    const updated = await gateway.numbers.setProxy(scope, number.id, null, actor);
    await reconnectThrough(gateway, scope, updated);
    return ok(numberJson(updated));
  },
});

export const numberProxyOperations = [setProxy, clearProxy];
