import type { FastifyError, FastifySchemaValidationError } from 'fastify';
import { AppError } from '../../domain/errors.ts';

/** What a value failed, in the words of the message and as the `problem` detail. */
interface Shortfall {
  mustBe: string;
  problem: string;
}

/**
 * A refusal by the request schema, as the documented `invalid_request`: the part at fault named
 * as the gateway's own checks name it, and what is wrong with it. Only the first issue is told
 * (the schema stops at it).
 */
export function fromValidation(error: FastifyError): AppError {
  // The query string names its own parts, so that a client is not sent looking in its body.
  const inQuery = (error as FastifyError & { validationContext?: string }).validationContext === 'querystring';
  const part = inQuery ? 'query parameter' : 'field';
  // An "exactly one of" is told as such; when exactly one was given, its own fault is told.
  const choice = error.validation?.find((each) => each.keyword === 'oneOf');
  const chosen = choice === undefined ? undefined : choices(choice);
  if (choice !== undefined && chosen?.given.length !== 1) return exactlyOneOf(choice, chosen!, part);
  const issue =
    chosen === undefined
      ? issueOf(error.validation ?? [])
      : error.validation?.find((each) => each.instancePath.endsWith(`/${chosen.given[0]}`));
  // A field is named as the gateway's own checks name it: `contacts[0].name`, `mentions[2]`.
  const at = issue?.instancePath
    .replace(/^\//, '')
    .replace(/\/(\d+)(?=\/|$)/g, '[$1]')
    .replace(/\//g, '.');
  const unknown = (issue?.params as { additionalProperty?: string } | undefined)?.additionalProperty;
  if (issue?.keyword === 'additionalProperties' && unknown !== undefined) {
    // Refused rather than ignored: a typo in an optional field (a schedule, say) must not turn into a different request.
    const field = at ? `${at}.${unknown}` : unknown;
    return new AppError('invalid_request', `The ${part} ${field} is not one this operation takes.`, { field, problem: 'unknown' });
  }
  const missing = (issue?.params as { missingProperty?: string } | undefined)?.missingProperty;
  // A field missing inside an object is named by its whole path: poll.question, not question.
  const field = missing !== undefined && at ? `${at}.${missing}` : (missing ?? at);
  if (issue === undefined || field === undefined || field === '') return wholeBody(issue);
  if (missing !== undefined) return new AppError('invalid_request', `The ${part} ${field} is missing.`, { field, problem: 'missing' });
  const { mustBe, problem } = shortfall(issue);
  return new AppError('invalid_request', `The ${part} ${field} ${mustBe}.`, { field, problem });
}

/**
 * The issue to tell. In a union (a boolean or an object, a preset's name or a policy), Ajv reports
 * every branch; the one the client meant is the branch whose type the value has, so its own fault
 * is told ("link_preview.url is missing"), not the first branch's "must be a boolean". A value of
 * none of the types is told all of them.
 */
function issueOf(issues: readonly FastifySchemaValidationError[]): FastifySchemaValidationError | undefined {
  const union = issues.find((each) => each.keyword === 'anyOf');
  if (union === undefined) return issues[0];
  const within = issues.filter((each) => each !== union && each.instancePath.startsWith(union.instancePath));
  const typeFaults = within.filter((each) => each.keyword === 'type' && each.instancePath === union.instancePath);
  // A branch of another type may report more than its type (an enum of strings, given an object).
  const otherType = (each: FastifySchemaValidationError) => {
    const { parentSchema, data } = each as { parentSchema?: { type?: string | string[] }; data?: unknown };
    return each.instancePath === union.instancePath && parentSchema?.type !== undefined && !hasType(data, parentSchema.type);
  };
  const meant = within.find((each) => !typeFaults.includes(each) && !otherType(each));
  if (meant !== undefined || typeFaults.length === 0) return meant ?? union;
  const types = typeFaults.flatMap((each) => String((each.params as { type?: string | string[] }).type).split(','));
  return { ...typeFaults[0]!, params: { type: [...new Set(types)] } };
}

/** Whether a JSON value is of a schema's type (or one of its types). */
function hasType(value: unknown, type: string | string[]): boolean {
  const kind = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  return [type].flat().some((each) => each === kind || (each === 'integer' && Number.isInteger(value)));
}

/**
 * A fault of the body as a whole: not an object, or an object with none of the fields an update
 * needs. The message names this operation's own fields, from its schema.
 */
function wholeBody(issue: FastifySchemaValidationError | undefined): AppError {
  const schema = (issue as { parentSchema?: { required?: string[]; properties?: Record<string, unknown> } } | undefined)?.parentSchema;
  if (issue?.keyword === 'minProperties') {
    const fields = Object.keys(schema?.properties ?? {});
    return new AppError('invalid_request', `The body sets nothing: give at least one of ${fields.join(', ')}.`);
  }
  const required = schema?.required ?? [];
  return new AppError(
    'invalid_request',
    required.length === 0 ? 'The body must be a JSON object.' : `The body must be a JSON object with ${required.join(', ')}.`,
  );
}

/**
 * The fields of an "exactly one of" (a send's to_phone and to_group), each required by one
 * branch, and which of them the request gave. The schema and data come with the error (`verbose`).
 */
function choices(issue: FastifySchemaValidationError): { names: string[]; given: string[] } {
  const { parentSchema, data } = issue as { parentSchema?: { oneOf?: { required?: string[] }[] }; data?: unknown };
  const names = (parentSchema?.oneOf ?? []).flatMap((branch) => branch.required ?? []);
  return { names, given: names.filter((name) => typeof data === 'object' && data !== null && name in data) };
}

/** None or several of the fields of an "exactly one of": the first is named, missing or in conflict. */
function exactlyOneOf(issue: FastifySchemaValidationError, { names, given }: { names: string[]; given: string[] }, part: string): AppError {
  const at = issue.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const fields = names.map((name) => (at === '' ? name : `${at}.${name}`));
  return new AppError('invalid_request', `Give exactly one of the ${part}s ${fields.join(' and ')}.`, {
    field: fields[0] ?? at,
    problem: given.length === 0 ? 'missing' : 'conflict',
  });
}

/** Each keyword says what it asks for: a type is named only when the type was wrong. */
function shortfall(issue: FastifySchemaValidationError): Shortfall {
  const params = issue.params as { type?: string | string[]; limit?: number; allowedValues?: unknown[]; allowedValue?: unknown };
  switch (issue.keyword) {
    case 'type': {
      const types = String(params.type ?? 'string').split(',');
      const named = types.map((type) => (type === 'null' ? 'null' : `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`));
      const words = named.length === 1 ? named[0]! : `${named.slice(0, -1).join(', ')} or ${named.at(-1)}`;
      return { mustBe: `must be ${words}`, problem: `not_${named[0]!.replace(' ', '_')}` };
    }
    case 'minimum':
      return { mustBe: `must be at least ${params.limit}`, problem: 'too_small' };
    case 'exclusiveMinimum':
      return { mustBe: `must be more than ${params.limit}`, problem: 'too_small' };
    case 'maximum':
      return { mustBe: `must be at most ${params.limit}`, problem: 'too_large' };
    case 'exclusiveMaximum':
      return { mustBe: `must be less than ${params.limit}`, problem: 'too_large' };
    case 'minLength':
      return { mustBe: `must be at least ${counted(params.limit, 'character')} long`, problem: 'too_short' };
    case 'maxLength':
      return { mustBe: `must be at most ${counted(params.limit, 'character')} long`, problem: 'too_long' };
    case 'minItems':
      return { mustBe: `must hold at least ${counted(params.limit, 'item')}`, problem: 'too_few' };
    case 'maxItems':
      return { mustBe: `must hold at most ${counted(params.limit, 'item')}`, problem: 'too_many' };
    case 'enum':
      return {
        mustBe: `must be one of ${(params.allowedValues ?? []).map((value) => JSON.stringify(value)).join(', ')}`,
        problem: 'not_allowed',
      };
    case 'format':
      return {
        mustBe: `must be ${formatNames[String((params as { format?: string }).format)] ?? `in the format ${(params as { format?: string }).format}`}`,
        problem: 'invalid',
      };
    case 'const':
      return { mustBe: `must be ${JSON.stringify(params.allowedValue)}`, problem: 'not_allowed' };
    default:
      // The schema's own words ("must match pattern …") for the keywords the API seldom uses.
      return { mustBe: issue.message ?? 'is not valid', problem: 'invalid' };
  }
}

/** What a format asks for, in words. */
const formatNames: Record<string, string> = { 'date-time': 'an RFC 3339 time with its zone, e.g. 2026-11-25T09:30:00Z' };

function counted(count: number | undefined, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
