import { AjvCompiler, type BuildCompilerFromPool } from '@fastify/ajv-compiler';

type Options = Parameters<BuildCompilerFromPool>[1];
type RouteSchema = { schema: object; httpPart?: string };

/**
 * Two validators: a body is JSON and is checked as sent (SCHEMA_VALIDATOR_OPTIONS), while a query
 * string, a path or a header is text whose schema says what it holds, so `limit=10` is read as
 * the integer 10 and `limit=ten` is refused as not an integer.
 */
export const validatorsByPart: BuildCompilerFromPool = (externalSchemas, options) => {
  const build = AjvCompiler();
  const asSent = build(externalSchemas, options);
  const asText = build(externalSchemas, { ...options, customOptions: { ...options?.customOptions, coerceTypes: true } } as Options);
  // Fastify hands each route part to the compiler with its name, which the types leave out.
  const compile = (route: RouteSchema) => (route.httpPart === 'body' ? asSent : asText)(route as never);
  return compile as unknown as ReturnType<BuildCompilerFromPool>;
};
