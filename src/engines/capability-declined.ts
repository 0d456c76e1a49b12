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
 * Templates and interactive messages are Meta's (the Cloud API engine); an engine for WhatsApp's
 * phones declines a send of either before anything reaches WhatsApp.
 */
export function declineMetaOnly(engine: EngineKind, structured: object | undefined): void {
  if (structured === undefined) return;
  if ('template' in structured) throw capabilityDeclined(engine, 'send_template', "send message templates: they are the Cloud API's");
  if ('interactive' in structured)
    throw capabilityDeclined(engine, 'send_interactive', "send buttons, lists or call-to-action links: they are the Cloud API's");
}
