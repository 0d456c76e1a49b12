import type { AuditActor } from '../domain/audit.ts';
import type { WhatsAppNumber } from '../domain/model.ts';
import type { TenantScope } from '../domain/tenant-scope.ts';
import type { LinkAttempt, LinkMethod } from '../messaging/number-linking.ts';

/**
 * A number's control for the console, the CLI and the operator API: each action runs on the node
 * that serves the number, here or forwarded through the registry's one owner dispatch
 * (src/http/operations/number-control.ts, ADR 0064). `scope` is the one the caller found the
 * number in; the action is made in the number's account within it, and a refusal on the owner is
 * thrown as the error it was there, with its code.
 *
 * Every action that changes something is made by a `caller`, the person (or key, or the CLI)
 * behind it, and writes its audit row naming them, whichever of the three edges it came through:
 * the edges write none of their own for these actions.
 */
export interface NumberControl {
  start(caller: ControlCaller, number: WhatsAppNumber, method: LinkMethod, rehearsal?: boolean): Promise<LinkAttempt>;
  current(scope: TenantScope, number: WhatsAppNumber): Promise<LinkAttempt | undefined>;
  cancel(caller: ControlCaller, number: WhatsAppNumber): Promise<void>;
  restart(caller: ControlCaller, number: WhatsAppNumber): Promise<void>;
  /** After the number's proxy changed: a connected, failed or backing-off session connects again through it (ADR 0063); says whether it did. */
  reconnect(scope: TenantScope, number: WhatsAppNumber): Promise<boolean>;
  logout(caller: ControlCaller, number: WhatsAppNumber): Promise<void>;
  pause(caller: ControlCaller, number: WhatsAppNumber, detail: string | null): Promise<void>;
  resume(caller: ControlCaller, number: WhatsAppNumber): Promise<void>;
  /** Cancels every waiting message of the number; returns how many, and how many are still being settled. */
  clearQueue(caller: ControlCaller, number: WhatsAppNumber): Promise<{ cancelled: number; pending: number }>;
}

/** Who acts on a number: the scope they found it in, and the actor its audit row names. */
export interface ControlCaller {
  scope: TenantScope;
  actor: AuditActor;
}
