import type { WhatsAppNumber } from '../../domain/model.ts';
import type { E164 } from '../../domain/phone.ts';
import { isMediaKind, type MediaKind } from '../../domain/media.ts';
import { structuredKind } from '../../domain/structured-content.ts';
import type { IncomingMedia, MessageAction } from '../engine.ts';
import type { EngineEvents } from '../engine-events.ts';
import type { NetworkAction, NetworkMedia, NetworkMessage } from './sandbox-network.ts';

// What the simulated network delivers to a sandbox number, told to the gateway as the engine
// port's events: a vote, an action on an earlier message, or a message.

/**
 * Hands one message the network delivered to the gateway, and resolves once it is recorded;
 * `incomingMedia` describes a file it carries, which the engine holds for late downloads.
 */
export async function heardFromNetwork(
  events: EngineEvents,
  number: WhatsAppNumber,
  message: NetworkMessage,
  incomingMedia: (media: NetworkMedia, kind: MediaKind) => IncomingMedia,
): Promise<void> {
  if (message.action?.kind === 'vote') {
    const options = message.action.options ?? [];
    // The network carries a vote in the clear; only the options the poll has are counted.
    await events.pollVote({
      toPhone: number.phone,
      voterPhone: message.from as E164,
      voterLid: null,
      pollEngineId: message.action.target,
      at: new Date(message.sentAt),
      ...(message.group !== undefined && { groupId: message.group.id }),
      selectedOptions: (poll) => options.filter((option) => poll.options.includes(option)),
    });
    return;
  }
  if (message.action !== undefined) {
    await events.incomingAction({
      toPhone: number.phone,
      actorPhone: message.from as E164,
      actorLid: null,
      fromMe: false,
      targetEngineId: message.action.target,
      action: engineAction(message.action, message.text),
      at: new Date(message.sentAt),
      ...(message.group !== undefined && { groupId: message.group.id }),
    });
    return;
  }
  const media = message.media;
  await events.incomingMessage({
    toPhone: number.phone,
    fromPhone: message.phoneHidden === true ? null : (message.from as E164),
    fromLid: message.senderLid ?? null,
    identitySource: 'sandbox',
    text: message.unavailable === true ? '' : message.text,
    contentKind:
      message.unavailable === true
        ? 'unavailable'
        : media !== undefined && isMediaKind(media.kind)
          ? media.kind
          : (structuredKind(message.structured) ?? 'text'),
    ...(media !== undefined && isMediaKind(media.kind) && { media: incomingMedia(media, media.kind) }),
    ...(message.structured !== undefined && { structured: message.structured }),
    engineMessageId: message.id,
    receivedAt: new Date(message.sentAt),
    ...(message.quoted !== undefined && { quotedEngineId: message.quoted }),
    ...(message.group !== undefined && { group: message.group, mentions: message.mentions ?? [] }),
    ...(message.referral !== undefined && { referral: message.referral }),
  });
}

/** The network's action as the engine port tells it; an edit's new text is its message's text. */
function engineAction(action: NetworkAction, text: string): MessageAction {
  if (action.kind === 'vote') throw new Error('a vote is no action on a message');
  if (action.kind === 'react') return { kind: 'react', emoji: action.emoji ?? '' };
  return action.kind === 'edit' ? { kind: 'edit', text } : { kind: 'revoke' };
}
