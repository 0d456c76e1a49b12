import { LazyLru } from '../../domain/lazy-lru.ts';
import { parseClock, type SendPolicy } from '../../domain/send-policy.ts';
import type { NewChatCap } from '../../domain/new-chat-quota.ts';

/**
 * Why a message waits; `paused` is set by the queue runner from its SendHold, and `cancelling`
 * by a clear of the queue (the message is being cancelled), never here.
 */
export type WaitReason =
  | 'scheduled'
  | 'gap'
  | 'per_minute'
  | 'per_hour'
  | 'per_day'
  | 'recipient_gap'
  | 'first_contacts'
  | 'new_chat_cap'
  | 'quiet_hours'
  | 'paused'
  | 'not_connected'
  | 'cancelling';

export const WAIT_REASONS: readonly WaitReason[] = [
  'scheduled',
  'gap',
  'per_minute',
  'per_hour',
  'per_day',
  'recipient_gap',
  'first_contacts',
  'new_chat_cap',
  'quiet_hours',
  'paused',
  'not_connected',
  'cancelling',
];

/** One send of the number, made or planned: when, to whom, and whether it was a first contact. */
export interface SendMark {
  at: number;
  recipient: string;
  firstContact: boolean;
}

/**
 * The number's sends as the rules ask about them, each looking back from a time `at` (ADR 0048:
 * answered from counters kept as the number sends, never by reading its history).
 */
export interface MarkView {
  /** The latest send at or before `at`. */
  latest(at: number): number | undefined;
  /** The latest send to the recipient at or before `at`. */
  latestTo(recipient: string, at: number): number | undefined;
  /**
   * With `cap` or more sends (first contacts only, if asked) in the window (at - windowMs, at]:
   * the time of the cap-th newest, whose leaving frees the window; else undefined.
   */
  capReachedBy(at: number, windowMs: number, cap: number, firstContacts: boolean): number | undefined;
}

/** What the governor knows of the number: its sends of the last 24 hours, sent or planned. */
export interface SendHistory {
  marks: MarkView;
  /** When the number was linked: its warm-up counts days from here. */
  linkedAt: Date;
  /** WhatsApp's cap on the number's new chats, where it is known (ADR 0058); the policy's figure alone otherwise. */
  newChatCap?: NewChatCap | undefined;
}

/** The message to place. */
export interface SendCandidate {
  recipient: string;
  /** The number never exchanged a message with the recipient. */
  firstContact: boolean;
  /** Not before this (send_at); null for as soon as allowed. */
  notBefore: Date | null;
}

export type Decision = { kind: 'now' } | { kind: 'wait'; until: Date; reason: WaitReason };

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Each rule moves the candidate forward; a policy always settles well within this many moves. */
const MAX_MOVES = 1_000;

/**
 * When a message may leave under the policy: the earliest time at or after `now` (and its
 * send_at) at which every rule holds, looking back from that time over the number's sends.
 * Sends recorded after the candidate time are not looked at: the runner decides again at release
 * time over the sends actually made, so that caps hold exactly whatever the estimate was.
 *
 * `random` (0 ≤ r < 1) picks the gap between min_gap_ms and max_gap_ms; pass `() => 0` for the
 * release-time check, where the jittered gap was already spent in the planned time.
 */
export function decide(policy: SendPolicy, history: SendHistory, candidate: SendCandidate, now: Date, random: () => number): Decision {
  const gapMs = policy.minGapMs + Math.floor(random() * (policy.maxGapMs - policy.minGapMs));
  const startAt = Math.max(now.getTime(), candidate.notBefore?.getTime() ?? 0);
  let at = startAt;
  let reason: WaitReason | undefined = at > now.getTime() ? 'scheduled' : undefined;
  for (let move = 0; move < MAX_MOVES; move++) {
    const next = firstBlockingRule(policy, history, candidate, at, gapMs);
    if (next === undefined) return at <= now.getTime() ? { kind: 'now' } : { kind: 'wait', until: new Date(at), reason: reason ?? 'gap' };
    at = Math.max(at + 1, next.until);
    reason = next.reason;
  }
  throw new Error('The send policy did not settle on a time; its figures contradict each other.');
}

interface Move {
  until: number;
  reason: WaitReason;
}

