import type { Logger } from 'pino';
import type { SessionStatus, WhatsAppNumber } from '../domain/model.ts';
import { endsLinking, type LinkSession, type LinkUpdate } from '../engines/engine.ts';
import type { SessionSupervisor } from './session-supervisor.ts';

export type LinkMethod = 'qr' | 'pairing_code';

/** Where a linking attempt started from the operator console stands, as the console shows it. */
export interface LinkAttempt {
  numberId: string;
  method: LinkMethod;
  /** `connecting` until WhatsApp answers; then the session's own status. */
  status: SessionStatus;
  reason: string | null;
  /** The QR WhatsApp offers now; it changes about every 20 seconds. */
  qr: string | null;
  /** Counts QR changes, so a page can tell a new QR from the one it shows. */
  qrVersion: number;
  pairingCode: string | null;
  active: boolean;
  startedAt: Date;
}

interface RunningAttempt {
  attempt: LinkAttempt;
  session: LinkSession;
  unsubscribe: () => void;
}

/**
 * Linking started from the operator console. The CLI's `wagw number link` follows one attempt in
 * its own process; here the server keeps the latest state of each number's attempt so that the
 * number's page can poll it. A linked session is the number's live session and keeps running;
 * an attempt that ends any other way has its session stopped, so nothing retries behind the
 * operator's back.
 */
export class NumberLinkingService {
  private readonly running = new Map<string, RunningAttempt>();
  /** Attempts that ended, kept so the page can say how the last one went. */
  private readonly finished = new Map<string, LinkAttempt>();

  constructor(
    private readonly supervisor: SessionSupervisor,
    private readonly logger: Logger,
  ) {}

  /**
   * Starts linking the number, ending any attempt already under way for it; `rehearsal` lets a
   * sandbox number link (SessionSupervisor.link).
   */
  async start(number: WhatsAppNumber, method: LinkMethod, rehearsal = false): Promise<LinkAttempt> {
    await this.cancel(number.id);
    const session = await this.supervisor.link(number, rehearsal);
    const attempt: LinkAttempt = {
      numberId: number.id,
      method,
      status: 'connecting',
      reason: null,
      qr: null,
      qrVersion: 0,
      pairingCode: null,
      active: true,
      startedAt: new Date(),
    };
    const running: RunningAttempt = { attempt, session, unsubscribe: () => undefined };
    this.running.set(number.id, running);
    this.finished.delete(number.id);
    running.unsubscribe = session.onUpdate((update) => this.onUpdate(running, update));
    return { ...attempt };
  }

  /** The number's current or last attempt, if the console started one since this server started. */
  current(numberId: string): LinkAttempt | undefined {
    const attempt = this.running.get(numberId)?.attempt ?? this.finished.get(numberId);
    return attempt === undefined ? undefined : { ...attempt };
  }

  /** Ends the number's attempt under way, if any, and stops its session. */
  async cancel(numberId: string): Promise<void> {
    const running = this.running.get(numberId);
    if (running === undefined) return;
    await this.finish(
      running,
      running.attempt.status === 'connecting' ? 'disconnected' : running.attempt.status,
      'linking was cancelled',
      true,
    );
  }

  /** Logs the number's phone out, ending any attempt first: the number must be linked again. */
  async logout(number: WhatsAppNumber): Promise<void> {
    await this.cancel(number.id);
    await this.supervisor.logout(number);
  }

  /** Stops every attempt under way; the server's shutdown calls this before stopping sessions. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.running.keys()].map((numberId) => this.cancel(numberId)));
  }

  private onUpdate(running: RunningAttempt, update: LinkUpdate): void {
    const { attempt } = running;
    if (!attempt.active) return;
    if (update.qr !== undefined) {
      attempt.qr = update.qr;
      attempt.qrVersion += 1;
      if (attempt.method === 'pairing_code' && attempt.qrVersion === 1) this.requestPairingCode(running);
    }
    if (update.pairingCode !== undefined) attempt.pairingCode = update.pairingCode;
    attempt.status = update.status;
    if (update.reason !== undefined) attempt.reason = update.reason;
    if (update.status === 'connected') void this.finish(running, 'connected', null, false);
    else if (endsLinking(update.status)) void this.finish(running, update.status, update.reason ?? null, true);
  }

  // The code can only be asked for once the socket is ready to link, which the first QR marks.
  private requestPairingCode(running: RunningAttempt): void {
    running.session.requestPairingCode().then(
      (code) => {
        running.attempt.pairingCode = code;
      },
      (error: unknown) => {
        this.logger.warn({ err: error, numberId: running.attempt.numberId }, 'could not get a pairing code');
        void this.finish(running, 'failed', `no pairing code: ${error instanceof Error ? error.message : String(error)}`, true);
      },
    );
  }

  private async finish(running: RunningAttempt, status: SessionStatus, reason: string | null, stopSession: boolean): Promise<void> {
    const { attempt } = running;
    if (!attempt.active) return;
    attempt.active = false;
    attempt.status = status;
    attempt.reason = reason;
    attempt.qr = null;
    running.unsubscribe();
    this.running.delete(attempt.numberId);
    this.finished.set(attempt.numberId, attempt);
    if (!stopSession) return;
    await running.session
      .stop()
      .catch((error: unknown) => this.logger.error({ err: error, numberId: attempt.numberId }, 'could not stop a linking session'));
  }
}
