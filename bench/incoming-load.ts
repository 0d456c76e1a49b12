/**
 * The two processes around a gateway in the incoming-message benchmarks: the open-loop load
 * (bench/load-process.ts, POST /sandbox/receive at a fixed rate) and the webhook endpoint
 * (bench/receiver-process.ts), each in a process of its own so that neither takes the gateway's
 * CPU in its own process.
 */
import { fork } from 'node:child_process';
import type { LoadOrder } from './load-process.ts';

export interface LoadReport {
  text: string;
  sentAt: number;
  answeredAt: number;
  status: number;
}

/** Runs bench/load-process.ts to completion and returns what it measured. */
export async function runLoadProcess(order: LoadOrder): Promise<LoadReport[]> {
  const child = fork(new URL('./load-process.ts', import.meta.url).pathname, [], { execArgv: ['--import', 'tsx'] });
  const done = new Promise<LoadReport[]>((resolve) =>
    child.once('message', (message: { report: LoadReport[] }) => resolve(message.report)),
  );
  child.send(order);
  return done;
}

interface ReceiverProcess {
  url: string;
  /** What a hanging endpoint has held so far. */
  stats: { hungRequests: number; mostHungAtOnce: number };
  close(): Promise<void>;
}

/** Starts bench/receiver-process.ts and collects the arrival times it reports. */
export async function startReceiverProcess(arrivals: Map<string, number>, mode: 'answer' | 'hang' = 'answer'): Promise<ReceiverProcess> {
  const child = fork(new URL('./receiver-process.ts', import.meta.url).pathname, mode === 'hang' ? ['hang'] : [], {
    execArgv: ['--import', 'tsx'],
  });
  const stats = { hungRequests: 0, mostHungAtOnce: 0 };
  const port = await new Promise<number>((resolve) => {
    child.on('message', (message: { port?: number; arrivals?: [string, number][]; hungRequests?: number; mostHungAtOnce?: number }) => {
      if (message.port !== undefined) resolve(message.port);
      for (const [text, at] of message.arrivals ?? []) arrivals.set(text, at);
      if (message.hungRequests !== undefined) stats.hungRequests = message.hungRequests;
      if (message.mostHungAtOnce !== undefined) stats.mostHungAtOnce = message.mostHungAtOnce;
    });
  });
  return {
    url: `http://127.0.0.1:${port}/hook`,
    stats,
    close: async () => {
      child.disconnect();
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}
