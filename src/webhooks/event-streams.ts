import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { WebSocket } from 'ws';
import { renderPayload, type EventPayload } from '../domain/webhooks.ts';
import type { Store } from '../store/database.ts';
import {
  recordStreamed,
  resumeStreamAfter,
  streamHolder,
  takeStream,
  unsentStreamDeliveries,
  type StreamDelivery,
} from '../store/repositories/event-streams.ts';

/** How many deliveries a connection reads and sends before it records them. */
const BATCH = 100;
/** How often a connection pings its client, and how long an unanswered ping may stay so. */
const PING_INTERVAL_MS = 30_000;
/** How long a client has to answer the server's close before its connection is cut. */
const CLOSE_ANSWER_MS = 2_000;

/**
 * Why the server closes a stream, as WebSocket close codes in the private range (4000-4999) with
 * their HTTP meaning in the last three digits, so a client can tell what to do next.
 */
export const STREAM_CLOSE = {
  /** The client sent a message; the stream takes none. */
  messageRefused: 4400,
  /** The key the client connected with was revoked, or lost the webhooks scope. */
  keyRevoked: 4401,
  /** The stream was deleted. */
  deleted: 4404,
  /** Another connection, on this node or another, took the stream. */
  takenOver: 4409,
  /** The resume point is not one this stream sent, or the delivery log no longer keeps it. */
  resumePointUnknown: 4410,
  /** The node is shutting down; reconnect (to any node) with the last event id seen. */
  goingAway: 1001,
  /** The database failed; reconnect with the last event id seen. */
  serverError: 1011,
} as const;

/**
 * How often a connection with nothing to send looks for events committed on other nodes; those
 * committed on its own node wake it at once.
 */
const POLL_MS = 500;

/**
 * The event streams whose clients are connected to this node (docs/adr/0068-event-streams.md).
 * A stream's deliveries are written by the outbox in the same transaction as the change they
 * report, held from every delivery worker; the connection holding the stream sends them in the
 * order their events happened and records each as sent with its place in the stream. A client
 * that reconnects with the last event id it saw is sent again what followed it, and nothing else,
 * on whichever node it reaches.
 */
export class EventStreams {
  private readonly connections = new Set<StreamConnection>();

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    /** Told how many events a connection recorded and sent, for the metrics. */
    private readonly onSent: (count: number) => void = () => undefined,
  ) {}

  /**
   * Serves one client on its stream until either side closes; `after` is the last event id it saw.
   * `authorized` says whether the key the client connected with still may read the stream: it is
   * asked before every batch and every poll, so a revoked key's stream ends as its requests do.
   */
  serve(webhookId: string, socket: WebSocket, after: string | undefined, authorized: () => Promise<boolean>): void {
    const connection = new StreamConnection(this.store, this.logger.child({ webhookId }), webhookId, socket, authorized, this.onSent);
    this.connections.add(connection);
    void connection.run(after).finally(() => this.connections.delete(connection));
  }

  /** Deliveries were committed on this node: its connections look now, not at their next poll. */
  wake(): void {
    for (const connection of this.connections) connection.wake();
  }

  /** How many clients this node serves, for the metrics. */
  get connected(): number {
    return this.connections.size;
  }

  /** Closes every connection, telling each client to come back (to any node) with its last id. */
  async stop(): Promise<void> {
    await Promise.all([...this.connections].map((connection) => connection.close(STREAM_CLOSE.goingAway, 'the gateway is restarting')));
  }
}

