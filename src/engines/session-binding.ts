import type { WhatsAppNumber } from '../domain/model.ts';
import { capabilityDeclined } from './capability-declined.ts';
import type { Engine, EngineSession, ForEachNumber, SessionCapability } from './engine.ts';

/**
 * Names that awaiting, printing or serialising an object asks for. A forwarder never answers them
 * as capabilities: a session handed out of an async function would otherwise look like a promise.
 */
const NOT_CAPABILITIES: ReadonlySet<PropertyKey> = new Set(['then', 'catch', 'finally', 'toJSON', 'constructor', 'inspect']);

/**
 * An object of type `Shape` whose every method is `call(name, args)`, except the members `own`
 * has, which it answers itself. This is the one place a capability is forwarded by name (ADR
 * 0059): the lazy engine, a number's session and the supervisor's refusals all forward every
 * capability alike, so a new capability of the port is never listed anywhere on its way. The
 * callers are checked against `Shape` by TypeScript; only the forwarding itself is by name.
 */
export function forwardingObject<Shape extends object>(
  call: (name: SessionCapability, args: unknown[]) => unknown,
  own: object = {},
): Shape {
  const methods = new Map<PropertyKey, (...args: unknown[]) => unknown>();
  return new Proxy(own, {
    get(target, name, receiver) {
      if (name in target) {
        const value: unknown = Reflect.get(target, name, receiver);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      }
      if (typeof name === 'symbol' || NOT_CAPABILITIES.has(name)) return undefined;
      let method = methods.get(name);
      if (method === undefined) {
        method = (...args: unknown[]) => call(name as SessionCapability, args);
        methods.set(name, method);
      }
      return method;
    },
  }) as Shape;
}

/** Calls an engine's capability for `number`, as the engine implements it (number first). */
export function callOnNumber(
  engine: ForEachNumber<EngineSession>,
  name: SessionCapability,
  number: WhatsAppNumber,
  args: unknown[],
): unknown {
  const method = engine[name] as (this: unknown, number: WhatsAppNumber, ...args: unknown[]) => unknown;
  return method.call(engine, number, ...args);
}

/**
 * An engine that implements part of the session port, and says nothing of the rest: Meta's Cloud
 * API, which is not a WhatsApp phone and lacks much of what one does. The engines of phones (the
 * sandbox and Baileys) implement the whole port, and TypeScript holds them to it.
 */
export type PartialEngine = Omit<Engine, SessionCapability> & Partial<ForEachNumber<EngineSession>>;

/** The members of an engine that are not capabilities: absent, they stay absent (a linker, a simulator). */
const ENGINE_MEMBER_NAMES = [
  'kind',
  'capabilities',
  'initialStatus',
  'start',
  'stop',
  'sessionStatus',
  'simulator',
  'linker',
] as const satisfies readonly Exclude<keyof Engine, SessionCapability>[];
const ENGINE_MEMBERS: ReadonlySet<PropertyKey> = new Set(ENGINE_MEMBER_NAMES);
// Fails to compile when Engine gains a member that is neither a capability nor listed above.
const everyMemberListed: [Exclude<keyof Engine, SessionCapability | (typeof ENGINE_MEMBER_NAMES)[number]>] extends [never] ? true : false =
  true;
void everyMemberListed;

/**
 * The whole port over a partial engine: a capability it does not implement is declined, 422
 * capability_not_supported naming the engine and the capability, like its explicit declines.
 * So a capability added to the port costs the engines of phones and the operation, and nothing
 * of the partial engine until it is built there too (ADR 0059).
 */
export function declineMissing(engine: PartialEngine): Engine {
  return new Proxy(engine, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name);
      if (typeof value === 'function') return (value as (...args: unknown[]) => unknown).bind(target);
      if (value !== undefined || typeof name === 'symbol' || NOT_CAPABILITIES.has(name) || ENGINE_MEMBERS.has(name)) return value;
      const capability = name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
      return async (): Promise<never> => {
        throw capabilityDeclined(target.kind, capability, `do this (${capability}): it is not built for this engine yet`);
      };
    },
  }) as Engine;
}
