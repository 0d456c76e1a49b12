import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

/** The media stores every media test runs against: the embedded default and an S3 bucket. */
export type BlobStoreKind = 'filesystem' | 's3';
export const blobStores: readonly BlobStoreKind[] = ['filesystem', 's3'];

export interface TestS3Server {
  /** The gateway's settings for a bucket on this server. */
  env: Record<string, string>;
  close(): Promise<void>;
}

const BUCKET = 'wagw-media';

// The SDK's notice about the Node versions it will support after 2027 says nothing about the code under test.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/**
 * A real S3-protocol server (s3rver) on a free local port, with an empty bucket, its objects in
 * a directory of its own. Requests are signed and checked as AWS would; s3rver accepts the
 * fixed credentials below.
 */
export async function startS3Server(): Promise<TestS3Server> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'wagw-test-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: BUCKET }] });
  const { port } = await server.run();
  return {
    env: {
      WAGW_MEDIA_STORE: 's3',
      WAGW_MEDIA_S3_BUCKET: BUCKET,
      WAGW_MEDIA_S3_ENDPOINT: `http://127.0.0.1:${port}`,
      WAGW_MEDIA_S3_ACCESS_KEY_ID: 'S3RVER',
      WAGW_MEDIA_S3_SECRET_ACCESS_KEY: 'S3RVER',
    },
    async close() {
      server.httpServer?.closeAllConnections();
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
