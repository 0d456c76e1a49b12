/** A WhatsApp Business account's public profile, as WhatsApp gives it. */
export interface BusinessProfile {
  description: string | null;
  category: string | null;
  email: string | null;
  websites: string[];
  address: string | null;
}

/** Our number's own profile, changed in part: each field given is set, the others are left as they are. */
export interface ProfileChanges {
  /** The display name ("push name") contacts see. */
  name?: string;
  /** The "about" text. */
  about?: string;
}

/** The longest display name and about text WhatsApp takes. */
export const PROFILE_NAME_MAX_LENGTH = 25;
export const PROFILE_ABOUT_MAX_LENGTH = 139;
