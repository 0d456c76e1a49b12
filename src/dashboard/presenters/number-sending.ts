import type { WhatsAppNumber } from '../../domain/model.ts';
import { isCapped, type NewChatQuotaState } from '../../domain/new-chat-quota.ts';
import { PRESET_NAMES, type SendPolicyBody } from '../../domain/send-policy.ts';
import type { WaitReason } from '../../messaging/governor/decision.ts';
import type { PresentedPolicy, SendingOverview } from '../../messaging/governor/send-queue-service.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import type { Choice } from './shared.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'sendQueues'>;

/** The next messages a number's card lists; the API's GET /numbers/{id}/queue pages through all. */
const NEXT_SHOWN = 5;

/** How a number's (or the account's) sends are paced, as a card shows it. */
export interface PolicyView {
  /** "preset standard", "its own figures" or "off". */
  name: string;
  /** Whose setting is in force, in words: the number's own, the account's or the gateway's. */
  sourceText: string;
  /** The figures that matter, one short line each; empty when the governor is off. */
  figures: string[];
  /** What the form's select shows as chosen: a preset, `inherit`, or `custom` (kept by leaving it). */
  selected: string;
  choices: Choice[];
}

interface WaitCountView {
  reason: string;
  count: number;
}

interface WaitingRowView {
  id: string;
  toPhone: string;
  /** Null while the number is paused until someone resumes it. */
  scheduledFor: Date | null;
  reason: string;
}

export interface SendsChartView {
  /** One bar per hour of the last 24, oldest first; `label` is the hour's start, "HH:00" UTC. */
  bars: Array<{ start: Date; label: string; count: number }>;
  /** The policy's cap per hour; null when it has none. */
  hourlyCap: number | null;
  total: number;
}

export interface NumberSendingView {
  id: string;
  phone: string;
  policy: PolicyView;
  waiting: number;
  counts: WaitCountView[];
  next: WaitingRowView[];
  oldestWaitingSince: Date | null;
  chart: SendsChartView;
  /** WhatsApp's cap on the number's new chats, in words: the quota, the used part and the cycle's end; null until first read. */
  newChatQuota: string | null;
}

const WAIT_REASON_TEXT: Record<WaitReason, string> = {
  scheduled: 'its own send time (send_at)',
  gap: 'the gap between sends',
  per_minute: 'the cap per minute',
  per_hour: 'the cap per hour',
  per_day: 'the cap per day',
  recipient_gap: 'the gap per recipient',
  first_contacts: 'the cap on first contacts',
  new_chat_cap: "WhatsApp's cap on new chats, until its cycle ends",
  quiet_hours: 'quiet hours',
  paused: 'the number is paused',
  not_connected: 'the number is not connected',
  cancelling: 'being cancelled (the queue was cleared)',
};

const SOURCE_TEXT: Record<PresentedPolicy['source'], string> = {
  number: "the number's own setting",
  account: "the account's default",
  gateway: "the gateway's default (WAGW_SEND_POLICY)",
};

/** Each number's queue, policy and last day's sends, by its id: what its sending card and its health card show. */
export async function readSendingOverviews(
  gateway: Services,
  numbers: readonly WhatsAppNumber[],
  now: Date,
): Promise<Map<string, SendingOverview>> {
  return new Map(
    await Promise.all(numbers.map(async (number) => [number.id, await gateway.sendQueues.overview(number, NEXT_SHOWN, now)] as const)),
  );
}

/** Each number's sending card: policy, queue and the last day's sends. */
export function presentNumberSending(
  numbers: readonly WhatsAppNumber[],
  overviews: ReadonlyMap<string, SendingOverview>,
): NumberSendingView[] {
  return numbers.map((number) => toSendingView(number, overviews.get(number.id)!));
}

/** The account's default policy, which numbers without their own follow. */
export async function presentAccountPolicy(gateway: Services, accountId: string): Promise<PolicyView> {
  return toPolicyView(await gateway.sendQueues.accountPolicy(accountId), 'account', "the gateway's default");
}

