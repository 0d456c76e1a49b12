import { AjvCompiler, type BuildCompilerFromPool } from '@fastify/ajv-compiler';

type Options = Parameters<BuildCompilerFromPool>[1];
type RouteSchema = { schema: object; httpPart?: string };
type Compile = ReturnType<BuildCompilerFromPool>;

/** One compiler per set of shared schemas and options, kept for the process (see validatorsByPart). */
const compilersByShared = new Map<string, Compile>();

/**
 * Two validators: a body is JSON and is checked as sent (SCHEMA_VALIDATOR_OPTIONS), while a query
 * string, a path or a header is text whose schema says what it holds, so `limit=10` is read as
 * the integer 10 and `limit=ten` is refused as not an integer.
 *
 * A validator is a pure function of its schema, the shared schemas and the options, so an app
 * built again in the same process (a restart in a test, several nodes in one process) reuses
 * the ones compiled before instead of paying Ajv again for every route; the schemas are keyed by
 * content, since the routes build some of theirs afresh each time.
 */
export const validatorsByPart: BuildCompilerFromPool = (externalSchemas, options) => {
  const sharedKey = JSON.stringify([externalSchemas, options]);
  const known = compilersByShared.get(sharedKey);
  if (known !== undefined) return known;
  const build = AjvCompiler();
  const asSent = build(externalSchemas, options);
  const asText = build(externalSchemas, { ...options, customOptions: { ...options?.customOptions, coerceTypes: true } } as Options);
  const compiled = new Map<string, ReturnType<Compile>>();
  // Fastify hands each route part to the compiler with its name, which the types leave out.
  const compile = (route: RouteSchema) => {
    const part = route.httpPart === 'body' ? 'body' : 'text';
    const key = `${part}:${JSON.stringify(route.schema)}`;
    let validate = compiled.get(key);
    if (validate === undefined) {
      validate = (part === 'body' ? asSent : asText)(route as never);
      compiled.set(key, validate);
    }
    return validate;
  };
  compilersByShared.set(sharedKey, compile as unknown as Compile);
  return compile as unknown as Compile;
};
