import type { Command } from 'commander';
import { CLI_ACTOR } from '../../domain/audit.ts';
import { AppError } from '../../domain/errors.ts';
import { withGateway } from '../context.ts';
import { numberJson } from '../output.ts';

/**
 * `wagw number proxy`: sets or clears the proxy a number's WhatsApp connection goes through
 * (ADR 0063). A URL with a password on the command line stays in the shell's history and the
 * process list, so `-` reads it from standard input instead.
 */
export function registerProxyCommand(numberCommand: Command): void {
  numberCommand
    .command('proxy <phoneOrId> [url]')
    .description(
      "Send a number's WhatsApp connection through an HTTP(S) or SOCKS5 proxy (scheme://[user:password@]host:port; - reads it " +
        'from standard input), or connect it directly again with --clear; a connected or failed session reconnects through it',
    )
    .option('--clear', 'remove the proxy: the number connects directly')
    .action(async (phoneOrId: string, url: string | undefined, options: { clear?: boolean }, command: Command) => {
      if ((url === undefined) === (options.clear !== true))
        throw new AppError('invalid_argument', 'Give the proxy URL (or - to read it from standard input), or --clear, not both.');
      const proxyUrl = url === '-' ? await readStandardInput() : (url ?? null);
      await withGateway(command, async (gateway, output, operator) => {
        const updated = await gateway.numbers.setProxy(operator, phoneOrId, proxyUrl, CLI_ACTOR);
        // Stored either way: a session that no node runs now reads it when it next connects.
        const reconnected = await gateway.numberControl.reconnect(operator, updated).catch(() => false);
        const where = updated.proxy === null ? 'directly' : `through ${updated.proxy}`;
        output.print(
          { ...numberJson(updated), reconnected },
          `${updated.phone} connects to WhatsApp ${where}${reconnected ? '; its session reconnected' : ', from its next connection'}.`,
        );
      });
    });
}

async function readStandardInput(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}
