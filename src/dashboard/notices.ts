import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * One-line confirmations shown on the page a form redirects to. The cookie carries only a code
 * from this table, never text, so nothing a user typed can be reflected through it.
 */
const notices = {
  signed_out: 'You are signed out.',
  password_changed: 'Your password is changed. Your other sessions were signed out.',
  key_revoked: 'The key is revoked. Requests with it are refused from now on.',
  webhook_created: 'The webhook is created.',
  webhook_updated: 'The webhook is saved.',
  webhook_deleted: 'The webhook is deleted.',
  webhook_enabled: 'The webhook is enabled.',
  webhook_disabled: 'The webhook is disabled. Its deliveries wait until it is enabled again.',
  test_event_sent: 'A test event is on its way. Its delivery appears in the log below.',
  redelivery_scheduled: 'The delivery is scheduled again.',
  incoming_simulated: 'The simulated message arrived. It is in Messages, and webhooks are notified.',
  call_settings_saved: 'The call settings are saved. They apply to the next call.',
  role_changed: 'The role is changed.',
  member_removed: 'The user is removed from the account.',
  invite_revoked: 'The invite is revoked.',
  account_created: 'The account is created.',
  account_updated: 'The account is saved.',
  user_created: 'The user is created.',
  operator_changed: 'Operator rights are changed.',
  operator_token_revoked: 'The operator token is revoked; every node refuses it from now on.',
  number_added: 'The number is added.',
  number_reassigned: 'The number is moved to the other account.',
  number_removed: 'The number is removed.',
  invite_submitted:
    'Thank you. Sign in with the email and password you just chose. If that email already had an account here, nothing was made and the ' +
    'invite still works: use another email, or sign in with the account you have.',
  link_started: 'Linking started. The QR code (or pairing code) appears below as soon as WhatsApp offers it.',
  link_cancelled: 'Linking is cancelled.',
  session_restarted: 'The session is restarting. Its status below changes as it connects.',
  number_resumed: 'The number is resumed: its sends go to WhatsApp again.',
  send_policy_saved: 'The send policy is saved. Messages already waiting keep their times; the next ones follow it.',
  queue_cleared: 'The queue is cleared: its waiting messages are cancelled, and their units of quota given back.',
  proxy_set: 'The proxy is saved. The number’s connection goes through it; its status below shows whether it connects.',
  proxy_cleared: 'The proxy is cleared. The number connects to WhatsApp directly.',
  cloud_settings_set:
    'The Cloud API settings are saved, the token and secrets sealed. The session starts again with them; give Meta the callback URL below.',
  cloud_settings_cleared: 'The Cloud API settings are cleared. The number sends nothing until they are set again.',
  number_status_set: 'The number’s status is set. Sending through it behaves as that status would.',
} as const;

export type NoticeCode = keyof typeof notices;

const COOKIE = 'wagw_notice';

export function redirectWithNotice(reply: FastifyReply, location: string, code: NoticeCode): FastifyReply {
  void reply.setCookie(COOKIE, code, { path: '/', httpOnly: true, sameSite: 'lax', secure: 'auto', maxAge: 60 });
  return reply.redirect(location, 303);
}

/** The notice waiting for this page, consumed so that it shows once. */
export function takeNotice(request: FastifyRequest, reply: FastifyReply): string | undefined {
  const code = request.cookies[COOKIE];
  if (code === undefined) return undefined;
  void reply.clearCookie(COOKIE, { path: '/' });
  return Object.hasOwn(notices, code) ? notices[code as NoticeCode] : undefined;
}
