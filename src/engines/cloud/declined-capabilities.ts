import { capabilityDeclined } from '../capability-declined.ts';

/**
 * The capabilities of the session port that Meta's Cloud API does not offer, each declined with
 * a 422 capability_not_supported naming the engine (docs/cloud-api.md has the side-by-side
 * table). Kept apart from the engine so that what it does and what it cannot do read separately.
 */
export function declinedCapabilities() {
  const decline = (capability: string, why: string) => async (): Promise<never> => {
    throw capabilityDeclined('cloud', capability, why);
  };
  const noGroups = (capability: string) => decline(capability, 'act on groups: the Cloud API has no groups');
  return class DeclinedByCloud {
    readonly modifyChat = decline('modify_chat', 'archive, pin, mute or mark chats: the Cloud API has no chat list');
    readonly checkNumbers = decline('check_numbers', 'check whether phones use WhatsApp: Meta has no such lookup');
    readonly createGroup = noGroups('create_group');
    readonly listGroups = noGroups('list_groups');
    readonly groupInfo = noGroups('group_info');
    readonly updateParticipants = noGroups('update_participants');
    readonly updateGroupSettings = noGroups('update_group_settings');
    readonly inviteCode = noGroups('invite_code');
    readonly leaveGroup = noGroups('leave_group');
    readonly subscribePresence = decline('subscribe_presence', "follow a contact's presence: the Cloud API does not report it");
    readonly setOnline = decline('set_online', 'show the number online: the Cloud API has no presence');
    readonly contactProfile = decline('contact_profile', "read a contact's profile: the Cloud API does not give it");
    readonly updateProfile = decline('update_profile', "change the profile here: it is set in Meta's WhatsApp Manager");
    readonly updateBlock = decline('update_block', 'block or unblock contacts through the gateway yet');
    readonly blocklist = decline('blocklist', 'list blocked contacts through the gateway yet');
    readonly rejectCall = decline('reject_call', 'reject calls: the Cloud API does not ring');
  };
}
