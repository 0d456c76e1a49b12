import type { AdReferral } from '../domain/referral.ts';
import type { Message, WhatsAppNumber } from '../domain/model.ts';
import type { StructuredContent } from '../domain/structured-content.ts';
import type { E164 } from '../domain/phone.ts';
import type { MessageTemplate } from '../domain/templates.ts';
import type { OutgoingMedia } from './engine.ts';

// The sandbox's simulated phones: what they send to a sandbox number, and the engine side that
// takes it (InboundSimulator). Only an engine with `capabilities.simulatedInbound` has one.

/** A message as a simulated phone sends it to a sandbox number. */
export interface SimulatedIncoming {
  fromPhone: E164;
  text: string;
  media?: OutgoingMedia;
  structured?: StructuredContent;
  /** How many downloads of `media` fail before one succeeds, to rehearse the retries. */
  failedDownloads?: number;
  /** The network's id of the message the simulated phone answers. */
  quotedEngineId?: string;
  /** The group the simulated phone writes in, which both it and the number belong to. */
  groupId?: string;
  /** With `groupId`: the members the message mentions. */
  mentions?: E164[];
  /** The simulated phone's LID (`<digits>@lid`): the message is LID-addressed. */
  fromLid?: string;
  /** With `fromLid`: the network withholds the phone, as WhatsApp does for a LID-only sender. */
  withholdPhone?: boolean;
  /** The ad the simulated person tapped before writing. */
  referral?: AdReferral;
  /** The message comes as a placeholder whose content the phone never sends again. */
  neverResent?: boolean;
}

/** What the simulated network does to a number to rehearse WhatsApp's restrictions: a 463, or rate-overlimit on its sends, until `until`. */
export interface SimulatedRestriction {
  kind: 'restricted' | 'rate_overlimit' | 'new_chat_cap' | 'quiet_session';
  /** With `new_chat_cap`: how many people who never wrote to the number it may still write to before 475. */
  newChats?: number;
  until: Date;
}

/** A call a simulated phone makes to a sandbox number; it rings until rejected, or for `ringsForMs`. */
export interface SimulatedCall {
  fromPhone: E164;
  video: boolean;
  /** The group the call is made in, which both the phone and the number belong to. */
  groupId?: string;
  /** How long it rings before it is missed, unless rejected first. */
  ringsForMs: number;
}

/** A vote a simulated phone casts on a poll of one of its chats with a sandbox number. */
export interface SimulatedPollVote {
  fromPhone: E164;
  /** The network's id of the poll. */
  pollEngineId: string;
  /** The options chosen; none takes the phone's vote back. */
  options: string[];
  /** The group the poll is in, when it is a group's. */
  groupId?: string;
}

export interface InboundSimulator {
  /** Produces an incoming message on `number` exactly as the network would, and waits until it is stored. */
  deliverIncoming(number: WhatsAppNumber, incoming: SimulatedIncoming): Promise<Message>;
  /** Has the network restrict the number as WhatsApp would, so that a client rehearses its `number.paused` handling. */
  restrict(number: WhatsAppNumber, restriction: SimulatedRestriction): Promise<void>;
  /** Rings `number` from a simulated phone; resolves with the call's id once the offer is reported. */
  placeCall(number: WhatsAppNumber, call: SimulatedCall): Promise<string>;
  /** Produces a vote on a poll of `number`, and waits until it is recorded. */
  deliverPollVote(number: WhatsAppNumber, vote: SimulatedPollVote): Promise<void>;
  /** The number's simulated phone scans its current QR, or types its pairing code: whether that linked it. */
  confirmLink(number: WhatsAppNumber, code: string): Promise<boolean>;
  /** Adds a rehearsal template to the number's catalogue, or replaces the one of that name and language. */
  putTemplate(number: WhatsAppNumber, template: MessageTemplate): void;
}
