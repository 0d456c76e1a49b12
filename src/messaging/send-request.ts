// What a send asks of the send use case (send-message.ts), what it is answered, and the quota
// terms it is checked against.
import type { MediaObject } from '../domain/media.ts';
import type { Message, WhatsAppNumber } from '../domain/model.ts';
import type { E164 } from '../domain/phone.ts';
import type { PlanName } from '../domain/plans.ts';
import type { LinkPreviewAsk, StructuredContent } from '../domain/structured-content.ts';
import type { SendSchedule, StoredSettings } from './governor/send-governor.ts';
import type { WaitReason } from './governor/decision.ts';

/** A send to a phone, or to a group `number` is in (mentioning some of its members). */
export type SendRequest = SendContent &
  ({ toPhone: E164; toGroup?: undefined } | { toGroup: string; mentions: readonly E164[]; toPhone?: undefined });

/** What a send's checks need: who sends, to whom, quoting what, and when (assertSendable). */
export type SendCheck = Pick<SendContent, 'number' | 'replyTo' | 'schedule' | 'structured'> &
  ({ toPhone: E164; toGroup?: undefined } | { toGroup: string; mentions: readonly E164[]; toPhone?: undefined });

interface SendContent {
  /** The account's number that sends, as the request's dispatch resolved it (once). */
  number: WhatsAppNumber;
  text: string;
  /** The message's id, when the caller chose it beforehand (an idempotent send does). */
  messageId?: string;
  /** The file to send, with `text` as its caption. */
  media?: MediaObject;
  /**
   * What identifies the request's file for idempotency: its bytes' hash and the caller's claims
   * (http/operations/sending.ts), so that a key reused with another file is caught.
   */
  mediaFingerprint?: string;
  /** The message_id of a message of this chat that the send quotes. */
  replyTo?: string;
  /** A location, cards or a poll instead of a text; or, beside `media`, that it is view-once. */
  structured?: StructuredContent;
  /**
   * A text's link preview as the caller asked for it (fetched, or given), which idempotency
   * compares; what it became is in `structured`, with its thumbnail beside.
   */
  linkPreview?: LinkPreviewAsk;
  linkPreviewThumbnail?: Buffer;
  /** send_at and expires_at: the message waits in the number's queue for its time. */
  schedule?: SendSchedule;
}

/** A message the governor keeps in its number's queue: when it is due to leave, and why it waits. */
interface QueuedSend {
  /** Null while the number is paused until someone resumes it. */
  scheduledFor: Date | null;
  expiresAt: Date;
  waitReason: WaitReason;
}

/** A send's outcome: the message, and its place in the queue when it must wait (202). */
export type SendOutcome = Message & { queue?: QueuedSend };

export interface QuotaTerms {
  accountId: string;
  plan: PlanName;
  limit: number | null;
  period: string;
  at: Date;
  /** The send policies stored for the number and its account, read with the terms. */
  policies: StoredSettings;
}
