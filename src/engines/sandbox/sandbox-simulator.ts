import { randomBytes } from 'node:crypto';
import type { Message, WhatsAppNumber } from '../../domain/model.ts';
import type { E164 } from '../../domain/phone.ts';
import { type ChatPresence, EngineSendError, type NewChatQuota, type OutgoingMedia } from '../engine.ts';
import type { EngineEvents, IncomingCallEvent } from '../engine-events.ts';
import type { InboundSimulator, SimulatedCall, SimulatedIncoming, SimulatedPollVote, SimulatedRestriction } from '../inbound-simulator.ts';
import {
  BlockedSenderError,
  type NetworkMedia,
  NetworkUnreachableError,
  NotConnectedError,
  type SandboxNetworkPort,
} from './sandbox-network.ts';
import { sandboxRegisteredForm } from './sandbox-registrations.ts';
import type { MessageTemplate } from '../../domain/templates.ts';

// The other side of the sandbox's numbers: the simulated phones that write, vote and call, the
// restrictions the network is asked to rehearse, and what a simulated contact would see of a
// number (its presence, whether it shows itself online). The engine (sandbox-engine.ts) is what
// the gateway calls; this is what a test or an operator's rehearsal calls (InboundSimulator).

/** What the simulator needs of the engine whose numbers it plays the other side of. */
export interface SimulatedSessions {
  /** Refuses as WhatsApp does unless the number's session is connected. */
  assertConnected(number: WhatsAppNumber): void;
  /** Whether the number's session is rehearsing a quiet session. */
  quiet(number: WhatsAppNumber): boolean;
  /** Keeps the number's session open and deaf until `until`, then restarts it. */
  goQuiet(number: WhatsAppNumber, until: Date): void;
  /** The simulated phone scans the number's current QR, or types its pairing code: whether that linked it. */
  confirmLink(number: WhatsAppNumber, code: string): Promise<boolean>;
  /** Logs an event the network delivered once that the gateway could not record. */
  unrecorded(error: unknown, number: WhatsAppNumber, what: string): void;
}

export interface SandboxSimulatorOptions {
  events: EngineEvents;
  network: SandboxNetworkPort;
  /** Reads back an incoming message the network delivered, once stored, by its network id. */
  findReceived(numberId: string, engineMessageId: string): Promise<Message | undefined>;
  sessions: SimulatedSessions;
}

export class SandboxSimulator implements InboundSimulator {
  /** Simulated calls that ring now, by call id, each with the timer that makes it missed. */
  readonly ringing = new Map<string, NodeJS.Timeout>();
  /** Each number's rehearsed cap on new chats (POST /sandbox/restrict, kind new_chat_cap), as this node last knew it. */
  readonly quotas = new Map<string, NewChatQuota>();
  /** The last presence the engine showed each chat, by `<number's phone>><chat's phone>`. */
  readonly presences = new Map<string, ChatPresence>();
  /** Whether each number last showed itself online (setOnline), by number id. */
  readonly online = new Map<string, boolean>();
  /** Each number's rehearsal templates added or replaced by its account, by number id, beside the seeded ones. */
  readonly templates = new Map<string, MessageTemplate[]>();

  constructor(private readonly options: SandboxSimulatorOptions) {}

  confirmLink(number: WhatsAppNumber, code: string): Promise<boolean> {
    return this.options.sessions.confirmLink(number, code);
  }

  putTemplate(number: WhatsAppNumber, template: MessageTemplate): void {
    const others = (this.templates.get(number.id) ?? []).filter(
      (each) => each.name !== template.name || each.language !== template.language,
    );
    this.templates.set(number.id, [...others, template]);
  }

  /** The last presence shown to a chat: what a simulated phone would see. */
  presenceShown(number: WhatsAppNumber, toPhone: E164): ChatPresence | undefined {
    return this.presences.get(`${number.phone}>${toPhone}`);
  }

  /** Whether the number last showed itself online, as a simulated contact would see it. */
  shownOnline(number: WhatsAppNumber): boolean | undefined {
    return this.online.get(number.id);
  }

