import type { SignInService } from '../accounts/sign-in-service.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';

// Over HTTPS the cookie takes the __Host- prefix, which browsers accept only with Secure, Path=/
// and no Domain: no subdomain or plain-HTTP page can plant or overwrite it.
const SECURE_NAME = '__Host-wagw_session';
const PLAIN_NAME = 'wagw_session';

function isHttps(request: FastifyRequest): boolean {
  return request.protocol === 'https';
}

export function sessionTokenFrom(request: FastifyRequest): string | undefined {
  const token = request.cookies[isHttps(request) ? SECURE_NAME : PLAIN_NAME];
  return token === undefined || token === '' ? undefined : token;
}

function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string, maxAgeMs: number): void {
  const secure = isHttps(request);
  void reply.setCookie(secure ? SECURE_NAME : PLAIN_NAME, token, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure,
    maxAge: Math.floor(maxAgeMs / 1000),
  });
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  const secure = isHttps(request);
  void reply.clearCookie(secure ? SECURE_NAME : PLAIN_NAME, { path: '/', httpOnly: true, sameSite: 'lax', secure });
}

/**
 * Hands the browser a freshly signed-in session. Whatever session it held before is ended, so
 * a sign-in never continues an earlier (possibly planted) session.
 */
export async function startBrowserSession(
  request: FastifyRequest,
  reply: FastifyReply,
  signIn: SignInService,
  token: string,
  maxAgeMs: number,
): Promise<void> {
  const previous = sessionTokenFrom(request);
  if (previous !== undefined) await signIn.signOut(previous);
  setSessionCookie(request, reply, token, maxAgeMs);
}
