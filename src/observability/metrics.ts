import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { engineKinds, sessionStatuses, type EngineKind } from '../domain/model.ts';
import type { DeliveryState } from '../domain/webhooks.ts';
import type { DeliverySource } from '../webhooks/delivery-worker.ts';

const deliverySources: DeliverySource[] = ['handoff', 'claim'];
import type { SendFailureReason, SendObserver } from '../messaging/session-supervisor.ts';
import type { Store } from '../store/database.ts';
import { countQueuedDeliveries } from '../store/repositories/deliveries.ts';
import { oldestUnheldDueAt } from '../store/repositories/delivery-claims.ts';
import { freeSpace } from '../media/disk-floor.ts';
import { countNumbersByEngineAndStatus } from '../store/repositories/numbers.ts';
import type { TaskObserver, TaskOutcome } from '../jobs/scheduler.ts';
import { queueTotals } from '../store/repositories/waiting-messages.ts';
import { listNewChatQuotas } from '../store/repositories/new-chat-quotas.ts';
import { isCapped, type NewChatQuotaState } from '../domain/new-chat-quota.ts';
import type { QueueObserver } from '../messaging/governor/queue-runner.ts';

const taskOutcomes: TaskOutcome[] = ['succeeded', 'failed'];

/** What a webhook attempt led to, named by the delivery's state after it. */
const webhookAttemptOutcomes: Record<DeliveryState, string> = { delivered: 'delivered', pending: 'retrying', failed: 'given_up' };

// Spelled out as a record so that a new refusal of the engine port cannot be left out here.
const sendFailureReasons = Object.keys({
  not_connected: true,
  not_group_member: true,
  not_group_admin: true,
  rate_limited: true,
  rejected: true,
  recipient_not_on_whatsapp: true,
  restricted: true,
  sender_blocked: true,
  engine_error: true,
} satisfies Record<SendFailureReason, true>) as SendFailureReason[];

/** The route label of requests that matched no route, so that random paths add no series. */
const UNMATCHED_ROUTE = 'unmatched';

/** Suited to an API whose answers take a millisecond or two, with room for slow commits. */
const HTTP_DURATION_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** A queued message waits from a few seconds (a gap) to a day (caps, quiet hours, send_at). */
const SEND_QUEUE_WAIT_BUCKETS_SECONDS = [1, 5, 15, 60, 300, 900, 3_600, 4 * 3_600, 12 * 3_600, 86_400, 7 * 86_400];
/** A receiver may take up to the webhook timeout (15 s by default) to answer. */
const WEBHOOK_DURATION_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30];
/** From the 50 ms a healthy node takes (the goal at 1,000 incoming messages a second) to a retry schedule's hours. */
const WEBHOOK_LAG_BUCKETS_SECONDS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3_600, 86_400];
/** From a lease renewal (milliseconds) to an orphan sweep listing a large bucket (minutes). */
const TASK_DURATION_BUCKETS_SECONDS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300];

export interface GatewayMetricsOptions {
  /**
   * Also export the process's CPU, memory, event loop and GC figures. They start monitors that
   * live as long as the process, so they are only worth it where metrics are scraped.
   */
  processMetrics: boolean;
  /** The directories whose disks' free space is exported: the database's (or the data directory) and the media's. */
  volumes: Record<Volume, string>;
}

type Volume = 'data' | 'media';

/**
 * The gateway's Prometheus metrics. Each gateway owns its registry, never prom-client's global
 * one, so that several gateways in one process (as in the tests) count apart. Counters tick in
 * memory; the gauges that describe the database (queue depth, sessions) are read when scraped.
 */
export class GatewayMetrics implements SendObserver, TaskObserver, QueueObserver {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<'method' | 'route' | 'status_code'>;
  private readonly httpDuration: Histogram<'method' | 'route'>;
  private readonly messagesSent: Counter<'engine'>;
  private readonly messageSendFailures: Counter<'engine' | 'reason'>;
  private readonly messagesReceived: Counter<'engine'>;
  private readonly quietSessionRestarts: Counter<'engine'>;
  private readonly newChatQuotaReadFailures: Counter;
  private readonly webhookAttempts: Counter<'outcome'>;
  private readonly webhookStarts: Counter<'source'>;
  private readonly staleWrites: Counter;
  private readonly webhookAttemptDuration: Histogram<'outcome'>;
  private readonly webhookDeliveryLag: Histogram;
  private readonly taskRuns: Counter<'task' | 'outcome'>;
  private readonly sendQueueWait: Histogram;
  private readonly taskDuration: Histogram<'task'>;
  private readonly taskLastRun: Gauge<'task'>;

