import type { Executor } from '../../store/database.ts';
import { exchangedWithAny } from '../../store/repositories/send-ledger.ts';

interface Asking {
  accountId: string;
  numberId: string;
  /** Each phone asked, with whoever waits for its answer. */
  phones: Map<string, { resolve: (known: boolean) => void; reject: (error: unknown) => void }[]>;
}

/**
 * Whether a number has exchanged any message with a phone: what a governed send to a phone its
 * ledger does not know asks the database, to tell a first contact. A number's sends asked at
 * once share one statement: while one is in flight, those that come meanwhile wait and go
 * together in the next, as group commit does for writes. A number sending to new phones from
 * 50 clients then pays a round trip per batch, not per send (on PostgreSQL that round trip was
 * most of what a governed send cost beyond an ungoverned one, issue 41); a lone send waits for
 * nothing.
 */
export class ExchangeProbe {
  /** Per number (and its account), the phones asked while its statement is in flight. */
  private readonly next = new Map<string, Asking>();
  private readonly inFlight = new Set<string>();

  constructor(private readonly db: Executor) {}

  exchanged(accountId: string, numberId: string, phone: string): Promise<boolean> {
    const key = `${accountId} ${numberId}`;
    return new Promise((resolve, reject) => {
      let asking = this.next.get(key);
      if (asking === undefined) {
        asking = { accountId, numberId, phones: new Map() };
        this.next.set(key, asking);
      }
      const waiters = asking.phones.get(phone) ?? [];
      asking.phones.set(phone, waiters);
      waiters.push({ resolve, reject });
      if (!this.inFlight.has(key)) void this.ask(key);
    });
  }

  /** Asks for what waits on the number, then again for what came meanwhile, until nothing waits. */
  private async ask(key: string): Promise<void> {
    this.inFlight.add(key);
    try {
      for (let asking = this.next.get(key); asking !== undefined; asking = this.next.get(key)) {
        this.next.delete(key);
        try {
          const known = await exchangedWithAny(this.db, asking.accountId, asking.numberId, [...asking.phones.keys()]);
          for (const [phone, waiters] of asking.phones) for (const waiter of waiters) waiter.resolve(known.has(phone));
        } catch (error) {
          for (const waiters of asking.phones.values()) for (const waiter of waiters) waiter.reject(error);
        }
      }
    } finally {
      this.inFlight.delete(key);
    }
  }
}
