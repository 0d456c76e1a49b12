import type { Gateway } from '../main.ts';

/**
 * Runs an owner's action (a pause, a resume, clearing the queue) where the number is served: on
 * the node that owns it (forwarded), or, when no node runs it, here, under a lease this command
 * holds while it acts.
 */
export async function onItsOwner<T>(gateway: Gateway, numberId: string, act: () => Promise<T>): Promise<T> {
  await gateway.keeper.startPinned([numberId]);
  try {
    await gateway.supervisor.sessionsStarted();
    return await act();
  } finally {
    await gateway.keeper.stop();
  }
}
