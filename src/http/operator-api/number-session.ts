import QRCode from 'qrcode';
import { AppError } from '../../domain/errors.ts';
import type { AuditActor } from '../../domain/audit.ts';
import { engineKinds, type WhatsAppNumber } from '../../domain/model.ts';
import type { OperatorScope } from '../../domain/tenant-scope.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import type { LinkAttempt } from '../../messaging/number-linking.ts';
import { ok } from '../operations/operation.ts';
import { defineOperatorOperation } from './operator-operation.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'numbers' | 'numberControl' | 'store'>;

// A number's WhatsApp session over the operator API (docs/operator-api.md, ADR 0064): link it by
// QR or pairing code, read where it stands, restart it, log it out. Each runs on the node that
// serves the number, from any node, through the owner dispatch (operations/number-control.ts), as
// the console's buttons do; each change is an audit row naming the token.

/** The longest a read of the session waits for a new QR or the attempt's end. */
const MAX_WAIT_SECONDS = 50;
/** How often a waiting read looks again; the attempt lives on the owner, maybe another node. */
const WAIT_POLL_MS = 250;

const linkSchema = {
  type: ['object', 'null'],
  required: ['method', 'status', 'reason', 'qr', 'qr_png', 'qr_version', 'pairing_code', 'active', 'started_at'],
  additionalProperties: false,
  description: 'The latest linking attempt started since the owning node started; null when there is none.',
  properties: {
    method: { type: 'string', enum: ['qr', 'pairing_code'] },
    status: { type: 'string', description: 'connecting while the phone has not answered; then how it ended (connected, link_expired, …).' },
    reason: { type: ['string', 'null'] },
    qr: { type: ['string', 'null'], description: 'The QR to show now, as text; replaced about every 20 s; null once the attempt ended.' },
    qr_png: { type: ['string', 'null'], description: 'The same QR as a PNG image, a data: URL (data:image/png;base64,…).' },
    qr_version: { type: 'integer', description: 'Counts the QRs offered: a new value is a new QR.' },
    pairing_code: { type: ['string', 'null'], description: 'The 8 characters to type on the phone, for method pairing_code.' },
    active: { type: 'boolean', description: 'False once the attempt ended (linked, expired, cancelled, failed).' },
    started_at: { type: 'string', format: 'date-time' },
  },
} as const;

const sessionSchema = {
  type: 'object',
  required: ['number_id', 'account_id', 'phone', 'engine', 'status', 'status_reason', 'link'],
  additionalProperties: false,
  properties: {
    number_id: { type: 'string' },
    account_id: { type: 'string' },
    phone: { type: 'string' },
    engine: { type: 'string', enum: engineKinds },
    status: { type: 'string', description: "The session's status as every node sees it (connected, logged_out, …)." },
    status_reason: { type: ['string', 'null'] },
    link: linkSchema,
  },
} as const;

const numberParams = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: { id: { type: 'string', maxLength: 64, description: 'The number: its id (num_…) or its phone in E.164.' } },
} as const;

const SESSION_ERRORS = ['number_not_found', 'number_not_connected'] as const;

async function presentLink(attempt: LinkAttempt | undefined) {
  if (attempt === undefined) return null;
  return {
    method: attempt.method,
    status: attempt.status,
    reason: attempt.reason,
    qr: attempt.qr,
    qr_png: attempt.qr === null ? null : await QRCode.toDataURL(attempt.qr, { margin: 2, errorCorrectionLevel: 'M' }),
    qr_version: attempt.qrVersion,
    pairing_code: attempt.pairingCode,
    active: attempt.active,
    started_at: attempt.startedAt.toISOString(),
  };
}

/** The session as it stands: the number read again (its status is every node's), and the owner's attempt. */
async function presentSession(gateway: Services, scope: OperatorScope, number: WhatsAppNumber, attempt?: LinkAttempt) {
  const current = await gateway.numbers.findNumber(scope, number.id);
  return {
    number_id: current.id,
    account_id: current.accountId,
    phone: current.phone,
    engine: current.engine,
    status: current.status,
    status_reason: current.statusReason,
    link: await presentLink(attempt ?? (await gateway.numberControl.current(scope, current))),
  };
}

/**
 * The session's refusals of an action, as the operator API names them: the supervisor says
 * invalid_argument, as the CLI and console take it, for a session not in a state for the action.
 */
function refusedBySession(error: unknown): never {
  if (error instanceof AppError && error.code === 'invalid_argument') throw new AppError('session_action_refused', error.message);
  throw error;
}

