import type { Message } from '../../domain/model.ts';
import type { AdReferral } from '../../domain/referral.ts';
import type { Executor } from '../database.ts';

// The ad each incoming message came from, where it came from one (migration 0023, ADR 0051).

/** Records the referral of each message that has one. */
export async function insertMessageReferrals(db: Executor, messages: readonly Message[]): Promise<void> {
  const rows = messages.flatMap((message) =>
    message.referral == null ? [] : [{ message_id: message.id, account_id: message.accountId, referral: JSON.stringify(message.referral) }],
  );
  if (rows.length > 0) await db.insertInto('message_referrals').values(rows).execute();
}

/** The message with the referral a joined message_referrals row holds, when there is one. */
export function withReferral<T extends Message>(message: T, row: { referral: string | null }): T {
  return row.referral === null ? message : { ...message, referral: JSON.parse(row.referral) as AdReferral };
}
