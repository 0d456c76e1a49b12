import type { Logger } from 'pino';

/**
 * Where a periodic task runs: on every node (each node's own upkeep, such as renewing its
 * leases), or only for the work this node owns (the numbers whose leases it holds).
 */
type TaskScope = 'every-node' | 'owner';

export interface PeriodicTask {
  /** Unique in the gateway; the label of the task's metrics. */
  name: string;
  intervalMs: number;
  scope: TaskScope;
  /** One pass. A failure is counted and logged; the next pass runs on time regardless. */
  run(): Promise<unknown> | undefined;
}

/** What the metrics hear of each task. */
export interface TaskObserver {
  taskRegistered(name: string): void;
  taskRan(name: string, outcome: TaskOutcome, durationSeconds: number, at: Date): void;
}

export type TaskOutcome = 'succeeded' | 'failed';

/** A task as `wagw cluster status` and the dashboard show it. */
export interface TaskSnapshot {
  name: string;
  intervalMs: number;
  scope: TaskScope;
  /** Whether its timer runs now (tasks start and stop with the part of the node that owns them). */
  active: boolean;
  runs: number;
  failures: number;
  lastRunAt: Date | null;
  lastDurationMs: number | null;
}

/** A registered task: started and stopped by the part of the node it belongs to. */
export interface ScheduledTask {
  /** Runs the task every interval from now on (and, with `runNow`, once at once, awaited). */
  start(options?: { runNow?: boolean }): Promise<void>;
  stop(): void;
  /** One pass now, counted like any other; never throws (a failure is logged). */
  runNow(): Promise<void>;
}

/**
 * The one place a node's background work is timed (docs/operations.md#background-tasks). Each
 * periodic task is registered once, with its name, interval and scope; every run is counted,
 * timed and, when it fails, logged. Passes of one task may overlap when one outlasts the
 * interval, as the timers it replaces allowed; a task that must not overlap guards itself (the
 * lease keeper's tick does).
 */
export class Scheduler {
  private readonly tasks = new Map<string, TaskState>();

  constructor(
    private readonly logger: Logger,
    private readonly observer?: TaskObserver,
  ) {}

  register(task: PeriodicTask): ScheduledTask {
    if (this.tasks.has(task.name)) throw new Error(`a periodic task named ${task.name} is registered already`);
    if (!(task.intervalMs > 0)) throw new Error(`the periodic task ${task.name} needs a positive interval, not ${task.intervalMs}`);
    const state: TaskState = { task, timer: undefined, runs: 0, failures: 0, lastRunAt: null, lastDurationMs: null };
    this.tasks.set(task.name, state);
    this.observer?.taskRegistered(task.name);
    return {
      start: async (options) => {
        if (options?.runNow) await this.runOnce(state);
        if (state.timer !== undefined) return;
        state.timer = setInterval(() => void this.runOnce(state), task.intervalMs);
        // Background work never keeps the process alive by itself.
        state.timer.unref();
      },
      stop: () => {
        clearInterval(state.timer);
        state.timer = undefined;
      },
      runNow: () => this.runOnce(state),
    };
  }

  list(): TaskSnapshot[] {
    return [...this.tasks.values()].map((state) => ({
      name: state.task.name,
      intervalMs: state.task.intervalMs,
      scope: state.task.scope,
      active: state.timer !== undefined,
      runs: state.runs,
      failures: state.failures,
      lastRunAt: state.lastRunAt,
      lastDurationMs: state.lastDurationMs,
    }));
  }

  /** Stops every timer; what is running finishes on its own. */
  stopAll(): void {
    for (const state of this.tasks.values()) {
      clearInterval(state.timer);
      state.timer = undefined;
    }
  }

  private async runOnce(state: TaskState): Promise<void> {
    const startedAt = new Date();
    const started = performance.now();
    let outcome: TaskOutcome = 'succeeded';
    try {
      await state.task.run();
    } catch (error) {
      outcome = 'failed';
      state.failures += 1;
      this.logger.error({ err: error, task: state.task.name }, `periodic task ${state.task.name} failed`);
    }
    const durationMs = performance.now() - started;
    state.runs += 1;
    state.lastRunAt = startedAt;
    state.lastDurationMs = durationMs;
    this.observer?.taskRan(state.task.name, outcome, durationMs / 1000, startedAt);
  }
}

interface TaskState {
  task: PeriodicTask;
  timer: NodeJS.Timeout | undefined;
  runs: number;
  failures: number;
  lastRunAt: Date | null;
  lastDurationMs: number | null;
}
