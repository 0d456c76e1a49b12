import type { Command } from 'commander';
import { AppError } from '../../domain/errors.ts';
import { endsLinking, type LinkSession, type LinkUpdate } from '../../engines/engine.ts';
import { withGateway } from '../context.ts';
import type { Output } from '../output.ts';

export function registerLinkCommand(numberCommand: Command): void {
  numberCommand
    .command('link <phoneOrId>')
    .description('Link a real WhatsApp number: shows a QR to scan (or a pairing code) until the phone is linked')
    .option('--pairing-code', 'print an 8-character code to type on the phone instead of a QR')
    .action(async (phoneOrId: string, options: { pairingCode?: boolean }, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        const number = await gateway.numbers.findNumber(operator, phoneOrId);
        // The session that links must hold the number's lease: this command takes it for as long
        // as it runs, and gives it back so that a node resumes the linked session at once.
        await gateway.keeper.startPinned([number.id]);
        if (gateway.keeper.leaseOf(number.id) === undefined) {
          await gateway.keeper.stop();
          throw new AppError(
            'invalid_argument',
            `${number.phone} is served by a running node; link it from the operator console (any node), which links on that node.`,
          );
        }
        const session = await gateway.supervisor.link(number).catch(async (error: unknown) => {
          await gateway.keeper.stop();
          throw error;
        });
        try {
          const final = await followLink(session, options.pairingCode === true, output);
          if (final.status !== 'connected') {
            throw new AppError('link_failed', `${number.phone} was not linked: ${final.reason ?? final.status}.`, { status: final.status });
          }
          output.print(
            { id: number.id, phone: number.phone, status: final.status },
            `Linked: ${number.phone} is connected. A running gateway picks it up within seconds.`,
          );
        } finally {
          await session.stop();
          await gateway.keeper.stop();
        }
      });
    });
}

/** Shows each QR (or the pairing code) as it comes, until linking succeeds or ends. */
function followLink(session: LinkSession, usePairingCode: boolean, output: Output): Promise<LinkUpdate> {
  return new Promise((resolve, reject) => {
    let codeRequested = false;
    const unsubscribe = session.onUpdate((update) => {
      if (update.qr !== undefined && !usePairingCode) void showQr(update.qr, output);
      if (update.qr !== undefined && usePairingCode && !codeRequested) {
        codeRequested = true;
        session
          .requestPairingCode()
          .then(
            (code) =>
              notice(
                output,
                `Pairing code: ${code.slice(0, 4)}-${code.slice(4)}\nOn the phone: WhatsApp → Linked devices → Link a device → Link with ` +
                  `phone number instead.`,
              ),
            reject,
          );
      }
      if (update.status === 'connected' || endsLinking(update.status)) {
        unsubscribe();
        resolve(update);
      }
    });
  });
}

async function showQr(qr: string, output: Output): Promise<void> {
  // Loaded when a QR is drawn: the other commands never need it.
  const { default: QRCode } = await import('qrcode');
  const drawing = await QRCode.toString(qr, { type: 'terminal', small: true });
  notice(output, `${drawing}\nScan with WhatsApp on the phone: Linked devices → Link a device. The code changes every 20 seconds.`);
}

// With --json, stdout carries only the final JSON object; the QR and hints go to stderr.
function notice(output: Output, text: string): void {
  (output.json ? process.stderr : process.stdout).write(`${text}\n`);
}
