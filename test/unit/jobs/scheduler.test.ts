import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { pino } from 'pino';
import { Scheduler, type TaskObserver } from '../../../src/jobs/scheduler.ts';

// Runs alone: it mocks the process's timers and Date.

/** A logger whose lines are kept, parsed, for the assertions. */
function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

/** Lets the promises the fake clock's timers started settle. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the scheduler', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setInterval', 'Date'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  it('runs a started task every interval, counts each run and remembers when the last began', async () => {
    const { logger } = capturingLogger();
    const scheduler = new Scheduler(logger);
    let passes = 0;
    const task = scheduler.register({
      name: 'tally',
      intervalMs: 1_000,
      scope: 'every-node',
      run: async () => {
        passes += 1;
      },
    });
    assert.deepEqual(scheduler.list(), [
      { name: 'tally', intervalMs: 1_000, scope: 'every-node', active: false, runs: 0, failures: 0, lastRunAt: null, lastDurationMs: null },
    ]);

    await task.start();
    mock.timers.tick(999);
    await settle();
    assert.equal(passes, 0, 'nothing runs before the first interval ends');
    mock.timers.tick(1);
    await settle();
    mock.timers.tick(2_000);
    await settle();
    assert.equal(passes, 3);
    const [snapshot] = scheduler.list();
    assert.equal(snapshot!.runs, 3);
    assert.equal(snapshot!.active, true);
    assert.equal(snapshot!.lastRunAt?.getTime(), 1_003_000);

    task.stop();
    mock.timers.tick(5_000);
    await settle();
    assert.equal(passes, 3, 'a stopped task runs no more');
    assert.equal(scheduler.list()[0]!.active, false);
  });

  it('runs a task once at start when asked, before its first interval', async () => {
    const scheduler = new Scheduler(capturingLogger().logger);
    let passes = 0;
    const task = scheduler.register({
      name: 'eager',
      intervalMs: 60_000,
      scope: 'every-node',
      run: async () => {
        passes += 1;
      },
    });
    await task.start({ runNow: true });
    assert.equal(passes, 1);
    await task.start({ runNow: false });
    mock.timers.tick(60_000);
    await settle();
    assert.equal(passes, 2, 'starting a started task adds no second timer');
  });

  it("counts and logs a failed run with the task's name, and keeps running it on time", async () => {
    const { logger, lines } = capturingLogger();
    const heard: string[] = [];
    const observer: TaskObserver = {
      taskRegistered: (name) => heard.push(`registered ${name}`),
      taskRan: (name, outcome) => heard.push(`${name} ${outcome}`),
    };
    const scheduler = new Scheduler(logger, observer);
    let passes = 0;
    const task = scheduler.register({
      name: 'flaky',
      intervalMs: 100,
      scope: 'owner',
      run: async () => {
        passes += 1;
        if (passes === 1) throw new Error('the database went away');
      },
    });
    await task.start();
    mock.timers.tick(100);
    await settle();
    mock.timers.tick(100);
    await settle();
    assert.deepEqual(heard, ['registered flaky', 'flaky failed', 'flaky succeeded']);
    const [snapshot] = scheduler.list();
    assert.equal(snapshot!.runs, 2);
    assert.equal(snapshot!.failures, 1);
    const failure = lines.find((line) => line.level === 50);
    assert.equal(failure?.task, 'flaky');
    assert.match(String(failure?.msg), /periodic task flaky failed/);
    assert.match(String((failure?.err as { message?: string } | undefined)?.message), /the database went away/);
  });

  it('refuses a second task of the same name and an interval that is not positive', () => {
    const scheduler = new Scheduler(capturingLogger().logger);
    scheduler.register({ name: 'once', intervalMs: 10, scope: 'every-node', run: () => undefined });
    assert.throws(
      () => scheduler.register({ name: 'once', intervalMs: 10, scope: 'every-node', run: () => undefined }),
      /registered already/,
    );
    assert.throws(
      () => scheduler.register({ name: 'never', intervalMs: 0, scope: 'every-node', run: () => undefined }),
      /positive interval/,
    );
  });

  it('stops every timer at once', async () => {
    const scheduler = new Scheduler(capturingLogger().logger);
    let passes = 0;
    for (const name of ['a', 'b'])
      await scheduler
        .register({
          name,
          intervalMs: 10,
          scope: 'every-node',
          run: async () => {
            passes += 1;
          },
        })
        .start();
    scheduler.stopAll();
    mock.timers.tick(100);
    await settle();
    assert.equal(passes, 0);
  });
});
