import { AppError } from '../domain/errors.ts';
import type { WhatsAppNumber } from '../domain/model.ts';
import type { NoOwnerReason, SessionSupervisor } from '../messaging/session-supervisor.ts';
import { NodeStoppedAnsweringError, NodeUnreachableError, type NodeAddress, type NodeClient } from './node-client.ts';

/** How often a request waiting for a number's new owner looks again. */
const POLL_MS = 200;
/** How often, at most, a forwarded call in flight checks that its node still answers. */
const PROBE_MS = 1_000;
/**
 * How long a probe waits for its answer. Never less than a second, however short the owner wait:
 * a live node that is busy (a GC pause, a loaded machine) answers late, and a probe that gave up
 * sooner would abandon a call that was being served.
 */
const PROBE_ANSWER_MS = 1_000;

/** How a call forwarded to the owner is made; `signal` abandons it when the owner stops answering. */
export type ForwardedCall<T> = (owner: NodeAddress, signal: AbortSignal) => Promise<T>;

export interface RouteOptions {
  /**
   * The call may be made again on a new owner after the old one stopped answering mid-call:
   * true only where the shared database makes a second attempt harmless (a send with an
   * Idempotency-Key, whose claim lets one attempt through). See docs/cluster.md.
   */
  repeatable?: boolean;
}

/**
 * Runs a request for a number where its session is: here, or forwarded to the owning node.
 * A number without a live owner (its node died and the lease has not yet run out, or it was
 * just released) waits up to WAGW_OWNER_WAIT_MS for the takeover, then answers 503
 * `number_not_connected` with Retry-After. A forward is tried again only when it surely never
 * arrived (the connection was refused), or when it is repeatable and the owner stopped
 * answering it: then it goes to the owner that took over, within the same wait. Any other
 * forward that may have arrived is never repeated, so that a send is not made twice: it answers
 * 503 too, and a retry with the same Idempotency-Key is safe.
 */
export class OwnerRouter {
  private readonly probeMs: number;

  constructor(
    private readonly supervisor: SessionSupervisor,
    private readonly waitMs: number,
    private readonly nodes: NodeClient,
    /** No other node can take a number over (SQLite): a request is never told to wait for one. */
    private readonly singleNode: boolean,
  ) {
    // A short wait gets quicker probes, so that a frozen owner is found out within it.
    this.probeMs = Math.max(50, Math.min(PROBE_MS, Math.floor(waitMs / 4)));
  }

  async run<T>(number: WhatsAppNumber, here: () => Promise<T>, elsewhere: ForwardedCall<T>, options: RouteOptions = {}): Promise<T> {
    const deadline = Date.now() + this.waitMs;
    let claimed = false;
    /** The node that stopped answering this request: not asked again. */
    let silentNode: string | undefined;
    for (;;) {
      let place = await this.supervisor.placeOf(number);
      if (place.kind === 'nowhere' && place.reason === 'unowned' && !claimed) {
        // A number nobody holds (just added by the CLI, or released) may be this node's to take
        // now, rather than at its next lease tick.
        claimed = true;
        await this.supervisor.numberAdded();
        place = await this.supervisor.placeOf(number);
      }
      if (place.kind === 'here') {
        // Let in as work on the number, which a handover waits for before it stops the session;
        // a number given up since the look is looked up again.
        const admitted = this.supervisor.admit(number.id);
        if (admitted !== undefined) {
          try {
            return await here();
          } finally {
            admitted();
          }
        }
      }
      if (place.kind === 'elsewhere' && place.url !== null && place.nodeId !== silentNode) {
        try {
          return await this.forward({ nodeId: place.nodeId, url: place.url }, elsewhere);
        } catch (error) {
          if (!(error instanceof NodeUnreachableError)) throw error;
          if (error.silent && options.repeatable === true) silentNode = place.nodeId;
          else if (error.delivered)
            throw ownerLost(
              number,
              error.silent
                ? 'the owning node stopped answering; the request may have been carried out'
                : 'the owning node went away while answering; the request may have been carried out',
              5,
            );
        }
      }
      const retryAfterMs = place.kind === 'nowhere' ? place.retryAfterMs : 1_000;
      // One node alone has nobody to hand the number to: waiting would only delay the answer.
      const alone = this.singleNode && place.kind === 'nowhere' && place.reason !== 'unowned';
      if (alone || Date.now() + POLL_MS > deadline)
        throw ownerLost(
          number,
          whyNoOwner(place.kind === 'nowhere' ? place.reason : 'unowned', this.singleNode),
          Math.ceil(retryAfterMs / 1000),
        );
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /**
   * Makes the call while probing the owner: a frozen node takes the connection (its kernel
   * does) but answers nothing, neither the call nor the probe, and the call is abandoned at
   * the first probe it misses. A live node that is merely slow (a paced WhatsApp send, a file
   * to fetch) answers its probes, and the call runs on up to WAGW_NODE_CALL_TIMEOUT_MS.
   */
  private async forward<T>(owner: NodeAddress, call: ForwardedCall<T>): Promise<T> {
    const abandon = new AbortController();
    let probing = true;
    const probe = async () => {
      while (probing) {
        await new Promise((resolve) => setTimeout(resolve, this.probeMs));
        if (!probing) return;
        if (!(await this.nodes.answers(owner, Math.max(PROBE_ANSWER_MS, this.probeMs))) && probing)
          abandon.abort(new NodeStoppedAnsweringError());
      }
    };
    void probe();
    try {
      return await call(owner, abandon.signal);
    } finally {
      probing = false;
    }
  }
}

/** What the 503 says of a number without an owner, as true of one node as of a cluster. */
function whyNoOwner(reason: NoOwnerReason, singleNode: boolean): string {
  if (singleNode) {
    return reason === 'unowned'
      ? 'its session does not run in this gateway at the moment; nothing was done'
      : 'the gateway is stopping; nothing was done';
  }
  if (reason === 'unowned') return 'no node serves this number at the moment; a takeover is under way';
  return 'its node is handing it over to another node; nothing was done';
}

function ownerLost(number: WhatsAppNumber, why: string, retryAfterSeconds: number): AppError {
  return new AppError(
    'number_not_connected',
    `The WhatsApp session of from_phone is not connected: ${why}. Retry after ${retryAfterSeconds} s (with the same Idempotency-Key, a ` +
      `retry is safe).`,
    {
      from_phone: number.phone,
      status: 'no_owner',
      retry_after_seconds: Math.max(1, retryAfterSeconds),
    },
  );
}
