import { proto, type WAMessage } from 'baileys';

/**
 * An incoming message's file, described so that it can be fetched again after a failed download,
 * by this process or another after a restart: the message's key and its protobuf, which holds the
 * file's address and key. The protobuf goes as its own encoding, which round-trips every field
 * (64-bit lengths and byte strings included) as JSON would not.
 */
export function retryTokenOf(message: WAMessage): string | null {
  const { key } = message;
  if (!message.message || !key?.id || !key.remoteJid) return null;
  return JSON.stringify({
    version: 1,
    key: { remoteJid: key.remoteJid, fromMe: key.fromMe ?? false, id: key.id, ...(key.participant && { participant: key.participant }) },
    message: Buffer.from(proto.Message.encode(message.message).finish()).toString('base64'),
  });
}

/** The message a retry token describes, enough for Baileys to download its file and ask for a re-upload. */
export function messageOfRetryToken(token: string): WAMessage {
  const parsed = JSON.parse(token) as { version: number; key: WAMessage['key']; message: string };
  if (parsed.version !== 1) throw new Error(`A media retry token of version ${parsed.version} is not one this gateway reads.`);
  return { key: parsed.key, message: proto.Message.decode(Buffer.from(parsed.message, 'base64')) };
}
