import type { Logger } from 'pino';
import type { EngineKind, Message } from '../domain/model.ts';
import type {
  EngineEvents,
  IdentitiesLearned,
  IncomingActionEvent,
  IncomingCallEvent,
  IncomingPollVoteEvent,
  PresenceEvent,
  IncomingMessageEvent,
  NumberRestrictedEvent,
  NewChatQuotaEvent,
  ReceiptEvent,
  RestrictionLiftedEvent,
  SessionStatusEvent,
} from '../engines/engine-events.ts';
import type { GroupChange } from '../domain/groups.ts';
import type { E164 } from '../domain/phone.ts';
import type { CallService } from './calls.ts';
import type { GroupChangeService } from './group-changes.ts';
import type { IdentityMap } from './identities.ts';
import type { IncomingActionService } from './incoming-actions.ts';
import type { MessageActionService } from './message-actions.ts';
import type { NumberPauses } from './number-pauses.ts';
import type { NewChatCaps } from './new-chat-caps.ts';
import type { PollService } from './polls.ts';
import type { PresenceService } from './presence.ts';
import type { ReceiveMessageService, ReceivedMessage } from './receive-message.ts';
import type { SessionSupervisor } from './session-supervisor.ts';

/** The services that act on what the engines report. */
export interface EngineEventConsumers {
  receiver: Pick<ReceiveMessageService, 'storeIncoming' | 'recordReceipt'>;
  incomingActions: Pick<IncomingActionService, 'record'>;
  groupChanges: Pick<GroupChangeService, 'record'>;
  sessions: Pick<SessionSupervisor, 'recordSessionStatus'>;
  messageActions: Pick<MessageActionService, 'markRead'>;
  pauses: Pick<NumberPauses, 'sessionChanged' | 'restricted' | 'lifted'>;
  newChatCaps: Pick<NewChatCaps, 'record'>;
  identities: Pick<IdentityMap, 'learnFromEngine'>;
  calls: Pick<CallService, 'record'>;
  presence: Pick<PresenceService, 'record'>;
  polls: Pick<PollService, 'recordVote'>;
  /** Counts incoming messages, and restarts of quiet sessions, per engine (the metrics listen here). */
  received: { messageReceived(engine: EngineKind): void; quietSessionRestarted(engine: EngineKind): void };
  logger: Logger;
}

/**
 * Where each engine event goes: one named method per event, so that a reader can follow an
 * incoming message from the engine to the services that store and answer it.
 */
export class EngineEventRouting {
  constructor(private readonly consumers: EngineEventConsumers) {}

  /** Stores the message; then counts it and, for a number set to read at once, marks it read. */
  async incomingMessage(engine: EngineKind, event: IncomingMessageEvent): Promise<Message> {
    const received = await this.consumers.receiver.storeIncoming(event);
    this.consumers.received.messageReceived(engine);
    if (received.fresh && received.number.autoRead) void this.readAutomatically(received);
    return received.message;
  }

  /** Records the status; a log-out also pauses the number, and a relink resumes it. */
  async sessionStatusChanged(engine: EngineKind, event: SessionStatusEvent): Promise<void> {
    if (event.quietRestart === true) this.consumers.received.quietSessionRestarted(engine);
    await this.consumers.sessions.recordSessionStatus(event);
    await this.consumers.pauses.sessionChanged(event);
  }

  numberRestricted(event: NumberRestrictedEvent): Promise<void> {
    return this.consumers.pauses.restricted(event);
  }

  restrictionLifted(event: RestrictionLiftedEvent): Promise<void> {
    return this.consumers.pauses.lifted(event);
  }

  /** Stores the number's quota; a 475 holds its first contacts, with a number.capped event. */
  newChatQuota(event: NewChatQuotaEvent): Promise<void> {
    return this.consumers.newChatCaps.record(event);
  }

  receipt(event: ReceiptEvent): Promise<void> {
    return this.consumers.receiver.recordReceipt(event);
  }

  incomingAction(event: IncomingActionEvent): Promise<void> {
    return this.consumers.incomingActions.record(event);
  }

  groupChanged(event: GroupChange & { toPhone: E164 }): Promise<void> {
    return this.consumers.groupChanges.record(event);
  }

  identitiesLearned(event: IdentitiesLearned): Promise<void> {
    return this.consumers.identities.learnFromEngine(event);
  }

  /** Reports the call and, for a number set to, rejects it. */
  incomingCall(event: IncomingCallEvent): Promise<void> {
    return this.consumers.calls.record(event);
  }

  presenceUpdate(event: PresenceEvent): Promise<void> {
    return this.consumers.presence.record(event);
  }

  /** Keeps the voter's current selection and tells the poll.vote subscribers. */
  pollVote(event: IncomingPollVoteEvent): Promise<void> {
    return this.consumers.polls.recordVote(event);
  }

  /** Read marks are a courtesy to the sender: one that fails loses nothing of ours, so it is only logged. */
  private async readAutomatically({ number, message }: ReceivedMessage): Promise<void> {
    try {
      await this.consumers.messageActions.markRead(number, message);
    } catch (error) {
      this.consumers.logger.debug({ err: error, messageId: message.id }, 'could not mark an incoming message read automatically');
    }
  }
}

/**
 * Carries engine events to the routing. The engines are built before the services that consume
 * their events, because those services need the supervisor and the supervisor needs the engines;
 * the composition root connects the routing once everything is built. Sessions start only after
 * that, so no event can arrive unconnected; one that did would be a wiring bug, and says so.
 */
export class EngineEventDispatch {
  private routing: EngineEventRouting | undefined;

  connect(routing: EngineEventRouting): void {
    if (this.routing !== undefined) throw new Error('The engine events are already connected.');
    this.routing = routing;
  }

  /** The events as one engine reports them, so that what it receives is counted under its name. */
  forEngine(engine: EngineKind): EngineEvents {
    return {
      incomingMessage: (event) => this.connected().incomingMessage(engine, event),
      sessionStatusChanged: (event) => this.connected().sessionStatusChanged(engine, event),
      receipt: (event) => this.connected().receipt(event),
      incomingAction: (event) => this.connected().incomingAction(event),
      groupChanged: (event) => this.connected().groupChanged(event),
      numberRestricted: (event) => this.connected().numberRestricted(event),
      restrictionLifted: (event) => this.connected().restrictionLifted(event),
      newChatQuota: (event) => this.connected().newChatQuota(event),
      identitiesLearned: (event) => this.connected().identitiesLearned(event),
      incomingCall: (event) => this.connected().incomingCall(event),
      presenceUpdate: (event) => this.connected().presenceUpdate(event),
      pollVote: (event) => this.connected().pollVote(event),
    };
  }

  private connected(): EngineEventRouting {
    if (this.routing === undefined) throw new Error('An engine reported an event before the gateway connected its consumers.');
    return this.routing;
  }
}
