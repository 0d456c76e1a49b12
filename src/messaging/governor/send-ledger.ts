import type { MarkView } from './decision.ts';
import { capthNewest, TimeIndex } from './time-index.ts';

const DAY_MS = 86_400_000;

/** A message waiting in the number's queue, as the ledger counts it. */
export interface PlannedMark {
  at: number;
  recipient: string;
  firstContact: boolean;
  /**
   * It waits for its own send_at, or for WhatsApp's cap on new chats to renew (ADR 0058): it
   * keeps its place in time and is not the queue's tail, so a reply is not held behind it.
   */
  scheduled: boolean;
  /** What its content takes in the database (text and structured content, UTF-8). */
  bytes: number;
}

/** A send the number made. */
export interface MadeMark {
  at: number;
  recipient: string;
  firstContact: boolean;
}

/**
 * What the governor's rules need to know of one number (ADR 0048), kept up to date as its sends
 * are made and its queue changes, so that a decision costs the same at its 10th send of the day
 * and its 100,000th, and with an empty queue or 20,000 waiting: the sends it made in the last 24
 * hours (and which were first contacts), the last send to each recipient, and the waiting
 * messages' planned times. It lives on the node that owns the number and is built from the
 * database when that node gains the number's lease (SendGovernor.ledgerFor).
 */
export class SendLedger {
  private readonly made = new TimeIndex();
  private readonly madeFirstContacts = new TimeIndex();
  /** The last send to each recipient. */
  private readonly lastMadeTo = new Map<string, number>();
  /**
   * Each time a recipient's last send was recorded, oldest first: what `trim` forgets from
   * `lastMadeTo`, in O(log n) a send. Walking the map from its start instead passed over every
   * entry deleted since V8 last rehashed it, which after a history of 100,000 sends cost 15 µs a
   * decision, growing with the history (issue 41). An entry superseded by a later send to the
   * same recipient stays here until it is a day old, then is dropped.
   */
  private readonly lastMadeAges = new AgeHeap();
  private readonly planned = new TimeIndex();
  private readonly plannedFirstContacts = new TimeIndex();
  /** The planned times of the messages not waiting for their own send_at: the queue's tail is the last. */
  private readonly plannedInTurn = new TimeIndex();
  private readonly plannedTo = new Map<string, TimeIndex>();
  private readonly plannedById = new Map<string, PlannedMark>();
  private readonly idsByTime = new Map<number, Set<string>>();
  private readonly empty = new TimeIndex();
  private waitingBytes = 0;
  /** Sends handed to the engine and not yet answered, by message id (see `sending`). */
  private readonly inFlight = new Map<string, MadeMark>();

  constructor(private readonly clock: () => number = Date.now) {}

  /** A ledger of these sends made and messages waiting, in any order. */
  static of(made: readonly MadeMark[], planned: readonly (PlannedMark & { id: string })[] = []): SendLedger {
    const ledger = new SendLedger();
    for (const mark of [...made].sort((a, b) => a.at - b.at)) ledger.sent(mark);
    for (const { id, ...mark } of [...planned].sort((a, b) => a.at - b.at)) ledger.queued(id, mark);
    return ledger;
  }

  /** The sends made and the messages waiting: what a new message is placed behind. */
  readonly withQueue: MarkView = {
    latest: (at) => maxOf(this.latestMade(at), this.planned.latestAtOrBefore(at)),
    latestTo: (recipient, at) => maxOf(this.lastMadeBy(recipient, at), this.plannedTo.get(recipient)?.latestAtOrBefore(at)),
    capReachedBy: (at, windowMs, cap, firstContacts) =>
      firstContacts
        ? capthNewest(this.madeFirstContacts, this.plannedFirstContacts, at - windowMs, at, cap)
        : capthNewest(this.made, this.planned, at - windowMs, at, cap),
  };

