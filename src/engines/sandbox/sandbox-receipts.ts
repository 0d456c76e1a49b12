import type { NetworkDevice, NetworkReceipt } from './sandbox-network-protocol.ts';

/** A number's connection as the receipts see it: its device, while it is open. */
export interface ReceiptConnection {
  device: NetworkDevice;
  open: boolean;
}

interface HeldReceipt {
  receipt: NetworkReceipt;
  /** The connection it was handed to and has not yet answered for. */
  inFlightTo?: ReceiptConnection;
}

/**
 * Receipts a number keeps before the oldest are dropped: far more than a handover's moment of
 * traffic, few enough that a number that never comes back costs little.
 */
const HELD_RECEIPTS_PER_NUMBER = 10_000;
/** How soon a receipt its device could not record is handed over again. */
const RETRY_MS = 200;

/**
 * The network's receipts for the gateway's numbers, kept until a connection of the sender has
 * recorded them (ADR 0062). WhatsApp keeps receipts for a device that is away, as it keeps
 * messages; a number moving between nodes has no live connection for a moment (its old session
 * stopped, its new one not yet started), and a receipt sent then, or handed to a session that
 * stopped before it was written, must reach the message once the number is connected again.
 * A device answers for each receipt as it does for a message: only a recorded one is forgotten,
 * and one in flight to a connection that closes goes to the next.
 */
export class HeldReceipts {
  private readonly held = new Map<string, HeldReceipt[]>();

  constructor(private readonly liveConnection: (phone: string) => ReceiptConnection | undefined) {}

  /** Keeps the receipt for `sender` and hands it to the sender's live connection, if it has one. */
  add(sender: string, receipt: NetworkReceipt): void {
    const queue = this.held.get(sender) ?? [];
    queue.push({ receipt });
    if (queue.length > HELD_RECEIPTS_PER_NUMBER) queue.splice(0, queue.length - HELD_RECEIPTS_PER_NUMBER);
    this.held.set(sender, queue);
    this.flush(sender);
  }

  /** Hands every receipt kept for `phone` and not in flight to its live connection. */
  flush(phone: string): void {
    const connection = this.liveConnection(phone);
    const queue = this.held.get(phone);
    if (connection === undefined || !connection.open || queue === undefined) return;
    for (const held of queue) if (held.inFlightTo === undefined) this.handOver(phone, connection, held);
  }

  /** Receipts in flight to a connection that is gone may go to the number's next one. */
  release(phone: string, connection: ReceiptConnection): void {
    for (const held of this.held.get(phone) ?? []) if (held.inFlightTo === connection) held.inFlightTo = undefined;
  }

  private handOver(phone: string, connection: ReceiptConnection, held: HeldReceipt): void {
    held.inFlightTo = connection;
    // A device that returns nothing (a simulated phone's) has taken the receipt once called.
    Promise.resolve()
      .then(() => connection.device.receipt(held.receipt))
      .then(
        () => {
          const queue = this.held.get(phone);
          const index = queue?.indexOf(held) ?? -1;
          if (index < 0) return;
          queue!.splice(index, 1);
          if (queue!.length === 0) this.held.delete(phone);
        },
        () => {
          // Not recorded (the session is stopping, or its store could not write): kept for a later try.
          if (held.inFlightTo !== connection) return;
          held.inFlightTo = undefined;
          setTimeout(() => this.flush(phone), RETRY_MS);
        },
      );
  }
}
