import type { WhatsAppNumber } from '../domain/model.ts';
import type { EngineSession, ForEachNumber, SessionCapability } from './engine.ts';

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
