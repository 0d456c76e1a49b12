import type { E164 } from '../domain/phone.ts';

const POSITIVE_TTL_MS = 24 * 3_600_000;
const NEGATIVE_TTL_MS = 3_600_000;
const MAX_ENTRIES = 50_000;

/** Whether a phone uses WhatsApp, and its WhatsApp id when it does. */
export interface RecipientAnswer {
  exists: boolean;
  waId: string | null;
}

/** What the network says of phones; a phone it does not answer for is taken as not on WhatsApp. */
export type LookupMany = (phones: E164[]) => Promise<Map<E164, RecipientAnswer>>;

export interface CheckedPhone extends RecipientAnswer {
  phone: E164;
  /** True when the answer came from memory, without asking WhatsApp. */
  cached: boolean;
}

/**
 * Whether phones use WhatsApp, remembered: a yes for a day, a no for an hour (people do
 * install WhatsApp). Asking WhatsApp before every send is slow, and many lookups in a row are a
 * pattern WhatsApp watches for. The send path and POST /check_numbers share the memory, so a
 * check warms the sends and a send warms the checks.
 *
 * The memory is kept per account, not per engine: a `cached: true`, or an answer that comes back
 * faster, would otherwise tell one account which phones another has checked or messaged lately.
 */
export class RecipientDirectory {
  private readonly answers = new Map<string, RecipientAnswer & { until: number }>();

  /** Whether the phone uses WhatsApp, and the JID WhatsApp named it by. */
  async recipient(accountId: string, phone: E164, lookup: LookupMany, now = Date.now()): Promise<RecipientAnswer> {
    const [checked] = await this.check(accountId, [phone], lookup, () => undefined, now);
    return { exists: checked!.exists, waId: checked!.waId };
  }

  /**
   * Answers each phone, asking the network only for those not remembered. `admit` hears how many
   * will be asked before they are, and may refuse by throwing (the per-number lookup limit).
   */
  async check(
    accountId: string,
    phones: readonly E164[],
    lookup: LookupMany,
    admit: (lookups: number) => void,
    now = Date.now(),
  ): Promise<CheckedPhone[]> {
    const remembered = new Map<E164, RecipientAnswer>();
    for (const phone of phones) {
      const cached = this.answers.get(memoryKey(accountId, phone));
      if (cached !== undefined && cached.until > now) remembered.set(phone, { exists: cached.exists, waId: cached.waId });
    }
    const unknown = [...new Set(phones.filter((phone) => !remembered.has(phone)))];
    admit(unknown.length);
    const asked = unknown.length === 0 ? new Map<E164, RecipientAnswer>() : await lookup(unknown);
    for (const phone of unknown) this.remember(memoryKey(accountId, phone), asked.get(phone) ?? { exists: false, waId: null }, now);
    return phones.map((phone) => {
      const known = remembered.get(phone);
      if (known !== undefined) return { phone, ...known, cached: true };
      return { phone, ...(asked.get(phone) ?? { exists: false, waId: null }), cached: false };
    });
  }

  private remember(key: string, answer: RecipientAnswer, now: number): void {
    this.answers.delete(key);
    if (this.answers.size >= MAX_ENTRIES) {
      const oldest = this.answers.keys().next().value;
      if (oldest !== undefined) this.answers.delete(oldest);
    }
    this.answers.set(key, { ...answer, until: now + (answer.exists ? POSITIVE_TTL_MS : NEGATIVE_TTL_MS) });
  }
}

function memoryKey(accountId: string, phone: E164): string {
  return `${accountId} ${phone}`;
}
