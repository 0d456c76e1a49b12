import { AppError } from '../domain/errors.ts';
import { hasIdPrefix, newId } from '../domain/ids.ts';
import { engineKinds, sessionStatuses, type EngineKind, type SessionStatus, type WhatsAppNumber } from '../domain/model.ts';
import { parseE164 } from '../domain/phone.ts';
import type { SessionSupervisor } from '../messaging/session-supervisor.ts';
import { isUniqueViolation } from '../store/constraint-errors.ts';
import type { Store } from '../store/database.ts';
import { findAccountById } from '../store/repositories/accounts.ts';
import {
  deleteNumber,
  findNumberById,
  findNumberByPhone,
  insertNumber,
  listNumbers,
  reassignNumber,
} from '../store/repositories/numbers.ts';
import { findUserById } from '../store/repositories/users.ts';

export interface AddNumberInput {
  accountId: string;
  phone: string;
  engine?: string;
  holderUserId?: string;
}

/** The WhatsApp numbers that the operator links to accounts. */
export class NumbersService {
  constructor(
    private readonly store: Store,
    private readonly supervisor: SessionSupervisor,
  ) {}

  async addNumber(input: AddNumberInput): Promise<WhatsAppNumber> {
    const phone = parseE164(input.phone);
    if (phone === undefined) {
      throw new AppError('invalid_phone_number', `"${input.phone}" is not a valid international phone number.`, 'Use a country code, e.g. +447700900123.');
    }
    if ((await findAccountById(this.store.db, input.accountId)) === undefined) {
      throw new AppError('account_not_found', `There is no account ${input.accountId}.`);
    }
    const engine = input.engine ?? 'sandbox';
    const initialStatus = (engineKinds as readonly string[]).includes(engine)
      ? this.supervisor.initialStatusFor(engine as EngineKind)
      : undefined;
    if (initialStatus === undefined) {
      throw new AppError('invalid_argument', `This gateway has no "${engine}" engine.`);
    }
    if (input.holderUserId !== undefined) {
      const holder = await findUserById(this.store.db, input.holderUserId);
      if (holder === undefined || holder.accountId !== input.accountId) {
        throw new AppError('user_not_found', `There is no user ${input.holderUserId} in account ${input.accountId}.`);
      }
    }
    const now = new Date();
    const number: WhatsAppNumber = {
      id: newId('number'),
      accountId: input.accountId,
      holderUserId: input.holderUserId ?? null,
      phone,
      engine: engine as EngineKind,
      status: initialStatus,
      statusReason: null,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await insertNumber(this.store.db, number);
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('phone_already_registered', `${phone} is already a number of this gateway.`);
      throw error;
    }
    return number;
  }

  listNumbers(accountId?: string): Promise<WhatsAppNumber[]> {
    return listNumbers(this.store.db, accountId);
  }

  /**
   * Finds a number by its id or by its phone, in any common spelling. With an accountId, a number
   * of another account is reported as not existing, so ids cannot be probed across accounts.
   */
  async findNumber(phoneOrId: string, accountId?: string): Promise<WhatsAppNumber> {
    const number = hasIdPrefix('number', phoneOrId)
      ? await findNumberById(this.store.db, phoneOrId)
      : await lookupPhone(this.store, phoneOrId);
    if (number === undefined || (accountId !== undefined && number.accountId !== accountId)) {
      throw new AppError('number_not_found', `There is no number ${phoneOrId}.`);
    }
    return number;
  }

  async removeNumber(phoneOrId: string, accountId?: string): Promise<WhatsAppNumber> {
    const number = await this.findNumber(phoneOrId, accountId);
    await deleteNumber(this.store.db, number.id);
    return number;
  }

  /** Moves a number to another account; its message history stays with the old account. */
  async reassignNumber(phoneOrId: string, toAccountId: string): Promise<WhatsAppNumber> {
    const number = await this.findNumber(phoneOrId);
    if ((await findAccountById(this.store.db, toAccountId)) === undefined) {
      throw new AppError('account_not_found', `There is no account ${toAccountId}.`);
    }
    await reassignNumber(this.store.db, number.id, toAccountId, new Date());
    return this.findNumber(number.id);
  }

  /** Sets a session status by hand, on engines that allow rehearsing outages (the sandbox). */
  async setSimulatedStatus(phoneOrId: string, status: string, accountId?: string): Promise<WhatsAppNumber> {
    const number = await this.findNumber(phoneOrId, accountId);
    if (!(sessionStatuses as readonly string[]).includes(status)) {
      throw new AppError('invalid_argument', `Status must be one of ${sessionStatuses.join(', ')}; got "${status}".`);
    }
    if (!this.supervisor.allowsSimulatedStatus(number)) {
      throw new AppError('invalid_argument', `The ${number.engine} engine reports its own status; it cannot be set by hand.`);
    }
    await this.supervisor.recordSessionStatus({ phone: number.phone, status: status as SessionStatus, reason: 'set by the operator' });
    return this.findNumber(number.id);
  }
}

async function lookupPhone(store: Store, raw: string): Promise<WhatsAppNumber | undefined> {
  const phone = parseE164(raw);
  return phone === undefined ? undefined : findNumberByPhone(store.db, phone);
}