  constructor(store: Store, options: GatewayMetricsOptions) {
    const registers = [this.registry];
    if (options.processMetrics) {
      collectDefaultMetrics({ register: this.registry, prefix: 'wagw_' });
      dropTotalSuffixedGauges(this.registry);
    }

    this.sendQueueWait = new Histogram({
      name: 'wagw_send_queue_wait_seconds',
      help: 'How long messages the send governor queued waited, from the send to their release.',
      buckets: SEND_QUEUE_WAIT_BUCKETS_SECONDS,
      registers,
    });
    this.httpRequests = new Counter({
      name: 'wagw_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status_code'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'wagw_http_request_duration_seconds',
      help: 'Time from receiving a request to the end of its answer, by method and route pattern.',
      labelNames: ['method', 'route'],
      buckets: HTTP_DURATION_BUCKETS_SECONDS,
      registers,
    });
    this.messagesSent = new Counter({
      name: 'wagw_messages_sent_total',
      help: 'Outgoing messages an engine accepted, by engine.',
      labelNames: ['engine'],
      registers,
    });
    this.messageSendFailures = new Counter({
      name: 'wagw_message_send_failures_total',
      help: 'Outgoing messages an engine refused, by engine and reason.',
      labelNames: ['engine', 'reason'],
      registers,
    });
    this.messagesReceived = new Counter({
      name: 'wagw_messages_received_total',
      help: 'Incoming messages stored, by engine.',
      labelNames: ['engine'],
      registers,
    });
    this.quietSessionRestarts = new Counter({
      name: 'wagw_quiet_session_restarts_total',
      help: 'Sessions that looked open but had gone quiet (no traffic, no answered probe) and were restarted, by engine.',
      labelNames: ['engine'],
      registers,
    });
    this.newChatQuotaReadFailures = new Counter({
      name: 'wagw_new_chat_quota_read_failures_total',
      help: "Reads of WhatsApp's new-chat quota that failed (it answers 500 for some accounts); the send policy's own cap stood in.",
      registers,
    });
    this.webhookAttempts = new Counter({
      name: 'wagw_webhook_attempts_total',
      help: 'Webhook delivery attempts, by what they led to: delivered, retrying or given_up.',
      labelNames: ['outcome'],
      registers,
    });
    this.webhookStarts = new Counter({
      name: 'wagw_webhook_deliveries_started_total',
      help:
        'Webhook attempts started, by how the worker got the delivery: handoff (leased by the write that queued it) or claim (from ' +
        'the outbox).',
      labelNames: ['source'],
      registers,
    });
    this.staleWrites = new Counter({
      name: 'wagw_stale_lease_writes_refused_total',
      help:
        'Owner-only writes the database refused because the session that made them had lost its lease, not counting the late writes ' +
        'of numbers the node gave up itself (docs/cluster.md).',
      registers,
    });
    this.webhookAttemptDuration = new Histogram({
      name: 'wagw_webhook_attempt_duration_seconds',
      help: 'Time a webhook attempt took, from sending the request to the answer or the error.',
      labelNames: ['outcome'],
      buckets: WEBHOOK_DURATION_BUCKETS_SECONDS,
      registers,
    });
    this.webhookDeliveryLag = new Histogram({
      name: 'wagw_webhook_delivery_lag_seconds',
      help:
        'Time from an event being committed to its delivery succeeding (retries included): what a burst of incoming ' +
        'messages costs the webhooks when the node cannot keep up, said instead of hidden.',
      buckets: WEBHOOK_LAG_BUCKETS_SECONDS,
      registers,
    });
    this.taskRuns = new Counter({
      name: 'wagw_task_runs_total',
      help: "Passes of the node's periodic tasks (src/jobs/scheduler.ts), by task and outcome: succeeded or failed.",
      labelNames: ['task', 'outcome'],
      registers,
    });
    this.taskDuration = new Histogram({
      name: 'wagw_task_duration_seconds',
      help: 'Time a pass of a periodic task took, by task.',
      labelNames: ['task'],
      buckets: TASK_DURATION_BUCKETS_SECONDS,
      registers,
    });
    this.taskLastRun = new Gauge({
      name: 'wagw_task_last_run_timestamp_seconds',
      help: 'When the latest pass of a periodic task started, in seconds since the epoch; 0 before its first.',
      labelNames: ['task'],
      registers,
    });
    this.registerDatabaseGauges(store, registers);
    this.registerVolumeGauge(options.volumes, registers);
    this.startAtZero();
  }

  /** Called once per answered request, so on the send path: it does two label lookups and nothing else. */
  observeRequest(method: string, route: string | undefined, statusCode: number, durationSeconds: number): void {
    const routeLabel = route ?? UNMATCHED_ROUTE;
    this.httpRequests.inc({ method, route: routeLabel, status_code: statusCode });
    this.httpDuration.observe({ method, route: routeLabel }, durationSeconds);
  }

