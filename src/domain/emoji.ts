/**
 * A pictograph as people type it, which may lack the emoji-style selector (U+FE0F, as "❤" for
 * "❤️") or carry a skin tone. Extended_Pictographic also covers the code points Unicode keeps for
 * future emoji, so a reaction newer than this runtime's emoji data is still taken.
 */
const PICTOGRAPH = String.raw`\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier})?`;

/**
 * Exactly one emoji, as Unicode's emoji rules define it (UTS #51):
 * - any sequence Unicode recommends for general interchange (`RGI_Emoji`: skin tones, ZWJ
 *   sequences, flags, subdivision flags, keycaps of 0-9, # and *);
 * - a keycap of 0-9, # or * typed without its selector;
 * - one pictograph, or a ZWJ sequence of up to four (as many as the longest recommended ones
 *   join), each with an optional selector or skin tone.
 * Nothing else: no keycap on a letter, no bare combining mark, no emoji trailed by marks.
 */
const ONE_EMOJI = new RegExp(String.raw`^(?:\p{RGI_Emoji}|[0-9#*]\u20E3|${PICTOGRAPH}(?:\u200D${PICTOGRAPH}){0,3})$`, 'v');

export function isOneEmoji(text: string): boolean {
  return ONE_EMOJI.test(text);
}
