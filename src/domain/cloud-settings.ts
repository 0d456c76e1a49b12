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

/** Meta's ids are decimal digits; anything else in a request path could reach another endpoint. */
const META_ID = /^\d{1,32}$/;
const TOKEN_MAX_LENGTH = 1_024;

/** Settings from untrusted input, each field checked; the refusal names the field and never echoes a secret. */
export function parseCloudSettings(input: Record<keyof CloudSettings, string>): CloudSettings {
  for (const field of ['phoneNumberId', 'businessAccountId'] as const) {
    if (!META_ID.test(input[field]))
      throw new AppError('invalid_argument', `${snake(field)} must be Meta's numeric id.`, { field: snake(field) });
  }
  for (const field of ['accessToken', 'appSecret', 'verifyToken'] as const) {
    const value = input[field];
    if (value.length < 8 || value.length > TOKEN_MAX_LENGTH || /\s/.test(value))
      throw new AppError('invalid_argument', `${snake(field)} must be 8 to ${TOKEN_MAX_LENGTH} characters without spaces.`, {
        field: snake(field),
      });
  }
  return { ...input };
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