  /**
   * A simulated phone rings the number. The call is ringing before its offer is reported, so
   * that a number that rejects calls finds it to reject; unanswered, it is missed when it has
   * rung for `ringsForMs`.
   */
  async placeCall(number: WhatsAppNumber, call: SimulatedCall): Promise<string> {
    this.options.sessions.assertConnected(number);
    const callId = randomBytes(16).toString('hex').toUpperCase();
    const heard = (status: IncomingCallEvent['status']): IncomingCallEvent => ({
      toPhone: number.phone,
      call: { callId, caller: call.fromPhone },
      fromPhone: call.fromPhone,
      fromLid: null,
      groupId: call.groupId ?? null,
      video: call.video,
      status,
      at: new Date(),
    });
    const ringsOut = setTimeout(() => {
      if (this.ringing.delete(callId))
        void this.options.events
          .incomingCall(heard('missed'))
          .catch((error: unknown) => this.options.sessions.unrecorded(error, number, 'a missed call'));
    }, call.ringsForMs);
    ringsOut.unref();
    this.ringing.set(callId, ringsOut);
    await this.options.events.incomingCall(heard('offered'));
    return callId;
  }

  async restrict(number: WhatsAppNumber, restriction: SimulatedRestriction): Promise<void> {
    const until = restriction.until.getTime();
    if (restriction.kind === 'quiet_session') return this.options.sessions.goQuiet(number, restriction.until);
    if (restriction.kind === 'new_chat_cap') {
      const newChats = restriction.newChats ?? 0;
      // Not told to the number: as on WhatsApp, a client meets the cap as a 475 unless it reads the quota.
      this.quotas.set(number.id, {
        status: 'none',
        total: newChats,
        used: 0,
        cycleStartedAt: new Date(),
        cycleEndsAt: restriction.until,
        error: null,
      });
      await this.options.network.restrict(number.phone, { kind: 'new_chat_cap', until, newChats });
      return;
    }
    await this.options.network.restrict(number.phone, { kind: restriction.kind, until });
  }

  deliverPollVote(number: WhatsAppNumber, vote: SimulatedPollVote): Promise<void> {
    return injectVote(this.options.network, number, vote);
  }

  async deliverIncoming(number: WhatsAppNumber, incoming: SimulatedIncoming): Promise<Message> {
    // A quiet session would keep the message on the network, with nothing stored to answer with.
    if (this.options.sessions.quiet(number))
      throw new EngineSendError('not_connected', `The sandbox session of ${number.phone} is quiet, as asked.`, 'connected');
    const { media } = incoming;
    let id: string;
    try {
      const carried =
        media === undefined
          ? undefined
          : { ...(await networkMedia(media)), ...(incoming.failedDownloads && { failedDownloads: incoming.failedDownloads }) };
      const extras = {
        ...(incoming.quotedEngineId !== undefined && { quoted: incoming.quotedEngineId }),
        ...(incoming.mentions !== undefined && { mentions: incoming.mentions }),
        ...(incoming.fromLid !== undefined && { senderLid: incoming.fromLid, phoneHidden: incoming.withholdPhone === true }),
        // A placeholder carries nothing of the message: neither its text nor its ad.
        ...(incoming.neverResent === true ? { unavailable: true } : incoming.referral !== undefined && { referral: incoming.referral }),
      };
      ({ id } = await this.options.network.inject(
        sandboxRegisteredForm(incoming.fromPhone),
        number.phone,
        incoming.text,
        carried,
        incoming.structured,
        extras,
        incoming.groupId,
      ));
    } catch (error) {
      // The shared network being out of reach is the number's session being down, as a send finds it.
      if (error instanceof NotConnectedError || error instanceof NetworkUnreachableError)
        throw new EngineSendError('not_connected', `${number.phone} is not connected to the sandbox network.`, 'disconnected');
      if (error instanceof BlockedSenderError) throw new EngineSendError('sender_blocked', error.message);
      throw error;
    }
    const stored = await this.options.findReceived(number.id, id);
    if (stored === undefined) throw new Error(`The sandbox network delivered ${id} to ${number.phone}, but it is not stored.`);
    return stored;
  }
}

/**
 * A simulated phone's vote, carried as an action on the poll, as a reaction is: the sandbox
 * network needs no encryption, so the options travel as they are.
 */
async function injectVote(network: SandboxNetworkPort, number: WhatsAppNumber, vote: SimulatedPollVote): Promise<void> {
  try {
    await network.inject(
      vote.fromPhone,
      number.phone,
      '',
      undefined,
      undefined,
      { action: { kind: 'vote', target: vote.pollEngineId, options: [...vote.options] } },
      vote.groupId,
    );
  } catch (error) {
    if (error instanceof NotConnectedError || error instanceof NetworkUnreachableError)
      throw new EngineSendError('not_connected', `${number.phone} is not connected to the sandbox network.`, 'disconnected');
    throw error;
  }
}

export async function networkMedia(media: OutgoingMedia): Promise<NetworkMedia> {
  return { kind: media.kind, mimeType: media.mimeType, fileName: media.fileName, base64: (await media.read()).toString('base64') };
}
