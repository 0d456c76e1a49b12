// Table shapes of media: stored files' metadata and incoming files still to fetch, as both dialects
// store them; see schema.ts.

export interface MediaTable {
  id: string;
  account_id: string;
  kind: string;
  mime_type: string;
  size: number;
  /** Hex SHA-256 of the bytes; with account_id, the blob's key. */
  sha256: string;
  file_name: string | null;
  /** 'upload', 'send' (a send's url or data) or 'received'. */
  source: string;
  created_at: number;
  /** When retention ends; the sweep removes the bytes then. */
  expires_at: number;
  /** When the bytes were removed; the row stays, so messages still describe what they carried. */
  removed_at: number | null;
}

/** An incoming file still to be fetched, after its first download failed (migration 0013). */
export interface MediaDownloadsTable {
  message_id: string;
  account_id: string;
  number_id: string;
  kind: string;
  file_name: string | null;
  /** The engine's description of the file, from which it can fetch it again (opaque here). */
  engine_token: string;
  /** Downloads tried so far, the first (with the message) included. */
  attempts: number;
  last_reason: string;
  next_attempt_at: number;
  created_at: number;
}
