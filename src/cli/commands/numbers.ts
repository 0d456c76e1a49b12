import { CLI_ACTOR } from '../../domain/audit.ts';
import { apiKeyScopes, DEFAULT_API_KEY_SCOPES } from '../../domain/api-key-scopes.ts';
import type { Command } from 'commander';
import { apiKeyJson } from '../../accounts/account-json.ts';
import { numberJson, table } from '../output.ts';
import { withGateway } from '../context.ts';
import { registerLinkCommand } from './link.ts';
import { registerProxyCommand } from './number-proxy.ts';
import { registerCloudCommand } from './number-cloud.ts';
import { registerSendQueueCommands } from './send-queue.ts';
import { withinAccount } from '../../domain/tenant-scope.ts';
import type { Gateway } from '../../main.ts';
import { AppError } from '../../domain/errors.ts';

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
        const added = await gateway.numbers.addNumber(
          operator,
          {
            accountId: options.account,
            phone: options.phone,
            engine: options.engine,
            ...(options.user !== undefined && { holderUserId: options.user }),
          },
          CLI_ACTOR,
        );
        output.print(numberJson(added), `Added ${added.phone} (${added.id}) on the ${added.engine} engine, status ${added.status}.`);
      });
    });

  number
    .command('restart <phoneOrId>')
    .description("Restart a number's session that failed, was replaced or is backing off, on any engine; the node that owns it does it")
    .action(async (phoneOrId: string, _options: object, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        const found = await gateway.numbers.findNumber(operator, phoneOrId);
        await gateway.numberControl.restart({ scope: operator, actor: CLI_ACTOR }, found);
        output.print({ id: found.id, phone: found.phone, restarted: true }, `Restarted the session of ${found.phone}.`);
      });
    });

  number
    .command('pause <phoneOrId>')
    .description(
      'Pause a number until it is resumed: its sends are refused (503 number_paused), or queued (202) when a send policy governs it; the node that owns it does it',
    )
    .option('--reason <text>', "why, shown as the pause's detail in number.paused")
    .action(async (phoneOrId: string, options: { reason?: string }, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        const found = await gateway.numbers.findNumber(operator, phoneOrId);
        await onItsOwner(gateway, found.id, () =>
          gateway.numberControl.pause({ scope: operator, actor: CLI_ACTOR }, found, options.reason?.trim() || null),
        );
        output.print(
          { id: found.id, phone: found.phone, paused: true },
          `Paused ${found.phone}; resume it with wagw number resume ${found.phone}.`,
        );
      });
    });

  number
    .command('resume <phoneOrId>')
    .description('Resume a paused number (restricted, rate-limited, logged out or paused by hand); the node that owns it does it')
    .action(async (phoneOrId: string, _options: object, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        const found = await gateway.numbers.findNumber(operator, phoneOrId);
        await onItsOwner(gateway, found.id, () => gateway.numberControl.resume({ scope: operator, actor: CLI_ACTOR }, found));
        output.print({ id: found.id, phone: found.phone, paused: false }, `${found.phone} sends again.`);
      });
    });

  number
    .command('list')
    .description('List numbers')
    .option('--account <id>', 'only the numbers of this account')
    .action(async (options: { account?: string }, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        if (options.account !== undefined) await gateway.accounts.getAccount(options.account);
        const numbers = (
          await gateway.numbers.listNumbers(options.account === undefined ? operator : withinAccount(operator, options.account))
        ).map(numberJson);
        output.print({ numbers }, table(numbers, ['id', 'phone', 'engine', 'status', 'account_id']));
      });
    });

  number
    .command('remove <phoneOrId>')
    .description('Remove a number; its message history stays with the account')
    .action(async (phoneOrId: string, _options: object, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        const removed = await gateway.numbers.removeNumber(operator, phoneOrId, CLI_ACTOR);
        output.print({ ...numberJson(removed), removed: true }, `Removed ${removed.phone} (${removed.id}).`);
      });
    });

  registerLinkCommand(number);
  registerProxyCommand(number);
  registerCloudCommand(number);
  registerSendQueueCommands(number);

  number
    .command('set <phoneOrId>')
    .description("Change a number's settings: those given change, the others keep their values")
    .option('--reject-calls <on|off>', 'reject every call to the number as it rings')
    .option('--call-reply-text <text>', 'what a rejected caller is sent; an empty text sends nothing')
    .option(
      '--show-online <on|off>',
      "show the number online to its contacts, from its session's next start (PATCH /numbers/{id} applies it at once)",
    )
    .option('--auto-read <on|off>', 'mark what the number receives as read at once')
    .action(
      async (
        phoneOrId: string,
        options: { rejectCalls?: string; callReplyText?: string; showOnline?: string; autoRead?: string },
        command: Command,
      ) => {
        await withGateway(command, async (gateway, output, operator) => {
          const settings = {
            rejectCalls: onOff(options.rejectCalls, '--reject-calls'),
            callReplyText: options.callReplyText === undefined ? undefined : options.callReplyText === '' ? null : options.callReplyText,
            showOnline: onOff(options.showOnline, '--show-online'),
            autoRead: onOff(options.autoRead, '--auto-read'),
          };
          const found = await gateway.numbers.findNumber(operator, phoneOrId);
          const updated = await gateway.numbers.updateSettings(operator, found.id, settings, CLI_ACTOR);
          output.print(
            numberJson(updated),
            `${updated.phone}: reject calls ${updated.rejectCalls ? 'on' : 'off'}, show online ${updated.showOnline ? 'on' : 'off'}, ` +
              `auto read ${updated.autoRead ? 'on' : 'off'}.`,
          );
        });
      },
    );

  number
    .command('set-status <phoneOrId> <status>')
    .description("Set a sandbox number's session status, to rehearse an outage (e.g. disconnected)")
    .action(async (phoneOrId: string, status: string, _options: object, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        const updated = await gateway.numbers.setSimulatedStatus(operator, phoneOrId, status, CLI_ACTOR);
        output.print(numberJson(updated), `${updated.phone} is now ${updated.status}.`);
      });
    });
}