  messageSent(engine: EngineKind): void {
    this.messagesSent.inc({ engine });
  }

  messageSendFailed(engine: EngineKind, reason: SendFailureReason): void {
    this.messageSendFailures.inc({ engine, reason });
  }

  staleWriteRefused(): void {
    this.staleWrites.inc();
  }

  messageReceived(engine: EngineKind): void {
    this.messagesReceived.inc({ engine });
  }

  quietSessionRestarted(engine: EngineKind): void {
    this.quietSessionRestarts.inc({ engine });
  }

  newChatQuotaReadFailed(): void {
    this.newChatQuotaReadFailures.inc();
  }

  /** `state` is the delivery's state after the attempt: delivered, pending (a retry is due) or failed. */
  webhookStarted(source: DeliverySource): void {
    this.webhookStarts.inc({ source });
  }

  webhookAttempted(state: DeliveryState, durationSeconds: number, lagSeconds: number): void {
    const outcome = webhookAttemptOutcomes[state];
    this.webhookAttempts.inc({ outcome });
    this.webhookAttemptDuration.observe({ outcome }, durationSeconds);
    if (state === 'delivered') this.webhookDeliveryLag.observe(lagSeconds);
  }

  /**
   * Event streams (ADR 0068): the WebSocket clients this node serves, read when scraped, and the
   * events sent to them. Registered by the root once the streams exist, since they are built after
   * the metrics.
   */
  watchEventStreams(connected: () => number): (sent: number) => void {
    const registers = [this.registry];
    new Gauge({
      name: 'wagw_event_stream_connections',
      help: 'Event streams whose WebSocket client this node serves now.',
      registers,
      collect() {
        this.set(connected());
      },
    });
    const events = new Counter({
      name: 'wagw_event_stream_events_total',
      help: 'Events this node sent to event streams, each recorded with its place in its stream before it was sent.',
      registers,
    });
    events.inc(0);
    return (sent) => events.inc(sent);
  }

  /** Every task's series exist from its registration, so that an alert sees a task that never ran. */
  taskRegistered(task: string): void {
    for (const outcome of taskOutcomes) this.taskRuns.inc({ task, outcome }, 0);
    this.taskLastRun.set({ task }, 0);
  }

