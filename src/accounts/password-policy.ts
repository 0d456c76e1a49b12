import { AppError } from '../domain/errors.ts';

/** Shorter passwords are refused outright, before any rating. */
const MINIMUM_PASSWORD_LENGTH = 12;
/** zxcvbn's scale runs 0 to 4; 3 means "safely unguessable" against an online attack and a slow offline one. */
export const MINIMUM_PASSWORD_SCORE = 3;

type Rater = (password: string, userInputs: string[]) => { score: number; feedback: { warning: string | null; suggestions: string[] } };

let rater: Promise<Rater> | undefined;

/**
 * zxcvbn with its common and English dictionaries. They are a few megabytes, so they are loaded
 * on the first password set, not at every start of the server and the CLI.
 */
function loadRater(): Promise<Rater> {
  rater ??= (async () => {
    const [{ ZxcvbnFactory }, common, english] = await Promise.all([
      import('@zxcvbn-ts/core'),
      import('@zxcvbn-ts/language-common'),
      import('@zxcvbn-ts/language-en'),
    ]);
    const factory = new ZxcvbnFactory({
      dictionary: { ...common.dictionary, ...english.dictionary },
      graphs: common.adjacencyGraphs,
      translations: english.translations,
    });
    return (password, userInputs) => factory.check(password, userInputs);
  })();
  return rater;
}

/**
 * Refuses a password that is short or easy to guess, with the reason, on every path that sets
 * one: first start, the CLI, the console, an invite, a change. `userInputs` are the user's own
 * words (the email and its parts), which a guesser would try first.
 */
export async function assertAcceptablePassword(password: string, userInputs: string[] = []): Promise<void> {
  if (password.length < MINIMUM_PASSWORD_LENGTH) {
    throw new AppError('weak_password', `A password needs at least ${MINIMUM_PASSWORD_LENGTH} characters.`, {
      field: 'password',
      minimum_length: MINIMUM_PASSWORD_LENGTH,
    });
  }
  // The whole input, the part before any @, and each word of it: what a guesser tries first.
  const inputs = userInputs.flatMap((input) => [input, input.split('@')[0]!, ...input.split(/[@.+_-]/)]).filter((word) => word.length >= 3);
  const { score, feedback } = (await loadRater())(password, inputs);
  if (score >= MINIMUM_PASSWORD_SCORE) return;
  const reason = feedback.warning ?? 'It follows a pattern that is quick to guess.';
  const advice = feedback.suggestions.length > 0 ? ` ${feedback.suggestions.join(' ')}` : ' Try a few unrelated words together.';
  throw new AppError('weak_password', `This password is too easy to guess. ${reason}${advice}`, {
    field: 'password',
    score,
    minimum_score: MINIMUM_PASSWORD_SCORE,
  });
}
