import type { Message } from '../domain/model.ts';
import { LazyLru } from '../domain/lazy-lru.ts';

/** What a receipt's event needs of a send, all known to the node that made it. */
export type RecordedSend = Pick<Message, 'id' | 'accountId' | 'fromPhone' | 'toPhone' | 'direction' | 'group' | 'createdAt'>;

/** Receipts mostly follow within seconds; a late read receipt finds the row by the engine's id instead. */
const RECORDED_SEND_TTL_MS = 10 * 60_000;
const RECORDED_SENDS = 50_000;
/**
 * The longest a receipt waits behind the sends of its number in flight: past the sent record's
 * own retries (about 3 s), so a receipt is never held by a send that will not be recorded.
 */
const LONGEST_WAIT_MS = 4_000;

/**
 * This node's sends, for their receipts. A receipt can overtake the commit that records its
 * send (the network is faster than our fsync); rather than try, miss, and retry on a timer, it
 * waits behind the sends of its number that were in flight when it came, then finds its send
 * here by the engine's id and updates the row by primary key, taking the event's fields from
 * memory instead of from the row.
 */
export class RecentSends {
  private readonly recorded = new LazyLru<string, RecordedSend>({ max: RECORDED_SENDS, ttl: RECORDED_SEND_TTL_MS });
  /** Per sending phone, the sends handed to the engine whose record has not committed yet. */
  private readonly inFlight = new Map<string, Map<string, Promise<void>>>();
  private readonly finish = new Map<string, () => void>();

  /** A send of `phone` goes to the engine now; `ended` must follow, whatever happens. */
  began(phone: string, messageId: string): void {
    let sends = this.inFlight.get(phone);
    if (sends === undefined) {
      sends = new Map();
      this.inFlight.set(phone, sends);
    }
    sends.set(messageId, new Promise<void>((resolve) => this.finish.set(messageId, resolve)));
  }

  /** The send's `sent` record committed, under WhatsApp's id for it. */
  committed(send: RecordedSend, engineMessageId: string): void {
    this.recorded.set(keyOf(send.fromPhone!, engineMessageId), send);
  }

  ended(phone: string, messageId: string): void {
    const sends = this.inFlight.get(phone);
    sends?.delete(messageId);
    if (sends?.size === 0) this.inFlight.delete(phone);
    this.finish.get(messageId)?.();
    this.finish.delete(messageId);
  }

  /** The send a receipt is about, once the sends of its number in flight now have ended; undefined when this node did not record it. */
  async find(phone: string, engineMessageId: string): Promise<RecordedSend | undefined> {
    const key = keyOf(phone, engineMessageId);
    const known = this.recorded.get(key);
    if (known !== undefined) return known;
    const pending = this.inFlight.get(phone);
    if (pending === undefined) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const giveUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, LONGEST_WAIT_MS)));
    await Promise.race([Promise.all(pending.values()), giveUp]);
    clearTimeout(timer);
    return this.recorded.get(key);
  }
}

function keyOf(phone: string, engineMessageId: string): string {
  return `${phone}\u0000${engineMessageId}`;
}
