/**
 * A send, from a parsed request to its answer: the recipient as the number knows the person, the
 * file stored or reused, a link preview fetched or given, the idempotency key's record, the
 * governor's queue and the wait a client asked for. The HTTP API's send operation is one caller;
 * how the answer is written (the API's message shape) is handed in, so this stays below the web.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { AppError } from '../domain/errors.ts';
import type { MediaObject } from '../domain/media.ts';
import type { WhatsAppNumber } from '../domain/model.ts';
import type { E164 } from '../domain/phone.ts';
import { phoneVariant, sameLine } from '../domain/phone-variants.ts';
import type { LinkPreview, LinkPreviewAsk } from '../domain/structured-content.ts';
import type { AccountScope } from '../domain/tenant-scope.ts';
import type { LinkPreviewFetcher } from '../media/link-previews.ts';
import type { MediaService } from '../media/media-service.ts';
import type { SendGovernor } from './governor/send-governor.ts';
import type { IdempotentSendService } from './idempotent-send.ts';
import type { IdentityMap } from './identities.ts';
import type { NumberCheckService } from './number-checks.ts';
import type { SendBacklog } from './send-backlog.ts';
import { assertViewOnceKind, firstLink, type MediaInput, type SendInput } from './send-input.ts';
import type { SendMessageService } from './send-message.ts';
import type { SendOutcome, SendRequest } from './send-request.ts';

/** What a send reaches, and how its answer is written. */
export interface SendParts {
  sender: Pick<SendMessageService, 'send' | 'assertSendable'>;
  governor: Pick<SendGovernor, 'waitForLeave'>;
  idempotentSender: Pick<IdempotentSendService, 'send' | 'answerFromRecord'>;
  media: FileParts['media'];
  sendBacklog: Pick<SendBacklog, 'admit'>;
  /** The account's settings: fetching a page for a preview is its choice. */
  accounts: { settings(scope: AccountScope): Promise<{ linkPreviews: boolean }> };
  linkPreviews: Pick<LinkPreviewFetcher, 'preview'>;
  /**
   * The answer's body for a message sent (or queued) with its file: what the key's record keeps,
   * so a replay answers the same body.
   */
  present(outcome: SendOutcome, media: MediaObject | undefined): unknown;
}

/** What a request's file reaches: the account's uploads, and the store for new bytes. */
export interface FileParts {
  media: Pick<MediaService, 'find' | 'asKind' | 'ingestFromUrl' | 'ingest' | 'outgoing'>;
}

/** What resolving a recipient reaches: the number's identity map, and WhatsApp's answer to a check. */
export interface RecipientParts {
  identities: Pick<IdentityMap, 'knownForm' | 'phoneOf'>;
  numberChecks: Pick<NumberCheckService, 'answeredForm'>;
}

export interface SendAnswer {
  statusCode: number;
  body: unknown;
  replayed: boolean;
}

/**
 * The send as this node makes it, once it serves from_phone (or no node does and it answers why);
 * refused at once past the node's backlog. A client's wait for a queued message holds no place in it.
 */
export async function sendHere(
  services: SendParts,
  scope: AccountScope,
  number: WhatsAppNumber,
  input: SendInput,
  idempotencyKey: string | undefined,
  preferWaitSeconds?: number,
): Promise<SendAnswer> {
  const answer = await services.sendBacklog.admit(() => sendOnce(services, scope, number, input, idempotencyKey));
  const waitMs = input.wait === true ? null : preferWaitSeconds === undefined ? undefined : preferWaitSeconds * 1_000;
  if (answer.statusCode !== 202 || waitMs === undefined || answer.replayed) return answer;
  // The client asked for the answer once the message has left: the API promises no time-out.
  const queued = answer.body as { message_id: string };
  const left = await services.governor.waitForLeave(queued.message_id, waitMs);
  if (left === undefined) return answer;
  if (left === 'sent') {
    const { scheduled_for: _due, expires_at: _expiry, wait_reason: _reason, ...sent } = answer.body as Record<string, unknown>;
    return { statusCode: 200, body: { ...sent, status: 'sent' }, replayed: false };
  }
  return { ...answer, body: { ...(answer.body as object), status: left } };
}

