import { AppError } from '../domain/errors.ts';
import type { EngineKind } from '../domain/model.ts';

/**
 * What an engine throws for a capability of the port it does not have (ADR 0059): a clear 422
 * naming the engine and what it cannot do, never a silent no-op. The API passes it on unchanged.
 */
export function capabilityDeclined(engine: EngineKind, capability: string, why: string): AppError {
  return new AppError('capability_not_supported', `The ${engine} engine cannot ${why}.`, { engine, capability });
}

/**
 * What an engine cannot carry in a message, declined before anything reaches the network:
 * templates and interactive messages are Meta's (the Cloud API engine); polls and view-once files
 * are not (the Cloud API has neither). The sender asks this too before it stores or queues a
 * message, so a send for later is refused as a send now is, not failed when its time comes.
 */
export function declineUncarried(engine: EngineKind, structured: object | undefined): void {
  if (structured === undefined) return;
  if (engine === 'cloud') {
    if ('poll' in structured) throw capabilityDeclined(engine, 'send_poll', 'send polls');
    if ('viewOnce' in structured) throw capabilityDeclined(engine, 'send_view_once', 'send view-once files');
    return;
  }
  if ('template' in structured) throw capabilityDeclined(engine, 'send_template', "send message templates: they are the Cloud API's");
  if ('interactive' in structured)
    throw capabilityDeclined(engine, 'send_interactive', "send buttons, lists or call-to-action links: they are the Cloud API's");
}
