import { CLI_ACTOR } from '../../domain/audit.ts';
import type { Command } from 'commander';
import type { Webhook } from '../../domain/webhooks.ts';
import type { DeliveryWithAttempts } from '../../webhooks/webhooks-service.ts';
import { parseWholeNumber, withGateway } from '../context.ts';
import { iso, table } from '../output.ts';
import { withinAccount } from '../../domain/tenant-scope.ts';

function webhookJson(webhook: Webhook) {
  return {
    id: webhook.id,
    account_id: webhook.accountId,
    url: webhook.url,
    events: webhook.eventTypes,
    message_scope: webhook.messageScope,
    enabled: webhook.enabled,
    disabled_reason: webhook.disabledReason,
    failing_since: iso(webhook.failingSince),
    created_at: iso(webhook.createdAt),
  };
}

function deliveryJson({ delivery, attempts }: DeliveryWithAttempts) {
  return {
    id: delivery.id,
    webhook_id: delivery.webhookId,
    event_type: delivery.eventType,
    state: delivery.state,
    attempt_count: delivery.attemptCount,
    next_attempt_at: delivery.state === 'pending' ? iso(delivery.nextAttemptAt) : null,
    last_status_code: delivery.lastStatusCode,
    last_error: delivery.lastError,
    created_at: iso(delivery.createdAt),
    attempts: attempts.map((attempt) => ({
      id: attempt.id,
      attempted_at: iso(attempt.attemptedAt),
      duration_ms: attempt.durationMs,
      status_code: attempt.statusCode,
      response_excerpt: attempt.responseExcerpt,
      error: attempt.error,
    })),
  };
}

const splitEvents = (raw: string | undefined) => (raw === undefined ? undefined : raw.split(','));

export function registerWebhookCommands(program: Command): void {
  const webhook = program.command('webhook').description('Manage webhooks and their deliveries');

  webhook
    .command('create')
    .description('Create a webhook; its signing secret is printed')
    .requiredOption('--account <id>', 'the account whose events it receives')
    .requiredOption('--url <url>', 'where to POST events (http or https)')
    .option('--events <types>', 'comma-separated: message, message.status, session.status, group.updated, …', 'message')
    .option('--scope <scope>', "which chats' message events it receives: direct, group or all", 'direct')
    .action(async (options: { account: string; url: string; events: string; scope: string }, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        const input = { url: options.url, eventTypes: splitEvents(options.events)!, messageScope: options.scope };
        const { webhook: created, secret } = await gateway.webhooks.createWebhook(
          withinAccount(operator, options.account),
          input,
          CLI_ACTOR,
        );
        output.print(
          { ...webhookJson(created), secret },
          `Created webhook ${created.id} → ${created.url} (${created.eventTypes.join(', ')}).\nSigning secret: ${secret}`,
        );
      });
    });

  webhook
    .command('list')
    .description("List an account's webhooks")
    .requiredOption('--account <id>', 'the account')
    .action(async (options: { account: string }, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        await gateway.accounts.getAccount(options.account);
        const webhooks = (await gateway.webhooks.listWebhooks(withinAccount(operator, options.account))).map(webhookJson);
        output.print(
          { webhooks },
          table(
            webhooks.map((row) => ({ ...row, events: row.events.join(',') })),
            ['id', 'url', 'events', 'enabled', 'disabled_reason'],
          ),
        );
      });
    });

  webhook
    .command('update <id>')
    .description("Change a webhook's URL or events, or enable or disable it")
    .option('--url <url>', 'a new URL')
    .option('--events <types>', 'a new comma-separated list of event types')
    .option('--scope <scope>', "which chats' message events it receives: direct, group or all")
    .option('--enable', 'enable it (also after it was disabled for failing)')
    .option('--disable', 'disable it; its deliveries wait until it is enabled again')
    .action(
      async (
        id: string,
        options: { url?: string; events?: string; scope?: string; enable?: boolean; disable?: boolean },
        command: Command,
      ) => {
        await withGateway(command, async (gateway, output, operator) => {
          const enabled = options.enable ? true : options.disable ? false : undefined;
          const updated = await gateway.webhooks.updateWebhook(
            operator,
            id,
            {
              ...(options.url !== undefined && { url: options.url }),
              ...(options.events !== undefined && { eventTypes: splitEvents(options.events)! }),
              ...(options.scope !== undefined && { messageScope: options.scope }),
              ...(enabled !== undefined && { enabled }),
            },
            CLI_ACTOR,
          );
          output.print(
            webhookJson(updated),
            `Updated webhook ${updated.id}: ${updated.enabled ? 'enabled' : 'disabled'}, ${updated.eventTypes.join(', ')}.`,
          );
        });
      },
    );

  webhook
    .command('delete <id>')
    .description('Delete a webhook and its delivery history')
    .action(async (id: string, _options: object, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        const deleted = await gateway.webhooks.deleteWebhook(operator, id, CLI_ACTOR);
        output.print({ ...webhookJson(deleted), deleted: true }, `Deleted webhook ${deleted.id}.`);
      });
    });

  webhook
    .command('rotate-secret <id>')
    .description('Give a webhook a new secret; the old one also signs for 24 hours')
    .action(async (id: string, _options: object, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        const rotated = await gateway.webhooks.rotateSecret(operator, id, CLI_ACTOR);
        output.print(
          { id: rotated.webhook.id, secret: rotated.secret, previous_secret_valid_until: rotated.previousValidUntil.toISOString() },
          `New signing secret for ${rotated.webhook.id}: ${rotated.secret}\nThe old secret also signs until ` +
            `${rotated.previousValidUntil.toISOString()}.`,
        );
      });
    });

  webhook
    .command('deliveries <id>')
    .description("Show a webhook's latest deliveries and their attempts")
    .option('--limit <n>', 'how many deliveries', '50')
    .action(async (id: string, options: { limit: string }, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        const deliveries = (await gateway.webhooks.listDeliveries(operator, id, parseWholeNumber(options.limit, '--limit', 1))).map(
          deliveryJson,
        );
        output.print(
          { deliveries },
          table(deliveries, ['id', 'event_type', 'state', 'attempt_count', 'last_status_code', 'last_error', 'created_at']),
        );
      });
    });

  webhook
    .command('redeliver <deliveryId>')
    .description('Send a delivery again now, whatever its state')
    .action(async (deliveryId: string, _options: object, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        await gateway.webhooks.redeliver(operator, deliveryId, undefined, CLI_ACTOR);
        const delivery = deliveryJson(await gateway.webhooks.getDelivery(operator, deliveryId));
        output.print(delivery, `Delivery ${delivery.id} is queued to be sent again.`);
      });
    });

  webhook
    .command('test <id>')
    .description('Send a test event to a webhook')
    .action(async (id: string, _options: object, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        await gateway.webhooks.sendTestEvent(operator, id, CLI_ACTOR);
        output.print({ webhook_id: id, queued: true }, `A test event is queued for ${id}; see \`wagw webhook deliveries ${id}\`.`);
      });
    });
}
