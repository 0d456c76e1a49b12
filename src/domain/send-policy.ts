import { AppError } from './errors.ts';

/**
 * How a number's sends are paced (docs/send-governor.md). A policy of `null` is the governor
 * switched off: every send leaves at once, as the v0.1.0 contract promises.
 */
export interface SendPolicy {
  /** The gap between two sends from the number: a random value between the two, in ms. */
  minGapMs: number;
  maxGapMs: number;
  /** Caps over rolling windows of a minute, an hour and 24 hours; null for none. */
  perMinute: number | null;
  perHour: number | null;
  perDay: number | null;
  /** The gap between two sends to the same recipient. */
  perRecipientGapMs: number;
  /** Recipients the number never exchanged a message with, per rolling 24 hours; null for none. */
  firstContactsPerDay: number | null;
  /** A newly linked number's first-contact cap: `start` on its first day, growing each day after. */
  warmUp: { start: number; dailyIncrease: number } | null;
  /** No send leaves between `start` and `end` (local "HH:MM" in `timeZone`; may wrap midnight). */
  quietHours: { start: string; end: string; timeZone: string } | null;
  /** Show "typing…" before each send, for a time that grows with the text's length. */
  typingBeforeSend: boolean;
}

/** The least a cap may be (a count per window, a warm-up's first day); null is no cap. */
export const MIN_CAP = 1;

export const PRESET_NAMES = ['off', 'standard', 'cautious'] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

/**
 * What a number or an account holds: a preset's name or a policy of its own. The number's
 * setting wins over the account's, which wins over the gateway's (WAGW_SEND_POLICY).
 */
export type PolicySetting = { preset: PresetName } | { custom: SendPolicy };

const SECOND = 1_000;

/** The presets' figures and their sources are explained in docs/send-governor.md. */
export const PRESETS: Readonly<Record<PresetName, SendPolicy | null>> = {
  off: null,
  standard: {
    minGapMs: 3 * SECOND,
    maxGapMs: 10 * SECOND,
    perMinute: 10,
    perHour: 300,
    perDay: 2_000,
    perRecipientGapMs: 6 * SECOND,
    firstContactsPerDay: 250,
    warmUp: { start: 20, dailyIncrease: 20 },
    quietHours: null,
    typingBeforeSend: false,
  },
  cautious: {
    minGapMs: 5 * SECOND,
    maxGapMs: 30 * SECOND,
    perMinute: 4,
    perHour: 60,
    perDay: 300,
    perRecipientGapMs: 60 * SECOND,
    firstContactsPerDay: 15,
    warmUp: { start: 5, dailyIncrease: 5 },
    quietHours: { start: '22:00', end: '08:00', timeZone: 'UTC' },
    typingBeforeSend: true,
  },
};

/** The policy a setting stands for; null is the governor off. */
export function policyOf(setting: PolicySetting): SendPolicy | null {
  return 'preset' in setting ? PRESETS[setting.preset] : setting.custom;
}

/** The first of the settings that is set (number, account, gateway), as the policy in force. */
export function resolvePolicy(...settings: (PolicySetting | null)[]): { setting: PolicySetting; policy: SendPolicy | null } {
  const setting = settings.find((candidate) => candidate !== null) ?? { preset: 'off' as const };
  return { setting, policy: policyOf(setting) };
}

export function isPresetName(value: unknown): value is PresetName {
  return typeof value === 'string' && (PRESET_NAMES as readonly string[]).includes(value);
}

/** The API's snake_case form of a policy. */
export interface SendPolicyBody {
  min_gap_ms: number;
  max_gap_ms: number;
  per_minute: number | null;
  per_hour: number | null;
  per_day: number | null;
  per_recipient_gap_ms: number;
  first_contacts_per_day: number | null;
  warm_up: { start: number; daily_increase: number } | null;
  quiet_hours: { start: string; end: string; time_zone: string } | null;
  typing_before_send: boolean;
}

export function policyBody(policy: SendPolicy): SendPolicyBody {
  return {
    min_gap_ms: policy.minGapMs,
    max_gap_ms: policy.maxGapMs,
    per_minute: policy.perMinute,
    per_hour: policy.perHour,
    per_day: policy.perDay,
    per_recipient_gap_ms: policy.perRecipientGapMs,
    first_contacts_per_day: policy.firstContactsPerDay,
    warm_up: policy.warmUp === null ? null : { start: policy.warmUp.start, daily_increase: policy.warmUp.dailyIncrease },
    quiet_hours:
      policy.quietHours === null
        ? null
        : { start: policy.quietHours.start, end: policy.quietHours.end, time_zone: policy.quietHours.timeZone },
    typing_before_send: policy.typingBeforeSend,
  };
}

