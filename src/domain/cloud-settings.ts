import { AppError } from './errors.ts';

/**
 * A Cloud API number's settings (docs/cloud-api.md): Meta's ids of the phone number and of its
 * WhatsApp Business Account, the access token the gateway calls Meta with, the app secret Meta
 * signs its callbacks with, and the verify token Meta's callback check repeats back.
 */
export interface CloudSettings {
  phoneNumberId: string;
  businessAccountId: string;
  accessToken: string;
  appSecret: string;
  verifyToken: string;
}

/**
 * Meta's ids are decimal digits; anything else in a request path could reach another endpoint.
 * The limits here are the one source of the operator API's schema and the console's form too.
 */
export const META_ID_MAX_DIGITS = 32;
export const META_ID_PATTERN = `^[0-9]{1,${META_ID_MAX_DIGITS}}$`;
const META_ID = new RegExp(META_ID_PATTERN);
/** The access token, app secret and verify token: printable, no spaces, of a sane length. */
export const CLOUD_SECRET_LIMITS = { minLength: 8, maxLength: 1_024, pattern: '^\\S+$' } as const;
const { minLength: TOKEN_MIN_LENGTH, maxLength: TOKEN_MAX_LENGTH, pattern: TOKEN_PATTERN } = CLOUD_SECRET_LIMITS;

/**
 * Settings from untrusted input, each field checked in order; the refusal names the field and
 * never echoes a secret. Its words are the operator API's for the same value (its request schema
 * refuses first there, src/http/plugins/validation-errors.ts), so the API, the console and the CLI
 * refuse a value alike.
 */
export function parseCloudSettings(input: Record<keyof CloudSettings, string>): CloudSettings {
  for (const field of ['phoneNumberId', 'businessAccountId'] as const) {
    if (!META_ID.test(input[field])) throw refusal(field, `must match pattern "${META_ID_PATTERN}"`);
  }
  for (const field of ['accessToken', 'appSecret', 'verifyToken'] as const) {
    const value = input[field];
    // Counted in characters (code points), as the schema counts them, not UTF-16 units.
    const length = [...value].length;
    if (length < TOKEN_MIN_LENGTH) throw refusal(field, `must be at least ${TOKEN_MIN_LENGTH} characters long`);
    if (length > TOKEN_MAX_LENGTH) throw refusal(field, `must be at most ${TOKEN_MAX_LENGTH} characters long`);
    if (/\s/.test(value)) throw refusal(field, `must match pattern "${TOKEN_PATTERN}"`);
  }
  return { ...input };
}

function refusal(field: keyof CloudSettings, mustBe: string): AppError {
  return new AppError('invalid_argument', `The field ${snake(field)} ${mustBe}.`, { field: snake(field) });
}

/**
 * The path of a number's callbacks (src/http/routes/cloud-callbacks.ts; /api/… is the same):
 * Meta is given the gateway's public address followed by it.
 */
export function cloudCallbackPath(numberId: string): string {
  return `/cloud/callbacks/${numberId}`;
}

/** The whole callback URL to give Meta, when the gateway knows its public address (WAGW_PUBLIC_URL); else null. */
export function cloudCallbackUrl(publicUrl: string, numberId: string): string | null {
  return publicUrl === '' ? null : `${publicUrl}${cloudCallbackPath(numberId)}`;
}

function snake(field: string): string {
  return field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** The settings as the operator sees them back: the ids, and only whether each secret is set. */
export function presentCloudSettings(settings: Pick<CloudSettings, 'phoneNumberId' | 'businessAccountId'>, callbackPath: string) {
  return {
    phone_number_id: settings.phoneNumberId,
    business_account_id: settings.businessAccountId,
    access_token: '***',
    app_secret: '***',
    verify_token: '***',
    callback_path: callbackPath,
  };
}
