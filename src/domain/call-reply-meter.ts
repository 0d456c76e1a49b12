import { TokenBuckets } from './token-buckets.ts';

const HOUR_SECONDS = 3_600;
/** One reply per caller and number in this long, however often the caller rings. */
const REPLY_PER_CALLER_SECONDS = 6 * HOUR_SECONDS;
/** Replies a number sends to rejected callers, at most, per hour (with this as its burst). */
const REPLIES_PER_NUMBER_HOUR = 20;

/**
 * Bounds the replies sent to rejected calls (issue 38 item 6): a reply is a message our number
 * sends because someone else acted, so without a bound anyone could make it send as many as they
 * place calls, which is how WhatsApp recognises a number to ban. Each reply also takes a unit of
 * the account's monthly quota through the ordinary send path. In memory, per process: calls of
 * a number are heard on its owner node only.
 */
export class CallReplyMeter {
  private readonly perCaller = new TokenBuckets({ ratePerSecond: 1 / REPLY_PER_CALLER_SECONDS, burst: 1 });
  private readonly perNumber = new TokenBuckets({ ratePerSecond: REPLIES_PER_NUMBER_HOUR / HOUR_SECONDS, burst: REPLIES_PER_NUMBER_HOUR });

  /** Whether the number may reply to this caller now; when it may, the reply is counted. */
  tryReply(numberId: string, callerPhone: string, now = Date.now()): boolean {
    const callerKey = `${numberId} ${callerPhone}`;
    if (this.perCaller.nextTokenAt(callerKey, now) > now || this.perNumber.nextTokenAt(numberId, now) > now) return false;
    return this.perCaller.tryTake(callerKey, now) && this.perNumber.tryTake(numberId, now);
  }
}
