import type { Command } from 'commander';
import { CLI_ACTOR } from '../../domain/audit.ts';
import { cloudCallbackPath } from '../../domain/cloud-settings.ts';
import { AppError } from '../../domain/errors.ts';
import { withGateway } from '../context.ts';

/**
 * `wagw number cloud`: sets, shows or clears a Cloud API number's settings (docs/cloud-api.md).
 * Meta's ids are options; the access token, app secret and verify token are read from standard
 * input, one a line, so that none of them lands in the shell's history or the process list.
 */
export function registerCloudCommand(numberCommand: Command): void {
  numberCommand
    .command('cloud <phoneOrId>')
    .description(
      "Set a cloud number's Meta ids (--phone-number-id, --business-account-id) with its access token, app secret and verify " +
        'token read from standard input, one a line; --show reads them back (secrets as ***), --clear forgets them',
    )
    .option('--phone-number-id <id>', "Meta's id of the phone number")
    .option('--business-account-id <id>', "Meta's id of the WhatsApp Business Account")
    .option('--show', 'print the settings, the secrets as ***')
    .option('--clear', 'forget the settings: the number sends nothing until they are set again')
    .action(async (phoneOrId: string, options: CloudOptions, command: Command) => {
      const mode = modeOf(options);
      const secrets = mode === 'set' ? await readSecrets() : undefined;
      await withGateway(command, async (gateway, output, operator) => {
        if (mode === 'clear') {
          const number = await gateway.cloudNumbers.clear(operator, phoneOrId, CLI_ACTOR);
          output.print({ number_id: number.id, cleared: true }, `${number.phone} has no Cloud API settings now.`);
          return;
        }
        if (mode === 'show') {
          const { number, settings } = await gateway.cloudNumbers.read(operator, phoneOrId);
          const shown = {
            number_id: number.id,
            phone_number_id: settings?.phoneNumberId ?? null,
            business_account_id: settings?.businessAccountId ?? null,
          };
          output.print(
            shown,
            settings === null
              ? `${number.phone} has no Cloud API settings.`
              : `${number.phone}: phone number id ${settings.phoneNumberId}, WABA ${settings.businessAccountId}.`,
          );
          return;
        }
        const { number, settings } = await gateway.cloudNumbers.set(
          operator,
          phoneOrId,
          { phoneNumberId: options.phoneNumberId ?? '', businessAccountId: options.businessAccountId ?? '', ...secrets! },
          CLI_ACTOR,
        );
        // A session that failed for want of settings starts again on the node that runs it.
        const restarted = await gateway.numberControl.restart({ scope: operator, actor: CLI_ACTOR }, number).then(
          () => true,
          () => false,
        );
        output.print(
          { number_id: number.id, phone_number_id: settings.phoneNumberId, business_account_id: settings.businessAccountId, restarted },
          `${number.phone} is set to Meta's phone number ${settings.phoneNumberId}; give Meta the callback ${cloudCallbackPath(number.id)}.`,
        );
      });
    });
}

interface CloudOptions {
  phoneNumberId?: string;
  businessAccountId?: string;
  show?: boolean;
  clear?: boolean;
}

function modeOf(options: CloudOptions): 'set' | 'show' | 'clear' {
  const setting = options.phoneNumberId !== undefined || options.businessAccountId !== undefined;
  const chosen = [setting, options.show === true, options.clear === true].filter(Boolean).length;
  if (chosen !== 1)
    throw new AppError('invalid_argument', 'Give the ids (--phone-number-id and --business-account-id), --show or --clear.');
  return options.clear === true ? 'clear' : options.show === true ? 'show' : 'set';
}

async function readSecrets(): Promise<{ accessToken: string; appSecret: string; verifyToken: string }> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const [accessToken = '', appSecret = '', verifyToken = ''] = Buffer.concat(chunks)
    .toString('utf8')
    .split(/\r?\n/)
    .map((line) => line.trim());
  return { accessToken, appSecret, verifyToken };
}
