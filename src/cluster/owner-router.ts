import { AppError } from '../domain/errors.ts';
import type { WhatsAppNumber } from '../domain/model.ts';
import type { SessionSupervisor } from '../messaging/session-supervisor.ts';
import { NodeUnreachableError, type NodeAddress } from './node-client.ts';

/** How often a request waiting for a number's new owner looks again. */
const POLL_MS = 200;

/**
 * Runs a request for a number where its session is: here, or forwarded to the owning node.
 * A number without a live owner (its node died and the lease has not yet run out, or it was
 * just released) waits up to WAGW_OWNER_WAIT_MS for the takeover, then answers 503
 * `number_not_connected` with Retry-After. A forward is tried again only when it surely never
 * arrived (the connection was refused); one that may have arrived is never repeated, so that a
 * send is not made twice: it answers 503 too, and a retry with the same Idempotency-Key is safe.
 */
export class OwnerRouter {
  constructor(
    private readonly supervisor: SessionSupervisor,
    private readonly waitMs: number,
  ) {}

  async run<T>(number: WhatsAppNumber, here: () => Promise<T>, elsewhere: (owner: NodeAddress) => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.waitMs;
    let claimed = false;
    for (;;) {
      let place = await this.supervisor.placeOf(number);
      if (place.kind === 'nowhere' && !claimed) {
        // A number nobody holds (just added by the CLI, or released) may be this node's to take
        // now, rather than at its next lease tick.
        claimed = true;
        await this.supervisor.numberAdded();
        place = await this.supervisor.placeOf(number);
      }
      if (place.kind === 'here') return here();
      if (place.kind === 'elsewhere' && place.url !== null) {
        try {
          return await elsewhere({ nodeId: place.nodeId, url: place.url });
        } catch (error) {
          if (!(error instanceof NodeUnreachableError)) throw error;
          if (error.delivered) throw ownerLost(number, 'the owning node went away while answering; the request may have been carried out', 5);
        }
      }
      const retryAfterMs = place.kind === 'nowhere' ? place.retryAfterMs : 1_000;
      if (Date.now() + POLL_MS > deadline) throw ownerLost(number, 'no node serves this number at the moment; a takeover is under way', Math.ceil(retryAfterMs / 1000));
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }
}

function ownerLost(number: WhatsAppNumber, why: string, retryAfterSeconds: number): AppError {
  return new AppError('number_not_connected', `The WhatsApp session of from_phone is not connected: ${why}. Retry after ${retryAfterSeconds} s (with the same Idempotency-Key, a retry is safe).`, {
    from_phone: number.phone,
    status: 'no_owner',
    retry_after_seconds: Math.max(1, retryAfterSeconds),
  });
}
