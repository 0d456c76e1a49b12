import { AppError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { User } from '../domain/model.ts';
import { generateSecretToken, sha256Hex } from '../domain/secret-token.ts';
import type { Store } from '../store/database.ts';
import {
  deleteExpiredSessions,
  deleteSession,
  deleteSessionsOfUser,
  findSessionByTokenHash,
  insertSession,
  touchSession,
  type DashboardSession,
} from '../store/repositories/sessions.ts';
import { findUserCredentials, updatePasswordHash } from '../store/repositories/users.ts';
import { assertAcceptablePassword } from './password-policy.ts';
import { PasswordHasher } from './passwords.ts';
import { SignInThrottle } from './sign-in-throttle.ts';

export interface SessionTimeouts {
  idleTimeoutMs: number;
  absoluteTimeoutMs: number;
}

export interface SignInAttempt {
  email: string;
  password: string;
  ip: string;
  userAgent: string | undefined;
}

export interface SignedIn {
  /** The cookie value: shown to the browser only, stored as a hash. */
  token: string;
  session: DashboardSession;
  user: User;
}

/** The same words for every failure, so a response never tells whether an email exists. */
const GENERIC_FAILURE = 'The email or password is incorrect.';

// Last-seen times are written at most this often, so that reading pages does not mean writing.
const TOUCH_INTERVAL_MS = 60_000;

/** RFC 5321's longest path: no real address is longer, so a longer one is refused unread. */
export const MAX_EMAIL_LENGTH = 254;

/**
 * Dashboard sign-in and server-side sessions. A session is a row keyed by the hash of a random
 * token; each sign-in makes a new one, so a token planted before sign-in is worth nothing after.
 */
export class SignInService {
  private readonly throttle: SignInThrottle;

  constructor(
    private readonly store: Store,
    private readonly timeouts: SessionTimeouts,
    /** Keys the throttle's digests; derived from the gateway's secret key. */
    throttleDigestKey: Buffer,
    private readonly passwords = new PasswordHasher(),
  ) {
    this.throttle = new SignInThrottle(store, throttleDigestKey);
  }

  async signIn(attempt: SignInAttempt, now = new Date()): Promise<SignedIn> {
    // Not normalizeEmail: a malformed email must fail like any other, with the generic message.
    const email = attempt.email.trim().toLowerCase();
    // Refused before anything is counted or stored: an oversized email is nobody's.
    if (email.length > MAX_EMAIL_LENGTH) {
      throw new AppError('invalid_argument', `An email address has at most ${MAX_EMAIL_LENGTH} characters.`, {
        field: 'email',
        limit: MAX_EMAIL_LENGTH,
      });
    }
    const blockedUntil = await this.throttle.admit(email, attempt.ip, now);
    if (blockedUntil !== undefined) throw throttled('Too many failed sign-ins', blockedUntil, now);
    const credentials = email === '' ? undefined : await findUserCredentials(this.store.db, { email });
    const passwordMatches = await this.passwords.verify(attempt.password, credentials?.passwordHash ?? (await this.passwords.decoy()));
    if (credentials === undefined || !passwordMatches) throw new AppError('sign_in_failed', GENERIC_FAILURE);
    await this.throttle.succeeded(email, attempt.ip);
    await deleteExpiredSessions(
      this.store.db,
      new Date(now.getTime() - this.timeouts.idleTimeoutMs),
      new Date(now.getTime() - this.timeouts.absoluteTimeoutMs),
    );
    const { token, hash } = generateSecretToken();
    const session: DashboardSession = { id: newId('session'), userId: credentials.user.id, createdAt: now, lastSeenAt: now };
    await insertSession(this.store.db, {
      ...session,
      tokenHash: hash,
      ip: attempt.ip,
      userAgent: attempt.userAgent?.slice(0, 300) ?? null,
    });
    return { token, session, user: credentials.user };
  }

  /**
   * The live session behind a cookie value, or undefined when it is unknown or timed out.
   * `touch: false` reads it without extending the idle timeout.
   */
  async resume(
    token: string,
    now = new Date(),
    options: { touch: boolean } = { touch: true },
  ): Promise<{ session: DashboardSession; user: User } | undefined> {
    const found = await findSessionByTokenHash(this.store.db, sha256Hex(token));
    if (found === undefined) return undefined;
    const { session } = found;
    const idle = now.getTime() - session.lastSeenAt.getTime() > this.timeouts.idleTimeoutMs;
    const expired = now.getTime() - session.createdAt.getTime() > this.timeouts.absoluteTimeoutMs;
    if (idle || expired) {
      await deleteSession(this.store.db, session.id);
      return undefined;
    }
    if (options.touch && now.getTime() - session.lastSeenAt.getTime() >= TOUCH_INTERVAL_MS) {
      await touchSession(this.store.db, session.id, now);
      session.lastSeenAt = now;
    }
    return found;
  }

  /**
   * Counts an invite submission from this address, and refuses it past the limit: an invite
   * link answers whether an email can join, so it is throttled like sign-in.
   */
  async admitInviteSubmission(ip: string, now = new Date()): Promise<void> {
    const blockedUntil = await this.throttle.admitAddress('invite', ip, now);
    if (blockedUntil !== undefined) throw throttled('Too many invite submissions from your network', blockedUntil, now);
  }

  /** Deletes throttle counters that can no longer refuse anything. */
  pruneThrottle(now = new Date()): Promise<number> {
    return this.throttle.prune(now);
  }

  async signOut(token: string): Promise<void> {
    const found = await findSessionByTokenHash(this.store.db, sha256Hex(token));
    if (found !== undefined) await deleteSession(this.store.db, found.session.id);
  }

  /** Changes the user's own password and ends the user's other sessions. */
  async changePassword(userId: string, currentPassword: string, newPassword: string, keepSessionId: string): Promise<void> {
    const credentials = await findUserCredentials(this.store.db, { id: userId });
    if (credentials === undefined || !(await this.passwords.verify(currentPassword, credentials.passwordHash))) {
      throw new AppError('invalid_argument', 'The current password is incorrect.');
    }
    await assertAcceptablePassword(newPassword, [credentials.user.email]);
    await updatePasswordHash(this.store.db, userId, await this.passwords.hash(newPassword));
    await deleteSessionsOfUser(this.store.db, userId, keepSessionId);
  }
}

/** A 429 that says how long to wait, in seconds below two minutes and in minutes above. */
function throttled(what: string, until: Date, now: Date): AppError {
  const seconds = Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000));
  const wait = seconds < 120 ? `${seconds} second${seconds === 1 ? '' : 's'}` : `${Math.ceil(seconds / 60)} minutes`;
  return new AppError('sign_in_throttled', `${what}. Try again in ${wait}.`, { retry_after_seconds: seconds });
}