/**
 * Runs a pause or resume where the number's pause is kept: on the node that owns it (forwarded),
 * or, when no node runs it, here, under a lease this command holds while it acts.
 */
async function onItsOwner(gateway: Gateway, numberId: string, act: () => Promise<void>): Promise<void> {
  await gateway.keeper.startPinned([numberId]);
  try {
    await gateway.supervisor.sessionsStarted();
    await act();
  } finally {
    await gateway.keeper.stop();
  }
}

function onOff(value: string | undefined, option: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'on' || value === 'off') return value === 'on';
  throw new AppError('invalid_argument', `${option} takes on or off, not "${value}".`);
}

export function registerKeyCommands(program: Command): void {
  const key = program.command('key').description('Manage API keys');

  key
    .command('create')
    .description('Create an API key; the key is printed this once and never again')
    .requiredOption('--account <id>', 'the account the key acts for')
    .option('--name <name>', 'a name to tell keys apart', 'default')
    .option('--user <id>', 'the user who creates it')
    .option('--scopes <list>', `what it may do, comma-separated, of ${apiKeyScopes.join(', ')}`, DEFAULT_API_KEY_SCOPES.join(','))
    .action(async (options: { account: string; name: string; user?: string; scopes: string }, command: Command) => {
      await withGateway(command, async (gateway, output) => {
        const created = await gateway.apiKeys.createKey({
          accountId: options.account,
          name: options.name,
          scopes: options.scopes.split(','),
          actor: CLI_ACTOR,
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
    .description("List an account's API keys (never the keys themselves)")
    .requiredOption('--account <id>', 'the account')
    .action(async (options: { account: string }, command: Command) => {
      await withGateway(command, async (gateway, output) => {
        await gateway.accounts.getAccount(options.account);
        const keys = (await gateway.apiKeys.listKeys(options.account)).map(apiKeyJson);
        output.print({ keys }, table(keys, ['id', 'name', 'hint', 'scopes', 'created_at', 'revoked_at', 'last_used_at']));
      });
    });

  key
    .command('revoke <id>')
    .description('Revoke an API key; it is refused from the very next request')
    .action(async (id: string, _options: object, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        const revoked = await gateway.apiKeys.revokeKey(operator, id, CLI_ACTOR);
        output.print(apiKeyJson(revoked), `Revoked API key ${revoked.id}.`);
      });
    });
}
