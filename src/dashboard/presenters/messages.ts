import { AppError } from '../../domain/errors.ts';
import type { MessageDirection } from '../../domain/model.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import type { HistoryQuery } from '../../messaging/message-history.ts';
import { attempt, queryText } from '../forms.ts';
import { toMessageRow, type MessageRowView } from './shared.ts';
import type { ScopedAccount } from '../context.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'history' | 'numbers'>;

const MESSAGES_PER_PAGE = 50;

/** The filters exactly as they came in the query string, so the form shows what was typed. */
export interface MessageFilters {
  numberId: string;
  direction: string;
  phone: string;
  cursor: string | undefined;
}

interface NumberOption {
  id: string;
  phone: string;
}

export interface MessagesView {
  filters: MessageFilters;
  numbers: NumberOption[];
  messages: MessageRowView[];
  /** True when any filter narrows the list, which changes what the empty state says. */
  filtering: boolean;
  olderHref: string | undefined;
  newestHref: string | undefined;
  error: string | undefined;
}

export function readMessageFilters(query: unknown): MessageFilters {
  return {
    numberId: queryText(query, 'number_id') ?? '',
    direction: queryText(query, 'direction') ?? '',
    phone: queryText(query, 'phone') ?? '',
    cursor: queryText(query, 'cursor'),
  };
}

export async function presentMessages(gateway: Services, account: ScopedAccount, filters: MessageFilters): Promise<MessagesView> {
  const numbers: NumberOption[] = (await gateway.numbers.listNumbers(account.scope)).map((number) => ({
    id: number.id,
    phone: number.phone,
  }));
  const base = {
    filters,
    numbers,
    filtering: filters.numberId !== '' || filters.direction !== '' || filters.phone !== '',
    newestHref: filters.cursor === undefined ? undefined : messagesHref(filters, undefined),
  };
  const page = await attempt(() => gateway.history.page(account.scope, historyQuery(numbers, filters)));
  if (!page.ok) return { ...base, messages: [], olderHref: undefined, error: page.error.message };
  return {
    ...base,
    messages: page.value.messages.map(toMessageRow),
    olderHref: page.value.nextCursor === undefined ? undefined : messagesHref(filters, page.value.nextCursor),
    error: undefined,
  };
}

/** Checks the filters the history service cannot: the direction's spelling and the number's owner. */
function historyQuery(numbers: NumberOption[], filters: MessageFilters): HistoryQuery {
  const direction = directionOf(filters.direction);
  return {
    ...(filters.numberId !== '' && { numberId: ownNumberId(numbers, filters.numberId) }),
    ...(direction !== undefined && { direction }),
    ...(filters.phone !== '' && { phone: filters.phone }),
    ...(filters.cursor !== undefined && { cursor: filters.cursor }),
    limit: MESSAGES_PER_PAGE,
  };
}

// Only the account's own numbers may be filtered on, so an id of another account reveals nothing.
function ownNumberId(numbers: NumberOption[], numberId: string): string {
  if (!numbers.some((number) => number.id === numberId)) {
    throw new AppError('invalid_argument', "That number is not one of your account's numbers; pick one from the list.");
  }
  return numberId;
}

function directionOf(value: string): MessageDirection | undefined {
  if (value === '' || value === 'any') return undefined;
  if (value === 'outbound' || value === 'inbound') return value;
  throw new AppError('invalid_argument', 'Direction must be Sent, Received or Any.');
}

/** The same filters on another page: the cursor is the only thing that changes. */
function messagesHref(filters: MessageFilters, cursor: string | undefined): string {
  const params = new URLSearchParams();
  if (filters.numberId !== '') params.set('number_id', filters.numberId);
  if (filters.direction !== '') params.set('direction', filters.direction);
  if (filters.phone !== '') params.set('phone', filters.phone);
  if (cursor !== undefined) params.set('cursor', cursor);
  const query = params.toString();
  return query === '' ? '/messages' : `/messages?${query}`;
}
