import { AppError } from '../domain/errors.ts';
import type { EngineKind } from '../domain/model.ts';

/**
 * What an engine throws for a capability of the port it does not have (ADR 0059): a clear 422
 * naming the engine and what it cannot do, never a silent no-op. The API passes it on unchanged.
 */
export function capabilityDeclined(engine: EngineKind, capability: string, why: string): AppError {
  return new AppError('capability_not_supported', `The ${engine} engine cannot ${why}.`, { engine, capability });
}
