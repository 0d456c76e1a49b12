import type { FastifyInstance } from 'fastify';
import type { Gateway } from '../../main.ts';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { parseSandboxReceiveInput, parseSendInput, presentMessage, type MediaInput, type SendInput } from '../message-input.ts';
import type { MediaObject } from '../../domain/media.ts';
import type { Message } from '../../domain/model.ts';
import type { E164 } from '../../domain/phone.ts';
import type { SendRequest } from '../../messaging/send-message.ts';
import { AppError } from '../../domain/errors.ts';
import type { AccountScope } from '../../domain/tenant-scope.ts';
import { apiKeyAuthHook, keyScope } from '../plugins/api-key-auth.ts';
import { parseIdempotencyKey } from '../../messaging/idempotent-send.ts';
import type { NodeAddress } from '../../cluster/node-client.ts';
import {
  errorResponses,
  idempotencyKeyHeadersSchema,
  idempotentReplayedHeaderSchema,
  messageRequestSchema,
  sandboxReceiveRequestSchema,
  receivedMessageResponseSchema,
  sentMessageResponseSchema,
  type MessageRequestBody,
  type SandboxReceiveBody,
} from '../schemas.ts';

const bearer = [{ apiKey: [] }];

/** The paths that take an API key, for answering `Expect: 100-continue` without one (plugins/early-refusals.ts). */
export const KEYED_PATHS: ReadonlySet<string> = new Set(['/send_message', '/api/send_message', '/sandbox/receive', '/api/sandbox/receive', '/check_numbers', '/api/check_numbers', '/typing', '/api/typing', '/send_reaction', '/api/send_reaction', '/groups', '/api/groups']);

export interface SendAnswer {
  statusCode: number;
  body: unknown;
  replayed: boolean;
  retryAfter?: string;
}

/** The send as this node makes it, once it serves from_phone (or no node does and it answers why). */
export async function sendHere(gateway: Gateway, accountId: string, input: SendInput, idempotencyKey: string | undefined): Promise<SendAnswer> {
  // A replay of a send with a file is answered before the file is stored again; only a URL's
  // bytes are unknown until fetched, so those sends reach the claim after their fetch.
  if (idempotencyKey !== undefined && input.media !== undefined) {
    const known = await answerKnownKey(gateway, accountId, input, idempotencyKey);
    if (known !== undefined) return known;
  }
  // Check first, fetch last: a send refused for its number or quota never downloads or stores a file.
  if (input.media !== undefined && input.media.id === undefined) await gateway.sender.assertMaySend(accountId, input.fromPhone);
  const media = input.media === undefined ? undefined : await resolveMedia(gateway, accountId, input.media);
  const sendRequest: SendRequest = {
    accountId,
    fromPhone: input.fromPhone,
    ...recipientOf(input),
    text: input.text,
    media,
    mediaFingerprint: media === undefined ? undefined : mediaFingerprint(media.sha256, input.media!),
    replyTo: input.replyTo,
  };
  const present = (message: Message) => presentMessage(message, media, addressesOf(gateway));
  // Without a key the send takes its usual path, with no idempotency work at all.
  if (idempotencyKey === undefined) return { statusCode: 200, body: present(await gateway.sender.send(sendRequest)), replayed: false };
  const outcome = await gateway.idempotentSender.send(sendRequest, idempotencyKey, present);
  return { statusCode: outcome.statusCode, body: outcome.body, replayed: outcome.replayed };
}

/**
 * A request's file as a stored media object: an upload of the account, used as the kind asked
 * for, or the request's own bytes, stored now (and kept only if a message uses them).
 */
export async function resolveMedia(gateway: Gateway, accountId: string, input: MediaInput): Promise<MediaObject> {
  if (input.id !== undefined) return gateway.media.asKind(await gateway.media.find(accountId, input.id), input);
  if (input.url !== undefined) return gateway.media.ingestFromUrl(input.url, { ...input, accountId, source: 'send' });
  return gateway.media.ingest(Readable.from([input.data!]), { ...input, accountId, source: 'send' });
}

