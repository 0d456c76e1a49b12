import type { WhatsAppNumber } from '../domain/model.ts';
import type { E164 } from '../domain/phone.ts';
import type { ChatPresence } from '../engines/engine.ts';
import type { Logger } from 'pino';
import type { SessionSupervisor } from './session-supervisor.ts';

/**
 * How long "typing…" or "recording audio…" lasts unless renewed. WhatsApp's own clients send
 * "paused" when the person stops, and a chat shows typing no longer than about this when that
 * never comes; the gateway sends it itself, so that a client that forgets cannot leave a chat
 * showing typing for good.
 */
const TYPING_LASTS_MS = 25_000;

/** POST /typing on the node that serves the number: the state is shown, and ends by itself. */
export class TypingService {
  private readonly endings = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly supervisor: Pick<SessionSupervisor, 'sessionFor'>,
    private readonly logger: Logger,
    private readonly lastsMs: number = TYPING_LASTS_MS,
  ) {}

  /** Shows the state; answers when it will end by itself (null for `paused`). */
  async show(number: WhatsAppNumber, toPhone: E164, state: ChatPresence): Promise<Date | null> {
    const chat = `${number.id}>${toPhone}`;
    clearTimeout(this.endings.get(chat));
    this.endings.delete(chat);
    await this.supervisor.sessionFor(number).sendPresence(toPhone, state);
    if (state === 'paused') return null;
    const ending = setTimeout(() => {
      this.endings.delete(chat);
      // A session gone meanwhile shows nothing any more, which is the point: said at debug level only.
      void this.supervisor
        .sessionFor(number)
        .sendPresence(toPhone, 'paused')
        .catch((error: unknown) =>
          this.logger.debug({ err: error, numberId: number.id }, 'typing could not be ended by itself; the session is gone'),
        );
    }, this.lastsMs);
    ending.unref();
    this.endings.set(chat, ending);
    return new Date(Date.now() + this.lastsMs);
  }

  /** Ends every timer, for a stopping gateway. */
  stop(): void {
    for (const ending of this.endings.values()) clearTimeout(ending);
    this.endings.clear();
  }
}
