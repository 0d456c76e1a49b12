import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Gateway } from '../../main.ts';
import { notFound } from '../plugins/errors.ts';
import { accountScope } from '../../domain/tenant-scope.ts';
import { parseSendInput } from '../message-input.ts';
import { parseIdempotencyKey } from '../../messaging/idempotent-send.ts';
import { ALIVE_PATH, NodeCallVerifier } from '../../cluster/node-client.ts';
import type { LinkMethod } from '../../messaging/number-linking.ts';
import { sendHere } from './messages.ts';
import { checkHere, type CheckNumbersBody } from './number-checks.ts';
import { typingHere, type TypingBody } from './typing.ts';
import { actionHere, type ActionRequest } from './message-actions.ts';
import { groupCallHere, type GroupRequest } from './groups.ts';

interface ForwardedSend {
  account_id: string;
  body: unknown;
  idempotency_key: string | null;
}

/**
 * The calls nodes make to each other (docs/cluster.md): a send forwarded to the node that owns
 * from_phone, and the console's linking and restart of a number, served by its owner. Each call
 * must carry a valid signature by the cluster key (derived from WAGW_SECRET_KEY); anything else
 * is answered exactly as an unknown path is, a 404. A signature names the node it is for, so a
 * call made for one node is refused by every other. These routes are not part of the public API document.
 */
export function registerInternalRoutes(app: FastifyInstance, gateway: Gateway): void {
  const verifier = new NodeCallVerifier(gateway.clusterKey, gateway.keeper.nodeId);
  // The headers are judged before the body is read: a call not signed for this node is refused
  // from them alone, exactly as an unknown path is, and none of its body is read.
  const onRequest = async (request: FastifyRequest) => {
    if (!verifier.verifyHeaders(request.method, request.url, request.headers)) throw notFound(request);
  };
  const preHandler = async (request: FastifyRequest) => {
    const body = request.body === undefined ? '' : JSON.stringify(request.body);
    if (!verifier.bodyMatches(body, request.headers)) throw notFound(request);
  };
  const hidden = { hide: true };
  // A forwarded call carries the account of the key the first node authenticated; the cluster
  // key's signature, checked above, is what vouches for it, so the scope is minted here.

  // The liveness probe of a node whose call is under way (cluster/owner-router.ts): it touches
  // nothing, so that only a node that cannot run at all fails it.
  app.get(ALIVE_PATH, { onRequest, preHandler, schema: hidden }, async () => ({ ok: true }));

  app.post<{ Body: ForwardedSend }>('/internal/send', { onRequest, preHandler, schema: hidden }, async (request, reply) => {
    const forwarded = request.body;
    const input = parseSendInput(forwarded.body as never, gateway.config.maxMessageLength);
    const key = forwarded.idempotency_key === null ? undefined : parseIdempotencyKey(forwarded.idempotency_key);
    const answer = await sendHere(gateway, forwarded.account_id, input, key);
    if (answer.replayed) void reply.header('Idempotent-Replayed', 'true');
    return reply.status(answer.statusCode).send(answer.body);
  });

  app.post<{ Body: { account_id: string; body: CheckNumbersBody } }>('/internal/check_numbers', { onRequest, preHandler, schema: hidden }, async (request, reply) => {
    const answer = await checkHere(gateway, accountScope(request.body.account_id), request.body.body);
    return reply.status(answer.statusCode).send(answer.body);
  });

  app.post<{ Body: { account_id: string; body: TypingBody } }>('/internal/typing', { onRequest, preHandler, schema: hidden }, async (request, reply) => {
    const answer = await typingHere(gateway, accountScope(request.body.account_id), request.body.body);
    return reply.status(answer.statusCode).send(answer.body);
  });

  app.post<{ Body: { account_id: string; body: ActionRequest } }>('/internal/message_action', { onRequest, preHandler, schema: hidden }, async (request, reply) => {
    const answer = await actionHere(gateway, accountScope(request.body.account_id), request.body.body);
    return reply.status(answer.statusCode).send(answer.body);
  });

  app.post<{ Body: { account_id: string; body: GroupRequest } }>('/internal/groups', { onRequest, preHandler, schema: hidden }, async (request, reply) => {
    const answer = await groupCallHere(gateway, accountScope(request.body.account_id), request.body.body);
    return reply.status(answer.statusCode).send(answer.body);
  });

  const numberOf = (id: string) => gateway.numbers.findNumberForOwner(id);
  app.post<{ Params: { id: string } }>('/internal/numbers/:id/restart', { onRequest, preHandler, schema: hidden }, async (request) => {
    await gateway.supervisor.restart(await numberOf(request.params.id));
    return { ok: true };
  });
  app.post<{ Params: { id: string }; Body: { method: LinkMethod } }>('/internal/numbers/:id/link', { onRequest, preHandler, schema: hidden }, async (request) => {
    return gateway.linking.start(await numberOf(request.params.id), request.body.method === 'pairing_code' ? 'pairing_code' : 'qr');
  });
  app.post<{ Params: { id: string } }>('/internal/numbers/:id/link/state', { onRequest, preHandler, schema: hidden }, async (request) => {
    return { attempt: gateway.linking.current(request.params.id) ?? null };
  });
  app.post<{ Params: { id: string } }>('/internal/numbers/:id/link/cancel', { onRequest, preHandler, schema: hidden }, async (request) => {
    await gateway.linking.cancel(request.params.id);
    return { ok: true };
  });
}
