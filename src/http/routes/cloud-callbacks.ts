import type { FastifyInstance } from 'fastify';
import { AppError } from '../../domain/errors.ts';
import { accountScope } from '../../domain/tenant-scope.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { cloudCallbackDelivery, cloudNumber, type CloudDeliveryBody } from '../operations/cloud-callback-delivery.ts';
import type { OwnerDispatch } from '../operations/owner-dispatch.ts';
import { send } from '../operations/registry.ts';
import { errorResponseOf, errorResponses } from '../schemas.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'cloudCallbacks' | 'numbers'> & { dispatch: OwnerDispatch };

const params = {
  type: 'object',
  required: ['number_id'],
  properties: { number_id: { type: 'string', maxLength: 64 } },
} as const;

/**
 * Meta's callback for a Cloud API number (docs/cloud-api.md): the URL given to Meta in the app's
 * WhatsApp configuration. GET is Meta's verification handshake (hub.mode, hub.verify_token,
 * hub.challenge); POST is a delivery, whose X-Hub-Signature-256 is checked against the raw bytes
 * with the number's app secret before anything in it is read. It is no operation of the
 * registry: Meta calls it with no key, its signature standing for one; it stays out of the API
 * document and the typed client, as Chatwoot's callback does.
 *
 * A 200 means every message and status of the delivery is stored; any failure (our database
 * away: 503 with Retry-After) is answered non-2xx, on which Meta delivers it again, and a message
 * delivered twice is stored once (by its wamid). Meta may call any node of a cluster: a node that
 * does not serve the number hands the delivery, bytes unchanged, to the one that does, through
 * the owner dispatch (operations/cloud-callback-delivery.ts, ADR 0076).
 */
export async function registerCloudCallbackRoutes(app: FastifyInstance, gateway: Services): Promise<void> {
  await app.register(async (scoped) => {
    // The signature is over the bytes as they came, so the body is kept as bytes and parsed only after the check.
    scoped.removeAllContentTypeParsers();
    scoped.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    for (const prefix of ['', '/api']) {
      scoped.get<{ Params: { number_id: string }; Querystring: Record<string, string> }>(
        `${prefix}/cloud/callbacks/:number_id`,
        {
          // The verify token is a secret: the request's log line shows it masked.
          config: { secretQueryParameters: ['hub.verify_token'] },
          schema: {
            hide: true,
            summary: "Meta's verification handshake for a Cloud API number",
            params,
            querystring: { type: 'object', additionalProperties: { type: 'string', maxLength: 1024 } },
            response: {
              ...errorResponses(400, 500),
              401: errorResponseOf(['invalid_webhook_signature']),
              404: errorResponseOf(['number_not_found']),
            },
          },
        },
        async (request, reply) => {
          const number = await cloudNumber(gateway.numbers, request.params.number_id);
          const challenge = await gateway.cloudCallbacks.handshake(number, {
            mode: request.query['hub.mode'],
            verifyToken: request.query['hub.verify_token'],
            challenge: request.query['hub.challenge'],
          });
          return reply.type('text/plain; charset=utf-8').send(challenge);
        },
      );
      scoped.post<{ Params: { number_id: string }; Body: Buffer }>(
        `${prefix}/cloud/callbacks/:number_id`,
        {
          schema: {
            hide: true,
            summary: "Meta's deliveries for a Cloud API number",
            params,
            response: {
              200: { type: 'object', required: ['received'], properties: { received: { type: 'boolean' } } },
              ...errorResponses(400, 500, 503),
              401: errorResponseOf(['invalid_webhook_signature']),
              404: errorResponseOf(['number_not_found']),
            },
          },
        },
        async (request, reply) => {
          const number = await cloudNumber(gateway.numbers, request.params.number_id);
          const signature = request.headers['x-hub-signature-256'];
          if (!Buffer.isBuffer(request.body)) throw new AppError('invalid_request', 'The body must be JSON.', { field: 'body' });
          // Checked here before an account's scope is minted for it, so nothing unsigned reaches the owner; the owner checks the same bytes again.
          await gateway.cloudCallbacks.verify(number, request.body, typeof signature === 'string' ? signature : undefined);
          const body: CloudDeliveryBody = {
            raw_body_base64: request.body.toString('base64'),
            signature: typeof signature === 'string' ? signature : null,
          };
          const answer = await gateway.dispatch.run(cloudCallbackDelivery, {
            scope: accountScope(number.accountId),
            actor: { kind: 'system', id: number.id, label: `Meta's callback for ${number.phone}`, address: request.ip },
            params: { number_id: number.id },
            query: {},
            body,
            idempotencyKey: undefined,
          });
          return send(reply, answer);
        },
      );
    }
  });
}