function firstBlockingRule(
  policy: SendPolicy,
  history: SendHistory,
  candidate: SendCandidate,
  at: number,
  gapMs: number,
): Move | undefined {
  const { marks, linkedAt } = history;
  return (
    quietHoursMove(policy, at) ??
    gapMove(marks.latest(at), at, gapMs, 'gap') ??
    windowMove(marks, at, MINUTE, policy.perMinute, 'per_minute') ??
    windowMove(marks, at, HOUR, policy.perHour, 'per_hour') ??
    windowMove(marks, at, DAY, policy.perDay, 'per_day') ??
    gapMove(marks.latestTo(candidate.recipient, at), at, policy.perRecipientGapMs, 'recipient_gap') ??
    (candidate.firstContact
      ? (windowMove(marks, at, DAY, firstContactCap(policy, linkedAt, at), 'first_contacts') ??
        newChatCapMove(marks, history.newChatCap, at))
      : undefined)
  );
}

/**
 * WhatsApp's own cap on new chats (ADR 0058): `remaining` first contacts after its read, until
 * its cycle ends. Once they are spent (or a 475 said the number is capped, remaining 0), a first
 * contact waits for the cycle's end, when WhatsApp renews the quota; replies never meet this rule.
 */
function newChatCapMove(marks: MarkView, cap: NewChatCap | undefined, at: number): Move | undefined {
  if (cap === undefined || at >= cap.until) return undefined;
  const spent = cap.remaining <= 0 || marks.capReachedBy(at, at - cap.since, cap.remaining, true) !== undefined;
  return spent ? { until: cap.until, reason: 'new_chat_cap' } : undefined;
}

/** How long "typing…" shows before a message of this many characters: a person's pace, within bounds. */
export function typingDurationMs(characters: number): number {
  return Math.min(TYPING_MAX_MS, TYPING_MIN_MS + characters * TYPING_PER_CHARACTER_MS);
}

const TYPING_MIN_MS = 1_000;
const TYPING_MAX_MS = 8_000;
/** About 200 characters a minute, a quick typist on a phone. */
const TYPING_PER_CHARACTER_MS = 300;

function gapMove(last: number | undefined, at: number, gapMs: number, reason: WaitReason): Move | undefined {
  return last !== undefined && at < last + gapMs ? { until: last + gapMs, reason } : undefined;
}

/**
 * A cap over the rolling window ending at `at`: when full, wait until the send whose leaving
 * frees it has left (the cap-th newest). A cap below 1 is refused when a policy is written.
 */
function windowMove(marks: MarkView, at: number, windowMs: number, cap: number | null, reason: WaitReason): Move | undefined {
  if (cap === null) return undefined;
  const freedBy = marks.capReachedBy(at, windowMs, cap, reason === 'first_contacts');
  return freedBy === undefined ? undefined : { until: freedBy + windowMs, reason };
}

/**
 * The first-contact cap on the day of `at`: the policy's, or during warm-up `start` on the day
 * the number was linked plus `daily_increase` for each whole day since, whichever is lower.
 */
export function firstContactCap(policy: SendPolicy, linkedAt: Date, at: number): number | null {
  if (policy.warmUp === null) return policy.firstContactsPerDay;
  const days = Math.max(0, Math.floor((at - linkedAt.getTime()) / DAY));
  const ramp = policy.warmUp.start + days * policy.warmUp.dailyIncrease;
  return policy.firstContactsPerDay === null ? ramp : Math.min(ramp, policy.firstContactsPerDay);
}

/** Inside quiet hours, the move is to their end, in the policy's time zone. */
function quietHoursMove(policy: SendPolicy, at: number): Move | undefined {
  if (policy.quietHours === null) return undefined;
  const start = parseClock(policy.quietHours.start)!;
  const end = parseClock(policy.quietHours.end)!;
  if (start === end) return undefined;
  const { minutes, seconds } = localClock(at, policy.quietHours.timeZone);
  const inside = start < end ? minutes >= start && minutes < end : minutes >= start || minutes < end;
  if (!inside) return undefined;
  const minutesToEnd = (end - minutes + 24 * 60) % (24 * 60);
  // Wall-clock arithmetic: across a change of daylight saving time this lands an hour off, and
  // the next pass of the rules moves it again.
  return { until: at + minutesToEnd * MINUTE - seconds * 1_000, reason: 'quiet_hours' };
}

/**
 * One formatter per time zone in use, bounded: a zone is canonical when stored (parsePolicyBody),
 * but a bound keeps any other way in (a stored spelling from before, a preset) from growing the
 * process, as 28,000 spellings of one zone once took it from 237 to 551 MiB.
 */
const clockFormats = new LazyLru<string, Intl.DateTimeFormat>({ max: 512 });

function localClock(at: number, timeZone: string): { minutes: number; seconds: number } {
  let format = clockFormats.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
    clockFormats.set(timeZone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(new Date(at)).map((part) => [part.type, part.value]));
  return { minutes: Number(parts.hour) * 60 + Number(parts.minute), seconds: Number(parts.second) + (at % 1_000) / 1_000 };
}
