import assert from 'node:assert/strict';
import { SYSTEM_ACTOR } from '../../../src/domain/audit.ts';
import { after, before, describe, it } from 'node:test';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import type { Json } from '../../support/json.ts';

/**
 * Every operation of the public API that takes an API key, probed across two accounts: account
 * B's key aimed at account A's objects must be refused with the envelope and leave A untouched,
 * while A's own key gets through (so each probe is known to aim at something real). The list of
 * operations is read from the OpenAPI document the app serves, so a new route without a probe
 * here fails the first test until someone writes down how to attack it.
 */

interface ProbeRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  url: string;
  /** JSON, or a Buffer sent as it is with `contentType`. */
  body?: unknown;
  contentType?: string;
}

/** What the owner's account holds for the probes to aim at. */
interface Owner extends SeededAccount {
  mediaId: string;
  /** A message the owner's number received. */
  messageId: string;
  /** A message the owner's number sent, to edit. */
  sentId: string;
  /** Two more, one for each path of the revocation (a message is revoked once). */
  revocableIds: [string, string];
  /** Scheduled messages, one to cancel through each path. */
  cancellableIds: [string, string];
  /** A group the owner's number made. */
  groupId: string;
  /** Groups the owner's number may leave, one per path. */
  leavableGroupIds: [string, string];
  /** A poll the owner's number sent, to vote on. */
  pollId: string;
  /** A webhook of the owner's, and a delivery of it (a test event). */
  webhookId: string;
  /** An event stream of the account, a webhook made with stream: true. */
  streamId: string;
  deliveryId: string;
  /** Webhooks to delete, one per path. */
  deletableWebhookIds: [string, string];
}

interface Probe {
  /** The request made with whichever key is given, aimed at account A's objects. */
  request(owner: Owner, marker: string): ProbeRequest;
  /**
   * What B's key gets: 404 for an object by id; 403 for a phone of another account. Absent for
   * an operation that names nothing of another account (an upload), whose result must instead
   * stay out of reach of the owner's key.
   */
  refusedWith?: { status: number; error: string };
  /** What the owner's own key gets. */
  succeedsWith: number;
  /** For a listing that names nothing: whether the answer shows anything of the owner's. */
  shows?: (body: Json, owner: Owner) => boolean;
  /** For a setting of the caller's own account (it names nothing): whether the owner's is as it was. */
  ownerUntouched?: (test: TestGateway, owner: Owner) => Promise<boolean>;
}

