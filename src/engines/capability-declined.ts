import { AppError } from '../domain/errors.ts';
import type { EngineKind } from '../domain/model.ts';

/**
 * What an engine throws for a capability of the port it does not have (ADR 0059): a clear 422
 * naming the engine and what it cannot do, never a silent no-op. The API passes it on unchanged.
 */
export function capabilityDeclined(engine: EngineKind, capability: string, why: string): AppError {
  return new AppError('capability_not_supported', `The ${engine} engine cannot ${why}.`, { engine, capability });
}

/** Content of a message that not every engine can carry (EngineCapabilities.uncarried). */
export type OptionalContent = 'template' | 'interactive' | 'poll' | 'viewOnce';

/** How a refusal of each names what the engine cannot do. */
const UNCARRIED: Record<OptionalContent, { capability: string; why: string }> = {
  template: { capability: 'send_template', why: "send message templates: they are the Cloud API's" },
  interactive: { capability: 'send_interactive', why: "send buttons, lists or call-to-action links: they are the Cloud API's" },
  poll: { capability: 'send_poll', why: 'send polls' },
  viewOnce: { capability: 'send_view_once', why: 'send view-once files' },
};

/**
 * Declines a message whose content its engine cannot carry (what its capabilities list as
 * `uncarried`), before anything reaches the network. The engine asks this as it sends, and the
 * sender before it stores or queues a message, so a send for later is refused as a send now is,
 * not failed when its time comes.
 */
export function declineUncarried(engine: EngineKind, uncarried: readonly OptionalContent[], structured: object | undefined): void {
  if (structured === undefined) return;
  const kind = uncarried.find((each) => each in structured);
  if (kind !== undefined) throw capabilityDeclined(engine, UNCARRIED[kind].capability, UNCARRIED[kind].why);
}

/**
 * The capabilities of the session port that only Meta's Cloud API has, declined by the engine of
 * WhatsApp's phones (Baileys), which extends this: a real phone has no templates. The sandbox
 * rehearses them instead (docs/cloud-api.md#rehearse-in-the-sandbox), so a new Meta-only
 * capability is declined here and given a rehearsal there.
 */
export function declinedMetaCapabilities(engine: EngineKind) {
  return class DeclinedByPhones {
    readonly listTemplates = async (): Promise<never> => {
      throw capabilityDeclined(engine, 'list_templates', "list message templates: they are the Cloud API's");
    };
  };
}
