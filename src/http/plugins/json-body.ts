import type { FastifyInstance } from 'fastify';
import { AppError } from '../../domain/errors.ts';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Replaces the JSON body parser with one that refuses what the default would quietly accept:
 * bytes that are not UTF-8 (which would otherwise turn into U+FFFD and change the message)
 * and prototype-poisoning keys. Every failure is `invalid_json`.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  // Without this, text/plain bodies would be parsed too and fail later with a vaguer error.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      text = strictUtf8.decode(body as Buffer);
    } catch {
      done(new AppError('invalid_json', 'The body is not valid UTF-8.'), undefined);
      return;
    }
    if (text.trim() === '') {
      done(new AppError('invalid_json', 'The body is empty; a JSON object was expected.'), undefined);
      return;
    }
    parseJson(request, text, (error, value) => {
      if (error) done(new AppError('invalid_json', 'The body is not valid JSON.', describeJsonError(text, error)), undefined);
      else done(null, value);
    });
  });
}

/** JSON.parse names the position of a syntax error; the framework's own message does not. */
function describeJsonError(text: string, parserError: Error): string {
  try {
    JSON.parse(text);
    return parserError.message;
  } catch (syntaxError) {
    return (syntaxError as Error).message;
  }
}
