import type { KeyObject } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Scheduler } from '../jobs/scheduler.ts';
import type { SystemStatusService } from '../observability/system-status.ts';
import type { AccountActivityService } from '../observability/account-activity.ts';
import type { AccountParts } from '../wiring/accounts.ts';
import type { ClusterParts } from '../wiring/cluster.ts';
import type { MediaParts } from '../wiring/media.ts';
import type { MessagingParts } from '../wiring/messaging.ts';
import type { SessionParts } from '../wiring/sessions.ts';
import type { StorageParts } from '../wiring/storage.ts';
import type { WebhookParts } from '../wiring/webhooks.ts';
import type { NumberControl } from './number-control.ts';
import type { ChatReplies } from './chat-replies.ts';

/**
 * Every service the composition root (src/main.ts) hands to the edges: the parts each module's
 * wiring builds, and the node's own facts. No route or page takes all of it: each names the few
 * members it uses (`Pick<GatewayServices, 'numbers' | 'history'>`), so what a page reaches is
 * written at its top and a new reach is a visible change (docs/adr/0061). Types only: the edges
 * depend on what the services are, never on how the root builds them.
 */
export interface GatewayServices
  extends StorageParts,
    Omit<WebhookParts, 'addressPolicy'>,
    MediaParts,
    Omit<SessionParts, 'engineEvents'>,
    AccountParts,
    Omit<MessagingParts, 'engineEventRouting'>,
    ClusterParts {
  config: Config;
  logger: Logger;
  system: SystemStatusService;
  /** The account's messages and webhook deliveries per day, for the dashboard's Activity charts. */
  activity: AccountActivityService;
  /** Times the node's periodic tasks, with their runs, failures and last run (src/jobs/scheduler.ts). */
  scheduler: Scheduler;
  /** Signs and checks the calls nodes make to each other; derived from the secret key. */
  clusterKey: KeyObject;
  /** Keys the dashboard's CSRF tokens; derived from the secret key, so it survives restarts. */
  dashboardSigningKey: Buffer;
  startedAt: Date;
  /** Linking, restart, logout, pause, resume and clearing the queue of a number, on its owner. */
  numberControl: NumberControl;
  /** The dashboard's replies, sent as POST /send_message sends, on the number's owner (ADR 0073). */
  chatReplies: ChatReplies;
}
