/**
 * JSON as a test reads it (an answer's body, a webhook's payload). Each test asserts the fields it
 * names, and the API document's own tests check the shapes, so the tests do not restate them as
 * types; this is the one place where that JSON is left untyped.
 */
// biome-ignore lint/suspicious/noExplicitAny: see above; every other use names this type.
export type Json = any;

export type JsonObject = Record<string, Json>;
