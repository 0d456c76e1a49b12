import type { E164 } from '../../domain/phone.ts';

const POSITIVE_TTL_MS = 24 * 3_600_000;
const NEGATIVE_TTL_MS = 3_600_000;
const MAX_ENTRIES = 50_000;

type Lookup = (phone: E164) => Promise<Array<{ exists: boolean }> | undefined>;

/**
 * Whether a phone uses WhatsApp, remembered: a yes for a day, a no for an hour (people do
 * install WhatsApp). Asking WhatsApp before every send is slow, and many lookups in a row are a
 * pattern WhatsApp watches for.
 */
export class RecipientDirectory {
  private readonly answers = new Map<E164, { exists: boolean; until: number }>();

  async isOnWhatsApp(phone: E164, lookup: Lookup, now = Date.now()): Promise<boolean> {
    const cached = this.answers.get(phone);
    if (cached !== undefined && cached.until > now) return cached.exists;
    const exists = (await lookup(phone))?.[0]?.exists === true;
    this.answers.delete(phone);
    if (this.answers.size >= MAX_ENTRIES) {
      const oldest = this.answers.keys().next().value;
      if (oldest !== undefined) this.answers.delete(oldest);
    }
    this.answers.set(phone, { exists, until: now + (exists ? POSITIVE_TTL_MS : NEGATIVE_TTL_MS) });
    return exists;
  }
}
