import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const FORMAT = 'v1';

/**
 * Encrypts the secrets the gateway must read back in clear (webhook signing secrets, and later
 * WhatsApp session keys), so that a copied database or backup does not hand them out.
 * AES-256-GCM authenticates as well as hides: a tampered value fails to open.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('A secret box needs a 32-byte key.');
  }

  seal(plaintext: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.key, iv);
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [FORMAT, iv.toString('base64'), cipher.getAuthTag().toString('base64'), sealed.toString('base64')].join(':');
  }

  open(sealed: string): string {
    const [format, iv, tag, body] = sealed.split(':');
    if (format !== FORMAT || !iv || !tag || body === undefined) throw new Error('This secret was not sealed by this gateway.');
    const decipher = createDecipheriv(ALGORITHM, this.key, Buffer.from(iv, 'base64'), { authTagLength: TAG_BYTES });
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
  }
}

/**
 * The configured key, or else the key file in the data directory, created on first use. A
 * generated key is convenient for one machine but must be backed up with the database, and
 * every node of a cluster needs the same one, hence the warning.
 */
export function loadSecretKey(configured: Buffer | undefined, dataDirectory: string, logger: Logger): Buffer {
  if (configured !== undefined) return configured;
  const file = path.join(dataDirectory, 'secret.key');
  if (fs.existsSync(file)) return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'hex');
  fs.mkdirSync(dataDirectory, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  // Written aside and then linked into place, so another process (the CLI starting beside the
  // server) never reads a half-written file: it sees no file, or the whole key.
  const draft = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(draft, `${key.toString('hex')}\n`, { mode: 0o600 });
  try {
    fs.linkSync(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'hex');
    throw error;
  } finally {
    fs.rmSync(draft, { force: true });
  }
  logger.warn(
    { file },
    'WAGW_SECRET_KEY is not set: generated a secret key file. Back it up with the database; without it, stored secrets cannot be read.',
  );
  return key;
}
