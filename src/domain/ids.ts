import { monotonicFactory } from 'ulid';

/** Every id carries its type, so that a key id pasted where an account id belongs is caught. */
export const idPrefixes = {
  account: 'acc',
  user: 'usr',
  number: 'num',
  apiKey: 'key',
  message: 'msg',
  webhook: 'wh',
  delivery: 'dlv',
  event: 'evt',
  attempt: 'att',
  request: 'req',
  session: 'ses',
  invite: 'inv',
} as const;

export type IdKind = keyof typeof idPrefixes;

// Monotonic, so that ids made in the same millisecond still sort in creation order.
const nextUlid = monotonicFactory();

export function newId(kind: IdKind): string {
  return `${idPrefixes[kind]}_${nextUlid().toLowerCase()}`;
}

export function hasIdPrefix(kind: IdKind, value: string): boolean {
  return value.startsWith(`${idPrefixes[kind]}_`);
}
