import type { Command } from 'commander';
import { apiKeyJson, numberJson, table } from '../output.ts';
import { withGateway } from '../context.ts';
import { registerLinkCommand } from './link.ts';
import { registerSendQueueCommands } from './send-queue.ts';
import { withinAccount } from '../../domain/tenant-scope.ts';

export function registerNumberCommands(program: Command): void {
  const number = program.command('number').description('Manage WhatsApp numbers');

  number
    .command('add')
    .description('Link a WhatsApp number to an account')
    .requiredOption('--account <id>', 'the account that will send from the number')
    .requiredOption('--phone <phone>', 'the number, E.164 (e.g. +447700900123)')
    .option('--engine <engine>', 'the engine that serves it', 'sandbox')
    .option('--user <id>', 'the user who holds the number')
    .action(async (options: { account: string; phone: string; engine: string; user?: string }, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        const added = await gateway.numbers.addNumber(operator, {
          accountId: options.account,
          phone: options.phone,
          engine: options.engine,
          ...(options.user !== undefined && { holderUserId: options.user }),
        });
        output.print(numberJson(added), `Added ${added.phone} (${added.id}) on the ${added.engine} engine, status ${added.status}.`);
      });
    });

  number
    .command('restart <phoneOrId>')
    .description('Restart a number\'s session that failed, was replaced or is backing off, on any engine; the node that owns it does it')
    .action(async (phoneOrId: string, _options: object, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        const found = await gateway.numbers.findNumber(operator, phoneOrId);
        await gateway.routedLinking.restart(found);
        output.print({ id: found.id, phone: found.phone, restarted: true }, `Restarted the session of ${found.phone}.`);
      });
    });

  number
    .command('list')
    .description('List numbers')
    .option('--account <id>', 'only the numbers of this account')
    .action(async (options: { account?: string }, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        if (options.account !== undefined) await gateway.accounts.getAccount(options.account);
        const numbers = (await gateway.numbers.listNumbers(options.account === undefined ? operator : withinAccount(operator, options.account))).map(numberJson);
        output.print({ numbers }, table(numbers, ['id', 'phone', 'engine', 'status', 'account_id']));
      });
    });

  number
    .command('remove <phoneOrId>')
    .description('Remove a number; its message history stays with the account')
    .action(async (phoneOrId: string, _options: object, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        const removed = await gateway.numbers.removeNumber(operator, phoneOrId);
        output.print({ ...numberJson(removed), removed: true }, `Removed ${removed.phone} (${removed.id}).`);
      });
    });

  registerLinkCommand(number);
  registerSendQueueCommands(number);

  number
    .command('set-status <phoneOrId> <status>')
    .description('Set a sandbox number\'s session status, to rehearse an outage (e.g. disconnected)')
    .action(async (phoneOrId: string, status: string, _options: object, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        const updated = await gateway.numbers.setSimulatedStatus(operator, phoneOrId, status);
        output.print(numberJson(updated), `${updated.phone} is now ${updated.status}.`);
      });
    });
}

export function registerKeyCommands(program: Command): void {
  const key = program.command('key').description('Manage API keys');

  key
    .command('create')
    .description('Create an API key; the key is printed this once and never again')
    .requiredOption('--account <id>', 'the account the key acts for')
    .option('--name <name>', 'a name to tell keys apart', 'default')
    .option('--user <id>', 'the user who creates it')
    .action(async (options: { account: string; name: string; user?: string }, command: Command) => {
      await withGateway(command, async (gateway, output) => {
        const created = await gateway.apiKeys.createKey({
          accountId: options.account,
          name: options.name,
          ...(options.user !== undefined && { createdByUserId: options.user }),
        });
        output.print(
          { ...apiKeyJson(created.apiKey), key: created.plaintext },
          `Created API key ${created.apiKey.id} "${created.apiKey.name}".\nKey (shown once, store it now): ${created.plaintext}`,
        );
      });
    });

  key
    .command('list')
    .description('List an account\'s API keys (never the keys themselves)')
    .requiredOption('--account <id>', 'the account')
    .action(async (options: { account: string }, command: Command) => {
      await withGateway(command, async (gateway, output) => {
        await gateway.accounts.getAccount(options.account);
        const keys = (await gateway.apiKeys.listKeys(options.account)).map(apiKeyJson);
        output.print({ keys }, table(keys, ['id', 'name', 'hint', 'created_at', 'revoked_at', 'last_used_at']));
      });
    });

  key
    .command('revoke <id>')
    .description('Revoke an API key; it is refused from the very next request')
    .action(async (id: string, _options: object, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        const revoked = await gateway.apiKeys.revokeKey(operator, id);
        output.print(apiKeyJson(revoked), `Revoked API key ${revoked.id}.`);
      });
    });
}