const getSession = defineOperatorOperation({
  params: numberParams,
  query: {
    type: 'object',
    additionalProperties: false,
    properties: {
      qr_version_after: {
        type: 'integer',
        minimum: 0,
        description: 'Wait (a long-poll) until the QR offered is newer than this qr_version, or the attempt ends, or wait_seconds pass.',
      },
      wait_seconds: {
        type: 'integer',
        minimum: 0,
        maximum: MAX_WAIT_SECONDS,
        default: 25,
        description: `How long the long-poll waits at most (0 to ${MAX_WAIT_SECONDS} s); only with qr_version_after.`,
      },
    },
  },
})({
  method: 'GET',
  path: '/admin/numbers/:id/session',
  operationId: 'getNumberSession',
  summary: "A number's session, and its linking attempt",
  description:
    "The session's status and the current linking attempt: its QR as text and as a PNG, its pairing code. With qr_version_after it " +
    'is a long-poll: it answers once a newer QR is offered (WhatsApp replaces it about every 20 s) or the attempt ends, or after ' +
    'wait_seconds with the same state. Served by the node that runs the number, from any node.',
  answers: { 200: sessionSchema },
  errors: SESSION_ERRORS,
  handle: async ({ scope, params, query }, gateway) => {
    const number = await gateway.numbers.findNumber(scope, params.id);
    let attempt = await gateway.numberControl.current(scope, number);
    if (query.qr_version_after !== undefined) {
      const deadline = Date.now() + (query.wait_seconds ?? 25) * 1000;
      const after = query.qr_version_after;
      while (attempt?.active === true && attempt.qrVersion <= after && Date.now() + WAIT_POLL_MS <= deadline) {
        await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
        attempt = await gateway.numberControl.current(scope, number);
      }
    }
    return ok(await presentSession(gateway, scope, number, attempt));
  },
});

const startLink = defineOperatorOperation({
  params: numberParams,
  body: {
    type: 'object',
    required: ['method'],
    additionalProperties: false,
    properties: {
      method: {
        type: 'string',
        enum: ['qr', 'pairing_code'],
        description: "qr: a QR to scan with the phone; pairing_code: 8 characters to type on the phone, for the number's own phone.",
      },
    },
  },
})({
  method: 'POST',
  path: '/admin/numbers/:id/session/link',
  operationId: 'startNumberLink',
  summary: 'Link a number to its phone, by QR or pairing code',
  description:
    'Starts linking, ending any attempt under way: the session leaves WhatsApp until the phone scans the QR or types the code. Read ' +
    'the QR or code with GET /admin/numbers/{id}/session (a long-poll with qr_version_after). A sandbox number links as a real one ' +
    'does; its phone scans with POST /sandbox/link_scan. An audit row names the token.',
  answers: { 200: sessionSchema },
  errors: [...SESSION_ERRORS, 'session_action_refused'],
  handle: async ({ scope, params, body, actor }, gateway) => {
    const number = await gateway.numbers.findNumber(scope, params.id);
    // A sandbox number links too, as a rehearsal (ADR 0064); the console and the CLI refuse it.
    const attempt = await gateway.numberControl.start({ scope, actor }, number, body.method, true).catch(refusedBySession);
    return ok(await presentSession(gateway, scope, number, attempt));
  },
});

/** The session actions without a body: each run by the owner, each an audit row. */
function sessionAction(options: {
  path: `/admin/numbers/:id/session/${string}`;
  operationId: string;
  summary: string;
  description: string;
  run(gateway: Services, caller: { scope: OperatorScope; actor: AuditActor }, number: WhatsAppNumber): Promise<void>;
}) {
  return defineOperatorOperation({
    params: numberParams,
    body: { type: 'object', additionalProperties: false, properties: {} },
  })({
    method: 'POST',
    path: options.path,
    operationId: options.operationId,
    summary: options.summary,
    description: `${options.description} Answers the session as it stands; an audit row names the token.`,
    answers: { 200: sessionSchema },
    errors: [...SESSION_ERRORS, 'session_action_refused'],
    handle: async ({ scope, params, actor }, gateway) => {
      const number = await gateway.numbers.findNumber(scope, params.id);
      await options.run(gateway, { scope, actor }, number).catch(refusedBySession);
      return ok(await presentSession(gateway, scope, number));
    },
  });
}

const cancelLink = sessionAction({
  path: '/admin/numbers/:id/session/link/cancel',
  operationId: 'cancelNumberLink',
  summary: 'Cancel linking',
  description: 'Ends the attempt under way, if any; the session stays off WhatsApp until it is linked or restarted.',
  run: (gateway, caller, number) => gateway.numberControl.cancel(caller, number),
});

const restartSession = sessionAction({
  path: '/admin/numbers/:id/session/restart',
  operationId: 'restartNumberSession',
  summary: "Restart a number's session",
  description:
    'Ends the session and starts it again, as `wagw number restart` does: for a session that failed, is in conflict with another ' +
    'device, or waits out a backoff. Any other status is refused (409 session_action_refused): a logged-out number is linked instead.',
  run: (gateway, caller, number) => gateway.numberControl.restart(caller, number),
});

const logoutSession = sessionAction({
  path: '/admin/numbers/:id/session/logout',
  operationId: 'logoutNumberSession',
  summary: "Log a number's phone out",
  description:
    'Unlinks the phone, as "Log out" on it does: the session ends as logged_out (a session.status event says so), its keys are ' +
    'forgotten, and sends are refused until it is linked again.',
  run: (gateway, caller, number) => gateway.numberControl.logout(caller, number),
});

export const numberSessionOperations = [getSession, startLink, cancelLink, restartSession, logoutSession];
