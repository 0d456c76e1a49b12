import type { WhatsAppNumber } from '../domain/model.ts';
import type { Engine } from '../engines/engine.ts';

/**
 * The engine capabilities an API request acts through on a number's session. A new capability
 * of the engine port joins here, by name, and every service reaches it through
 * `supervisor.sessionFor(number)` with no pass-through of its own.
 */
const SESSION_CAPABILITIES = [
  'sendAction',
  'markRead',
  'modifyChat',
  'sendPresence',
  'checkNumbers',
  'createGroup',
  'listGroups',
  'groupInfo',
  'updateParticipants',
  'updateGroupSettings',
  'inviteCode',
  'leaveGroup',
  'rejectCall',
  'contactProfile',
  'updateProfile',
  'subscribePresence',
  'setOnline',
  'updateBlock',
  'blocklist',
] as const satisfies readonly (keyof Engine)[];

type SessionCapability = (typeof SESSION_CAPABILITIES)[number];

/** A number's session: each capability of the engine port, bound to the number. */
export type NumberSession = {
  [Name in SessionCapability]: Engine[Name] extends (number: WhatsAppNumber, ...rest: infer Rest) => infer Result
    ? (...rest: Rest) => Result
    : never;
};

/**
 * Binds each capability to the number, each call made through `act`, which runs it on the
 * number's engine and answers the session's refusals as the API does.
 */
export function bindSession(number: WhatsAppNumber, act: <T>(use: (engine: Engine) => Promise<T>) => Promise<T>): NumberSession {
  const bound = SESSION_CAPABILITIES.map((name) => [
    name,
    (...rest: unknown[]) =>
      act((engine) => (engine[name] as (number: WhatsAppNumber, ...rest: unknown[]) => Promise<unknown>).call(engine, number, ...rest)),
  ]);
  return Object.fromEntries(bound) as NumberSession;
}
