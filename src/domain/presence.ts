/**
 * What a contact shows of itself (ADR 0033): online or not, and in a chat, typing, recording a
 * voice note, or neither any more. WhatsApp tells it only to numbers that subscribed.
 */
export type ContactPresence = 'available' | 'unavailable' | 'composing' | 'recording' | 'paused';
const contactPresences: readonly ContactPresence[] = ['available', 'unavailable', 'composing', 'recording', 'paused'];

export function isContactPresence(value: string): value is ContactPresence {
  return (contactPresences as readonly string[]).includes(value);
}
