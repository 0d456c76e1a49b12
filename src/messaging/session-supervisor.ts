import type { Logger } from 'pino';
import type { EngineKind, SessionStatus, WhatsAppNumber } from '../domain/model.ts';
import { AppError } from '../domain/errors.ts';
import type { Engine, EngineSendFailure, InboundSimulator, LinkSession, OutgoingText, SentText, SessionStatusEvent } from '../engines/engine.ts';
import { EngineSendError } from '../engines/engine.ts';
import type { EngineRegistry } from '../engines/registry.ts';
import type { Store } from '../store/database.ts';
import { sessionStatusPayload } from '../domain/webhooks.ts';
import type { GroupCommitter } from '../store/group-commit.ts';
import { findNumberByPhone, listEveryNumber, listNumbersOfEngines, updateNumberStatus } from '../store/repositories/numbers.ts';
import { enqueueEvent, type DeliveryNotifier } from '../webhooks/outbox.ts';

const RESTARTABLE: ReadonlySet<SessionStatus> = new Set(['failed', 'conflict', 'disconnected']);

export type SendFailureReason = EngineSendFailure | 'engine_error';

/** Hears how each send the supervisor routed went, per engine (the metrics listen here). */
export interface SendObserver {
  messageSent(engine: EngineKind): void;
  messageSendFailed(engine: EngineKind, reason: SendFailureReason): void;
}

/**
 * The one place that knows which engine instance serves a number. Everything that talks to a
 * WhatsApp session goes through here, so that routing numbers to nodes can be added in one spot.
 */
export class SessionSupervisor {
  constructor(
    private readonly store: Store,
    private readonly engines: EngineRegistry,
    private readonly committer: GroupCommitter,
    private readonly notifier: DeliveryNotifier,
    private readonly logger: Logger,
    private readonly sendObserver?: SendObserver,
  ) {}

  /** Starts a session for every number the gateway holds. */
  async startAll(): Promise<void> {
    const numbers = await listEveryNumber(this.store.db);
    for (const number of numbers) {
      try {
        await this.engineFor(number)?.start(number);
      } catch (error) {
        this.logger.error({ err: error, phone: number.phone }, 'could not start the session of a number');
      }
    }
  }

  /**
   * Starts the sessions of linked numbers that have none here, such as a number just linked by
   * `wagw number link` in another process. Engines ignore numbers whose session already runs.
   * The server runs this every minute, so it reads only the numbers of engines that link: the
   * sandbox's numbers, however many, cost it nothing.
   */
  async resumeLinkedSessions(): Promise<void> {
    const linkingEngines = this.engines.kinds().filter((kind) => this.engines.get(kind)?.capabilities.linking === true);
    const numbers = await listNumbersOfEngines(this.store.db, linkingEngines);
    for (const number of numbers) {
      const engine = this.engineFor(number);
      if (engine === undefined) continue;
      await engine.start(number).catch((error: unknown) => this.logger.error({ err: error, phone: number.phone }, 'could not resume the session of a number'));
    }
  }

  /**
   * Ends the number's session and starts it again: how an operator retries a number that gave
   * up (`failed`), was replaced by another device (`conflict`) or is waiting out a backoff
   * (`disconnected`). Other statuses need linking (`logged_out`, `link_expired`) or nothing.
   */
  async restart(number: WhatsAppNumber): Promise<void> {
    const engine = this.engineFor(number);
    if (engine === undefined || !engine.capabilities.linking) {
      throw new AppError('invalid_argument', `${number.phone} runs on the ${number.engine} engine, which has no session to restart.`);
    }
    if (!this.restartable(number)) {
      throw new AppError('invalid_argument', `${number.phone} is ${number.status.replace(/_/g, ' ')}; only a failed, conflicting or disconnected session is restarted. Link it instead.`);
    }
    await engine.stop(number);
    await engine.start(number);
  }

  /** Whether `restart` would act on the number as it stands. */
  restartable(number: WhatsAppNumber): boolean {
    return this.links(number) && RESTARTABLE.has(number.status);
  }

  /** Whether the number is linked to a phone (QR or pairing code) before it connects. */
  links(number: WhatsAppNumber): boolean {
    return this.engineFor(number)?.capabilities.linking === true;
  }

  async stopAll(): Promise<void> {
    const numbers = await listEveryNumber(this.store.db);
    await Promise.allSettled(numbers.map((number) => this.engineFor(number)?.stop(number)));
  }

  sessionStatus(number: WhatsAppNumber): SessionStatus {
    return this.engineFor(number)?.sessionStatus(number) ?? 'disconnected';
  }

  sendText(number: WhatsAppNumber, request: OutgoingText): Promise<SentText> {
    const engine = this.engineFor(number);
    if (engine === undefined) {
      this.sendObserver?.messageSendFailed(number.engine, 'not_connected');
      return Promise.reject(new EngineSendError('not_connected', `No ${number.engine} engine runs in this gateway.`, 'disconnected'));
    }
    return engine.sendText(number, request).then(
      (sent) => {
        this.sendObserver?.messageSent(number.engine);
        return sent;
      },
      (error: unknown) => {
        this.sendObserver?.messageSendFailed(number.engine, error instanceof EngineSendError ? error.failure : 'engine_error');
        throw error;
      },
    );
  }

  /** Starts linking a number to a phone, on engines that link (not the sandbox). */
  async link(number: WhatsAppNumber): Promise<LinkSession> {
    const engine = this.engineFor(number);
    if (engine === undefined || !engine.capabilities.linking || engine.linker === undefined) {
      throw new AppError('invalid_argument', `${number.phone} runs on the ${number.engine} engine, which connects without linking.`);
    }
    return engine.linker.link(number);
  }

  simulatorFor(number: WhatsAppNumber): InboundSimulator | undefined {
    const engine = this.engineFor(number);
    return engine?.capabilities.simulatedInbound ? engine.simulator : undefined;
  }

  initialStatusFor(engineKind: WhatsAppNumber['engine']): SessionStatus | undefined {
    return this.engines.get(engineKind)?.initialStatus;
  }

  allowsSimulatedStatus(number: WhatsAppNumber): boolean {
    return this.engineFor(number)?.capabilities.simulatedSessionStatus ?? false;
  }

  /**
   * Records a session's new status, so that every process sees it, and tells the account's
   * `session.status` subscribers in the same commit.
   */
  async recordSessionStatus(event: SessionStatusEvent): Promise<void> {
    const number = await findNumberByPhone(this.store.db, event.phone);
    if (number === undefined || number.status === event.status) return;
    const at = new Date();
    const queued = await this.committer.run(async (trx) => {
      await updateNumberStatus(trx, number.id, event.status, event.reason, at);
      return enqueueEvent(trx, number.accountId, sessionStatusPayload(number.phone, event.status, event.reason, at), at);
    });
    if (queued > 0) this.notifier.deliveriesQueued();
  }

  private engineFor(number: WhatsAppNumber): Engine | undefined {
    return this.engines.get(number.engine);
  }
}