/**
 * A policy from its API form, every field optional and defaulting to "no limit". Every way in
 * (the API, the CLI, a stored setting) comes through here, so a cap below MIN_CAP can never reach
 * a decision: the schema checks the types, this checks the caps again and what a schema cannot
 * (gaps in order, a real time zone).
 */
export function parsePolicyBody(body: Partial<SendPolicyBody>, field: string): SendPolicy {
  for (const name of CAP_FIELDS) {
    const value = body[name];
    if (value != null && !(Number.isInteger(value) && value >= MIN_CAP))
      throw invalidPolicy(`${field}.${name} must be a whole number of at least ${MIN_CAP}, or null for no cap.`, `${field}.${name}`);
  }
  if (body.warm_up != null && !(Number.isInteger(body.warm_up.start) && body.warm_up.start >= MIN_CAP))
    throw invalidPolicy(`${field}.warm_up.start must be a whole number of at least ${MIN_CAP}.`, `${field}.warm_up.start`);
  const minGapMs = body.min_gap_ms ?? 0;
  const maxGapMs = body.max_gap_ms ?? minGapMs;
  if (maxGapMs < minGapMs) throw invalidPolicy(`${field}.max_gap_ms must be at least min_gap_ms.`, `${field}.max_gap_ms`);
  const quiet = body.quiet_hours ?? null;
  if (quiet !== null) {
    for (const part of ['start', 'end'] as const) {
      if (parseClock(quiet[part]) === undefined)
        throw invalidPolicy(`${field}.quiet_hours.${part} must be a time "HH:MM" (00:00 to 23:59).`, `${field}.quiet_hours.${part}`);
    }
    if (canonicalTimeZone(quiet.time_zone) === undefined)
      throw invalidPolicy(
        `${field}.quiet_hours.time_zone must be an IANA time zone name, such as Europe/Berlin.`,
        `${field}.quiet_hours.time_zone`,
      );
  }
  return {
    minGapMs,
    maxGapMs,
    perMinute: body.per_minute ?? null,
    perHour: body.per_hour ?? null,
    perDay: body.per_day ?? null,
    perRecipientGapMs: body.per_recipient_gap_ms ?? 0,
    firstContactsPerDay: body.first_contacts_per_day ?? null,
    warmUp: body.warm_up == null ? null : { start: body.warm_up.start, dailyIncrease: body.warm_up.daily_increase },
    // Stored and compared in its one canonical spelling ("europe/BERLIN" is Europe/Berlin).
    quietHours: quiet === null ? null : { start: quiet.start, end: quiet.end, timeZone: canonicalTimeZone(quiet.time_zone)! },
    typingBeforeSend: body.typing_before_send ?? false,
  };
}

const CAP_FIELDS = ['per_minute', 'per_hour', 'per_day', 'first_contacts_per_day'] as const;

/** A setting as the API takes it: a preset's name or a policy object. */
export function parseSettingInput(input: string | Partial<SendPolicyBody>, field: string): PolicySetting {
  if (typeof input === 'string') {
    if (!isPresetName(input)) throw invalidPolicy(`${field} must be one of ${PRESET_NAMES.join(', ')}, or a policy object.`, field);
    return { preset: input };
  }
  return { custom: parsePolicyBody(input, field) };
}

/** How a setting is stored: the preset's name, or the policy's API form as JSON. */
export function storedSetting(setting: PolicySetting): string {
  return 'preset' in setting ? setting.preset : JSON.stringify(policyBody(setting.custom));
}

export function readStoredSetting(stored: string | null): PolicySetting | null {
  if (stored === null) return null;
  return isPresetName(stored)
    ? { preset: stored }
    : { custom: parsePolicyBody(liftStoredCaps(JSON.parse(stored) as Partial<SendPolicyBody>), 'send_policy') };
}

/**
 * A policy stored before caps were checked on write may hold a 0: it reads as the least cap, the
 * nearest policy that lets a message leave at all, rather than making every read of it fail.
 */
function liftStoredCaps(body: Partial<SendPolicyBody>): Partial<SendPolicyBody> {
  const lifted = { ...body };
  for (const name of CAP_FIELDS) {
    const value = lifted[name];
    if (typeof value === 'number' && value < MIN_CAP) lifted[name] = MIN_CAP;
  }
  if (lifted.warm_up != null && lifted.warm_up.start < MIN_CAP) lifted.warm_up = { ...lifted.warm_up, start: MIN_CAP };
  return lifted;
}

/** Minutes since midnight of "HH:MM"; undefined for anything else. */
export function parseClock(value: string): number | undefined {
  const match = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(value);
  return match === null ? undefined : Number(match[1]) * 60 + Number(match[2]);
}

/** The IANA name of a time zone in its canonical case, or undefined when it names none. */
function canonicalTimeZone(name: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

function invalidPolicy(message: string, field: string): AppError {
  return new AppError('invalid_send_policy', message, { field });
}
