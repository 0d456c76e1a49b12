import type { WhatsAppNumber } from '../../domain/model.ts';
import type { QueueView } from '../../messaging/governor/send-queue-service.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { withinAccount, type TenantScope } from '../../domain/tenant-scope.ts';
import { PAUSE_REASONS } from './numbers.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'history' | 'pauses' | 'sendQueues'>;

/** One number's health card: what an owner looks at first when something seems wrong. */
export interface NumberHealthView {
  id: string;
  phone: string;
  engine: string;
  status: string;
  statusReason: string | null;
  /** When the status last changed: connected, or down, since then. */
  statusSince: Date;
  pause: { reason: string; detail: string | null; since: Date; until: Date | null } | null;
  waiting: number;
  /** When the first waiting message is due; null when none waits or the number is paused. */
  nextSendAt: Date | null;
  lastIn: Date | null;
  lastOut: Date | null;
  /** The proxy in use, redacted; shown to operators only (undefined for anyone else). */
  proxy: string | null | undefined;
  /** The owner's actions that apply now: resume a paused number, clear a queue that holds messages. */
  canResume: boolean;
  canClearQueue: boolean;
  /** Where the card's forms post (the account's page, or the operator console's). */
  actionBase: string;
}

/**
 * The cards of `numbers`, each read in the number's own account. Actions post to the account's
 * routes or the console's; both run them through NumberControl on the number's owner.
 */
export async function presentNumberHealth(
  gateway: Services,
  numbers: readonly WhatsAppNumber[],
  /** The viewer's scope: an account's (its own numbers) or the operator's (any number, read in its account). */
  scope: TenantScope,
  viewer: { canManage: boolean; operator: boolean; actionBase: (number: WhatsAppNumber) => string },
  read: {
    /** The numbers' queues by id, when the page has read them already (its sending cards); read here otherwise. */
    queues?: ReadonlyMap<string, QueueView>;
    /** Which numbers get a card, told before any card is read (a filter on the status or on being paused). */
    shows?: (number: WhatsAppNumber, paused: boolean) => boolean;
  } = {},
): Promise<NumberHealthView[]> {
  const pauses = await gateway.pauses.pausesOf(numbers.map((number) => number.id));
  const shown = read.shows === undefined ? numbers : numbers.filter((number) => read.shows!(number, pauses.has(number.id)));
  return Promise.all(
    shown.map(async (number) => {
      const within = scope.kind === 'operator' ? withinAccount(scope, number.accountId) : scope;
      const known = read.queues?.get(number.id);
      const [queue, lastIn, lastOut] = await Promise.all([
        known ?? gateway.sendQueues.view(number, 1, undefined),
        gateway.history.page(within, { numberId: number.id, direction: 'inbound', limit: 1 }),
        gateway.history.page(within, { numberId: number.id, direction: 'outbound', limit: 1 }),
      ]);
      const pause = pauses.get(number.id);
      return {
        id: number.id,
        phone: number.phone,
        engine: number.engine,
        status: number.status,
        statusReason: number.statusReason,
        statusSince: number.statusChangedAt,
        pause:
          pause === undefined
            ? null
            : { reason: PAUSE_REASONS[pause.reason], detail: pause.detail, since: pause.since, until: pause.until },
        waiting: queue.total,
        nextSendAt: queue.nextScheduledFor,
        lastIn: lastIn.messages[0]?.createdAt ?? null,
        lastOut: lastOut.messages[0]?.createdAt ?? null,
        proxy: viewer.operator ? number.proxy : undefined,
        canResume: viewer.canManage && pause !== undefined,
        canClearQueue: viewer.canManage && queue.total > 0,
        actionBase: viewer.actionBase(number),
      };
    }),
  );
}
