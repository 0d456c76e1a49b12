import type { Command } from 'commander';
import { loadConfig } from '../config.ts';
import { createGateway, createLogger, type Gateway } from '../main.ts';
import { createOutput, type Output } from './output.ts';
import { operatorScope, type OperatorScope } from '../domain/tenant-scope.ts';

/**
 * Runs one CLI command against a gateway built by the same composition root as the server,
 * migrated first, and always closed afterwards. Whoever can run the CLI holds the database and
 * the secret key already, so the command acts with the operator scope.
 */
export async function withGateway(
  command: Command,
  run: (gateway: Gateway, output: Output, operator: OperatorScope) => Promise<void>,
): Promise<void> {
  const config = loadConfig();
  // Log lines go to stderr, so that stdout stays one JSON object with --json.
  const logger = createLogger(config, process.stderr);
  logger.level = 'warn';
  const gateway = await createGateway(config, logger);
  try {
    await run(gateway, createOutput(Boolean(command.optsWithGlobals().json)), operatorScope());
  } finally {
    await gateway.close();
  }
}

export function parseWholeNumber(raw: string, option: string, minimum = 0): number {
  // Decimal digits only: Number() would also read "0x10" as 16 and "1e3" as 1000.
  const value = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < minimum) {
    throw new CliInputError(`${option} must be a whole number of at least ${minimum}; got "${raw}".`);
  }
  return value;
}

/** Bad command-line input that is found before any service is asked. */
export class CliInputError extends Error {}