/**
 * What the key's record already answers (a replay, a reused key, a request in flight), read
 * without storing or fetching anything; undefined when the request is to be sent, or when its
 * file comes by URL and only the fetch can tell whether it is the same request.
 */
async function answerKnownKey(gateway: Gateway, accountId: string, input: SendInput, idempotencyKey: string): Promise<SendAnswer | undefined> {
  const fingerprint = input.media === undefined ? undefined : await mediaFingerprintOf(gateway, accountId, input.media);
  if (input.media !== undefined && fingerprint === undefined) return undefined;
  const known = await gateway.idempotentSender.answerFromRecord(
    { accountId, fromPhone: input.fromPhone, ...recipientOf(input), text: input.text, mediaFingerprint: fingerprint, replyTo: input.replyTo },
    idempotencyKey,
  );
  return known === undefined ? undefined : { statusCode: known.statusCode, body: known.body, replayed: known.replayed };
}

/** The send's recipient: a phone, or a group with the members it mentions. */
function recipientOf(input: SendInput): { toPhone: E164 } | { toGroup: string; mentions: readonly E164[] } {
  return input.toGroup === undefined ? { toPhone: input.toPhone } : { toGroup: input.toGroup, mentions: input.mentions };
}

/** Where answers say a file is downloaded: under WAGW_PUBLIC_URL when it is set. */
function addressesOf(gateway: Gateway) {
  return { plain: (id: string) => gateway.mediaLinks.plain(id) };
}

/** The file's part of an idempotent request's fingerprint: its bytes and what the caller claimed of them. */
function mediaFingerprint(sha256: string, input: MediaInput): string {
  return JSON.stringify([sha256, input.kind ?? null, input.mimeType ?? null, input.fileName ?? null]);
}

/**
 * The same fingerprint before the file is stored, for a node answering a replay for another;
 * undefined for a URL, whose bytes only a fetch would tell: the owner answers those.
 */
async function mediaFingerprintOf(gateway: Gateway, accountId: string, input: MediaInput): Promise<string | undefined> {
  if (input.url !== undefined) return undefined;
  const sha256 = input.id !== undefined ? (await gateway.media.find(accountId, input.id)).sha256 : createHash('sha256').update(input.data!).digest('hex');
  return mediaFingerprint(sha256, input);
}

/**
 * Sends where from_phone's session runs. This node's own sessions answer at once; a number of
 * the account served by another node is forwarded there (cluster/owner-router.ts), and the
 * owner's answer, error or not, is the client's. Anything else (a number of another account,
 * none at all) takes the local path, which answers it as on a single node.
 */
async function routeSend(
  gateway: Gateway,
  scope: AccountScope,
  input: SendInput,
  idempotencyKey: string | undefined,
  forward: object,
): Promise<SendAnswer> {
  const { accountId } = scope;
  const here = () => sendHere(gateway, accountId, input, idempotencyKey);
  if (gateway.supervisor.servesPhone(input.fromPhone)) return here();
  // A phone outside the key's account is not found here, and the local path answers it (403).
  const number = await gateway.numbers.findNumber(scope, input.fromPhone).catch((error: unknown) => {
    if (error instanceof AppError && error.code === 'number_not_found') return undefined;
    throw error;
  });
  if (number === undefined) return here();
  // A replay, a reused key or a request in progress is answered here, without the owner.
  if (idempotencyKey !== undefined) {
    const known = await answerKnownKey(gateway, accountId, input, idempotencyKey);
    if (known !== undefined) return known;
  }
  const forwardTo = async (owner: NodeAddress, signal: AbortSignal) => {
    const answer = await gateway.nodeClient.call(owner, 'POST', '/internal/send', forward, signal);
    return {
      statusCode: answer.status,
      body: answer.body,
      replayed: answer.headers.get('idempotent-replayed') === 'true',
      retryAfter: answer.headers.get('retry-after') ?? undefined,
    };
  };
  // With a key, the claim in the shared database lets one attempt through whichever node makes
  // it, so a send the owner stopped answering may be made again on the owner that took over.
  return gateway.router.run(number, here, forwardTo, { repeatable: idempotencyKey !== undefined });
}

