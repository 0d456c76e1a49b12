import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import QRCode from 'qrcode';
import { AppError } from '../../domain/errors.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';
import { operatorScopeOf, userActor } from '../context.ts';
import type { LinkMethod } from '../../messaging/number-linking.ts';
import { attempt, formText } from '../forms.ts';
import { redirectWithNotice } from '../notices.ts';
import { presentLinkState } from '../presenters/number-linking.ts';
import type { NumberParams } from './operator-numbers.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'numbers' | 'numberControl'>;

type NumberRequest = FastifyRequest<{ Params: NumberParams }>;
type RenderNumber = (request: NumberRequest, reply: FastifyReply, error?: AppError) => Promise<FastifyReply>;

const LINK_METHODS: readonly LinkMethod[] = ['qr', 'pairing_code'];

/**
 * Linking a real number from its console page: start (QR or pairing code), the state the page
 * polls, the QR as an SVG image, cancel, and restarting a session that gave up.
 */
/** The signed-in operator, acting in the console. */
export function operatorCallerOf(request: FastifyRequest) {
  return { scope: operatorScopeOf(request), actor: userActor(request) };
}

export function registerLinkRoutes(app: FastifyInstance, gateway: Services, renderNumber: RenderNumber): void {
  const numberPage = (number: { id: string }) => `/operator/numbers/${encodeURIComponent(number.id)}`;

  app.post<{ Params: NumberParams }>('/operator/numbers/:numberId/link', async (request, reply) => {
    const number = await gateway.numbers.findNumber(operatorScopeOf(request), request.params.numberId);
    const method = formText(request.body, 'method') as LinkMethod;
    const result = await attempt(async () => {
      if (!LINK_METHODS.includes(method)) throw new AppError('invalid_argument', 'Choose to link with a QR code or with a pairing code.');
      return gateway.numberControl.start(operatorCallerOf(request), number, method);
    });
    if (!result.ok) return renderNumber(request, reply, result.error);
    return redirectWithNotice(reply, `${numberPage(number)}#link-panel`, 'link_started');
  });

  app.post<{ Params: NumberParams }>('/operator/numbers/:numberId/link/cancel', async (request, reply) => {
    const number = await gateway.numbers.findNumber(operatorScopeOf(request), request.params.numberId);
    await gateway.numberControl.cancel(operatorCallerOf(request), number);
    return redirectWithNotice(reply, numberPage(number), 'link_cancelled');
  });

  app.post<{ Params: NumberParams }>('/operator/numbers/:numberId/restart', async (request, reply) => {
    const number = await gateway.numbers.findNumber(operatorScopeOf(request), request.params.numberId);
    const result = await attempt(() => gateway.numberControl.restart(operatorCallerOf(request), number));
    if (!result.ok) return renderNumber(request, reply, result.error);
    return redirectWithNotice(reply, numberPage(number), 'session_restarted');
  });

  // Polled every two seconds while the QR is on screen; an operator waiting to scan is not
  // "activity" any more than the status poll is.
  app.get<{ Params: NumberParams }>(
    '/operator/numbers/:numberId/link.json',
    { config: { passiveSession: true } },
    async (request, reply) => {
      const number = await gateway.numbers.findNumber(operatorScopeOf(request), request.params.numberId);
      const current = await gateway.numberControl.current(operatorScopeOf(request), number);
      void reply.header('cache-control', 'no-store');
      return { number_status: number.status, attempt: current === undefined ? null : presentLinkState(current) };
    },
  );

  app.get<{ Params: NumberParams }>(
    '/operator/numbers/:numberId/link-qr.svg',
    { config: { passiveSession: true } },
    async (request, reply) => {
      const number = await gateway.numbers.findNumber(operatorScopeOf(request), request.params.numberId);
      const qr = (await gateway.numberControl.current(operatorScopeOf(request), number))?.qr ?? null;
      if (qr === null) throw new AppError('not_found', 'There is no QR code to show: start linking first, or the attempt has ended.');
      const svg = await QRCode.toString(qr, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' });
      // The QR grants access to the WhatsApp account while it is valid, so no cache may keep it.
      return reply.header('cache-control', 'no-store').type('image/svg+xml').send(svg);
    },
  );
}
