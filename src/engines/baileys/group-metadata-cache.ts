import type { GroupMetadata } from 'baileys';

/** Groups remembered per session; the least recently fetched go first past this many. */
const MOST_GROUPS = 2_000;

/**
 * A session's group metadata. Baileys asks for a group's participants on every send to it, and
 * asking WhatsApp each time is what earns numbers `rate-overlimit`; so Baileys reads this instead
 * (`cachedGroupMetadata`), the API's group reads come from it, and WhatsApp is asked once per
 * group, by one request however many callers wait for it. The session's group events keep it
 * fresh: a group that changed is forgotten and fetched again when next needed.
 */
export class GroupMetadataCache {
  private readonly entries = new Map<string, GroupMetadata>();
  private readonly fetching = new Map<string, Promise<GroupMetadata>>();

  /** `seen` hears every group described to the cache, whose participants teach the LID map. */
  constructor(private readonly seen: (metadata: GroupMetadata) => void = () => undefined) {}

  cached(jid: string): GroupMetadata | undefined {
    return this.entries.get(jid);
  }

  async get(jid: string, fetch: (jid: string) => Promise<GroupMetadata>): Promise<GroupMetadata> {
    const known = this.entries.get(jid);
    if (known !== undefined) return known;
    let pending = this.fetching.get(jid);
    if (pending === undefined) {
      pending = fetch(jid).then(
        (metadata) => {
          this.fetching.delete(jid);
          this.put(metadata);
          return metadata;
        },
        (error: unknown) => {
          this.fetching.delete(jid);
          throw error;
        },
      );
      this.fetching.set(jid, pending);
    }
    return pending;
  }

  put(metadata: GroupMetadata): void {
    this.entries.delete(metadata.id);
    this.entries.set(metadata.id, metadata);
    this.seen(metadata);
    while (this.entries.size > MOST_GROUPS) this.entries.delete(this.entries.keys().next().value!);
  }

  forget(jid: string): void {
    this.entries.delete(jid);
  }
}
