import { AppError } from './errors.ts';

/** How WhatsApp presents a file: the kind decides the message type a recipient sees. */
export const mediaKinds = ['image', 'video', 'audio', 'voice', 'document', 'sticker'] as const;
export type MediaKind = (typeof mediaKinds)[number];

export function isMediaKind(value: string): value is MediaKind {
  return (mediaKinds as readonly string[]).includes(value);
}

/** The largest file of each kind, in bytes (config.ts holds the defaults, from WhatsApp's own). */
export type MediaLimits = Readonly<Record<MediaKind, number>>;

/** Where a media object came from. */
export type MediaSource = 'upload' | 'send' | 'received';

/** A stored file's description; its bytes are in the blob store under `account/sha256`. */
export interface MediaObject {
  id: string;
  accountId: string;
  kind: MediaKind;
  mimeType: string;
  size: number;
  sha256: string;
  fileName: string | null;
  source: MediaSource;
  createdAt: Date;
  /** When it may be swept; null while a message uses it and its retention has not started. */
  expiresAt: Date | null;
}

/** What sniffing the first bytes found: a type, or nothing recognisable (plain text, CSV, …). */
export interface SniffedType {
  mimeType: string;
  extension: string;
}

export const GENERIC_BINARY = 'application/octet-stream';

// RFC 9110 §8.3.1: type "/" subtype, then parameters whose values are tokens or quoted strings.
// Names are at most 127 characters each (RFC 6838 §4.2). Only ASCII: the type goes out again as
// a header, where a control or non-Latin-1 character would break the answer.
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]";
const QUOTED_STRING = '"(?:[\\t \\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\[\\t \\x21-\\x7e])*"';
const MEDIA_TYPE = new RegExp(`^${TOKEN}{1,127}/${TOKEN}{1,127}(?:[ \\t]*;[ \\t]*${TOKEN}+=(?:${TOKEN}+|${QUOTED_STRING}))*$`);

/** Whether a text is a well-formed media type, such as `text/csv` or `text/plain; charset=utf-8`. */
export function isMediaType(value: string): boolean {
  return MEDIA_TYPE.test(value);
}

/** Refuses a client's media type that is not well formed, naming where it was given. */
export function assertMediaType(value: string, field: string): void {
  if (isMediaType(value)) return;
  throw new AppError(
    'invalid_request',
    `${field} is not a media type: write it as type/subtype with optional parameters, e.g. text/csv or text/plain; charset=utf-8.`,
    { field, problem: 'not_a_media_type' },
  );
}

// The spellings clients use for the same type; compared after this mapping.
const MIME_ALIASES: Readonly<Record<string, string>> = {
  'image/jpg': 'image/jpeg',
  'image/pjpeg': 'image/jpeg',
  'audio/opus': 'audio/ogg',
  'audio/x-m4a': 'audio/mp4',
  'audio/m4a': 'audio/mp4',
  'audio/mp3': 'audio/mpeg',
  'audio/x-wav': 'audio/wav',
  'audio/wave': 'audio/wav',
  'application/x-pdf': 'application/pdf',
};

function canonicalMimeType(mimeType: string): string {
  const bare = mimeType.split(';')[0]!.trim().toLowerCase();
  return MIME_ALIASES[bare] ?? bare;
}

/** What each kind may carry, by canonical type; a document carries anything. */
const KIND_ACCEPTS: Readonly<Record<Exclude<MediaKind, 'document'>, (mimeType: string) => boolean>> = {
  image: (type) => type === 'image/jpeg' || type === 'image/png' || type === 'image/webp',
  video: (type) => type === 'video/mp4' || type === 'video/3gpp',
  audio: (type) => type.startsWith('audio/'),
  voice: (type) => type === 'audio/ogg',
  sticker: (type) => type === 'image/webp',
};

/** The kind a file is sent as when the caller names none, from its sniffed type. */
function defaultKind(mimeType: string): MediaKind {
  if (mimeType === 'image/jpeg' || mimeType === 'image/png') return 'image';
  if (mimeType === 'video/mp4') return 'video';
  // Ogg (Opus) is what WhatsApp records voice notes in; other audio plays as a file.
  if (mimeType === 'audio/ogg') return 'voice';
  if (mimeType.startsWith('audio/')) return 'audio';
  if (mimeType === 'image/webp') return 'sticker';
  return 'document';
}