async function sendOnce(
  services: SendParts,
  scope: AccountScope,
  number: WhatsAppNumber,
  input: SendInput,
  idempotencyKey: string | undefined,
): Promise<SendAnswer> {
  const { accountId } = scope;
  // A replay of a send with a file is answered before the file is stored again; only a URL's
  // bytes are unknown until fetched, so those sends reach the claim after their fetch.
  if (idempotencyKey !== undefined && input.media !== undefined) {
    const known = await answerKnownKey(services, number, input, idempotencyKey);
    if (known !== undefined) return known;
  }
  // Check first, fetch last: a send refused for anything it says (its number, quota, reply_to,
  // send_at, group) never fetches a page or a file, nor stores one (ADR 0055).
  if (input.linkPreview?.fetch === true) await assertMayFetchPreviews(services, scope);
  if ((input.media !== undefined && input.media.id === undefined) || input.linkPreview?.fetch === true)
    await services.sender.assertSendable({
      number,
      ...recipientOf(input),
      // A template's header file is not fetched for an engine that declines templates.
      structured: input.structured,
      replyTo: input.replyTo,
      ...(input.schedule !== undefined && { schedule: input.schedule }),
    });
  const preview =
    input.linkPreview === undefined ? undefined : await resolveLinkPreview(services, scope, input.fromPhone, input.linkPreview, input.text);
  const media = input.media === undefined ? undefined : await resolveMedia(services, accountId, input.media);
  // A file's kind is known only now, from its bytes, when the request did not name it.
  if (media !== undefined && input.structured !== undefined && 'viewOnce' in input.structured) assertViewOnceKind(media.kind);
  const sendRequest: SendRequest = {
    number,
    ...recipientOf(input),
    text: input.text,
    media,
    mediaFingerprint: media === undefined ? undefined : mediaFingerprint(media.sha256, input.media!),
    replyTo: input.replyTo,
    ...contentOf(input),
    ...(preview !== undefined && { structured: { linkPreview: preview.preview } }),
    ...(preview?.thumbnail !== undefined && { linkPreviewThumbnail: preview.thumbnail }),
    ...(input.schedule !== undefined && { schedule: input.schedule }),
  };
  const present = (outcome: SendOutcome) => services.present(outcome, media);
  // Without a key the send takes its usual path, with no idempotency work at all.
  if (idempotencyKey === undefined) {
    const outcome = await services.sender.send(sendRequest);
    return { statusCode: outcome.queue === undefined ? 200 : 202, body: present(outcome), replayed: false };
  }
  const outcome = await services.idempotentSender.send(sendRequest, idempotencyKey, present);
  return { statusCode: outcome.statusCode, body: outcome.body, replayed: outcome.replayed };
}

/** Fetching a page for its preview is the account's choice, off until it is made. */
async function assertMayFetchPreviews(services: Pick<SendParts, 'accounts'>, scope: AccountScope): Promise<void> {
  if ((await services.accounts.settings(scope)).linkPreviews) return;
  throw new AppError(
    'link_previews_disabled',
    'link_preview: true has the gateway fetch the page, which this account has not turned on (PATCH /account/settings with ' +
      'link_previews: true); or give the preview as an object.',
    { field: 'link_preview' },
  );
}

/**
 * The preview a text goes with: fetched from its first link (none when the page cannot be had),
 * or the caller's own, with its thumbnail read from an image of the account.
 */
async function resolveLinkPreview(
  services: Pick<SendParts, 'media' | 'linkPreviews'>,
  { accountId }: AccountScope,
  fromPhone: E164,
  ask: LinkPreviewAsk,
  text: string,
): Promise<{ preview: LinkPreview; thumbnail?: Buffer } | undefined> {
  if (ask.fetch) {
    const link = firstLink(text);
    return link === undefined ? undefined : services.linkPreviews.preview(link, { accountId, fromPhone });
  }
  const preview = { url: ask.url, title: ask.title, description: ask.description };
  if (ask.thumbnailMediaId === undefined) return { preview };
  const image = await services.media.find(accountId, ask.thumbnailMediaId, 'link_preview.thumbnail_media_id');
  if (image.kind !== 'image')
    throw new AppError('media_kind_mismatch', `link_preview.thumbnail_media_id is ${image.mimeType}, not an image.`, {
      field: 'link_preview.thumbnail_media_id',
      kind: 'image',
      mime_type: image.mimeType,
    });
  return { preview, thumbnail: await services.media.outgoing(image).read() };
}

/**
 * A request's file as a stored media object: an upload of the account, used as the kind asked
 * for, or the request's own bytes, stored now (and kept only if a message uses them).
 */
export async function resolveMedia(services: FileParts, accountId: string, input: MediaInput): Promise<MediaObject> {
  try {
    if (input.id !== undefined) return services.media.asKind(await services.media.find(accountId, input.id, idFieldOf(input)), input);
    if (input.url !== undefined) return await services.media.ingestFromUrl(input.url, { ...input, accountId, source: 'send' });
    return await services.media.ingest(Readable.from([input.data!]), { ...input, accountId, source: 'send' });
  } catch (error) {
    throw input.field === undefined ? error : movedToField(error, input.field);
  }
}

