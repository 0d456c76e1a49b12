import type { FastifyInstance } from 'fastify';
import { AppError } from '../../domain/errors.ts';
import { assertStorableStrings } from '../../domain/storable-text.ts';

// The BOM is left in, for the JSON parser to drop exactly one; the decoder would drop one too.
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)"?/i;

/**
 * Replaces the JSON body parser with one that refuses what the default would quietly accept:
 * bytes that are not UTF-8 (which would otherwise turn into U+FFFD and change the message)
 * and prototype-poisoning keys, both `invalid_json`, and compressed bodies and bodies that are
 * not an object, `invalid_request`.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  // Every field of every body, query and path, JSON or form, passes the one text check before
  // any schema or handler sees it (ADR 0042): a new field cannot forget it.
  app.addHook('preValidation', async (request) => {
    assertStorableStrings(request.params);
    assertStorableStrings(request.query);
    assertStorableStrings(request.body);
  });
  const parseJson = app.getDefaultJsonParser('error', 'error');
  // Without this, text/plain bodies would be parsed too and fail later with a vaguer error.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    // No route serves the path, so the body is never looked at: the answer is the 404.
    if (request.is404) {
      done(null, undefined);
      return;
    }
    const coding = unsupportedContentCoding(request.headers['content-encoding']);
    if (coding !== undefined) {
      done(
        new AppError(
          'invalid_request',
          `The body must not be compressed: Content-Encoding ${coding} is not supported; send the JSON as it is.`,
          { field: 'Content-Encoding' },
        ),
        undefined,
      );
      return;
    }
    // JSON is UTF-8 (RFC 8259); a body labelled as another charset would be read other than meant.
    const charset = CHARSET.exec(request.headers['content-type'] ?? '')?.[1];
    if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
      done(
        new AppError('invalid_request', `The body must be JSON in UTF-8, but its Content-Type says charset=${charset}.`, {
          field: 'Content-Type',
        }),
        undefined,
      );
      return;
    }
    let text: string;
    try {
      text = strictUtf8.decode(body as Buffer);
    } catch {
      done(new AppError('invalid_json', 'The body is not valid UTF-8.'), undefined);
      return;
    }
    if (text.trim() === '') {
      // An operation that takes no body (a revocation, a read mark) is fine without one, even when
      // the client's library labels the nothing it sends as JSON.
      if (request.routeOptions.schema?.body === undefined) done(null, undefined);
      else done(new AppError('invalid_json', 'The body is empty; a JSON object was expected.'), undefined);
      return;
    }
    // The default parser answers through its callback; its type also allows a promise, which it never returns.
    void parseJson(request, text, (error, value) => {
      if (error) done(new AppError('invalid_json', `The body is not valid JSON: ${describeJsonError(text)}`), undefined);
      // Every operation's body is an object; said so here, the refusal names what came instead of
      // the first field that a list, a string or null could not hold.
      else if (value === null || typeof value !== 'object' || Array.isArray(value))
        done(new AppError('invalid_request', `The body must be a JSON object, not ${jsonKind(value)}.`), undefined);
      else done(null, value);
    });
  });
}

/**
 * The first content coding other than identity, if any. Reading compressed bytes as JSON would
 * fail with a misleading error, and a body merely labelled compressed would be taken on trust.
 */
export function unsupportedContentCoding(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return header
    .split(',')
    .map((coding) => coding.trim())
    .find((coding) => coding !== '' && coding.toLowerCase() !== 'identity');
}

/**
 * JSON.parse names the position of a syntax error; the framework's own message does not. Text
 * that JSON.parse reads was refused for a prototype key.
 */
function describeJsonError(text: string): string {
  try {
    JSON.parse(text.replace(/^\uFEFF/, ''));
    return 'A "__proto__" key, or a "constructor" object with a "prototype" key, is not accepted anywhere in the body.';
  } catch (syntaxError) {
    return (syntaxError as Error).message;
  }
}

function jsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
