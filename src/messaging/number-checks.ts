import { AppError } from '../domain/errors.ts';
import type { WhatsAppNumber } from '../domain/model.ts';
import { parseE164, type E164 } from '../domain/phone.ts';
import { parsePhoneList } from '../domain/phone-lists.ts';
import { TokenBuckets } from '../domain/token-buckets.ts';
import type { CheckedPhone } from '../engines/recipient-directory.ts';
import type { SessionSupervisor } from './session-supervisor.ts';

/** The most phones one request may ask about. */
const MAX_PHONES_PER_CHECK = 50;

/**
 * POST /check_numbers on the node that serves the number: whether phones use WhatsApp. Answers
 * remembered by the engine cost nothing; the rest are lookups WhatsApp sees, and heavy lookups
 * get numbers banned, so each number may make WAGW_NUMBER_CHECKS_PER_MINUTE of them a minute.
 * The bound is kept where the number's session runs, which is one node at a time.
 */
export class NumberCheckService {
  private readonly lookups: TokenBuckets;

  constructor(
    private readonly supervisor: Pick<SessionSupervisor, 'sessionFor'>,
    private readonly perMinute: number,
  ) {
    this.lookups = new TokenBuckets({ ratePerSecond: perMinute / 60, burst: perMinute });
  }

  async check(number: WhatsAppNumber, phones: readonly E164[]): Promise<CheckedPhone[]> {
    return this.supervisor.sessionFor(number).checkNumbers(phones, (count) => this.admit(number, count));
  }

  /**
   * The form WhatsApp names `phone`'s account by, asked as a send would ask (the answer is
   * remembered for the send); undefined when it cannot be asked now or the phone is not on
   * WhatsApp, and the send then finds out itself.
   */
  async answeredForm(number: WhatsAppNumber, phone: E164): Promise<E164 | undefined> {
    try {
      const [checked] = await this.supervisor.sessionFor(number).checkNumbers([phone], () => undefined);
      const digits = checked?.waId?.split('@')[0];
      return digits === undefined ? undefined : (parseE164(`+${digits}`) ?? undefined);
    } catch {
      return undefined;
    }
  }

  private admit(number: WhatsAppNumber, count: number): void {
    if (count === 0) return;
    if (count > this.perMinute) {
      throw new AppError(
        'invalid_request',
        `This number may look up ${this.perMinute} phones a minute; ask about at most that many new phones at once.`,
        { field: 'phones' },
      );
    }
    const now = Date.now();
    if (this.lookups.tryTake(number.id, now, count)) return;
    const retryAfterSeconds = Math.max(1, Math.ceil((this.lookups.nextTokenAt(number.id, now, count) - now) / 1000));
    throw new AppError(
      'rate_limited',
      `from_phone may look up ${this.perMinute} phones a minute, to keep WhatsApp from banning it; these ${count} new phones may be ` +
        `asked about in ${retryAfterSeconds} s. Remembered answers are free.`,
      {
        limit_per_minute: this.perMinute,
        retry_after_seconds: retryAfterSeconds,
      },
    );
  }
}

/** The request's phones, each in E.164, or a 400 naming the first that is not a phone. */
export function parseCheckedPhones(raw: readonly string[]): E164[] {
  return parsePhoneList(raw, 'phones', { min: 1, max: MAX_PHONES_PER_CHECK });
}