  /** The sends made only: what the release of a due message is checked against. */
  readonly madeOnly: MarkView = {
    latest: (at) => this.latestMade(at),
    latestTo: (recipient, at) => this.lastMadeBy(recipient, at),
    capReachedBy: (at, windowMs, cap, firstContacts) =>
      capthNewest(firstContacts ? this.madeFirstContacts : this.made, this.empty, at - windowMs, at, cap),
  };

  /** When the last message that waits its turn is planned to leave; 0 when none waits. */
  queueTail(): number {
    return this.plannedInTurn.last() ?? 0;
  }

  get waiting(): number {
    return this.plannedById.size;
  }

  /** What the waiting messages' content takes in the database: bounded per number (ADR 0055). */
  get queuedBytes(): number {
    return this.waitingBytes;
  }

  /** When the first waiting message is planned to leave; undefined when none waits. */
  firstPlanned(): number | undefined {
    return this.planned.first();
  }

  /** Forgets the sends older than the longest window, a day before `now`. */
  trim(now: number): void {
    const dayAgo = now - DAY_MS;
    this.made.dropUpTo(dayAgo);
    this.madeFirstContacts.dropUpTo(dayAgo);
    for (let oldest = this.lastMadeAges.peekAt(); oldest !== undefined && oldest <= dayAgo; oldest = this.lastMadeAges.peekAt()) {
      const recipient = this.lastMadeAges.pop();
      if (this.lastMadeTo.get(recipient) === oldest) this.lastMadeTo.delete(recipient);
    }
  }

  sent(mark: MadeMark): void {
    this.made.add(mark.at);
    if (mark.firstContact) this.madeFirstContacts.add(mark.at);
    const last = this.lastMadeTo.get(mark.recipient);
    if (last === undefined || mark.at > last) this.recordLastMadeTo(mark.recipient, mark.at);
  }

  /**
   * Counts a send decided but not yet stored (SendGovernor.admit), so the number's next decision
   * sees it; the returned function takes it back if its row is never stored.
   */
  sentTentatively(mark: MadeMark): () => void {
    const lastBefore = this.lastMadeTo.get(mark.recipient);
    this.sent(mark);
    return () => {
      this.made.remove(mark.at);
      if (mark.firstContact) this.madeFirstContacts.remove(mark.at);
      if (this.lastMadeTo.get(mark.recipient) !== mark.at) return;
      this.lastMadeTo.delete(mark.recipient);
      // Put back; a later send to the recipient since would have moved it.
      if (lastBefore !== undefined) this.recordLastMadeTo(mark.recipient, lastBefore);
    };
  }

  /**
   * A send decided to leave at once, on its way to the engine (counted as sentTentatively is, and
   * taken back the same way): until the engine answers, it is the number's latest send at every
   * moment, since the gap to the next one counts from the engine's acceptance, not from the
   * decision (issue 37).
   */
  sending(id: string, mark: MadeMark): () => void {
    const takeBack = this.sentTentatively(mark);
    this.inFlight.set(id, mark);
    return () => {
      if (this.inFlight.delete(id)) takeBack();
    };
  }

  /** The engine answered the send (took it or refused it) at `at`: its gap counts from then. */
  answered(id: string, at: number): void {
    const mark = this.inFlight.get(id);
    if (mark === undefined) return;
    this.inFlight.delete(id);
    if (at <= mark.at) return;
    this.made.remove(mark.at);
    if (mark.firstContact) this.madeFirstContacts.remove(mark.at);
    this.sent({ ...mark, at });
  }

  /** Whether the number sent to, or has a message waiting for, the recipient within the ledger's day. */
  knows(recipient: string): boolean {
    return this.lastMadeTo.has(recipient) || this.plannedTo.has(recipient);
  }

