import type { Command } from 'commander';
import { loadConfig } from '../config.ts';
import { createGateway, createLogger, type Gateway } from '../main.ts';
import { createOutput, type Output } from './output.ts';

/**
 * Runs one CLI command against a gateway built by the same composition root as the server,
 * migrated first, and always closed afterwards.
 */
export async function withGateway(command: Command, run: (gateway: Gateway, output: Output) => Promise<void>): Promise<void> {
  const config = loadConfig();
  // Log lines go to stderr, so that stdout stays one JSON object with --json.
  const logger = createLogger(config, process.stderr);
  logger.level = 'warn';
  const gateway = await createGateway(config, logger);
  try {
    await run(gateway, createOutput(Boolean(command.optsWithGlobals().json)));
  } finally {
    await gateway.close();
  }
}

export function parseWholeNumber(raw: string, option: string): number {
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0 || raw.trim() === '') {
    throw new CliInputError(`${option} must be a whole number of at least 0; got "${raw}".`);
  }
  return value;
}

/** Bad command-line input that is found before any service is asked. */
export class CliInputError extends Error {}
