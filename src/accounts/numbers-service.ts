import { AppError, phoneNotOwned } from '../domain/errors.ts';
import { hasIdPrefix, newId } from '../domain/ids.ts';
import {
  engineKinds,
  sessionStatuses,
  type EngineKind,
  type SessionStatus,
  type WhatsAppNumber,
  newWhatsAppNumber,
} from '../domain/model.ts';
import { parseE164, phoneProblem, type E164 } from '../domain/phone.ts';
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
  setNumberProxy,
  updateNumberSettings,
  type NumberSettings,
} from '../store/repositories/numbers.ts';
import { parseProxyUrl } from '../domain/proxy-url.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import { findUserById } from '../store/repositories/users.ts';
import { signalNodes } from '../store/repositories/cluster-signals.ts';
import { scopeCovers, type AccountScope, type OperatorScope, type TenantScope } from '../domain/tenant-scope.ts';
import { recordNumberAudit } from '../audit/audit-trail.ts';
import { SYSTEM_ACTOR, type AuditActor, type AuditDetails } from '../domain/audit.ts';

export interface AddNumberInput {
  accountId: string;
  phone: string;
  engine?: string;
  holderUserId?: string;
}

/**
 * The WhatsApp numbers that the operator links to accounts. Adding and moving numbers is the
 * operator's alone, so those methods take the operator scope; reads and the sandbox's simulated
 * status take any scope, and a number outside it is simply not found.
 */
export class NumbersService {
  constructor(
    private readonly store: Store,
    private readonly supervisor: SessionSupervisor,
    private readonly secretBox: SecretBox,
  ) {}

