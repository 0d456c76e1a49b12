import type { WhatsAppNumber } from '../../domain/model.ts';
import type { OperatorScope } from '../../domain/tenant-scope.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import type { LinkAttempt, LinkMethod } from '../../messaging/number-linking.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'numberControl' | 'supervisor'>;

/** What the console's link panel shows, and what its poll answers, for one number. */
export interface LinkPanelView {
  numberId: string;
  /** False for engines that connect without linking, such as the sandbox. */
  links: boolean;
  canRestart: boolean;
  attempt: LinkStateView | undefined;
  stateUrl: string;
  qrUrl: string;
}

/** One attempt's state: the JSON the number page polls, and the first render of the panel. */
export interface LinkStateView {
  active: boolean;
  method: LinkMethod;
  status: string;
  reason: string | null;
  /** 0 until the first QR; the page fetches the QR image again whenever this changes. */
  qr_version: number;
  pairing_code: string | null;
  /** One sentence on where linking stands, shown above the QR. */
  message: string;
}

/**
 * The number page's linking panel. The attempt is the owner's, wherever it was started: on a
 * cluster it lives on the node serving the number, and this node asks it. If that node cannot be
 * asked, the panel shows no attempt; the page's poll of link.json picks it up.
 */
export async function presentLinkPanel(gateway: Services, operator: OperatorScope, number: WhatsAppNumber): Promise<LinkPanelView> {
  const base = `/operator/numbers/${encodeURIComponent(number.id)}`;
  const links = gateway.supervisor.links(number);
  const attempt = links ? await gateway.numberControl.current(operator, number).catch(() => undefined) : undefined;
  return {
    numberId: number.id,
    links,
    canRestart: gateway.supervisor.restartable(number) && attempt?.active !== true,
    attempt: attempt === undefined ? undefined : presentLinkState(attempt),
    stateUrl: `${base}/link.json`,
    qrUrl: `${base}/link-qr.svg`,
  };
}

export function presentLinkState(attempt: LinkAttempt): LinkStateView {
  const qrVersion = attempt.qr === null ? 0 : attempt.qrVersion;
  return {
    active: attempt.active,
    method: attempt.method,
    status: attempt.status,
    reason: attempt.reason,
    qr_version: qrVersion,
    pairing_code: attempt.pairingCode === null ? null : formatPairingCode(attempt.pairingCode),
    message: describeAttempt(attempt, qrVersion),
  };
}

function describeAttempt(attempt: LinkAttempt, qrVersion: number): string {
  if (attempt.active && attempt.method === 'pairing_code') {
    return attempt.pairingCode === null ? 'Waiting for WhatsApp to offer a pairing code…' : 'Type this code on the phone:';
  }
  if (attempt.active) return qrVersion === 0 ? 'Waiting for WhatsApp to offer a QR code…' : 'Scan this QR code with the phone:';
  if (attempt.status === 'connected') return 'Linked: the number is connected.';
  const reason = attempt.reason === null ? '' : `: ${attempt.reason}`;
  return `Linking ended (${attempt.status.replace(/_/g, ' ')})${reason}. Start again when ready.`;
}

/** "WAGW2345" as the phone shows it: "WAGW-2345". */
function formatPairingCode(code: string): string {
  return code.length === 8 ? `${code.slice(0, 4)}-${code.slice(4)}` : code;
}
