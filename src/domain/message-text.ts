import { AppError } from './errors.ts';
import { isStorableText } from './storable-text.ts';

/**
 * Length is counted in Unicode code points, which is what a person counts as characters;
 * UTF-16 units would make an emoji count twice.
 */
export function codePointLength(text: string): number {
  let length = 0;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    // A high surrogate followed by a low one is a single code point.
    if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) index++;
    }
    length++;
  }
  return length;
}

/** `allowEmpty` for a caption, which may be empty; a text message may not. */
export function assertSendableText(text: string, maxLength: number, allowEmpty = false): void {
  // Also checked for every field where input is parsed; here for texts that come another way (the CLI, the engine).
  if (!isStorableText(text)) {
    throw new AppError('invalid_request', 'The message contains a character that cannot be sent: U+0000 or an unpaired surrogate.', {
      field: 'message',
    });
  }
  if (!allowEmpty && text.trim().length === 0) {
    throw new AppError('empty_message', 'The message is empty or only whitespace.', { field: 'message' });
  }
  if (text.length > maxLength && codePointLength(text) > maxLength) {
    throw new AppError('message_too_long', `The message is longer than this gateway accepts: the limit is ${maxLength} characters.`, {
      field: 'message',
      limit: maxLength,
    });
  }
}
