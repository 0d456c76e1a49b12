import type { AuditActor } from '../domain/audit.ts';
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { AppError } from '../domain/errors.ts';
import type { Account, User } from '../domain/model.ts';
import { accountScope, operatorScope, type AccountScope, type OperatorScope } from '../domain/tenant-scope.ts';
import { takeNotice } from './notices.ts';

/** Who is signed in, resolved once per request from the session cookie. */
export interface Viewer {
  user: User;
  sessionId: string;
  /** The user's account; null for an operator who belongs to none. */
  account: Account | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    viewer: Viewer | null;
  }
  interface FastifyContextConfig {
    /** The route reads the session without counting as activity (background polling). */
    passiveSession?: boolean;
  }
}

export type NavSection =
  | 'overview'
  | 'numbers'
  | 'chats'
  | 'messages'
  | 'activity'
  | 'keys'
  | 'webhooks'
  | 'team'
  | 'password'
  | 'operator'
  | 'none';

/** What every page's layout needs besides its own content. */
export interface PageContext {
  title: string;
  section: NavSection;
  viewer: Viewer | null;
  csrfToken: string;
  notice: string | undefined;
}

// The CSRF token is bound to the session, so a token from one session is worthless in another.
export function csrfUserInfo(request: FastifyRequest): string {
  return request.viewer?.sessionId ?? 'signed-out';
}

export function pageContext(request: FastifyRequest, reply: FastifyReply, title: string, section: NavSection): PageContext {
  return {
    title,
    section,
    viewer: request.viewer,
    csrfToken: reply.generateCsrf({ userInfo: csrfUserInfo(request) }),
    notice: takeNotice(request, reply),
  };
}

export async function sendPage(reply: FastifyReply, html: JSX.Element, status = 200): Promise<FastifyReply> {
  return reply
    .status(status)
    .type('text/html; charset=utf-8')
    .send(await html);
}

/** The signed-in viewer; guards have run, so its absence is a bug rather than a user error. */
export function viewerOf(request: FastifyRequest): Viewer {
  if (request.viewer === null) throw new AppError('internal_error', 'A dashboard page ran without a signed-in user.');
  return request.viewer;
}

/** The signed-in user as the audit log names an actor, with the address the request came from. */
export function userActor(request: FastifyRequest): AuditActor {
  const { user } = viewerOf(request);
  return { kind: 'user', id: user.id, label: user.email, address: request.ip };
}

/** An account page's account, with the scope that its session grants. */
export interface ScopedAccount extends Account {
  scope: AccountScope;
}

/**
 * The account the viewer works in, for pages that exist only inside an account. Its scope is
 * minted here, from the signed-in session, and is what every read of the page goes through.
 */
export function accountOf(request: FastifyRequest): ScopedAccount {
  const account = viewerOf(request).account;
  if (account === null) throw new AppError('forbidden', 'This page belongs to an account, and you are not a member of one.');
  return { ...account, scope: accountScope(account.id) };
}

/** The operator scope of a console page, minted from an operator's signed-in session only. */
export function operatorScopeOf(request: FastifyRequest): OperatorScope {
  if (!viewerOf(request).user.isOperator) throw new AppError('forbidden', 'This is the operator console; your user is not an operator.');
  return operatorScope();
}

export const requireSignedIn: preHandlerAsyncHookHandler = async (request, reply) => {
  if (request.viewer !== null) return;
  const next = request.method === 'GET' ? `?next=${encodeURIComponent(request.url)}` : '';
  return reply.redirect(`/login${next}`, 303);
};

export const requireAccountMember: preHandlerAsyncHookHandler = async (request, reply) => {
  if (request.viewer === null) return requireSignedIn.call(reply.server, request, reply);
  if (request.viewer.account === null) {
    if (request.viewer.user.isOperator) return reply.redirect('/operator', 303);
    throw new AppError('forbidden', 'You are not a member of any account.');
  }
};

/** Owners and admins manage keys and webhooks; members may look. */
export const requireManager: preHandlerAsyncHookHandler = async (request, reply) => {
  await requireAccountMember.call(reply.server, request, reply);
  if (reply.sent) return reply;
  if (request.viewer === null || !canManage(request.viewer))
    throw new AppError('forbidden', 'Only owners and admins can do this. Ask an owner of your account.');
};

export const requireOwner: preHandlerAsyncHookHandler = async (request, reply) => {
  await requireAccountMember.call(reply.server, request, reply);
  if (reply.sent) return reply;
  if (request.viewer?.user.role !== 'owner') throw new AppError('forbidden', 'Only owners can manage the team.');
};

export const requireOperator: preHandlerAsyncHookHandler = async (request, reply) => {
  if (request.viewer === null) return requireSignedIn.call(reply.server, request, reply);
  if (!request.viewer.user.isOperator) throw new AppError('forbidden', 'This is the operator console; your user is not an operator.');
};

export function canManage(viewer: Viewer): boolean {
  return viewer.user.role === 'owner' || viewer.user.role === 'admin';
}
