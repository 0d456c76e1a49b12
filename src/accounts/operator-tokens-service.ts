import type { Logger } from 'pino';
import { recordAudit } from '../audit/audit-trail.ts';
import { SYSTEM_ACTOR, type AuditActor } from '../domain/audit.ts';
import { AppError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { generateOperatorToken, hashOperatorToken, OPERATOR_TOKEN_PATTERN, type OperatorToken } from '../domain/operator-token.ts';
import type { Store } from '../store/database.ts';
import {
  findActiveOperatorTokenByHash,
  findOperatorToken,
  insertOperatorToken,
  listOperatorTokens,
  revokeOperatorToken,
  touchOperatorTokenLastUsed,
} from '../store/repositories/operator-tokens.ts';

const LAST_USED_WRITE_INTERVAL_MS = 60_000;
const MAX_NAME_LENGTH = 100;

/**
 * Operator tokens (docs/adr/0057-operator-api.md): made and revoked by the operator (CLI), each
 * with an audit row, and checked on every operator API call.
 *
 * Unlike API keys, a token is never remembered between requests: each call reads its row through
 * the unique index. The operator API is called far less often than the send path, and this is
 * what makes a revoked token refused at once on every node, with no notice to miss.
 */
export class OperatorTokensService {
  private readonly lastUsedWrites = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
  ) {}

  async create(name: string, actor: AuditActor = SYSTEM_ACTOR): Promise<{ token: OperatorToken; plaintext: string }> {
    const trimmed = name.trim();
    if (trimmed === '' || trimmed.length > MAX_NAME_LENGTH)
      throw new AppError('invalid_argument', `A token's name is 1 to ${MAX_NAME_LENGTH} characters.`);
    const generated = generateOperatorToken();
    const token: OperatorToken = {
      id: newId('operatorToken'),
      name: trimmed,
      hint: generated.hint,
      createdAt: new Date(),
      revokedAt: null,
      lastUsedAt: null,
    };
    await this.store.db.transaction().execute(async (trx) => {
      await insertOperatorToken(trx, token, generated.hash);
      await recordAudit(trx, actor, 'operator_token.created', { accountId: null, targetId: token.id, details: { name: token.name } });
    });
    return { token, plaintext: generated.plaintext };
  }

  list(): Promise<OperatorToken[]> {
    return listOperatorTokens(this.store.db);
  }

  /** Revokes a token; from the commit on, every node refuses it. Revoking twice is harmless. */
  async revoke(id: string, actor: AuditActor = SYSTEM_ACTOR): Promise<OperatorToken> {
    const token = await findOperatorToken(this.store.db, id);
    if (token === undefined) throw new AppError('operator_token_not_found', `There is no operator token ${id}.`);
    if (token.revokedAt !== null) return token;
    const at = new Date();
    await this.store.db.transaction().execute(async (trx) => {
      await revokeOperatorToken(trx, id, at);
      await recordAudit(trx, actor, 'operator_token.revoked', { accountId: null, targetId: id, details: { name: token.name } });
    });
    return { ...token, revokedAt: at };
  }

  /** The token an Authorization header carries, or the refusal: 401 missing or invalid. */
  async authenticate(authorization: string | undefined): Promise<OperatorToken> {
    const match = authorization === undefined ? null : /^Bearer[ \t]+(\S.*)$/is.exec(authorization);
    if (match === null)
      throw new AppError(
        'missing_operator_token',
        'Send an operator token as "Authorization: Bearer <token>" (wagw operator-token create).',
      );
    const candidate = (match[1] ?? '').trim();
    if (!OPERATOR_TOKEN_PATTERN.test(candidate))
      throw new AppError('invalid_operator_token', 'The operator token is malformed: tokens look like wagw_op_ followed by 64 hex digits.');
    const token = await findActiveOperatorTokenByHash(this.store.db, hashOperatorToken(candidate));
    if (token === undefined) throw new AppError('invalid_operator_token', 'The operator token is unknown or has been revoked.');
    this.noteUse(token);
    return token;
  }

  /** last_used_at is written at most once a minute per token, off the request's path. */
  private noteUse(token: OperatorToken): void {
    const now = Date.now();
    const lastWrite = Math.max(token.lastUsedAt?.getTime() ?? 0, this.lastUsedWrites.get(token.id) ?? 0);
    if (now - lastWrite < LAST_USED_WRITE_INTERVAL_MS) return;
    this.lastUsedWrites.set(token.id, now);
    touchOperatorTokenLastUsed(this.store.db, token.id, new Date(now)).catch((error: unknown) => {
      this.logger.warn({ err: error, tokenId: token.id }, 'could not record when an operator token was last used');
    });
  }
}
