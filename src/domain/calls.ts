/**
 * What became of a call to one of our numbers, as a `call` event tells it (ADR 0033): it rang
 * (`offered`), rang out unanswered (`missed`), was answered or rejected on one of the number's
 * devices (or rejected by the gateway), or the caller hung up (`ended`).
 */
export type CallStatus = 'offered' | 'missed' | 'accepted' | 'rejected' | 'ended';

/** The longest text a rejected caller may be sent; a message's own limit applies too. */
export const CALL_REPLY_TEXT_MAX_LENGTH = 1_000;