/** Where the request named its upload, for a refusal of it; the same on every path that looks the upload up. */
function idFieldOf(input: MediaInput): string {
  return `${input.field ?? 'media'}.id`;
}

/**
 * A refusal of a file given elsewhere than `media` (a template's header_media), naming where it
 * was given: the media service names `media` and its parts, as a send's file most often is.
 */
function movedToField(error: unknown, field: string): unknown {
  const named = error instanceof AppError ? error.meta?.field : undefined;
  if (!(error instanceof AppError) || typeof named !== 'string' || !/^media\b/.test(named)) return error;
  const move = (text: string) => text.replace(/\bmedia(?=\.(?:url|id|data|kind|mime_type)\b)/g, field);
  return new AppError(error.code, move(error.message), { ...error.meta, field: named.replace(/^media/, field) });
}

/**
 * What the key's record already answers (a replay, a reused key, a request in flight), read
 * without storing or fetching anything; undefined when the request is to be sent, or when its
 * file comes by URL and only the fetch can tell whether it is the same request.
 */
export async function answerKnownKey(
  services: SendParts,
  number: WhatsAppNumber,
  input: SendInput,
  idempotencyKey: string,
): Promise<SendAnswer | undefined> {
  const fingerprint = input.media === undefined ? undefined : await mediaFingerprintOf(services, number.accountId, input.media);
  if (input.media !== undefined && fingerprint === undefined) return undefined;
  const known = await services.idempotentSender.answerFromRecord(
    {
      number,
      ...recipientOf(input),
      text: input.text,
      mediaFingerprint: fingerprint,
      replyTo: input.replyTo,
      ...contentOf(input),
    },
    idempotencyKey,
  );
  return known === undefined ? undefined : { statusCode: known.statusCode, body: known.body, replayed: known.replayed };
}

/** What the send carries besides its text and file, as the request gave it. */
function contentOf(input: SendInput): Pick<SendRequest, 'structured' | 'linkPreview'> {
  return {
    ...(input.structured !== undefined && { structured: input.structured }),
    ...(input.linkPreview !== undefined && { linkPreview: input.linkPreview }),
  };
}

/**
 * The recipient as the number knows the person: a LID becomes the phone from_phone's map knows
 * for it, and a phone of a line with two forms (ADR 0050) becomes the form the map holds, or,
 * where `mayAsk` (on the number's owner), the form WhatsApp answers for it. So the message goes to
 * the person's one chat and conversation. A replay answered by another node reads the map only:
 * the owner's first send stored the person under the answered form.
 */
export async function toKnownPhone(services: RecipientParts, number: WhatsAppNumber, input: SendInput, mayAsk = false): Promise<SendInput> {
  if (input.toLid === undefined) {
    if (input.toPhone === undefined || phoneVariant(input.toPhone) === undefined) return input;
    const known =
      (await services.identities.knownForm(number.id, input.toPhone)) ??
      (mayAsk ? await services.numberChecks.answeredForm(number, input.toPhone) : undefined);
    return known === undefined || !sameLine(known, input.toPhone) ? input : { ...input, toPhone: known };
  }
  const phone = await services.identities.phoneOf(number.id, input.toLid);
  if (phone === undefined)
    throw new AppError(
      'contact_not_found',
      `${number.phone} does not know a phone for ${input.toLid} yet; it learns one when the person writes with it, or WhatsApp maps it.`,
      { field: 'to_phone' },
    );
  const { toLid: _lid, ...rest } = input;
  return { ...rest, toPhone: phone };
}

/** The send's recipient: a phone, or a group with the members it mentions. */
function recipientOf(input: SendInput): { toPhone: E164 } | { toGroup: string; mentions: readonly E164[] } {
  if (input.toGroup !== undefined) return { toGroup: input.toGroup, mentions: input.mentions };
  if (input.toPhone === undefined) throw new Error('A recipient by LID is resolved to its phone before the send.');
  return { toPhone: input.toPhone };
}

/** The file's part of an idempotent request's fingerprint: its bytes and what the caller claimed of them. */
function mediaFingerprint(sha256: string, input: MediaInput): string {
  return JSON.stringify([sha256, input.kind ?? null, input.mimeType ?? null, input.fileName ?? null]);
}

/**
 * The same fingerprint before the file is stored, for a node answering a replay for another;
 * undefined for a URL, whose bytes only a fetch would tell: the owner answers those.
 */
async function mediaFingerprintOf(services: FileParts, accountId: string, input: MediaInput): Promise<string | undefined> {
  if (input.url !== undefined) return undefined;
  const sha256 =
    input.id !== undefined
      ? (await services.media.find(accountId, input.id, idFieldOf(input))).sha256
      : createHash('sha256').update(input.data!).digest('hex');
  return mediaFingerprint(sha256, input);
}