  queued(id: string, mark: PlannedMark): void {
    if (this.plannedById.has(id)) return;
    this.plannedById.set(id, mark);
    this.waitingBytes += mark.bytes;
    this.planned.add(mark.at);
    if (mark.firstContact) this.plannedFirstContacts.add(mark.at);
    if (!mark.scheduled) this.plannedInTurn.add(mark.at);
    const toRecipient = this.plannedTo.get(mark.recipient) ?? new TimeIndex();
    this.plannedTo.set(mark.recipient, toRecipient);
    toRecipient.add(mark.at);
    const ids = this.idsByTime.get(mark.at) ?? new Set<string>();
    this.idsByTime.set(mark.at, ids);
    ids.add(id);
  }

  /** The message left the queue (released, cancelled, expired); a message it does not hold is ignored. */
  left(id: string): PlannedMark | undefined {
    const mark = this.plannedById.get(id);
    if (mark === undefined) return undefined;
    this.plannedById.delete(id);
    this.waitingBytes -= mark.bytes;
    this.planned.remove(mark.at);
    if (mark.firstContact) this.plannedFirstContacts.remove(mark.at);
    if (!mark.scheduled) this.plannedInTurn.remove(mark.at);
    const toRecipient = this.plannedTo.get(mark.recipient)!;
    toRecipient.remove(mark.at);
    if (toRecipient.size === 0) this.plannedTo.delete(mark.recipient);
    const ids = this.idsByTime.get(mark.at)!;
    ids.delete(id);
    if (ids.size === 0) this.idsByTime.delete(mark.at);
    return mark;
  }

  /** Every waiting message left the queue at once (a clear). */
  cleared(): void {
    for (const id of [...this.plannedById.keys()]) this.left(id);
  }

  /** The waiting messages planned before `until` now wait until then, for a reason other than their send_at. */
  deferred(until: number): void {
    for (const at of this.planned.distinctBefore(until)) {
      for (const id of [...(this.idsByTime.get(at) ?? [])]) {
        const mark = this.left(id)!;
        this.queued(id, { ...mark, at: until, scheduled: false });
      }
    }
  }

  private recordLastMadeTo(recipient: string, at: number): void {
    this.lastMadeTo.set(recipient, at);
    this.lastMadeAges.push(at, recipient);
  }

  /** The last send made at or before `at`; a send still with the engine counts as made this moment. */
  private latestMade(at: number): number | undefined {
    const made = this.made.latestAtOrBefore(at);
    return this.inFlight.size === 0 ? made : maxOf(made, Math.min(at, this.clock()));
  }

  private lastMadeBy(recipient: string, at: number): number | undefined {
    const last = this.lastMadeTo.get(recipient);
    const made = last !== undefined && last <= at ? last : undefined;
    for (const mark of this.inFlight.values()) if (mark.recipient === recipient) return maxOf(made, Math.min(at, this.clock()));
    return made;
  }
}

/** A binary min-heap of (time, recipient), by time. */
class AgeHeap {
  private readonly times: number[] = [];
  private readonly recipients: string[] = [];

  peekAt(): number | undefined {
    return this.times[0];
  }

  push(at: number, recipient: string): void {
    let index = this.times.length;
    this.times.push(at);
    this.recipients.push(recipient);
    while (index > 0) {
      const parent = (index - 1) >>> 1;
      if (this.times[parent]! <= at) break;
      this.move(parent, index);
      index = parent;
    }
    this.times[index] = at;
    this.recipients[index] = recipient;
  }

  /** Takes the oldest out; its recipient. Only called when peekAt() is defined. */
  pop(): string {
    const top = this.recipients[0]!;
    const lastAt = this.times.pop()!;
    const lastRecipient = this.recipients.pop()!;
    const size = this.times.length;
    if (size === 0) return top;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= size) break;
      const child = left + 1 < size && this.times[left + 1]! < this.times[left]! ? left + 1 : left;
      if (this.times[child]! >= lastAt) break;
      this.move(child, index);
      index = child;
    }
    this.times[index] = lastAt;
    this.recipients[index] = lastRecipient;
    return top;
  }

  private move(from: number, to: number): void {
    this.times[to] = this.times[from]!;
    this.recipients[to] = this.recipients[from]!;
  }
}

function maxOf(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.max(a, b);
}
