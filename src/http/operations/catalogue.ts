import type { AnyOperation } from './operation.ts';
import { sendMessage } from './send-message.ts';
import { simulateIncomingMessage } from './simulate-incoming-message.ts';
import { simulateIncomingCall } from './simulate-incoming-call.ts';
import { simulatePollVote } from './simulate-poll-vote.ts';
import { checkNumbers } from './check-numbers.ts';
import { showTyping } from './show-typing.ts';
import { sendReaction } from './send-reaction.ts';
import { editMessage } from './edit-message.ts';
import { revokeMessage } from './revoke-message.ts';
import { markMessageRead } from './mark-message-read.ts';
import { listMessages } from './list-messages.ts';
import { getMessage } from './get-message.ts';
import { listNumbers } from './list-numbers.ts';
import { updateNumber } from './update-number.ts';
import { pauseNumber } from './pause-number.ts';
import { resumeNumber } from './resume-number.ts';
import { simulateRestriction } from './simulate-restriction.ts';
import { putSandboxTemplate } from './sandbox-templates.ts';
import { simulateLinkScan } from './simulate-link-scan.ts';
import { createGroup } from './groups/create-group.ts';
import { listGroups } from './groups/list-groups.ts';
import { getGroup } from './groups/get-group.ts';
import { changeGroupParticipants } from './groups/change-group-participants.ts';
import { updateGroup } from './groups/update-group.ts';
import { getGroupInviteLink } from './groups/get-group-invite-link.ts';
import { revokeGroupInviteLink } from './groups/revoke-group-invite-link.ts';
import { leaveGroup } from './groups/leave-group.ts';
import { linkMedia } from './link-media.ts';
import { listContacts } from './contacts/list-contacts.ts';
import { getContact } from './contacts/get-contact.ts';
import { listChats } from './chats/list-chats.ts';
import {
  archiveChat,
  markChatRead,
  markChatUnread,
  muteChat,
  pinChat,
  unarchiveChat,
  unmuteChat,
  unpinChat,
} from './chats/chat-actions.ts';
import { subscribePresence } from './subscribe-presence.ts';
import { getPresence } from './get-presence.ts';
import { getContactProfile, updateOwnProfile } from './profiles.ts';
import { blockContact, listBlocklist, unblockContact } from './blocklist.ts';
import { getNewChatQuota } from './new-chat-quota.ts';
import { getTemplate, listTemplates } from './templates.ts';
import { updateAccountSettings } from './update-account-settings.ts';
import { cancelMessage } from './cancel-message.ts';
import { clearNumberQueue, getNumberQueue } from './number-queue.ts';
import { getAccountSendPolicy, updateAccountSendPolicy } from './account-send-policy.ts';
import { createWebhook, deleteWebhook, getWebhook, listWebhooks, updateWebhook } from './webhooks/manage-webhooks.ts';
import { listWebhookDeliveries, redeliverWebhookDelivery, rotateWebhookSecret, testWebhook } from './webhooks/webhook-actions.ts';
import { streamWebhookEvents } from './webhooks/stream-webhook-events.ts';

/**
 * The public API's operations, in the order the document lists them. An operation joins the API
 * by its module and one line here; the registry does the rest.
 */
export const publicOperations: readonly AnyOperation[] = [
  sendMessage,
  simulateIncomingMessage,
  simulateRestriction,
  putSandboxTemplate,
  simulateLinkScan,
  simulateIncomingCall,
  simulatePollVote,
  checkNumbers,
  showTyping,
  sendReaction,
  editMessage,
  revokeMessage,
  cancelMessage,
  markMessageRead,
  listMessages,
  getMessage,
  listNumbers,
  updateNumber,
  pauseNumber,
  resumeNumber,
  getNumberQueue,
  clearNumberQueue,
  getAccountSendPolicy,
  updateAccountSendPolicy,
  createGroup,
  listGroups,
  getGroup,
  changeGroupParticipants,
  updateGroup,
  getGroupInviteLink,
  revokeGroupInviteLink,
  leaveGroup,
  linkMedia,
  listContacts,
  getContact,
  listChats,
  archiveChat,
  unarchiveChat,
  pinChat,
  unpinChat,
  muteChat,
  unmuteChat,
  markChatUnread,
  markChatRead,
  subscribePresence,
  getPresence,
  getContactProfile,
  updateOwnProfile,
  blockContact,
  unblockContact,
  listBlocklist,
  getNewChatQuota,
  listTemplates,
  getTemplate,
  updateAccountSettings,
  listWebhooks,
  createWebhook,
  getWebhook,
  updateWebhook,
  deleteWebhook,
  rotateWebhookSecret,
  testWebhook,
  listWebhookDeliveries,
  redeliverWebhookDelivery,
  streamWebhookEvents,
];