/** POST /send_message, its /api alias, and the sandbox's POST /sandbox/receive. */
export function registerMessageRoutes(app: FastifyInstance, gateway: Gateway): void {
  const onRequest = apiKeyAuthHook(gateway.authenticator);
  const maxLength = gateway.config.maxMessageLength;

  for (const [url, operationId] of [['/send_message', 'sendMessage'], ['/api/send_message', 'sendMessageApi']] as const) {
    app.post<{ Body: MessageRequestBody }>(
      url,
      {
        onRequest,
        schema: {
          operationId,
          summary: 'Send a WhatsApp text message',
          description:
            'Sends from one of your account\'s numbers to any phone number. The 200 comes only after the message is durably stored and the engine has accepted it. /send_message and /api/send_message are the same operation. With an Idempotency-Key header, a retry of the same request within 24 hours answers the first response (marked Idempotent-Replayed: true) instead of sending again.',
          tags: ['messages'],
          security: bearer,
          body: messageRequestSchema,
          headers: idempotencyKeyHeadersSchema,
          response: {
            200: { ...sentMessageResponseSchema, headers: idempotentReplayedHeaderSchema },
            ...errorResponses(400, 401, 403, 409, 413, 422, 429, 500, 503),
          },
        },
      },
      async (request, reply) => {
        const input = parseSendInput(request.body, maxLength);
        const idempotencyKey = parseIdempotencyKey(request.headers['idempotency-key']);
        const scope = keyScope(request);
        const answer = await routeSend(gateway, scope, input, idempotencyKey, {
          account_id: scope.accountId,
          body: request.body,
          idempotency_key: idempotencyKey ?? null,
        });
        if (answer.replayed) void reply.header('Idempotent-Replayed', 'true');
        if (answer.retryAfter !== undefined) void reply.header('Retry-After', answer.retryAfter);
        return reply.status(answer.statusCode).send(answer.body);
      },
    );
  }

  // The sandbox's receive answers at both paths too, like every public operation.
  for (const [url, operationId] of [['/sandbox/receive', 'simulateIncomingMessage'], ['/api/sandbox/receive', 'simulateIncomingMessageApi']] as const) {
    app.post<{ Body: SandboxReceiveBody }>(
      url,
      {
        onRequest,
        schema: {
          operationId,
          summary: 'Simulate an incoming message on a sandbox number',
          description:
            'Produces an incoming message on one of your sandbox numbers exactly as a real one would arrive: stored with status "received" and delivered to your webhooks. Incoming messages do not count against the monthly volume; simulated ones are limited per account and minute instead. /sandbox/receive and /api/sandbox/receive are the same operation.',
          tags: ['sandbox'],
          security: bearer,
          body: sandboxReceiveRequestSchema,
          response: { 200: receivedMessageResponseSchema, ...errorResponses(400, 401, 403, 413, 422, 429, 500, 503) },
        },
      },
      async (request) => {
        const input = parseSandboxReceiveInput(request.body, maxLength);
        const scope = keyScope(request);
        const mediaInput = input.media;
        // An upload is sent as stored; bytes in the body are described but not stored here, as
        // the receiving number stores its own copy. Either is read only after the inbox's checks.
        const loadMedia =
          mediaInput === undefined ? undefined
          : mediaInput.data !== undefined ? () => gateway.media.describe(mediaInput.data!, mediaInput)
          : async () => gateway.media.outgoing(await resolveMedia(gateway, scope.accountId, mediaInput));
        const message = await gateway.sandboxInbox.receiveOnPhone(scope, input.toPhone, {
          fromPhone: input.fromPhone,
          text: input.text,
          ...(mediaInput !== undefined && { failedDownloads: input.failedDownloads }),
          ...(input.structured !== undefined && { structured: input.structured }),
          ...(input.groupId !== undefined && { groupId: input.groupId, mentions: input.mentions ?? [] }),
        }, input.replyTo, loadMedia);
        return presentMessage(message, message.mediaId === null ? undefined : await gateway.media.find(scope.accountId, message.mediaId, 'media'), addressesOf(gateway));
      },
    );
  }
}
