import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { NumbersService } from '../accounts/numbers-service.ts';
import { MediaDownloadRetrier } from '../media/media-download-retrier.ts';
import { QueueRunner } from '../messaging/governor/queue-runner.ts';
import { SendGovernor } from '../messaging/governor/send-governor.ts';
import { SendQueueService } from '../messaging/governor/send-queue-service.ts';
import { CallService } from '../messaging/calls.ts';
import { ChatService } from '../messaging/chats.ts';
import { ContactsService } from '../messaging/contacts.ts';
import { EngineEventRouting } from '../messaging/engine-event-routing.ts';
import { GroupChangeService } from '../messaging/group-changes.ts';
import { GroupService } from '../messaging/groups.ts';
import { IdempotentSendService } from '../messaging/idempotent-send.ts';
import { IdentityMap } from '../messaging/identities.ts';
import { IncomingActionService } from '../messaging/incoming-actions.ts';
import { MessageActionService } from '../messaging/message-actions.ts';
import { MessageHistoryService } from '../messaging/message-history.ts';
import { NumberCheckService } from '../messaging/number-checks.ts';
import { NumberLinkingService } from '../messaging/number-linking.ts';
import { PollService } from '../messaging/polls.ts';
import { PresenceService } from '../messaging/presence.ts';
import { ProfileService } from '../messaging/profiles.ts';
import { ReceiveMessageService } from '../messaging/receive-message.ts';
import { RecentSends } from '../messaging/recent-sends.ts';
import { SendBacklog } from '../messaging/send-backlog.ts';
import { SandboxInbox } from '../messaging/sandbox-inbox.ts';
import { SendMessageService } from '../messaging/send-message.ts';
import { TypingService } from '../messaging/typing.ts';
import type { MediaParts } from './media.ts';
import type { SessionParts } from './sessions.ts';
import type { StorageParts } from './storage.ts';
import type { WebhookParts } from './webhooks.ts';

export interface MessagingParts {
  sender: SendMessageService;
  /** The per-number send governor: policies, and the decision of when a message may leave. */
  governor: SendGovernor;
  /** Runs the send queues of the numbers this node owns; started by the node runtime. */
  queueRunner: QueueRunner;
  /** Send policies, and the numbers' queues as the API shows and changes them. */
  sendQueues: SendQueueService;
  /** Sends that carry an Idempotency-Key. */
  idempotentSender: IdempotentSendService;
  receiver: ReceiveMessageService;
  /** Simulated incoming messages on sandbox numbers, from the API and the dashboard. */
  sandboxInbox: SandboxInbox;
  history: MessageHistoryService;
  /** POST /check_numbers, with its per-number lookup limit. */
  numberChecks: NumberCheckService;
  /** POST /typing, whose states end by themselves. */
  typing: TypingService;
  /** Reactions, edits, revocations and read marks on the account's messages. */
  messageActions: MessageActionService;
  /** Groups as each number sees them. */
  groups: GroupService;
  /** Incoming files whose first download failed, tried again. */
  mediaRetrier: MediaDownloadRetrier;
  /** Linking attempts started from the operator console. */
  linking: NumberLinkingService;
  /** The sends this node works on at once, refused past WAGW_MAX_PENDING_SENDS. */
  sendBacklog: SendBacklog;
  /** Each number's own LID-to-phone map (ADR 0032). */
  identities: IdentityMap;
  contacts: ContactsService;
  chats: ChatService;
  /** Polls' votes: the current selection per voter, and the tallies. */
  polls: PollService;
  /** Contacts' presence, and whether each number shows itself online. */
  presence: PresenceService;
  /** Contacts' profiles, kept briefly, and our numbers' own. */
  profiles: ProfileService;
  /** Where each engine event goes; the composition root connects the engines to it. */
  engineEventRouting: EngineEventRouting;
}

interface MessagingInputs {
  config: Config;
  storage: StorageParts;
  webhooks: WebhookParts;
  media: MediaParts;
  sessions: SessionParts;
  numbers: NumbersService;
  logger: Logger;
}

/** Sending, receiving, message actions, groups and the routing of what the engines report. */
export function buildMessaging({
  config,
  storage,
  webhooks,
  media: mediaParts,
  sessions,
  numbers,
  logger,
}: MessagingInputs): MessagingParts {
  const { store, committer, metrics } = storage;
  const { deliveryWorker } = webhooks;
  const { media, mediaLinks } = mediaParts;
  const { supervisor, pauses, keeper } = sessions;
  // A receipt for a send of this node waits for that send's own `sent` write (recent-sends.ts).
  const recentSends = new RecentSends();
  const receiver = new ReceiveMessageService(
    store,
    committer,
    deliveryWorker,
    media,
    mediaLinks,
    config.media.receiveTimeoutMs,
    (error) => supervisor.staleWriteRefused(error),
    recentSends,
  );
  const groups = new GroupService(store, supervisor);
  const messageActions = new MessageActionService(store, committer, supervisor);
  const incomingActions = new IncomingActionService(store, committer, deliveryWorker);
  const groupChanges = new GroupChangeService(store, committer, deliveryWorker, groups);
  const identities = new IdentityMap(store, committer, deliveryWorker);
  const governor = new SendGovernor(store, committer, config.governor, keeper);
  governor.newChatCaps = sessions.newChatCaps;
  const sender = new SendMessageService(store, committer, supervisor, deliveryWorker, media, groups, logger, governor, pauses, recentSends);
  const typing = new TypingService(supervisor, logger, config.typingMs);
  // A paused number's queue holds: the runner asks the pauses before it releases a message, and
  // what waited for a pause is due again as soon as the number resumes.
  pauses.resumedListener = (numberId) => governor.pauseEnded(numberId);
  const queueRunner = new QueueRunner(store, keeper, supervisor, governor, sender, pauses, typing, metrics, logger, {
    idleCheckMs: config.governor.queueCheckMs,
    batchSize: 500,
  });
  const calls = new CallService(store, committer, deliveryWorker, supervisor, sender, logger);
  const polls = new PollService(store, committer, deliveryWorker, logger);
  const presence = new PresenceService(store, committer, deliveryWorker, supervisor, logger);
  return {
    sender,
    governor,
    queueRunner,
    sendQueues: new SendQueueService(store, governor, sender, committer, keeper),
    sendBacklog: new SendBacklog(config.maxPendingSends),
    idempotentSender: new IdempotentSendService(store, committer, sender, logger, config.interruptedSendAfterMs),
    receiver,
    sandboxInbox: new SandboxInbox(store, numbers, supervisor, config.maxMessageLength, config.sandbox.receivesPerMinute, groups),
    history: new MessageHistoryService(store),
    numberChecks: new NumberCheckService(supervisor, config.numberChecksPerMinute),
    typing,
    messageActions,
    groups,
    mediaRetrier: new MediaDownloadRetrier(store, committer, deliveryWorker, media, mediaLinks, supervisor, logger),
    linking: new NumberLinkingService(supervisor, logger),
    identities,
    contacts: new ContactsService(store),
    chats: new ChatService(store, supervisor),
    polls,
    presence,
    profiles: new ProfileService(supervisor, media, config.profileCacheMs),
    engineEventRouting: new EngineEventRouting({
      receiver,
      incomingActions,
      groupChanges,
      sessions: supervisor,
      messageActions,
      pauses,
      newChatCaps: sessions.newChatCaps,
      identities,
      calls,
      presence,
      polls,
      received: metrics,
      logger,
    }),
  };
}
