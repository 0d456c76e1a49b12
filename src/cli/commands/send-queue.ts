import { CLI_ACTOR } from '../../domain/audit.ts';
import type { Command } from 'commander';
import { AppError } from '../../domain/errors.ts';
import { parseSettingInput, type PolicySetting, type SendPolicyBody } from '../../domain/send-policy.ts';
import { withGateway } from '../context.ts';
import { table } from '../output.ts';

/** `wagw number queue` and `wagw number policy` (docs/send-governor.md). */
export function registerSendQueueCommands(number: Command): void {
  number
    .command('queue <phoneOrId>')
    .description("Show the messages waiting in a number's send queue, with why each waits; --clear cancels them all")
    .option('--limit <count>', 'messages to list', '50')
    .option('--clear', 'cancel every waiting message (their units of quota are given back)')
    .action(async (phoneOrId: string, options: { limit: string; clear?: boolean }, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        const found = await gateway.numbers.findNumber(operator, phoneOrId);
        if (options.clear === true) {
          // The command settles every cancellation itself rather than leave them to a server's runner.
          const { cancelled } = await gateway.sendQueues.clear(found, CLI_ACTOR);
          await gateway.sendQueues.finishClearing(found);
          output.print({ number_id: found.id, cancelled }, `Cancelled ${cancelled} waiting message(s) of ${found.phone}.`);
          return;
        }
        const view = await gateway.sendQueues.view(found, Math.max(1, Math.min(500, Number(options.limit) || 50)), undefined);
        const messages = view.messages.map((message) => ({
          message_id: message.id,
          to: message.toPhone,
          scheduled_for: message.scheduledFor?.toISOString() ?? null,
          wait_reason: message.waitReason,
          expires_at: message.expiresAt?.toISOString() ?? null,
        }));
        const counts =
          Object.entries(view.counts)
            .map(([reason, count]) => `${reason} ${count}`)
            .join(', ') || 'none';
        const policy = view.policy.preset ?? 'custom';
        output.print(
          {
            number_id: found.id,
            phone: found.phone,
            total: view.total,
            counts: view.counts,
            next_scheduled_for: view.nextScheduledFor?.toISOString() ?? null,
            send_policy: view.policy,
            messages,
          },
          `${found.phone}: ${view.total} waiting (${counts}); policy ${policy} from the ${view.policy.source}; next at ${view.nextScheduledFor?.toISOString() ?? '-'}\n${table(messages, ['message_id', 'to', 'scheduled_for', 'wait_reason', 'expires_at'])}`,
        );
      });
    });

  number
    .command('policy <phoneOrId>')
    .description(
      "Show a number's send policy, or set it: --preset off|standard|cautious, --policy '<JSON>' for figures of its own, --inherit to " +
        'follow its account',
    )
    .option('--preset <name>', 'a preset: off, standard or cautious')
    .option('--policy <json>', 'a policy object, as PATCH /numbers/{id} takes it (snake_case fields)')
    .option('--inherit', "drop the number's own policy and follow its account's")
    .action(async (phoneOrId: string, options: { preset?: string; policy?: string; inherit?: boolean }, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        const found = await gateway.numbers.findNumber(operator, phoneOrId);
        const setting = settingOf(options);
        const shown =
          setting === undefined
            ? await gateway.sendQueues.numberPolicy(found)
            : await gateway.sendQueues.setNumberPolicy(found, setting, CLI_ACTOR);
        output.print(
          { number_id: found.id, phone: found.phone, send_policy: shown },
          `${found.phone}: ${shown.preset ?? 'custom'} policy from the ${shown.source}\n${JSON.stringify(shown.policy, null, 2)}`,
        );
      });
    });
}

/** The setting the options ask for; undefined to only show it. */
function settingOf(options: { preset?: string; policy?: string; inherit?: boolean }): PolicySetting | null | undefined {
  const given = [options.preset, options.policy, options.inherit].filter((value) => value !== undefined).length;
  if (given > 1) throw new AppError('invalid_send_policy', 'Give one of --preset, --policy and --inherit.', { field: 'send_policy' });
  if (options.inherit === true) return null;
  if (options.preset !== undefined) return parseSettingInput(options.preset, 'preset');
  if (options.policy === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(options.policy);
  } catch {
    throw new AppError('invalid_send_policy', '--policy must be a JSON object.', { field: 'policy' });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new AppError('invalid_send_policy', '--policy must be a JSON object.', { field: 'policy' });
  return parseSettingInput(parsed as Partial<SendPolicyBody>, 'policy');
}
