import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { fileTypeFromBuffer, supportedMimeTypes } from 'file-type';
import type { MediaConfig } from '../config.ts';
import { AppError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import {
  assertWithinLimit,
  cleanFileName,
  decideMediaType,
  mediaTooLarge,
  type MediaClaims,
  type MediaKind,
  type MediaObject,
  type MediaSource,
} from '../domain/media.ts';
import type { Store } from '../store/database.ts';
import { findAccountMedia, findLiveMedia, findLiveMediaById } from '../store/repositories/media.ts';
import type { AccountScope } from '../domain/tenant-scope.ts';
import type { BlobStore, ByteRange } from './blob-store.ts';
import type { MediaFetcher } from './media-fetcher.ts';
import type { FileAdmission, MediaAdmission } from './media-admission.ts';
import type { OutgoingMedia } from '../engines/engine.ts';

/** How many leading bytes sniffing looks at; file-type's own recommendation covers every signature it knows. */
const SNIFF_BYTES = 4100;

const recognisable = new Set<string>(supportedMimeTypes);

export interface IngestRequest extends MediaClaims {
  accountId: string;
  fileName?: string | null;
  source: MediaSource;
  /** The size the client announced (an upload's Content-Length), checked against the limits before reading. */
  declaredBytes?: number;
}

/**
 * Media objects: stores a file's bytes once per account in the blob store and describes them in
 * a row. The type and kind come from the bytes (docs/media.md); limits are enforced while the
 * bytes stream in, so nothing over a limit is ever held whole, in memory or on disk.
 */
export class MediaService {
  constructor(
    private readonly store: Store,
    private readonly blobs: BlobStore,
    private readonly settings: MediaConfig,
    private readonly fetcher: MediaFetcher,
    readonly admission: MediaAdmission,
  ) {}

  /**
   * Fetches a send's media.url (media-fetcher.ts) and stores it like any other file. The disk,
   * the storage quota and the fetch budget are asked first, and every byte fetched is charged to
   * the budget, refused or not: a failing fetch costs the account as much as one that succeeds.
   */
  async ingestFromUrl(url: string, request: IngestRequest): Promise<MediaObject> {
    const admission = await this.admission.admit(request.accountId, request.source, 'fetch');
    try {
      const fetched = await this.fetcher.fetch(url);
      return await this.ingest(
        fetched.bytes,
        { ...request, fallbackMimeType: fetched.contentType, fileName: request.fileName ?? fetched.fileName },
        admission,
      );
    } finally {
      admission.finish();
    }
  }

  /**
   * Reads `bytes` to the end into a new media object of the account. The row is written once
   * the blob is durable, so a row never names missing bytes; a crash in between leaves a blob
   * without a row, which the orphan sweep removes.
   */
  async ingest(bytes: AsyncIterable<Buffer | Uint8Array>, request: IngestRequest, admitted?: FileAdmission): Promise<MediaObject> {
    const admission =
      admitted ??
      (await this.admission.admit(
        request.accountId,
        request.source,
        request.source === 'upload' ? 'upload' : undefined,
        request.declaredBytes,
      ));
    try {
      return await this.write(bytes, request, admission);
    } finally {
      if (admitted === undefined) admission.finish();
    }
  }

  private async write(bytes: AsyncIterable<Buffer | Uint8Array>, request: IngestRequest, admission: FileAdmission): Promise<MediaObject> {
    const iterator = bytes[Symbol.asyncIterator]();
    const head = await readHead(iterator);
    const { kind, mimeType } = await decideFromHead(head, request);
    const limit = this.settings.limits[kind];
    const writer = await this.blobs.begin();
    const hash = createHash('sha256');
    let size = 0;
    try {
      const take = async (chunk: Buffer) => {
        size += chunk.length;
        if (size > limit) throw mediaTooLarge(kind, limit);
        await admission.take(chunk.length);
        hash.update(chunk);
        await writer.write(chunk);
      };
      await take(head);
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) await take(Buffer.from(next.value));
      const sha256 = hash.digest('hex');
      await writer.commit({ accountId: request.accountId, sha256 });
      const createdAt = new Date();
      // Received files are a message's from the start; others wait for a send to use them, briefly.
      const retention = request.source === 'received' ? this.settings.retentionMs : this.settings.uploadTtlMs;
      const media: MediaObject = {
        id: newId('media'),
        accountId: request.accountId,
        kind,
        mimeType,
        size,
        sha256,
        fileName: cleanFileName(request.fileName),
        source: request.source,
        createdAt,
        expiresAt: new Date(createdAt.getTime() + retention),
      };
      await admission.record({ ...media, expiresAt: media.expiresAt! });
      return media;
    } catch (error) {
      await writer.abort();
      // Stop reading what the client still sends; the caller answers the error.
      await iterator.return?.();
      throw error;
    }
  }

  /**
   * A file held in memory described as an engine sends it, without storing it: what a simulated
   * incoming file needs, since the receiving number stores its own copy. The same sniffing and
   * limits apply as to a stored file.
   */
  async describe(bytes: Buffer, claims: MediaClaims & { fileName?: string | null }): Promise<OutgoingMedia> {
    const { kind, mimeType } = await decideFromHead(bytes.subarray(0, SNIFF_BYTES), claims);
    assertWithinLimit(kind, bytes.length, this.settings.limits);
    return {
      kind,
      mimeType,
      fileName: cleanFileName(claims.fileName),
      size: bytes.length,
      read: async () => bytes,
      open: async () => Readable.from([bytes]),
    };
  }

  /** The account's media objects by id, kept or not (`removed`): the files a page of messages carries. */
  describeForMessages(scope: AccountScope, ids: readonly string[]): Promise<(MediaObject & { removed: boolean })[]> {
    return findAccountMedia(this.store.db, scope.accountId, ids);
  }

  /** The account's media object, or media_not_found: another account's id is no different from an unknown one. */
  async find(accountId: string, id: string, field = 'media.id'): Promise<MediaObject> {
    const media = await findLiveMedia(this.store.db, accountId, id, new Date());
    if (media === undefined)
      throw new AppError('media_not_found', `There is no media ${id} in this account, or its retention has ended.`, { field });
    return media;
  }

  /**
   * Uses a stored file as another kind, as a send may ask ("send this WebP as an image"); the
   * stored type stands for the bytes, which were sniffed when they came in.
   */
  asKind(media: MediaObject, claims: MediaClaims): MediaObject {
    const decided = decideMediaType({ mimeType: media.mimeType, extension: '' }, claims, (type) => recognisable.has(type));
    assertWithinLimit(decided.kind, media.size, this.settings.limits);
    return { ...media, kind: decided.kind };
  }

  /** The bytes, or a range of them. A row whose blob has gone is reported as not found. */
  async open(media: MediaObject, range?: ByteRange): Promise<Readable> {
    const stream = await this.blobs.read({ accountId: media.accountId, sha256: media.sha256 }, range);
    if (stream === undefined)
      throw new AppError('media_not_found', `The bytes of media ${media.id} are no longer stored.`, { field: 'id' });
    return stream;
  }

  /** The whole file in memory, for an engine that must hand WhatsApp a buffer. */
  async readAll(media: MediaObject): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.open(media)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  /** The media object as an engine sends it: described, with its bytes read on demand. */
  outgoing(media: MediaObject): OutgoingMedia {
    return {
      kind: media.kind,
      mimeType: media.mimeType,
      fileName: media.fileName,
      size: media.size,
      read: () => this.readAll(media),
      open: () => this.open(media),
    };
  }

  get linkTtlMs(): number {
    return this.settings.linkTtlMs;
  }

  /** A file by id alone, for a signed link, which has already proved which file it opens. */
  async findBySignedLink(id: string): Promise<MediaObject> {
    const media = await findLiveMediaById(this.store.db, id, new Date());
    if (media === undefined) throw new AppError('media_not_found', `There is no media ${id}, or its retention has ended.`, { field: 'id' });
    return media;
  }

  get retentionMs(): number {
    return this.settings.retentionMs;
  }
}

/** The kind and type of a file from its first bytes and the caller's claims (docs/media.md). */
async function decideFromHead(head: Buffer, claims: MediaClaims): Promise<{ kind: MediaKind; mimeType: string }> {
  if (head.length === 0) throw new AppError('invalid_media', 'The file is empty.', { field: 'media' });
  const sniffed = await fileTypeFromBuffer(head);
  return decideMediaType(sniffed === undefined ? undefined : { mimeType: sniffed.mime, extension: sniffed.ext }, claims, (type) =>
    recognisable.has(type),
  );
}

async function readHead(iterator: AsyncIterator<Buffer | Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  while (length < SNIFF_BYTES) {
    const next = await iterator.next();
    if (next.done) break;
    const chunk = Buffer.from(next.value);
    chunks.push(chunk);
    length += chunk.length;
  }
  return Buffer.concat(chunks);
}
