import { Command, CommanderError } from 'commander';
import { ConfigError, describeDatabase, loadConfig } from '../config.ts';
import { AppError } from '../domain/errors.ts';
import { createGateway, createLogger } from '../main.ts';
import { registerAccountCommands, registerUserCommands } from './commands/accounts.ts';
import { registerKeyCommands, registerNumberCommands } from './commands/numbers.ts';
import { registerWebhookCommands } from './commands/webhooks.ts';
import { registerOperatorTokenCommands } from './commands/operator-tokens.ts';
import { registerClusterCommands } from './commands/cluster.ts';
import { CliInputError, withGateway } from './context.ts';
import { SingleNodeError } from '../cluster/node-runtime.ts';

const program = new Command('wagw')
  .description('wa-gateway: a self-hosted WhatsApp messaging gateway')
  .option('--json', 'print exactly one JSON object on stdout')
  .showHelpAfterError()
  .exitOverride();

program
  .command('serve')
  .description('Run the gateway (HTTP API and sessions); what `npm start` runs')
  .action(async () => {
    // The HTTP stack is loaded by the one command that serves it, so that the others start fast.
    const { startServer, stopOnSignals } = await import('../server.ts');
    const config = loadConfig();
    const logger = createLogger(config);
    const gateway = await createGateway(config, logger);
    // The operator is made once the node has started, so that a start that is refused (a second
    // server on one SQLite file) never prints a password it then does not serve.
    const server = await startServer(gateway);
    // From the moment it listens, a SIGTERM stops the node cleanly, even while the operator is
    // being made (hashing its password takes a while).
    stopOnSignals(server, gateway);
    const created = await gateway.accounts.ensureOperator(config.admin.email, config.admin.password).catch(async (error: unknown) => {
      await server.stop();
      throw error;
    });
    if (created !== undefined) {
      const password = created.generatedPassword ?? '(from WAGW_ADMIN_PASSWORD)';
      process.stdout.write(`\nFirst start: created the operator ${created.user.email}\nPassword (shown once): ${password}\n\n`);
    }
    logger.info(
      { address: server.address, database: describeDatabase(config.database), version: config.version },
      'wa-gateway is listening',
    );
  });

program
  .command('migrate')
  .description('Bring the database schema to the latest version (every command also does this on start)')
  .action(async (_options: object, command: Command) => {
    await withGateway(command, async (gateway, output) => {
      // Opening the gateway has already migrated; report what that start applied.
      const applied = gateway.appliedMigrations;
      output.print(
        { applied, database: describeDatabase(gateway.config.database) },
        `Schema is up to date${applied.length ? ` (applied ${applied.join(', ')})` : ''}.`,
      );
    });
  });

registerAccountCommands(program);
registerUserCommands(program);
registerNumberCommands(program);
registerKeyCommands(program);
registerWebhookCommands(program);
registerOperatorTokenCommands(program);
registerClusterCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  process.exitCode = reportFailure(error);
}

/** Prints a failure for a person on stderr and returns the exit code. */
function reportFailure(error: unknown): number {
  if (error instanceof CommanderError) {
    // Commander has already printed its message (or the help, which is not a failure).
    return error.exitCode === 0 ? 0 : 1;
  }
  if (error instanceof AppError || error instanceof CliInputError || error instanceof ConfigError || error instanceof SingleNodeError) {
    process.stderr.write(`error: ${error.message}${error instanceof AppError && error.meta ? ` ${JSON.stringify(error.meta)}` : ''}\n`);
    return 1;
  }
  process.stderr.write(`error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return 2;
}
