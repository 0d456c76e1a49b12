import type { SessionLease } from '../../domain/model.ts';
import type { Store } from '../../store/database.ts';
import { findMessagesByIds } from '../../store/repositories/messages.ts';
import { CLEARING } from '../../store/repositories/queue-clears.ts';
import type { WaitingMessage } from '../../store/repositories/waiting-messages.ts';
import type { SendMessageService } from '../send-message.ts';
import type { SendGovernor } from './send-governor.ts';

/** What settling waiting messages needs: the rows, the send path's settle, the governor and the leases. */
export interface UnsentLeavingDeps {
  store: Store;
  sender: Pick<SendMessageService, 'settleWaitingMany'>;
  governor: Pick<SendGovernor, 'messageLeft'>;
  leaseOf(numberId: string): SessionLease | undefined;
}

/**
 * Waiting messages leave the queue unsent: `cancelled` those a clear marked, `expired` the
 * others. One transaction per number and status (each fenced by the number's lease), so that
 * a clear of 20,000 messages is 40 commits, not 20,000. Returns how many were settled here (a
 * message that had already left is passed over).
 */
export async function settleUnsent(deps: UnsentLeavingDeps, waiting: readonly WaitingMessage[]): Promise<number> {
  const rows = new Map(
    (
      await findMessagesByIds(
        deps.store.db,
        waiting.map((message) => message.id),
      )
    ).map((row) => [row.id, row]),
  );
  const groups = new Map<
    string,
    { numberId: string; status: 'cancelled' | 'expired'; messages: NonNullable<ReturnType<typeof rows.get>>[] }
  >();
  for (const message of waiting) {
    const row = rows.get(message.id);
    if (row === undefined) continue;
    const status = message.waitReason === CLEARING ? 'cancelled' : 'expired';
    const key = `${message.numberId} ${status}`;
    const group = groups.get(key) ?? { numberId: message.numberId, status, messages: [] };
    groups.set(key, group);
    group.messages.push(row);
  }
  let settled = 0;
  for (const { numberId, status, messages } of groups.values()) {
    const ids = await deps.sender.settleWaitingMany(messages, status, deps.leaseOf(numberId));
    for (const id of ids) deps.governor.messageLeft(numberId, id, status);
    settled += ids.size;
  }
  return settled;
}