function toSendingView(number: WhatsAppNumber, overview: SendingOverview): NumberSendingView {
  const { queue } = overview;
  return {
    id: number.id,
    phone: number.phone,
    policy: toPolicyView(queue.policy, 'number', "the account's default"),
    waiting: queue.total,
    counts: Object.entries(queue.counts).map(([reason, count]) => ({ reason: describeWaitReason(reason), count })),
    next: queue.messages.map((message) => ({
      id: message.id,
      toPhone: message.toPhone,
      scheduledFor: message.scheduledFor,
      reason: describeWaitReason(message.waitReason),
    })),
    oldestWaitingSince: overview.oldestWaitingSince,
    newChatQuota: describeNewChatQuota(queue.newChatQuota, new Date()),
    chart: {
      bars: overview.sentPerHour.map((count, index) => {
        const start = new Date(overview.since.getTime() + index * 3_600_000);
        return { start, label: `${start.toISOString().slice(11, 13)}:00`, count };
      }),
      hourlyCap: queue.policy.policy?.per_hour ?? null,
      total: overview.sentPerHour.reduce((sum, count) => sum + count, 0),
    },
  };
}

/** The quota in one line: its figures and cycle end, a 475's hold, or the failed query the governor fell back from. */
function describeNewChatQuota(state: NewChatQuotaState | undefined, now: Date): string | null {
  if (state === undefined) return null;
  if (isCapped(state, now)) return `capped; first contacts wait until ${state.cappedUntil!.toISOString()}, replies still go`;
  if (state.source === 'fallback') return `not known (${state.error ?? 'WhatsApp did not answer'}); the send policy's own cap stands in`;
  const figures = state.total === null ? 'no figures given' : `${state.used ?? '?'} of ${state.total} used`;
  const cycleEnd = state.cycleEndsAt === null ? '' : `, cycle ends ${state.cycleEndsAt.toISOString()}`;
  return `${figures}${cycleEnd} (${state.status.replace('_', ' ')})`;
}

/**
 * `ownSource` is where the page's own setting lives (the number's, or the account's), and
 * `inheritText` names what "inherit" falls back to, for the select's label.
 */
function toPolicyView(presented: PresentedPolicy, ownSource: PresentedPolicy['source'], inheritText: string): PolicyView {
  const selected = presented.source === ownSource ? (presented.preset ?? 'custom') : 'inherit';
  const choices: Choice[] = [
    { value: 'inherit', label: `Inherit ${inheritText}` },
    ...PRESET_NAMES.map((name) => ({ value: name, label: `Preset: ${name}` })),
  ];
  if (selected === 'custom') choices.push({ value: 'custom', label: 'Figures of its own (keep; change them through the API)' });
  return {
    name: presented.policy === null ? 'off' : presented.preset === null ? 'figures of its own' : `preset ${presented.preset}`,
    sourceText: SOURCE_TEXT[presented.source],
    figures: presented.policy === null ? [] : describeFigures(presented.policy),
    selected,
    choices,
  };
}

function describeFigures(policy: SendPolicyBody): string[] {
  const cap = (value: number | null) => (value === null ? 'no cap' : String(value));
  const seconds = (ms: number) => `${ms / 1000} s`;
  return [
    `Gap between sends: ${seconds(policy.min_gap_ms)} to ${seconds(policy.max_gap_ms)}`,
    `Caps: ${cap(policy.per_minute)} a minute, ${cap(policy.per_hour)} an hour, ${cap(policy.per_day)} a day`,
    `Gap per recipient: ${seconds(policy.per_recipient_gap_ms)}`,
    `First contacts a day: ${cap(policy.first_contacts_per_day)}${policy.warm_up === null ? '' : ` (warm-up from ${policy.warm_up.start}, +${policy.warm_up.daily_increase} a day)`}`,
    policy.quiet_hours === null
      ? 'No quiet hours'
      : `Quiet hours: ${policy.quiet_hours.start} to ${policy.quiet_hours.end} (${policy.quiet_hours.time_zone})`,
    ...(policy.typing_before_send ? ['Shows "typing…" before each message'] : []),
  ];
}

function describeWaitReason(reason: string): string {
  return Object.hasOwn(WAIT_REASON_TEXT, reason) ? WAIT_REASON_TEXT[reason as WaitReason] : reason;
}