class StreamConnection {
  private readonly holder = randomUUID();
  private wakeUp: (() => void) | undefined;
  /** A wake-up that came while the connection was busy: its next look starts at once. */
  private woken = false;
  private closed: Promise<void>;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly webhookId: string,
    private readonly socket: WebSocket,
    private readonly authorized: () => Promise<boolean>,
    private readonly onSent: (count: number) => void,
  ) {
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.once('close', () => this.wake());
    // The stream speaks only; anything a client says is refused, so a typo never passes for a command.
    socket.on('message', () => void this.close(STREAM_CLOSE.messageRefused, 'this stream takes no messages'));
    this.keepAlive();
  }

  async run(after: string | undefined): Promise<void> {
    try {
      await takeStream(this.store.db, this.webhookId, this.holder);
      if (after !== undefined && !(await resumeStreamAfter(this.store.db, this.webhookId, after, new Date()))) {
        await this.close(STREAM_CLOSE.resumePointUnknown, 'last_event_id is not an event this stream sent, or is past retention');
        return;
      }
      while (this.open) {
        const holder = await streamHolder(this.store.db, this.webhookId);
        if (holder !== this.holder) {
          if (holder === undefined) await this.close(STREAM_CLOSE.deleted, 'the stream was deleted');
          else await this.close(STREAM_CLOSE.takenOver, 'another connection took this stream');
          return;
        }
        if (!(await this.authorized())) {
          await this.close(STREAM_CLOSE.keyRevoked, 'the API key was revoked or lost the webhooks scope');
          return;
        }
        const batch = await unsentStreamDeliveries(this.store.db, this.webhookId, BATCH);
        if (batch.length === 0) {
          await this.idle();
          continue;
        }
        // Recorded before it is sent: a frame the client saw always has its place in the stream,
        // so its id is a resume point; what the record says went but the client never got is sent
        // again when it resumes from the last id it saw.
        const ids = batch.map((delivery) => delivery.id);
        if (!(await recordStreamed(this.store.db, this.webhookId, this.holder, ids, new Date()))) {
          await this.close(STREAM_CLOSE.takenOver, 'another connection took this stream');
          return;
        }
        this.onSent(await this.sendAll(batch));
      }
    } catch (error) {
      this.logger.error({ err: error }, 'an event stream failed; its client is told to reconnect');
      await this.close(STREAM_CLOSE.serverError, 'the gateway could not read the stream; reconnect with the last event id');
    }
  }

  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  async close(code: number, reason: string): Promise<void> {
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING) this.socket.close(code, reason);
    // A client that never answers the close is cut off rather than held, soon enough that a node
    // stopping is not held up by it.
    const cutOff = setTimeout(() => this.socket.terminate(), CLOSE_ANSWER_MS);
    await this.closed;
    clearTimeout(cutOff);
  }

  private get open(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  /** Sends the frames in order, each once the one before has been handed to the network; answers how many went. */
  private async sendAll(batch: StreamDelivery[]): Promise<number> {
    let sent = 0;
    for (const delivery of batch) {
      if (!this.open) break;
      const written = await new Promise<boolean>((resolve) =>
        this.socket.send(frameOf(delivery, this.webhookId), (error) => resolve(!error)),
      );
      if (!written) break;
      sent += 1;
    }
    return sent;
  }

  /** Waits for a wake-up (deliveries committed here, or the client gone) or the poll for other nodes' events. */
  private async idle(): Promise<void> {
    if (this.woken || !this.open) {
      this.woken = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, POLL_MS);
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wakeUp = undefined;
    this.woken = false;
  }

  /** A client gone without a close (a dropped network) is found by its unanswered ping. */
  private keepAlive(): void {
    let answered = true;
    this.socket.on('pong', () => {
      answered = true;
    });
    const timer = setInterval(() => {
      if (!answered) {
        this.socket.terminate();
        return;
      }
      answered = false;
      this.socket.ping();
    }, PING_INTERVAL_MS);
    timer.unref();
    this.socket.once('close', () => clearInterval(timer));
  }
}

/** A stream's frame: the webhook body of the event, with the event's id first, the client's resume point. */
function frameOf(delivery: StreamDelivery, webhookId: string): string {
  const body = renderPayload(JSON.parse(delivery.payload) as EventPayload, webhookId);
  return `{"event_id":${JSON.stringify(delivery.eventId)},${body.slice(1)}`;
}
