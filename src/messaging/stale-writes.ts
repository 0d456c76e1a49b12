import type { Logger } from 'pino';
import type { SessionLeases } from './session-leases.ts';
import type { StaleLeaseError } from '../store/repositories/leases.ts';

/**
 * What happens when the database refuses an owner-only write because its lease is stale: it is
 * logged and counted, and this node stands down from the number. A write under a lease this node
 * gave up itself (a clean stop, a handover) is a session's late word, refused as it should be,
 * and neither logged as an alarm nor counted.
 */
export class StaleWrites {
  constructor(
    private readonly keeper: Pick<SessionLeases, 'gaveUp' | 'lost'>,
    private readonly logger: Logger,
    private readonly counter?: { staleWriteRefused(): void },
  ) {}

  refused(error: StaleLeaseError): void {
    if (this.keeper.gaveUp(error.lease)) {
      this.logger.debug(
        { numberId: error.lease.numberId, epoch: error.lease.epoch },
        'dropped a late write from a session of a number this node gave up',
      );
      return;
    }
    this.logger.warn(
      { numberId: error.lease.numberId, epoch: error.lease.epoch, current: error.current },
      'refused a write from a session whose lease is stale',
    );
    this.counter?.staleWriteRefused();
    void this.keeper.lost(error.lease);
  }
}
