import type { WABusinessProfile } from 'baileys';
import type { BusinessProfile } from '../../domain/profiles.ts';

/**
 * A contact's about text from Baileys' fetchStatus answer (a USync list whose `status` is
 * `{ status, setAt }`, with a null status for one hidden from us); null where none is shown.
 */
export function aboutOf(list: Array<{ id: string; status?: unknown }> | undefined): { about: string | null; setAt: Date | null } {
  const status = list?.[0]?.status as { status?: string | null; setAt?: Date } | null | undefined;
  const about = typeof status?.status === 'string' && status.status !== '' ? status.status : null;
  const setAt = about !== null && status?.setAt instanceof Date && status.setAt.getTime() > 0 ? status.setAt : null;
  return { about, setAt };
}

/** A business profile as the port tells it; undefined (an ordinary account) is null. */
export function businessOf(profile: WABusinessProfile | undefined): BusinessProfile | null {
  if (profile === undefined || profile === null) return null;
  return {
    description: profile.description || null,
    category: profile.category ?? null,
    email: profile.email ?? null,
    websites: [...(profile.website ?? [])],
    address: profile.address ?? null,
  };
}