  /** Adds a number, with its audit row; SYSTEM_ACTOR only for code with no person behind it. */
  async addNumber(_operator: OperatorScope, input: AddNumberInput, actor: AuditActor = SYSTEM_ACTOR): Promise<WhatsAppNumber> {
    const phone = parseE164(input.phone);
    if (phone === undefined) {
      throw new AppError('invalid_phone_number', phoneProblem('phone', input.phone), { field: 'phone' });
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
    if (input.holderUserId !== undefined) await this.assertUserOf(input.accountId, input.holderUserId);
    const number = newWhatsAppNumber({
      id: newId('number'),
      accountId: input.accountId,
      holderUserId: input.holderUserId ?? null,
      phone,
      engine: engine as EngineKind,
      status: initialStatus,
    });
    try {
      await this.store.db.transaction().execute(async (trx) => {
        await insertNumber(trx, number);
        await recordNumberAudit(trx, actor, 'number.added', number, { engine: number.engine, holder_user_id: number.holderUserId });
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('phone_already_registered', `${phone} is already a number of this gateway.`);
      throw error;
    }
    await this.store.lookups.numbersChanged();
    // A node running here claims the new number at once rather than on its next lease tick; on
    // PostgreSQL so do the nodes that hear of it, when it was added elsewhere (by the CLI, say).
    await signalNodes(this.store.db, this.store.dialect, 'leases');
    await this.supervisor.numberAdded();
    return number;
  }

  /** A number's holder must be a user of its account. */
  private async assertUserOf(accountId: string, userId: string): Promise<void> {
    const holder = await findUserById(this.store.db, userId);
    if (holder === undefined || holder.accountId !== accountId) {
      throw new AppError('user_not_found', `There is no user ${userId} in account ${accountId}.`, { field: 'holder_user_id' });
    }
  }

  listNumbers(scope: TenantScope): Promise<WhatsAppNumber[]> {
    return listNumbers(this.store.db, scope);
  }

  /**
   * Changes the settings given (auto read, call rejection, showing online); the rest keep theirs.
   * The change is an audit row naming what changed and who changed it (the API key, the signed-in
   * user, the operator token, the CLI), written in the change's transaction.
   */
  async updateSettings(scope: TenantScope, phoneOrId: string, settings: NumberSettings, actor: AuditActor): Promise<WhatsAppNumber> {
    const number = await this.findNumber(scope, phoneOrId);
    if (typeof settings.holderUserId === 'string') await this.assertUserOf(number.accountId, settings.holderUserId);
    const defined = Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined));
    await this.store.db.transaction().execute(async (trx) => {
      await updateNumberSettings(trx, number.accountId, number.id, settings);
      await recordNumberAudit(trx, actor, 'number.settings_changed', number, settingsDetails(settings));
    });
    await this.store.lookups.numbersChanged();
    return { ...number, ...defined };
  }

  /**
   * Sets the proxy the number's WhatsApp connection goes through (ADR 0063), or clears it with
   * null. The URL is checked, sealed whole (it may hold a password) and kept redacted for display;
   * the audit row names only the redacted form. The session reads it on its next connection.
   */
  async setProxy(
    operator: OperatorScope,
    phoneOrId: string,
    url: string | null,
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<WhatsAppNumber> {
    const number = await this.findNumber(operator, phoneOrId);
    const proxy = url === null ? null : parseProxyUrl(url);
    await this.store.db.transaction().execute(async (trx) => {
      await setNumberProxy(trx, number.id, proxy && { sealed: this.secretBox.seal(proxy.href), redacted: proxy.redacted }, new Date());
      await recordNumberAudit(
        trx,
        actor,
        proxy === null ? 'number.proxy_cleared' : 'number.proxy_set',
        number,
        proxy === null ? undefined : { proxy: proxy.redacted },
      );
    });
    await this.store.lookups.numbersChanged();
    return { ...number, proxy: proxy?.redacted ?? null };
  }

  /**
   * Finds a number by its id or by its phone, in any common spelling. A number outside the scope
   * is reported as not existing, so ids and phones cannot be probed across accounts.
   */
  async findNumber(scope: TenantScope, phoneOrId: string): Promise<WhatsAppNumber> {
    const number = hasIdPrefix('number', phoneOrId)
      ? await findNumberById(this.store.db, phoneOrId)
      : await lookupPhone(this.store, phoneOrId);
    if (number === undefined || !scopeCovers(scope, number.accountId)) {
      throw new AppError('number_not_found', `There is no number ${phoneOrId}.`);
    }
    return number;
  }
  /**
   * from_phone as a number of the key's account: the one look-up of a request's number (the
   * owner dispatch's), through the lookup cache every send and incoming message reads
   * (store/cached-lookups.ts), so a send's path asks the database for its number at most once.
   */
  async ownedNumber(scope: AccountScope, phone: E164): Promise<WhatsAppNumber> {
    const found = await this.store.lookups.numberWithPlan(phone);
    if (found === undefined || found.number.accountId !== scope.accountId) throw phoneNotOwned();
    return found.number;
  }

  /**
   * A number by id for the node that owns it, acting on a call another node signed with the
   * cluster key (http/routes/internal.ts): the calling node has authorized the request already.
   */
  async findNumberForOwner(id: string): Promise<WhatsAppNumber> {
    const number = await findNumberById(this.store.db, id);
    if (number === undefined) throw new AppError('number_not_found', `There is no number ${id}.`);
    return number;
  }

  /** Removes a number, with its audit row. */
  async removeNumber(operator: OperatorScope, phoneOrId: string, actor: AuditActor = SYSTEM_ACTOR): Promise<WhatsAppNumber> {
    const number = await this.findNumber(operator, phoneOrId);
    await this.store.db.transaction().execute(async (trx) => {
      await deleteNumber(trx, number.id);
      await recordNumberAudit(trx, actor, 'number.removed', number);
    });
    await this.store.lookups.numbersChanged();
    return number;
  }

  /** Moves a number to another account; its message history stays with the old account. */
  async reassignNumber(
    operator: OperatorScope,
    phoneOrId: string,
    toAccountId: string,
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<WhatsAppNumber> {
    const number = await this.findNumber(operator, phoneOrId);
    if ((await findAccountById(this.store.db, toAccountId)) === undefined) {
      throw new AppError('account_not_found', `There is no account ${toAccountId}.`);
    }
    // The row is the account's the number leaves; it names where the number went.
    await this.store.db.transaction().execute(async (trx) => {
      await reassignNumber(trx, number.id, toAccountId, new Date());
      await recordNumberAudit(trx, actor, 'number.reassigned', number, { to_account_id: toAccountId });
    });
    await this.store.lookups.numbersChanged();
    return this.findNumber(operator, number.id);
  }

  /**
   * Sets a session status by hand, on engines that allow rehearsing outages (the sandbox). The
   * account's sends fail while it lasts, so it is an audit row naming the person, committed with
   * the status; setting the status a number already has changes nothing and writes no row.
   */
  async setSimulatedStatus(
    scope: TenantScope,
    phoneOrId: string,
    status: string,
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<WhatsAppNumber> {
    const number = await this.findNumber(scope, phoneOrId);
    if (!(sessionStatuses as readonly string[]).includes(status)) {
      throw new AppError('invalid_argument', `Status must be one of ${sessionStatuses.join(', ')}; got "${status}".`);
    }
    if (!this.supervisor.allowsSimulatedStatus(number)) {
      throw new AppError('invalid_argument', `The ${number.engine} engine reports its own status; it cannot be set by hand.`);
    }
    await this.supervisor.recordSimulatedStatus(number, status as SessionStatus, (trx) =>
      recordNumberAudit(trx, actor, 'number.status_simulated', number, { status }),
    );
    return this.findNumber(scope, number.id);
  }
}

/** A number's settings as an audit row names them: those given, in the API's words (no secret among them). */
function settingsDetails(settings: NumberSettings): AuditDetails {
  const named = {
    auto_read: settings.autoRead,
    reject_calls: settings.rejectCalls,
    call_reply_text: settings.callReplyText,
    show_online: settings.showOnline,
    holder_user_id: settings.holderUserId,
  };
  return Object.fromEntries(Object.entries(named).filter((entry): entry is [string, string | boolean | null] => entry[1] !== undefined));
}

async function lookupPhone(store: Store, raw: string): Promise<WhatsAppNumber | undefined> {
  const phone = parseE164(raw);
  return phone === undefined ? undefined : findNumberByPhone(store.db, phone);
}
