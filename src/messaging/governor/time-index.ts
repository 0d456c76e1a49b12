/**
 * A sorted multiset of instants (ms) for the governor's rolling windows. A number's sends arrive
 * at the end (their time is now, or the tail of its queue) and leave from the front (they age
 * out of the day, or the queue releases its first), so both ends cost O(1); a change in the
 * middle (a cancelled message, a send_at inside the queue) moves whichever side is shorter.
 * Lookups are binary searches: O(log n) with nothing read from the database.
 */
export class TimeIndex {
  private items: number[] = [];
  /** The first live item: what left from the front is not moved out until it is worth it. */
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  first(): number | undefined {
    return this.size === 0 ? undefined : this.items[this.head];
  }

  last(): number | undefined {
    return this.size === 0 ? undefined : this.items[this.items.length - 1];
  }

  add(at: number): void {
    const index = this.upperBound(at);
    if (index === this.items.length) {
      this.items.push(at);
    } else if (this.head > 0 && index - this.head < this.items.length - index) {
      // Closer to the front, where a free slot is: shift the front down by one.
      this.items.copyWithin(this.head - 1, this.head, index);
      this.head -= 1;
      this.items[index - 1] = at;
    } else {
      this.items.splice(index, 0, at);
    }
  }

  /** Removes one item equal to `at`; false when there is none. */
  remove(at: number): boolean {
    const index = this.lowerBound(at);
    if (index >= this.items.length || this.items[index] !== at) return false;
    if (index - this.head < this.items.length - 1 - index) {
      this.items.copyWithin(this.head + 1, this.head, index);
      this.head += 1;
      this.compact();
    } else {
      this.items.splice(index, 1);
    }
    return true;
  }

  /** Drops every item at or before `at` (those that left the longest window). */
  dropUpTo(at: number): void {
    this.head = this.upperBound(at);
    this.compact();
  }

  /** The latest item at or before `at`. */
  latestAtOrBefore(at: number): number | undefined {
    const index = this.upperBound(at) - 1;
    return index >= this.head ? this.items[index] : undefined;
  }

  /** The distinct items before `until`, oldest first. */
  distinctBefore(until: number): number[] {
    const end = this.lowerBound(until);
    const found: number[] = [];
    for (let index = this.head; index < end; index++) if (found.at(-1) !== this.items[index]) found.push(this.items[index]!);
    return found;
  }

  /** The positions [start, end) of the items in (after, upTo]. */
  span(after: number, upTo: number): { start: number; end: number } {
    return { start: this.upperBound(after), end: this.upperBound(upTo) };
  }

  /** The item at a position from `span`. */
  itemAt(position: number): number {
    return this.items[position]!;
  }

  /** The first position whose item is greater than `at`. */
  private upperBound(at: number): number {
    let low = this.head;
    let high = this.items.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.items[middle]! <= at) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** The first position whose item is at least `at`. */
  private lowerBound(at: number): number {
    let low = this.head;
    let high = this.items.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.items[middle]! < at) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** Gives the dropped front back once it is most of the array: amortised O(1) per item. */
  private compact(): void {
    if (this.head >= 1_024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}

/**
 * Across two indexes, the `cap`-th newest item in (after, upTo], or undefined when there are
 * fewer: when a window holds its cap, the send whose leaving frees it. O(log n): the split of
 * the newest `cap` between the two is found by bisection, as in a merge that is never made.
 */
export function capthNewest(first: TimeIndex, second: TimeIndex, after: number, upTo: number, cap: number): number | undefined {
  const a = first.span(after, upTo);
  const b = second.span(after, upTo);
  const lengthA = a.end - a.start;
  const lengthB = b.end - b.start;
  if (lengthA + lengthB < cap || cap <= 0) return undefined;
  // The item sought is the (k+1)-th oldest, k counted from 0: take i from `first`, k+1-i from `second`.
  const k = lengthA + lengthB - cap;
  let low = Math.max(0, k + 1 - lengthB);
  let high = Math.min(k + 1, lengthA);
  while (low < high) {
    const i = (low + high) >>> 1;
    if (first.itemAt(a.start + i) < second.itemAt(b.start + k - i)) low = i + 1;
    else high = i;
  }
  const fromFirst = low > 0 ? first.itemAt(a.start + low - 1) : -Infinity;
  const fromSecond = k + 1 - low > 0 ? second.itemAt(b.start + k - low) : -Infinity;
  return Math.max(fromFirst, fromSecond);
}