const sendFromOwnersNumber: Probe = {
  request: (owner, marker) => ({
    method: 'POST',
    url: '',
    body: { from_phone: owner.phones[0], to_phone: '+14155550100', message: marker },
  }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

const receiveOnOwnersNumber: Probe = {
  request: (owner, marker) => ({
    method: 'POST',
    url: '',
    body: { from_phone: '+14155550100', to_phone: owner.phones[0], message: marker },
  }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

const callOwnersNumber: Probe = {
  request: (owner) => ({ method: 'POST', url: '', body: { from_phone: '+14155550100', to_phone: owner.phones[0], rings_for_seconds: 1 } }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

const voteOnOwnersPoll: Probe = {
  request: (owner) => ({
    method: 'POST',
    url: '',
    body: { from_phone: '+14155550100', to_phone: owner.phones[0], message_id: owner.pollId, options: ['yes'] },
  }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

const blockWithOwnersNumber: Probe = {
  request: (owner) => ({ method: 'POST', url: '', body: { from_phone: owner.phones[0], phone: '+14155550199' } }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

const unblockWithOwnersNumber: Probe = {
  request: (owner) => ({
    method: 'DELETE',
    url: `/${encodeURIComponent('+14155550199')}?from_phone=${encodeURIComponent(owner.phones[0]!)}`,
  }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

/** An operation that reads a number's state from WhatsApp, named by from_phone in the query (the blocklist, the new-chat cap). */
const readWithOwnersNumber: Probe = {
  request: (owner) => ({ method: 'GET', url: `?from_phone=${encodeURIComponent(owner.phones[0]!)}` }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

/** A template read through the owner's sandbox number, which rehearses the Cloud API's templates. */
const templatesOfOwnersNumber = (suffix: string): Probe => ({
  request: (owner) => ({ method: 'GET', url: `${suffix}?from_phone=${encodeURIComponent(owner.phones[0]!)}&language=en_US` }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
});

const subscribeWithOwnersNumber: Probe = {
  request: (owner) => ({ method: 'POST', url: '', body: { from_phone: owner.phones[0], to_phone: '+14155550100' } }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

const readProfileWithOwnersNumber: Probe = {
  request: (owner) => ({
    method: 'GET',
    url: `/${encodeURIComponent('+14155550100')}/profile?from_phone=${encodeURIComponent(owner.phones[0]!)}`,
  }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

const setOwnersProfile: Probe = {
  request: (owner, marker) => ({
    method: 'PATCH',
    url: `/${encodeURIComponent(owner.phones[0]!)}/profile`,
    body: { about: marker.slice(0, 139) },
  }),
  refusedWith: { status: 404, error: 'number_not_found' },
  succeedsWith: 200,
};

const downloadOwnersMedia: Probe = {
  request: (owner) => ({ method: 'GET', url: `/${owner.mediaId}` }),
  refusedWith: { status: 404, error: 'media_not_found' },
  succeedsWith: 200,
};

const linkOwnersMedia: Probe = {
  request: (owner) => ({ method: 'POST', url: `/${owner.mediaId}/link`, body: {} }),
  refusedWith: { status: 404, error: 'media_not_found' },
  succeedsWith: 200,
};

const upload: Probe = {
  request: (_owner, marker) => ({ method: 'POST', url: '', body: Buffer.from(marker), contentType: 'text/plain' }),
  succeedsWith: 201,
};

const readOwnersMessage: Probe = {
  request: (owner) => ({ method: 'GET', url: `/${owner.messageId}` }),
  refusedWith: { status: 404, error: 'message_not_found' },
  succeedsWith: 200,
};

const listOwnersNumbersMessages: Probe = {
  request: (owner) => ({ method: 'GET', url: `?phone=${encodeURIComponent(owner.phones[0]!)}` }),
  refusedWith: { status: 404, error: 'number_not_found' },
  succeedsWith: 200,
};

const listNumbers: Probe = {
  request: () => ({ method: 'GET', url: '' }),
  succeedsWith: 200,
  shows: (body, owner) => body.numbers.some((number: { phone: string }) => owner.phones.includes(number.phone)),
};

// The owner turned link previews on (before()); another account reads only its own, still off.
const readSettings: Probe = {
  request: () => ({ method: 'PATCH', url: '', body: {} }),
  succeedsWith: 200,
  shows: (body) => body.link_previews === true,
};

const checkWithOwnersNumber: Probe = {
  request: (owner) => ({ method: 'POST', url: '', body: { from_phone: owner.phones[0], phones: ['+14155550100'] } }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

const typeFromOwnersNumber: Probe = {
  request: (owner) => ({ method: 'POST', url: '', body: { from_phone: owner.phones[0], to_phone: '+14155550100', state: 'paused' } }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

const reactToOwnersMessage: Probe = {
  request: (owner) => ({ method: 'POST', url: '', body: { from_phone: owner.phones[0], message_id: owner.messageId, emoji: '👍' } }),
  refusedWith: { status: 404, error: 'message_not_found' },
  succeedsWith: 200,
};

const editOwnersMessage: Probe = {
  request: (owner, marker) => ({ method: 'POST', url: `/${owner.sentId}/edit`, body: { message: marker } }),
  refusedWith: { status: 404, error: 'message_not_found' },
  succeedsWith: 200,
};

const revokeOwnersMessage = (which: 0 | 1): Probe => ({
  request: (owner) => ({ method: 'POST', url: `/${owner.revocableIds[which]}/revoke` }),
  refusedWith: { status: 404, error: 'message_not_found' },
  succeedsWith: 200,
});

const readOwnersReceivedMessage: Probe = {
  request: (owner) => ({ method: 'POST', url: `/${owner.messageId}/read` }),
  refusedWith: { status: 404, error: 'message_not_found' },
  succeedsWith: 200,
};

const setOwnersNumber: Probe = {
  request: (owner) => ({ method: 'PATCH', url: `/${encodeURIComponent(owner.phones[0]!)}`, body: { auto_read: false } }),
  refusedWith: { status: 404, error: 'number_not_found' },
  succeedsWith: 200,
};

// The owner's second number is the one paused and restricted, so that no other probe meets the pause.
const pauseOwnersNumber: Probe = {
  request: (owner, marker) => ({ method: 'POST', url: `/${encodeURIComponent(owner.phones[1]!)}/pause`, body: { reason: marker } }),
  refusedWith: { status: 404, error: 'number_not_found' },
  succeedsWith: 200,
};

const cancelOwnersMessage = (which: 0 | 1): Probe => ({
  request: (owner) => ({ method: 'POST', url: `/${owner.cancellableIds[which]}/cancel` }),
  refusedWith: { status: 404, error: 'message_not_found' },
  succeedsWith: 200,
});

const readOwnersQueue: Probe = {
  request: (owner) => ({ method: 'GET', url: `/${encodeURIComponent(owner.phones[0]!)}/queue` }),
  refusedWith: { status: 404, error: 'number_not_found' },
  succeedsWith: 200,
};

const resumeOwnersNumber: Probe = {
  request: (owner) => ({ method: 'POST', url: `/${encodeURIComponent(owner.phones[1]!)}/resume` }),
  refusedWith: { status: 404, error: 'number_not_found' },
  succeedsWith: 200,
};

const clearOwnersQueue: Probe = {
  // The owner's second number: clearing the first's queue would take the messages the cancel probes aim at.
  request: (owner) => ({ method: 'DELETE', url: `/${encodeURIComponent(owner.phones[1]!)}/queue` }),
  refusedWith: { status: 404, error: 'number_not_found' },
  succeedsWith: 200,
};

const restrictOwnersNumber: Probe = {
  request: (owner) => ({ method: 'POST', url: '', body: { phone: owner.phones[1], kind: 'rate_overlimit', lift_after_seconds: 1 } }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

/** A rehearsal template added to the owner's sandbox number: another account's key cannot reach the number. */
const addTemplateToOwnersNumber: Probe = {
  request: (owner) => ({
    method: 'POST',
    url: '',
    body: { phone: owner.phones[0], name: 'matrix_probe', language: 'en_US', category: 'UTILITY', body: 'Probe {{1}}' },
  }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

// No linking attempt is under way: the owner's own phone is answered that its code is not current.
const scanOwnersLink: Probe = {
  request: (owner) => ({ method: 'POST', url: '', body: { phone: owner.phones[1], code: 'ABCD1234' } }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 400,
};

/** The owner's account keeps the `standard` policy it was given, whatever another account sets. */
const ownersPolicyKept = async (test: TestGateway, owner: Owner) =>
  (await test.gateway.sendQueues.accountPolicy(owner.accountId)).preset === 'standard';

const readAccountPolicy: Probe = {
  request: () => ({ method: 'GET', url: '' }),
  succeedsWith: 200,
  ownerUntouched: ownersPolicyKept,
};

const setAccountPolicy: Probe = {
  request: () => ({ method: 'PATCH', url: '', body: { send_policy: 'standard' } }),
  succeedsWith: 200,
  ownerUntouched: ownersPolicyKept,
};

const createGroupWithOwnersNumber: Probe = {
  request: (owner) => ({
    method: 'POST',
    url: '',
    body: { from_phone: owner.phones[0], subject: 'probe', participants: ['+14155550100'] },
  }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 201,
};

const listOwnersGroups: Probe = {
  request: (owner) => ({ method: 'GET', url: `?from_phone=${encodeURIComponent(owner.phones[0]!)}` }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

const readOwnersGroup: Probe = {
  request: (owner) => ({ method: 'GET', url: `/${encodeURIComponent(owner.groupId)}?from_phone=${encodeURIComponent(owner.phones[0]!)}` }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

const listOwnersContacts: Probe = {
  request: (owner) => ({ method: 'GET', url: `?from_phone=${encodeURIComponent(owner.phones[0]!)}` }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

const readOwnersContact: Probe = {
  request: (owner) => ({ method: 'GET', url: `/${encodeURIComponent('+14155550100')}?from_phone=${encodeURIComponent(owner.phones[0]!)}` }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

const listOwnersChats: Probe = {
  request: (owner) => ({ method: 'GET', url: `?from_phone=${encodeURIComponent(owner.phones[0]!)}` }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

/** A change of the owner's chat with the customer, by the path's verb. */
const changeOwnersChat = (verb: string): Probe => ({
  request: (owner) => ({ method: 'POST', url: `/${encodeURIComponent('+14155550100')}/${verb}`, body: { from_phone: owner.phones[0] } }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
});

const chatProbes = Object.fromEntries(
  ['archive', 'unarchive', 'pin', 'unpin', 'mute', 'unmute', 'mark_unread', 'mark_read'].flatMap((verb) => [
    [`POST /chats/{chat}/${verb}`, changeOwnersChat(verb)],
    [`POST /api/chats/{chat}/${verb}`, changeOwnersChat(verb)],
  ]),
);

const groupPath = (owner: Owner, suffix = '') => `/${encodeURIComponent(owner.groupId)}${suffix}`;

const changeOwnersGroupParticipants: Probe = {
  request: (owner) => ({
    method: 'POST',
    url: groupPath(owner, '/participants'),
    body: { from_phone: owner.phones[0], action: 'add', participants: ['+14155550101'] },
  }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

const renameOwnersGroup: Probe = {
  request: (owner, marker) => ({
    method: 'PATCH',
    url: groupPath(owner),
    body: { from_phone: owner.phones[0], subject: marker.slice(0, 100) },
  }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

const readOwnersInviteLink: Probe = {
  request: (owner) => ({ method: 'GET', url: groupPath(owner, `/invite_link?from_phone=${encodeURIComponent(owner.phones[0]!)}`) }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

const revokeOwnersInviteLink: Probe = {
  request: (owner) => ({ method: 'POST', url: groupPath(owner, '/invite_link/revoke'), body: { from_phone: owner.phones[0] } }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
};

const leaveOwnersGroup = (which: 0 | 1): Probe => ({
  request: (owner) => ({
    method: 'POST',
    url: `/${encodeURIComponent(owner.leavableGroupIds[which])}/leave`,
    body: { from_phone: owner.phones[0] },
  }),
  refusedWith: { status: 403, error: 'phone_not_owned' },
  succeedsWith: 200,
});

const webhookNotFound = { status: 404, error: 'webhook_not_found' } as const;
const ownersWebhook = (method: ProbeRequest['method'], suffix: string, succeedsWith: number, body?: unknown): Probe => ({
  request: (owner) => ({ method, url: `/${encodeURIComponent(owner.webhookId)}${suffix}`, ...(body !== undefined && { body }) }),
  refusedWith: webhookNotFound,
  succeedsWith,
});
/** The owner's event stream, reached as a plain GET: its own key reads how far it has got. */
const ownersStream: Probe = {
  request: (owner) => ({ method: 'GET', url: `/${encodeURIComponent(owner.streamId)}/stream` }),
  refusedWith: webhookNotFound,
  succeedsWith: 200,
};
const deleteOwnersWebhook = (which: 0 | 1): Probe => ({
  request: (owner) => ({ method: 'DELETE', url: `/${encodeURIComponent(owner.deletableWebhookIds[which])}` }),
  refusedWith: webhookNotFound,
  succeedsWith: 200,
});
const redeliverOwnersDelivery: Probe = {
  request: (owner) => ({ method: 'POST', url: `/${encodeURIComponent(owner.webhookId)}/deliveries/${owner.deliveryId}/redeliver` }),
  refusedWith: webhookNotFound,
  succeedsWith: 202,
};
const listOwnersWebhooks: Probe = {
  request: () => ({ method: 'GET', url: '' }),
  succeedsWith: 200,
  shows: (body, owner) => JSON.stringify(body).includes(owner.webhookId),
};
const createWebhook: Probe = {
  // A public address as a literal, so that the address guard needs no DNS.
  request: () => ({ method: 'POST', url: '', body: { url: 'http://93.184.215.14/hook', events: ['message'] } }),
  succeedsWith: 201,
  ownerUntouched: async (test, owner) =>
    (await test.gateway.webhooks.listWebhooks(accountScope(owner.accountId))).every(
      (webhook) => webhook.url !== 'http://93.184.215.14/hook',
    ),
};

const PROBES: Record<string, Probe> = {
  'GET /webhooks': listOwnersWebhooks,
  'GET /api/webhooks': listOwnersWebhooks,
  'POST /webhooks': createWebhook,
  'POST /api/webhooks': createWebhook,
  'GET /webhooks/{id}': ownersWebhook('GET', '', 200),
  'GET /api/webhooks/{id}': ownersWebhook('GET', '', 200),
  'PATCH /webhooks/{id}': ownersWebhook('PATCH', '', 200, { description: 'probed' }),
  'PATCH /api/webhooks/{id}': ownersWebhook('PATCH', '', 200, { description: 'probed' }),
  'DELETE /webhooks/{id}': deleteOwnersWebhook(0),
  'DELETE /api/webhooks/{id}': deleteOwnersWebhook(1),
  'POST /webhooks/{id}/rotate_secret': ownersWebhook('POST', '/rotate_secret', 200),
  'POST /api/webhooks/{id}/rotate_secret': ownersWebhook('POST', '/rotate_secret', 200),
  'POST /webhooks/{id}/test': ownersWebhook('POST', '/test', 202),
  'POST /api/webhooks/{id}/test': ownersWebhook('POST', '/test', 202),
  'GET /webhooks/{id}/stream': ownersStream,
  'GET /api/webhooks/{id}/stream': ownersStream,
  'GET /webhooks/{id}/deliveries': ownersWebhook('GET', '/deliveries', 200),
  'GET /api/webhooks/{id}/deliveries': ownersWebhook('GET', '/deliveries', 200),
  'POST /webhooks/{id}/deliveries/{deliveryId}/redeliver': redeliverOwnersDelivery,
  'POST /api/webhooks/{id}/deliveries/{deliveryId}/redeliver': redeliverOwnersDelivery,
  'POST /groups/{id}/participants': changeOwnersGroupParticipants,
  'POST /api/groups/{id}/participants': changeOwnersGroupParticipants,
  'PATCH /groups/{id}': renameOwnersGroup,
  'PATCH /api/groups/{id}': renameOwnersGroup,
  'GET /groups/{id}/invite_link': readOwnersInviteLink,
  'GET /api/groups/{id}/invite_link': readOwnersInviteLink,
  'POST /groups/{id}/invite_link/revoke': revokeOwnersInviteLink,
  'POST /api/groups/{id}/invite_link/revoke': revokeOwnersInviteLink,
  'POST /groups/{id}/leave': leaveOwnersGroup(0),
  'POST /api/groups/{id}/leave': leaveOwnersGroup(1),
  'POST /groups': createGroupWithOwnersNumber,
  'POST /api/groups': createGroupWithOwnersNumber,
  ...chatProbes,
  'GET /chats': listOwnersChats,
  'GET /api/chats': listOwnersChats,
  'GET /contacts': listOwnersContacts,
  'GET /api/contacts': listOwnersContacts,
  'GET /contacts/{phone_or_lid}': readOwnersContact,
  'GET /api/contacts/{phone_or_lid}': readOwnersContact,
  'GET /groups': listOwnersGroups,
  'GET /api/groups': listOwnersGroups,
  'GET /groups/{id}': readOwnersGroup,
  'GET /api/groups/{id}': readOwnersGroup,
  'POST /send_reaction': reactToOwnersMessage,
  'POST /api/send_reaction': reactToOwnersMessage,
  'POST /messages/{id}/edit': editOwnersMessage,
  'POST /api/messages/{id}/edit': editOwnersMessage,
  'POST /messages/{id}/revoke': revokeOwnersMessage(0),
  'POST /api/messages/{id}/revoke': revokeOwnersMessage(1),
  'POST /messages/{id}/read': readOwnersReceivedMessage,
  'POST /api/messages/{id}/read': readOwnersReceivedMessage,
  'POST /numbers/{id}/pause': pauseOwnersNumber,
  'POST /api/numbers/{id}/pause': pauseOwnersNumber,
  'POST /numbers/{id}/resume': resumeOwnersNumber,
  'POST /api/numbers/{id}/resume': resumeOwnersNumber,
  'POST /sandbox/restrict': restrictOwnersNumber,
  'POST /api/sandbox/restrict': restrictOwnersNumber,
  'POST /sandbox/templates': addTemplateToOwnersNumber,
  'POST /api/sandbox/templates': addTemplateToOwnersNumber,
  'POST /sandbox/link_scan': scanOwnersLink,
  'POST /api/sandbox/link_scan': scanOwnersLink,
  'POST /messages/{id}/cancel': cancelOwnersMessage(0),
  'POST /api/messages/{id}/cancel': cancelOwnersMessage(1),
  'GET /numbers/{id}/queue': readOwnersQueue,
  'GET /api/numbers/{id}/queue': readOwnersQueue,
  'DELETE /numbers/{id}/queue': clearOwnersQueue,
  'DELETE /api/numbers/{id}/queue': clearOwnersQueue,
  'GET /account/send_policy': readAccountPolicy,
  'GET /api/account/send_policy': readAccountPolicy,
  'PATCH /account/send_policy': setAccountPolicy,
  'PATCH /api/account/send_policy': setAccountPolicy,
  'PATCH /numbers/{id}': setOwnersNumber,
  'PATCH /api/numbers/{id}': setOwnersNumber,
  'POST /typing': typeFromOwnersNumber,
  'POST /api/typing': typeFromOwnersNumber,
  'POST /check_numbers': checkWithOwnersNumber,
  'POST /api/check_numbers': checkWithOwnersNumber,
  'GET /messages': listOwnersNumbersMessages,
  'GET /api/messages': listOwnersNumbersMessages,
  'GET /messages/{id}': readOwnersMessage,
  'GET /api/messages/{id}': readOwnersMessage,
  'GET /numbers': listNumbers,
  'GET /api/numbers': listNumbers,
  'POST /send_message': sendFromOwnersNumber,
  'POST /api/send_message': sendFromOwnersNumber,
  'POST /sandbox/receive': receiveOnOwnersNumber,
  'POST /api/sandbox/receive': receiveOnOwnersNumber,
  'GET /contacts/{phone}/profile': readProfileWithOwnersNumber,
  'GET /api/contacts/{phone}/profile': readProfileWithOwnersNumber,
  'PATCH /numbers/{id}/profile': setOwnersProfile,
  'PATCH /api/numbers/{id}/profile': setOwnersProfile,
  'POST /presence/subscribe': subscribeWithOwnersNumber,
  'POST /api/presence/subscribe': subscribeWithOwnersNumber,
  'GET /presence/{phone_or_lid}': readOwnersContact,
  'GET /api/presence/{phone_or_lid}': readOwnersContact,
  'POST /blocklist': blockWithOwnersNumber,
  'POST /api/blocklist': blockWithOwnersNumber,
  'DELETE /blocklist/{phone}': unblockWithOwnersNumber,
  'DELETE /api/blocklist/{phone}': unblockWithOwnersNumber,
  'GET /blocklist': readWithOwnersNumber,
  'GET /api/blocklist': readWithOwnersNumber,
  'GET /new_chat_quota': readWithOwnersNumber,
  'GET /api/new_chat_quota': readWithOwnersNumber,
  'GET /templates': readWithOwnersNumber,
  'GET /api/templates': readWithOwnersNumber,
  'GET /templates/{name}': templatesOfOwnersNumber('/order_ready'),
  'GET /api/templates/{name}': templatesOfOwnersNumber('/order_ready'),
  'POST /sandbox/call': callOwnersNumber,
  'POST /api/sandbox/call': callOwnersNumber,
  'PATCH /account/settings': readSettings,
  'PATCH /api/account/settings': readSettings,
  'POST /sandbox/poll_vote': voteOnOwnersPoll,
  'POST /api/sandbox/poll_vote': voteOnOwnersPoll,
  'POST /media': upload,
  'POST /api/media': upload,
  'GET /media/{id}': downloadOwnersMedia,
  'GET /api/media/{id}': downloadOwnersMedia,
  'POST /media/{id}/link': linkOwnersMedia,
  'POST /api/media/{id}/link': linkOwnersMedia,
};

async function everyScopeKey(test: TestGateway, accountId: string): Promise<string> {
  return (await test.gateway.apiKeys.createKey({ accountId, name: 'every scope', scopes: ['read', 'send', 'webhooks'] })).plaintext;
}

async function ownersWebhooks(test: TestGateway, accountId: string) {
  const scope = accountScope(accountId);
  const make = async () =>
    (await test.gateway.webhooks.createWebhook(scope, { url: 'http://93.184.215.14/owner', eventTypes: ['call'] })).webhook.id;
  const webhookId = await make();
  await test.gateway.webhooks.sendTestEvent(scope, webhookId);
  const [delivery] = await test.gateway.webhooks.listDeliveries(scope, webhookId);
  const streamId = (await test.gateway.webhooks.createWebhook(scope, { stream: true, eventTypes: ['call'] })).webhook.id;
  return {
    webhookId,
    streamId,
    deliveryId: delivery!.delivery.id,
    deletableWebhookIds: [await make(), await make()] as [string, string],
  };
}

/** The probe's request at the operation's path, with `{id}` and the like filled by the probe's own url part. */
function call(test: TestGateway, operation: string, request: ProbeRequest, apiKey: string) {
  // Everything from the first parameter on is the probe's own: `/webhooks/{id}/deliveries/{deliveryId}/redeliver` too.
  const path = operation.split(' ')[1]!.replace(/\/\{.*$/, '') + request.url;
  const raw = Buffer.isBuffer(request.body);
  return test.inject({
    method: request.method,
    url: path,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(request.body !== undefined && { 'content-type': request.contentType ?? 'application/json' }),
    },
    ...(request.body !== undefined && { payload: raw ? (request.body as Buffer) : JSON.stringify(request.body) }),
  });
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { security?: Array<Record<string, unknown>> }>>;
}

/** The operations that take a bearer API key, as "METHOD /path". */
function keyedOperations(document: OpenApiDocument): string[] {
  return Object.entries(document.paths).flatMap(([pathName, operations]) =>
    Object.entries(operations)
      .filter(([, operation]) => operation.security?.some((requirement) => 'apiKey' in requirement) === true)
      .map(([method]) => `${method.toUpperCase()} ${pathName}`),
  );
}

for (const dialect of dialects) {
  describe(`the public API's authorization matrix (${dialect})`, () => {
    let test: TestGateway;
    let owner: Owner;
    let stranger: SeededAccount;
    let operations: string[];

    before(async () => {
      test = await startTestGateway(dialect);
      const seeded = await seedAccount(test.gateway, { numbers: 2 });
      const media = await test.inject({
        method: 'POST',
        url: '/media',
        headers: { authorization: `Bearer ${seeded.apiKey}`, 'content-type': 'text/plain' },
        payload: "the owner's file",
      });
      const received = await test.post(
        '/sandbox/receive',
        { from_phone: '+14155550100', to_phone: seeded.phones[0], message: "the owner's message" },
        seeded.apiKey,
      );
      const sends = [];
      for (const text of ['sent, to edit', 'sent, to revoke', 'sent, to revoke by /api']) {
        sends.push(
          (
            await test.post('/send_message', { from_phone: seeded.phones[0], to_phone: '+14155550100', message: text }, seeded.apiKey)
          ).json().message_id as string,
        );
      }
      const sendAt = new Date(Date.now() + 86_400_000).toISOString();
      const cancellable: string[] = [];
      for (const text of ['scheduled, to cancel', 'scheduled, to cancel by /api']) {
        cancellable.push(
          (
            await test.post(
              '/send_message',
              { from_phone: seeded.phones[0], to_phone: '+14155550100', message: text, send_at: sendAt },
              seeded.apiKey,
            )
          ).json().message_id as string,
        );
      }
      // The account's policy is what another account must not change; its number's own keeps the probes' sends immediate.
      await test.gateway.sendQueues.setAccountPolicy(seeded.accountId, { preset: 'standard' }, SYSTEM_ACTOR);
      await test.gateway.sendQueues.setNumberPolicy(
        await test.gateway.numbers.findNumber(accountScope(seeded.accountId), seeded.phones[0]!),
        { preset: 'off' },
        SYSTEM_ACTOR,
      );
      const group = await test.post(
        '/groups',
        { from_phone: seeded.phones[0], subject: "the owner's group", participants: ['+14155550100'] },
        seeded.apiKey,
      );
      await test.inject({
        method: 'PATCH',
        url: '/account/settings',
        headers: { authorization: `Bearer ${seeded.apiKey}`, 'content-type': 'application/json' },
        payload: '{"link_previews":true}',
      });
      const poll = await test.post(
        '/send_message',
        { from_phone: seeded.phones[0], to_phone: '+14155550100', poll: { question: "the owner's poll", options: ['yes', 'no'] } },
        seeded.apiKey,
      );
      const leavable: string[] = [];
      for (const subject of ['to leave', 'to leave by /api'])
        leavable.push(
          (await test.post('/groups', { from_phone: seeded.phones[0], subject, participants: ['+14155550100'] }, seeded.apiKey)).json().id,
        );
      owner = {
        ...seeded,
        mediaId: media.json().media_id,
        messageId: received.json().message_id,
        sentId: sends[0]!,
        revocableIds: [sends[1]!, sends[2]!],
        cancellableIds: [cancellable[0]!, cancellable[1]!],
        groupId: group.json().id,
        leavableGroupIds: [leavable[0]!, leavable[1]!],
        pollId: poll.json().message_id,
        ...(await ownersWebhooks(test, seeded.accountId)),
        // Keys of every scope, so that each probe reaches its operation's own checks.
        apiKey: await everyScopeKey(test, seeded.accountId),
      };
      const strangerSeed = await seedAccount(test.gateway);
      stranger = { ...strangerSeed, apiKey: await everyScopeKey(test, strangerSeed.accountId) };
      operations = keyedOperations((await test.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenApiDocument);
    });
    after(() => test?.close());

    it('every keyed operation has a cross-account probe', () => {
      assert.ok(operations.length >= 3, `the document lists keyed operations: ${operations.join(', ')}`);
      const unprobed = operations.filter((operation) => PROBES[operation] === undefined);
      assert.deepEqual(unprobed, [], 'write a probe for each new operation in PROBES');
    });

    it("another account's key is refused on every keyed operation, and the owner's data is untouched", async () => {
      for (const operation of operations) {
        const probe = PROBES[operation]!;
        const marker = `cross-account probe of ${operation}`;
        const response = await call(test, operation, probe.request(owner, marker), stranger.apiKey);
        if (probe.ownerUntouched !== undefined) {
          assert.equal(response.statusCode, probe.succeedsWith, `${operation}: ${response.body}`);
          assert.ok(await probe.ownerUntouched(test, owner), `${operation} changed the owner's account`);
          continue;
        }
        if (probe.refusedWith === undefined && probe.shows !== undefined) {
          // A listing names nothing: it must simply show nothing of the owner's.
          assert.equal(response.statusCode, probe.succeedsWith, `${operation}: ${response.body}`);
          assert.equal(probe.shows(response.json(), owner), false, `${operation} showed the owner's data to another account`);
          assert.equal(
            probe.shows((await call(test, operation, probe.request(owner, marker), owner.apiKey)).json(), owner),
            true,
            `${operation}: the owner sees its own`,
          );
          continue;
        }
        if (probe.refusedWith === undefined) {
          // Nothing of the owner's was named: what the stranger made is the stranger's alone.
          assert.equal(response.statusCode, probe.succeedsWith, `${operation}: ${response.body}`);
          const made = await call(test, 'GET /media/{id}', { method: 'GET', url: `/${response.json().media_id}` }, owner.apiKey);
          assert.equal(made.statusCode, 404, `${operation}: the owner's key reached what another account made`);
          continue;
        }
        assert.equal(response.statusCode, probe.refusedWith.status, `${operation}: ${response.body}`);
        assert.equal(response.json().error, probe.refusedWith.error, operation);
        const page = await test.gateway.history.page(accountScope(owner.accountId), { limit: 100 });
        assert.ok(!page.messages.some((message) => message.text === marker), `${operation} left a trace in the owner's account`);
      }
    });

    it("the owner's own key gets through every probe, so each probe aims at something real", async () => {
      for (const operation of operations) {
        const probe = PROBES[operation]!;
        const response = await call(test, operation, probe.request(owner, `owner's own call to ${operation}`), owner.apiKey);
        assert.equal(response.statusCode, probe.succeedsWith, `${operation}: ${response.body}`);
      }
    });
  });
}
