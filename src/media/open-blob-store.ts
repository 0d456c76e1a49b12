import type { MediaConfig } from '../config.ts';
import type { BlobStore } from './blob-store.ts';
import { FilesystemBlobStore } from './filesystem-blob-store.ts';

/**
 * The configured blob store. The AWS SDK is loaded only when S3 is chosen, so a gateway on the
 * embedded default neither pays its start-up time nor sees its warnings.
 */
export async function openBlobStore(settings: MediaConfig): Promise<BlobStore> {
  if (settings.s3 === null) return new FilesystemBlobStore(settings.directory);
  const { S3BlobStore } = await import('./s3-blob-store.ts');
  return S3BlobStore.open(settings.s3, settings.directory);
}