export interface MediaClaims {
  kind?: MediaKind;
  mimeType?: string;
  /** A kind to use if the bytes allow it, and otherwise the default for their type: what a sender's client said of a file it sent us. */
  preferredKind?: MediaKind;
  /** A type to take for bytes with no signature when the caller declared none (a URL's Content-Type); never checked against the bytes. */
  fallbackMimeType?: string;
}

/**
 * Decides a file's kind and type from its bytes and the caller's claims. The bytes win: a
 * declared type that a recognised signature contradicts is refused, and so is a declared type
 * that has a signature of its own when the bytes show none (a "PDF" without `%PDF`). Bytes with
 * no signature (text, CSV, JSON) take the declared type, or application/octet-stream.
 *
 * `recognisable` tells whether sniffing can recognise a type at all, so that a claim sniffing
 * would have confirmed is not taken on trust.
 */
export function decideMediaType(
  sniffed: SniffedType | undefined,
  claims: MediaClaims,
  recognisable: (mimeType: string) => boolean,
): { kind: MediaKind; mimeType: string } {
  const declared = claims.mimeType === undefined ? undefined : canonicalMimeType(claims.mimeType);
  const detected = sniffed === undefined ? undefined : canonicalMimeType(sniffed.mimeType);
  if (declared !== undefined && detected !== undefined && declared !== detected) {
    throw new AppError('media_type_mismatch', `media.mime_type says ${declared}, but the file's bytes are ${detected}.`, {
      field: 'media.mime_type',
      declared,
      detected,
    });
  }
  if (declared !== undefined && detected === undefined && recognisable(declared)) {
    throw new AppError('media_type_mismatch', `media.mime_type says ${declared}, but the file's bytes do not start like one.`, {
      field: 'media.mime_type',
      declared,
      detected: null,
    });
  }
  const fallback = claims.fallbackMimeType === undefined ? undefined : canonicalMimeType(claims.fallbackMimeType);
  // A fallback that names a recognisable type the bytes do not show says nothing true of them,
  // and one that is not a media type at all says nothing.
  const mimeType =
    detected ?? declared ?? (fallback !== undefined && isMediaType(fallback) && !recognisable(fallback) ? fallback : GENERIC_BINARY);
  const preferred = claims.preferredKind;
  const kind =
    claims.kind ??
    (preferred !== undefined && (preferred === 'document' || KIND_ACCEPTS[preferred](mimeType)) ? preferred : defaultKind(mimeType));
  if (kind !== 'document' && !KIND_ACCEPTS[kind](mimeType)) {
    throw new AppError(
      'media_kind_mismatch',
      `A ${mimeType} file cannot be sent as ${kind === 'image' ? 'an' : 'a'} ${kind}; send it as a document, or convert it.`,
      {
        field: 'media.kind',
        kind,
        mime_type: mimeType,
      },
    );
  }
  return { kind, mimeType };
}

/** Refuses a file over its kind's limit, naming the limit. */
export function assertWithinLimit(kind: MediaKind, size: number, limits: MediaLimits): void {
  if (size > limits[kind]) throw mediaTooLarge(kind, limits[kind]);
}

export function mediaTooLarge(kind: MediaKind | 'any', limitBytes: number): AppError {
  return new AppError(
    'media_too_large',
    `The file is larger than ${formatBytes(limitBytes)}, the most a${kind === 'image' || kind === 'audio' || kind === 'any' ? 'n' : ''} ` +
      `${kind === 'any' ? 'media' : kind} file may be.`,
    {
      kind,
      limit_bytes: limitBytes,
    },
  );
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * A file name safe to store, show and put in a header: the last path segment, without control
 * characters, at most 200 characters. Null when nothing is left.
 */
export function cleanFileName(name: string | undefined | null): string | null {
  if (name === undefined || name === null) return null;
  const lastSegment = name.split(/[\\/]/).pop() ?? '';
  const cleaned = lastSegment
    .replace(/\p{Cc}/gu, '')
    .trim()
    .slice(0, 200);
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? null : cleaned;
}
