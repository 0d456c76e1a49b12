import fs from 'node:fs';
import fsp from 'node:fs/promises';
import type { Readable } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import type { S3StoreConfig } from '../config.ts';
import { assertValidKey, isValidKey, type BlobKey, type BlobStore, type BlobWriter, type ByteRange } from './blob-store.ts';
import { openSpoolFile, sweepSpool } from './spool-file.ts';

/**
 * The object's own record of when it was last written, in milliseconds. S3 keeps LastModified,
 * but a copy onto itself (how a second commit of the same bytes marks the blob as just written)
 * does not move it on every S3-compatible server, so the store writes its own.
 */
const TOUCHED_AT = 'wagw-touched-at';

/**
 * Blobs as objects in an S3-compatible bucket (AWS, MinIO, R2 and the like), keyed
 * `<prefix><account>/<sha256>`: what a cluster's nodes share. Bytes are spooled to a local file
 * while they stream in, because the key is the hash of the whole file; the upload then goes
 * with its length known, in one PUT, and an object is either whole or absent.
 */
export class S3BlobStore implements BlobStore {
  private constructor(
    private readonly client: S3Client,
    private readonly settings: S3StoreConfig,
    private readonly spoolDirectory: string,
  ) {}

  /** Connects and checks that the bucket answers, so that a wrong setting stops the start, not a send. */
  static async open(settings: S3StoreConfig, spoolDirectory: string): Promise<S3BlobStore> {
    const client = new S3Client({
      region: settings.region,
      ...(settings.endpoint !== null && { endpoint: settings.endpoint }),
      forcePathStyle: settings.forcePathStyle,
      // The SDK would otherwise send a streamed body in aws-chunked framing with a trailing
      // checksum, which not every S3-compatible server understands (some store the framing as
      // the object). The upload carries its SHA-256 in a header instead, which S3 checks.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...(settings.accessKeyId !== null &&
        settings.secretAccessKey !== null && {
          credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
        }),
    });
    try {
      await client.send(new HeadBucketCommand({ Bucket: settings.bucket }));
    } catch (error) {
      client.destroy();
      const status = error instanceof S3ServiceException ? ` (HTTP ${error.$metadata.httpStatusCode ?? '?'}, ${error.name})` : '';
      throw new Error(
        `The media bucket ${settings.bucket} cannot be reached${status}: check WAGW_MEDIA_S3_BUCKET, WAGW_MEDIA_S3_ENDPOINT and the ` +
          `credentials. ${(error as Error).message}`,
      );
    }
    return new S3BlobStore(client, settings, spoolDirectory);
  }

  async begin(): Promise<BlobWriter> {
    const spool = await openSpoolFile(this.spoolDirectory);
    return {
      write: (chunk) => spool.write(chunk),
      commit: async (key) => {
        const objectKey = this.objectKey(key);
        await spool.finish({ durable: false });
        try {
          if (await this.exists(key)) {
            // The same bytes under the same hash: the object stays, marked as just written.
            await this.client.send(
              new CopyObjectCommand({
                Bucket: this.settings.bucket,
                Key: objectKey,
                CopySource: `${this.settings.bucket}/${encodeURIComponent(objectKey).replaceAll('%2F', '/')}`,
                MetadataDirective: 'REPLACE',
                Metadata: { [TOUCHED_AT]: String(Date.now()) },
              }),
            );
            return;
          }
          const { size } = await fsp.stat(spool.path);
          await this.client.send(
            new PutObjectCommand({
              Bucket: this.settings.bucket,
              Key: objectKey,
              Body: fs.createReadStream(spool.path),
              ContentLength: size,
              ChecksumSHA256: Buffer.from(key.sha256, 'hex').toString('base64'),
              Metadata: { [TOUCHED_AT]: String(Date.now()) },
            }),
          );
        } finally {
          await spool.discard();
        }
      },
      abort: () => spool.discard(),
    };
  }

  async read(key: BlobKey, range?: ByteRange): Promise<Readable | undefined> {
    try {
      const answer = await this.client.send(
        new GetObjectCommand({
          Bucket: this.settings.bucket,
          Key: this.objectKey(key),
          ...(range !== undefined && { Range: `bytes=${range.start}-${range.end}` }),
        }),
      );
      return answer.Body as Readable;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async exists(key: BlobKey): Promise<boolean> {
    return (await this.head(key)) !== undefined;
  }

  async touchedAt(key: BlobKey): Promise<Date | undefined> {
    const head = await this.head(key);
    if (head === undefined) return undefined;
    const touched = Number(head.Metadata?.[TOUCHED_AT]);
    return Number.isFinite(touched) && touched > 0 ? new Date(touched) : head.LastModified;
  }

  async remove(key: BlobKey): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) }));
  }

  async *list(): AsyncIterable<BlobKey & { writtenAt: Date }> {
    let continuationToken: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.settings.bucket, Prefix: this.settings.prefix, ContinuationToken: continuationToken }),
      );
      for (const object of page.Contents ?? []) {
        const [accountId, sha256, ...rest] = (object.Key ?? '').slice(this.settings.prefix.length).split('/');
        const key = { accountId: accountId ?? '', sha256: sha256 ?? '' };
        // Objects the gateway did not write (another prefix's, a stray upload) are never touched.
        if (rest.length > 0 || !isValidKey(key)) continue;
        yield { ...key, writtenAt: object.LastModified ?? new Date(0) };
      }
      continuationToken = page.IsTruncated === true ? page.NextContinuationToken : undefined;
    } while (continuationToken !== undefined);
  }

  sweepIncoming(olderThan: Date): Promise<number> {
    return sweepSpool(this.spoolDirectory, olderThan);
  }

  async close(): Promise<void> {
    this.client.destroy();
  }

  private async head(key: BlobKey) {
    try {
      return await this.client.send(new HeadObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) }));
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  private objectKey(key: BlobKey): string {
    assertValidKey(key);
    return `${this.settings.prefix}${key.accountId}/${key.sha256}`;
  }
}

function isMissing(error: unknown): boolean {
  return (
    error instanceof S3ServiceException &&
    (error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata.httpStatusCode === 404)
  );
}
