/**
 * Opens a WhatsApp poll vote with Baileys' own means: the vote is AES-GCM encrypted under a key
 * derived from the poll's secret and the jids of the poll's creator and of the voter, and names
 * its options by the SHA-256 of their text. Pure, so it is tested with votes Baileys encrypts.
 */
import { decryptPollVote, getAggregateVotesInPollMessage } from 'baileys';
import type { proto } from 'baileys';

export interface PollToOpen {
  pollEngineId: string;
  /** The poll's secret, base64. */
  secret: string;
  options: readonly string[];
}

/**
 * The options a vote chose, or undefined when no pair of the candidate jids opens it (a vote
 * on another poll, or one whose secret we never had). The jids are tried in turn because a vote
 * does not say whether its writer named the people by phone or by LID; the cipher is
 * authenticated, so a wrong pair fails rather than reading as other options.
 */
export function openPollVote(
  vote: proto.Message.IPollEncValue,
  poll: PollToOpen,
  creatorJids: readonly string[],
  voterJids: readonly string[],
): string[] | undefined {
  const pollEncKey = Buffer.from(poll.secret, 'base64');
  for (const pollCreatorJid of creatorJids) {
    for (const voterJid of voterJids) {
      const opened = tryDecrypt(vote, { pollCreatorJid, pollMsgId: poll.pollEngineId, pollEncKey, voterJid });
      if (opened !== undefined) return chosenOptions(opened, poll.options, voterJid);
    }
  }
  return undefined;
}

function tryDecrypt(
  vote: proto.Message.IPollEncValue,
  context: Parameters<typeof decryptPollVote>[1],
): proto.Message.PollVoteMessage | undefined {
  try {
    return decryptPollVote(vote, context);
  } catch {
    return undefined;
  }
}

/** The chosen options by name, through Baileys' aggregation of one vote, in the poll's order. */
function chosenOptions(vote: proto.Message.PollVoteMessage, options: readonly string[], voterJid: string): string[] {
  const aggregated = getAggregateVotesInPollMessage({
    message: { pollCreationMessage: { options: options.map((optionName) => ({ optionName })) } },
    pollUpdates: [{ pollUpdateMessageKey: { remoteJid: voterJid, fromMe: false, id: 'vote' }, vote }],
  });
  const chosen = new Set(aggregated.filter((entry) => entry.voters.length > 0).map((entry) => entry.name));
  return options.filter((option) => chosen.has(option));
}