  taskRan(task: string, outcome: TaskOutcome, durationSeconds: number, at: Date): void {
    this.taskRuns.inc({ task, outcome });
    this.taskDuration.observe({ task }, durationSeconds);
    this.taskLastRun.set({ task }, at.getTime() / 1000);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The text exposition of every metric; runs the scrape-time queries. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /**
   * Both queries are cheap: the queue depth is answered from an index led by the state, and
   * the numbers table holds one row per WhatsApp number. A failing query fails the scrape, which
   * Prometheus reports as the target being down rather than as stale figures.
   */
  /** Read at each scrape, so that an alert sees a disk filling before the database fails to write. */
  private registerVolumeGauge(volumes: Record<Volume, string>, registers: Registry[]): void {
    const free = new Gauge({
      name: 'wagw_volume_free_bytes',
      help: 'Bytes free to the gateway on the disk of its data (the SQLite database, or WAGW_DATA_DIR) and of its media (WAGW_MEDIA_DIR).',
      labelNames: ['volume'],
      registers,
      collect: async () => {
        for (const [volume, directory] of Object.entries(volumes)) {
          const space = await freeSpace(directory).catch(() => undefined);
          if (space === undefined) free.remove({ volume });
          else free.set({ volume }, space.freeBytes);
        }
      },
    });
  }

  private registerDatabaseGauges(store: Store, registers: Registry[]): void {
    const queueDepth = new Gauge({
      name: 'wagw_webhook_queue_depth',
      help: 'Webhook deliveries not yet delivered or given up: due now, or waiting for their retry time.',
      labelNames: ['status'],
      registers,
      collect: async () => {
        const queued = await countQueuedDeliveries(store.db, Date.now());
        queueDepth.set({ status: 'due' }, queued.due);
        queueDepth.set({ status: 'waiting_retry' }, queued.pending - queued.due);
      },
    });
    // The lag histogram hears of a delivery only once it succeeds, so while the outbox falls
    // further behind it says nothing; this gauge says how far behind it is at each scrape.
    const oldestDue = new Gauge({
      name: 'wagw_webhook_oldest_due_age_seconds',
      help:
        'How long the longest-waiting due webhook delivery that no node is sending has been due; 0 when none waits. It grows ' +
        'while events arrive faster than the endpoints and the worker take them.',
      registers,
      collect: async () => {
        const now = Date.now();
        const oldestDueAt = await oldestUnheldDueAt(store.db, now);
        oldestDue.set(oldestDueAt === null ? 0 : Math.max(0, now - oldestDueAt) / 1_000);
      },
    });
    const sendQueue = new Gauge({
      name: 'wagw_send_queue_depth',
      help: "Messages waiting in the numbers' send queues: due now (overdue), or waiting for their time.",
      labelNames: ['status'],
      registers,
      collect: async () => {
        const totals = await queueTotals(store.db);
        sendQueue.set({ status: 'due' }, totals.overdue);
        sendQueue.set({ status: 'waiting' }, totals.depth - totals.overdue);
        sendQueueOldest.set(totals.oldestCreatedAt === null ? 0 : (totals.now - totals.oldestCreatedAt.getTime()) / 1_000);
      },
    });
    const sendQueueOldest = new Gauge({
      name: 'wagw_send_queue_oldest_age_seconds',
      help: 'Age of the oldest message waiting in a send queue; 0 when none waits.',
      registers,
    });
    this.registerNewChatQuotaGauges(store, registers);
    const sessions = new Gauge({
      name: 'wagw_sessions',
      help: 'WhatsApp numbers by engine and session status.',
      labelNames: ['engine', 'status'],
      registers,
      collect: async () => {
        const counts = await countNumbersByEngineAndStatus(store.db);
        // Every pair is written, zeros included, so that a status that empties reads 0 instead
        // of vanishing from the scrape.
        for (const engine of engineKinds) for (const status of sessionStatuses) sessions.set({ engine, status }, 0);
        for (const { engine, status, count } of counts) sessions.set({ engine, status }, count);
      },
    });
  }

  /**
   * WhatsApp's new-chat quota per number whose quota was ever read (ADR 0058), from its row:
   * one series per number, as few as the gateway's numbers. A figure WhatsApp did not give is
   * left out rather than shown as 0.
   */
  private registerNewChatQuotaGauges(store: Store, registers: Registry[]): void {
    // One read per scrape, shared by the four gauges, which prom-client collects at once.
    let reading: Promise<{ numberId: string; state: NewChatQuotaState }[]> | undefined;
    const read = () => (reading ??= listNewChatQuotas(store.db).finally(() => setImmediate(() => (reading = undefined))));
    const gauge = (name: string, help: string, figure: (state: NewChatQuotaState, now: Date) => number | null) => {
      const made: Gauge<'number_id'> = new Gauge({
        name,
        help,
        labelNames: ['number_id'],
        registers,
        collect: async () => {
          const rows = await read();
          const now = new Date();
          made.reset();
          for (const { numberId, state } of rows) {
            const value = figure(state, now);
            if (value !== null) made.set({ number_id: numberId }, value);
          }
        },
      });
    };
    gauge(
      'wagw_new_chat_quota_chats',
      "WhatsApp's quota of new chats for the number's current cycle, as last read.",
      (state) => state.total,
    );
    gauge(
      'wagw_new_chat_quota_used_chats',
      "How much of the number's new-chat quota WhatsApp counted as used, as last read.",
      (state) => state.used,
    );
    gauge(
      'wagw_new_chat_quota_cycle_end_timestamp_seconds',
      "When the number's new-chat cycle ends (its quota renews), in seconds since the epoch.",
      (state) => (state.cycleEndsAt === null ? null : state.cycleEndsAt.getTime() / 1_000),
    );
    gauge(
      'wagw_new_chat_capped',
      'Whether the number is capped now (a 475, or WhatsApp said so): 1 while its first contacts wait, else 0.',
      (state, now) => (isCapped(state, now) ? 1 : 0),
    );
  }

  /** A message left its number's send queue after waiting this long. */
  released(waitMs: number): void {
    this.sendQueueWait.observe(waitMs / 1_000);
  }

  /** Counters exist from the start, so `rate()` and `increase()` see their first event. */
  private startAtZero(): void {
    for (const engine of engineKinds) {
      this.messagesSent.inc({ engine }, 0);
      this.messagesReceived.inc({ engine }, 0);
      for (const reason of sendFailureReasons) this.messageSendFailures.inc({ engine, reason }, 0);
    }
    for (const outcome of Object.values(webhookAttemptOutcomes)) this.webhookAttempts.inc({ outcome }, 0);
    for (const source of deliverySources) this.webhookStarts.inc({ source }, 0);
  }
}

/**
 * prom-client's default metrics include three gauges named `…_total`, a suffix Prometheus keeps
 * for counters (`promtool check metrics` refuses it). They only sum the gauges of the same name
 * without the suffix, which stay (wagw_nodejs_active_handles, …_requests, …_resources, by type),
 * so the sums are dropped.
 */
function dropTotalSuffixedGauges(registry: Registry): void {
  for (const name of ['wagw_nodejs_active_handles_total', 'wagw_nodejs_active_requests_total', 'wagw_nodejs_active_resources_total']) {
    registry.removeSingleMetric(name);
  }
}
