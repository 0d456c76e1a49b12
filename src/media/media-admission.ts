import type { MediaAllowances } from '../config.ts';
import { AppError } from '../domain/errors.ts';
import type { MediaSource } from '../domain/media.ts';
import type { PlanName } from '../domain/plans.ts';
import type { Store } from '../store/database.ts';
import { findAccountById } from '../store/repositories/accounts.ts';
import { insertMedia, insertMediaWithinQuota, mediaBytesHeld } from '../store/repositories/media.ts';
import type { MediaObject } from '../domain/media.ts';
import { ByteBudgets, type ByteMeter } from './byte-budgets.ts';
import type { DiskFloor } from './disk-floor.ts';

/** How often a file in flight looks at the disk again, so that parallel writes cannot pass the floor together. */
const FLOOR_RECHECK_BYTES = 8 * 1024 * 1024;

/** Files the account put in itself; received files are its customers', and only the disk floor bounds them. */
const QUOTA_SOURCES: readonly MediaSource[] = ['upload', 'send'];

/** How a file's bytes reach the gateway, when they cost the account a byte budget. */
export type Transfer = 'upload' | 'fetch';

/** A file admitted to storage: each chunk is counted before it is written, and `finish` ends the count. */
export interface FileAdmission {
  take(bytes: number): Promise<void>;
  /**
   * Writes the file's row once its bytes are durable: for a file the quota counts, only if the
   * account's files with it are still within the quota at that moment (413 otherwise).
   */
  record(media: MediaObject & { expiresAt: Date }): Promise<void>;
  finish(): void;
}

/**
 * Whether a file may be stored now, checked before its first byte is read and again as it
 * streams: the disk floor, the account's storage quota, and its upload or fetch budget
 * (docs/media.md). A refusal comes before any byte moves whenever the figures already say no.
 * Those checks see the files stored when the file started, and this node's files in flight; the
 * quota's last word is the row's write, counted and inserted under the account's lock, so files
 * that finish at once (on any node) can never hold more than the quota together (ADR 0055).
 */
export class MediaAdmission {
  private readonly budgets: Record<Transfer, ByteBudgets>;
  /** Bytes of files still streaming in, by account: counted against the quota with the stored ones. */
  private readonly inFlight = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly allowances: MediaAllowances,
    private readonly floor: DiskFloor,
  ) {
    this.budgets = {
      upload: new ByteBudgets(allowances.uploadBytesPerWindow, allowances.windowMs, 'upload_rate_exceeded'),
      fetch: new ByteBudgets(allowances.fetchBytesPerWindow, allowances.windowMs, 'media_fetch_budget_exceeded'),
    };
  }

  /** Refuses with 503 insufficient_storage while the disks are at their floor. */
  assertDiskRoom(moreBytes = 0): Promise<void> {
    return this.floor.assertRoom(moreBytes);
  }

  async admit(accountId: string, source: MediaSource, transfer: Transfer | undefined, declaredBytes?: number): Promise<FileAdmission> {
    await this.floor.assertRoom(declaredBytes);
    if (!QUOTA_SOURCES.includes(source)) return this.counting(accountId, undefined, undefined);
    const plan = await this.planOf(accountId);
    const quota = {
      plan,
      limitBytes: this.allowances.storageBytes[plan],
      heldBytes: await mediaBytesHeld(this.store.db, accountId, new Date(), QUOTA_SOURCES),
    };
    this.assertWithinQuota(accountId, quota, declaredBytes ?? 1);
    const meter = transfer === undefined ? undefined : this.budgets[transfer].start(accountId, plan, declaredBytes);
    return this.counting(accountId, quota, meter);
  }

  /**
   * The account's fetch budget for bytes that are read but never stored (a link preview's page
   * and image): refused with 429 before the fetch when the budget is spent, then counted as they
   * arrive, as media.url's are.
   */
  async startFetch(accountId: string): Promise<ByteMeter> {
    return this.budgets.fetch.start(accountId, await this.planOf(accountId));
  }

  private counting(accountId: string, quota: Quota | undefined, meter: ByteMeter | undefined): FileAdmission {
    // `size` is what this file adds to the account's count in flight; `written`, what it adds to the disk.
    let size = 0;
    let written = 0;
    let checkedFloorAt = 0;
    return {
      take: async (bytes) => {
        meter?.(bytes);
        if (quota !== undefined) {
          this.assertWithinQuota(accountId, quota, bytes);
          size += bytes;
          this.inFlight.set(accountId, (this.inFlight.get(accountId) ?? 0) + bytes);
        }
        written += bytes;
        if (written - checkedFloorAt >= FLOOR_RECHECK_BYTES) {
          checkedFloorAt = written;
          await this.floor.assertRoom();
        }
      },
      record: async (media) => {
        if (quota === undefined) return insertMedia(this.store.db, media);
        const refusedAt = await this.store.db
          .transaction()
          .execute((trx) =>
            insertMediaWithinQuota(trx, this.store.dialect, media, { limitBytes: quota.limitBytes, sources: QUOTA_SOURCES }),
          );
        if (refusedAt !== undefined) throw quotaExceeded(quota, refusedAt);
      },
      finish: () => {
        const left = (this.inFlight.get(accountId) ?? 0) - size;
        if (left > 0) this.inFlight.set(accountId, left);
        else this.inFlight.delete(accountId);
        size = 0;
      },
    };
  }

  private assertWithinQuota(accountId: string, quota: Quota, moreBytes: number): void {
    const usedBytes = quota.heldBytes + (this.inFlight.get(accountId) ?? 0);
    if (usedBytes + moreBytes > quota.limitBytes) throw quotaExceeded(quota, usedBytes);
  }

  private async planOf(accountId: string): Promise<PlanName> {
    const account = await findAccountById(this.store.db, accountId);
    // An account removed mid-request holds nothing worth a bigger allowance than the least.
    return account?.plan ?? 'starter';
  }
}

interface Quota {
  plan: PlanName;
  limitBytes: number;
  heldBytes: number;
}

function quotaExceeded(quota: Quota, usedBytes: number): AppError {
  return new AppError(
    'storage_quota_exceeded',
    `This file would take your account past its media storage (${quota.limitBytes} bytes on the ${quota.plan} plan, ${usedBytes} ` +
      `held); uploads no message uses expire, or send a smaller file.`,
    {
      plan: quota.plan,
      used_bytes: usedBytes,
      limit_bytes: quota.limitBytes,
    },
  );
}
