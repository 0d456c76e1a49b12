import { AppError } from '../../domain/errors.ts';
import type { MediaObject } from '../../domain/media.ts';
import type { Message, MessageDirection, MessageStatus } from '../../domain/model.ts';
import { parseE164, phoneProblem } from '../../domain/phone.ts';
import { parseGroupId } from '../../domain/groups.ts';
import type { AccountScope } from '../../domain/tenant-scope.ts';
import type { HistoryQuery } from '../../messaging/message-history.ts';
import type { OperationServices } from './services.ts';
import { presentMessage } from '../message-input.ts';
import { presentStructured } from '../../domain/structured-content.ts';

const DIRECTIONS: readonly MessageDirection[] = ['outbound', 'inbound'];
const STATUSES: readonly MessageStatus[] = ['queued', 'sent', 'delivered', 'read', 'failed', 'unknown', 'received', 'cancelled', 'expired'];
const DEFAULT_LIMIT = 50;

export interface ListQuery {
  phone?: string;
  peer?: string;
  with?: string;
  group_id?: string;
  direction?: string;
  status?: string;
  since?: string;
  until?: string;
  /** 1 to 100, checked by the query's schema. */
  limit?: number;
  cursor?: string;
  /** 0 to 10,000, checked by the query's schema. */
  offset?: number;
}

/** The query's filters, each checked, with the field at fault named. */
export async function readListQuery(
  gateway: Pick<OperationServices, 'numbers'>,
  scope: AccountScope,
  raw: ListQuery,
): Promise<HistoryQuery> {
  const query: HistoryQuery = { limit: raw.limit ?? DEFAULT_LIMIT };
  if (raw.phone !== undefined) query.numberId = (await gateway.numbers.findNumber(scope, raw.phone).catch(notYours)).id;
  if (raw.peer !== undefined) {
    const peer = parseE164(raw.peer);
    if (peer === undefined) throw new AppError('invalid_phone_number', phoneProblem('peer', raw.peer), { field: 'peer' });
    query.peer = peer;
  }
  if (raw.with !== undefined) {
    if (raw.peer !== undefined)
      throw new AppError('invalid_request', 'Give peer or with, not both: with is the person by phone or LID.', {
        field: 'with',
        problem: 'conflict',
      });
    query.with = raw.with;
  }
  if (raw.group_id !== undefined) query.groupId = parseGroupId(raw.group_id, 'group_id');
  if (raw.direction !== undefined) query.direction = oneOf(raw.direction, DIRECTIONS, 'direction');
  if (raw.status !== undefined) query.status = oneOf(raw.status, STATUSES, 'status');
  if (raw.since !== undefined) query.since = readTime(raw.since, 'since');
  if (raw.until !== undefined) query.until = readTime(raw.until, 'until');
  if (raw.cursor !== undefined) query.cursor = raw.cursor;
  if (raw.offset !== undefined) query.offset = raw.offset;
  return query;
}

function notYours(error: unknown): never {
  if (error instanceof AppError && error.code === 'number_not_found') {
    throw new AppError('number_not_found', 'phone is not a number of your account.', { field: 'phone' });
  }
  throw error;
}

function oneOf<T extends string>(raw: string, allowed: readonly T[], field: string): T {
  if ((allowed as readonly string[]).includes(raw)) return raw as T;
  throw new AppError('invalid_request', `${field} must be one of ${allowed.join(', ')}.`, { field });
}

function readTime(raw: string, field: string): Date {
  // An ISO 8601 time with its zone, so that no server's local time is guessed at.
  const at = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(raw) ? new Date(raw) : undefined;
  if (at === undefined || Number.isNaN(at.getTime())) {
    throw new AppError('invalid_request', `${field} must be an ISO 8601 time with its zone, e.g. 2026-11-25T09:30:00Z.`, { field });
  }
  return at;
}

/** Messages as the API shows them, their files described in one query for the page. */
export async function presentPage(gateway: Pick<OperationServices, 'media' | 'mediaLinks'>, scope: AccountScope, messages: Message[]) {
  const ids = messages.flatMap((message) => (message.mediaId === null ? [] : [message.mediaId]));
  const media = new Map((await gateway.media.describeForMessages(scope, ids)).map((item) => [item.id, item]));
  return messages.map((message) =>
    presentStoredMessage(gateway, message, message.mediaId === null ? undefined : media.get(message.mediaId)),
  );
}

/**
 * A stored message: what the send answers, with its direction, kind and what happened to it. A
 * file whose bytes retention removed is still described, marked `expired` and without a url.
 */
function presentStoredMessage(
  gateway: Pick<OperationServices, 'mediaLinks'>,
  message: Message,
  media: (MediaObject & { removed: boolean }) | undefined,
) {
  const base = presentMessage(message, media, { plain: (id) => gateway.mediaLinks.plain(id) });
  const described =
    base.media === undefined || media === undefined
      ? {}
      : { media: media.removed ? { ...base.media, status: 'expired', url: undefined } : { ...base.media, status: 'available' } };
  const times = message.times;
  return {
    ...base,
    ...described,
    direction: message.direction,
    from_lid: message.fromLid,
    content_kind: message.contentKind,
    status_history: statusHistory(message),
    edited_at: times?.edited?.toISOString() ?? null,
    revoked_at: times?.revoked?.toISOString() ?? null,
  };
}

/** The statuses the message reached, oldest first, each with its time. */
function statusHistory(message: Message): { status: MessageStatus; at: string }[] {
  const times = message.times;
  const reached: [MessageStatus, Date | null | undefined][] =
    message.direction === 'inbound'
      ? [
          ['received', message.createdAt],
          ['read', times?.read],
        ]
      : [
          ['queued', message.createdAt],
          ['sent', times?.sent],
          ['delivered', times?.delivered],
          ['read', times?.read],
          ['failed', times?.failed],
          [message.status === 'expired' ? 'expired' : 'cancelled', times?.unsent],
        ];
  return reached.flatMap(([status, at]) => (at === null || at === undefined ? [] : [{ status, at: at.toISOString() }]));
}

/** One message with its reactions and the texts it had before, and a poll's tally. */
export async function presentDetail(
  gateway: Pick<OperationServices, 'media' | 'mediaLinks' | 'history' | 'polls'>,
  scope: AccountScope,
  message: Message,
) {
  const [[presented], changes, tally] = await Promise.all([
    presentPage(gateway, scope, [message]),
    gateway.history.changes(message),
    gateway.polls.tally(message),
  ]);
  return {
    ...presented!,
    ...(tally !== undefined && presentStructured(message.structured, tally)),
    reactions: changes.reactions.map((reaction) => ({
      emoji: reaction.emoji,
      by: reaction.reactor,
      from_me: reaction.fromUs,
      reacted_at: reaction.reactedAt.toISOString(),
    })),
    revisions: changes.revisions.map((revision) => ({
      kind: revision.kind,
      previous_message: revision.previousText,
      from_me: revision.fromUs,
      at: revision.changedAt.toISOString(),
    })),
  };
}
