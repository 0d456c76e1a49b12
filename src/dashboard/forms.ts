import { AppError } from '../domain/errors.ts';

/** A urlencoded form body: every field a string, or a list when the name repeats (checkboxes). */
export type FormBody = Record<string, string | string[] | undefined>;

export function formText(body: unknown, name: string): string {
  const value = (body as FormBody | undefined)?.[name];
  if (Array.isArray(value)) return value[0] ?? '';
  return typeof value === 'string' ? value : '';
}

export function formList(body: unknown, name: string): string[] {
  const value = (body as FormBody | undefined)?.[name];
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** A query string value, or undefined when missing or blank. */
export function queryText(query: unknown, name: string): string | undefined {
  const value = (query as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** Runs a form's action; an AppError becomes the message to show beside the form again. */
export async function attempt<T>(action: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: AppError }> {
  try {
    return { ok: true, value: await action() };
  } catch (error) {
    if (error instanceof AppError && error.code !== 'internal_error') return { ok: false, error };
    throw error;
  }
}

const SAME_ORIGIN_PROBE = 'http://wagw.invalid';

/**
 * Only a path on this site may follow sign-in, so a crafted login link cannot send anyone
 * elsewhere. The candidate is resolved the way a browser would (which ignores tabs and
 * newlines and reads "/\\" as "//"), and anything that leaves the origin falls back to "/".
 */
export function safeNextPath(raw: string): string {
  if (!raw.startsWith('/') || /[\p{Cc}\\]/u.test(raw)) return '/';
  try {
    const resolved = new URL(raw, SAME_ORIGIN_PROBE);
    if (resolved.origin !== SAME_ORIGIN_PROBE) return '/';
    const path = `${resolved.pathname}${resolved.search}${resolved.hash}`;
    // Dot segments can leave a path that starts with "//" ("/.//evil.example" resolves to
    // "//evil.example"), which a browser reads as another host. Such a path is refused, not
    // repaired: nobody links to one by accident.
    return /^\/[/\\]/.test(path) ? '/' : path;
  } catch {
    return '/';
  }
}

/** The wait a throttled refusal asks for, for its Retry-After header. */
export function retryAfterSeconds(error: AppError): number {
  const seconds = error.meta?.retry_after_seconds;
  return typeof seconds === 'number' ? seconds : 60;
}

/** What a form shows beside itself for an error: its message, which carries every fact a person needs. */
export function formErrorText(error: AppError): string {
  return error.message;
}
