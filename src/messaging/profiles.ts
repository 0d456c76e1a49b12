import type { MediaObject } from '../domain/media.ts';
import type { WhatsAppNumber } from '../domain/model.ts';
import type { E164 } from '../domain/phone.ts';
import type { BusinessProfile, ProfileChanges } from '../domain/profiles.ts';
import type { OutgoingMedia } from '../engines/engine.ts';
import type { MediaService } from '../media/media-service.ts';
import type { SessionSupervisor } from './session-supervisor.ts';

/** A contact's profile as the gateway answers it: the picture stored in the media store. */
export interface ContactProfileView {
  phone: E164;
  about: string | null;
  aboutSetAt: Date | null;
  picture: MediaObject | null;
  business: BusinessProfile | null;
  fetchedAt: Date;
}

/** Profiles kept in memory at most; the oldest are forgotten first. */
const MAX_PROFILES_KEPT = 10_000;

/**
 * Contacts' profiles, and our numbers' own (ADR 0033). A contact's profile is three WhatsApp
 * queries and a picture download, so it is answered from memory for a short while
 * (WAGW_PROFILE_CACHE_SECONDS); a picture is stored once per version, in the account's media
 * store as an upload, so it is served by a media id and expires like one.
 */
export class ProfileService {
  private readonly kept = new Map<string, { view: ContactProfileView; pictureVersion: string | null; expiresAt: number }>();

  constructor(
    private readonly supervisor: Pick<SessionSupervisor, 'sessionFor'>,
    private readonly media: Pick<MediaService, 'ingest'>,
    private readonly cacheMs: number,
  ) {}

  async contactProfile(number: WhatsAppNumber, phone: E164): Promise<ContactProfileView> {
    const key = `${number.id}>${phone}`;
    const kept = this.kept.get(key);
    if (kept !== undefined && kept.expiresAt > Date.now()) return kept.view;
    const profile = await this.supervisor.sessionFor(number).contactProfile(phone);
    const version = profile.picture?.version ?? null;
    // The same picture as before keeps its stored copy: only a new one is downloaded.
    const picture =
      profile.picture === null
        ? null
        : kept?.pictureVersion === version && kept.view.picture !== null && kept.view.picture.expiresAt! > new Date()
          ? kept.view.picture
          : await this.media.ingest(await profile.picture.download(), {
              accountId: number.accountId,
              source: 'upload',
              kind: 'image',
              fileName: null,
            });
    const view = {
      phone,
      about: profile.about,
      aboutSetAt: profile.aboutSetAt,
      picture,
      business: profile.business,
      fetchedAt: new Date(),
    };
    this.kept.delete(key);
    this.kept.set(key, { view, pictureVersion: version, expiresAt: Date.now() + this.cacheMs });
    while (this.kept.size > MAX_PROFILES_KEPT) this.kept.delete(this.kept.keys().next().value!);
    return view;
  }

  async updateOwnProfile(number: WhatsAppNumber, changes: ProfileChanges, picture?: OutgoingMedia): Promise<void> {
    await this.supervisor.sessionFor(number).updateProfile(changes, picture);
  }
}
