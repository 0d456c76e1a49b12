import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { RouteShorthandOptions } from 'fastify';
import type { ApiKeyScope } from '../../domain/api-key-scopes.ts';
import type { AuditActor } from '../../domain/audit.ts';
import type { ErrorCode } from '../../domain/errors.ts';
import type { WhatsAppNumber } from '../../domain/model.ts';
import type { E164 } from '../../domain/phone.ts';
import type { AccountScope } from '../../domain/tenant-scope.ts';
import type { EngineSession } from '../../engines/engine.ts';
import type { OperationServices } from './services.ts';
import { REQUEST_ERRORS } from './error-responses.ts';

/** The parts of a request an operation reads, each described by a JSON schema. */
export interface RequestSchemas {
  params?: JSONSchema;
  query?: JSONSchema;
  body?: JSONSchema;
  headers?: JSONSchema;
}

/** A part's type from its schema; undefined for a part the operation does not take. */
type Typed<Schemas extends RequestSchemas, Part extends keyof RequestSchemas> = Schemas[Part] extends undefined
  ? undefined
  : FromSchema<NonNullable<Schemas[Part]>>;

/**
 * What a handler receives: the request's parts typed from their schemas, the key's account, and
 * the Idempotency-Key header as sent. On the number's owner it is the same input the first node
 * read, carried by the dispatch route.
 */
export interface OperationInput<Schemas extends RequestSchemas> {
  scope: AccountScope;
  /** Who calls: the key, and the address it called from, for the audit rows of management actions. */
  actor: AuditActor;
  params: Typed<Schemas, 'params'>;
  query: Typed<Schemas, 'query'>;
  body: Typed<Schemas, 'body'>;
  idempotencyKey: string | string[] | undefined;
  /** `Prefer: wait=N` (RFC 7240): how long a send may wait for its queued message to leave. */
  preferWaitSeconds?: number;
}

/** An answer as the handler makes it, to be sent as it is or relayed from the owner. */
export interface Answer {
  statusCode: number;
  body: unknown;
  headers?: Readonly<Record<string, string>>;
}

type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** The request with the command its operation read from it (`Operation.command`): undefined where it reads none. */
type CommandInput<Schemas extends RequestSchemas, Command> = OperationInput<Schemas> & { command: Command };

/**
 * What a handler of a number's operation is handed besides its request: the number the dispatch
 * resolved (once, for the whole request) and that number's session, whose capabilities it acts
 * through (engines/engine.ts's EngineSession).
 */
interface OnTheSession {
  number: WhatsAppNumber;
  session: EngineSession;
}

/**
 * One public operation, declared once: the registry gives it both paths (/x and /api/x), the key
 * and its account scope, the document entry with the error codes it lists, and, with `owner`,
 * the run on the node that serves the number (src/http/operations/registry.ts).
 */
export interface Operation<
  Schemas extends RequestSchemas = RequestSchemas,
  Uses extends keyof OperationServices = keyof OperationServices,
  Command = undefined,
> {
  method: HttpMethod;
  /** Fastify's form, `/messages/:id`. */
  path: string;
  operationId: string;
  summary: string;
  description: string;
  tag: 'messages' | 'numbers' | 'groups' | 'contacts' | 'chats' | 'media' | 'sandbox' | 'webhooks';
  /**
   * The scope a key needs for this operation (domain/api-key-scopes.ts); a key without it is
   * refused with 403 missing_scope before the body is read. The document states it.
   */
  scope: ApiKeyScope;
  request: Schemas;
  /** The successful answers' schemas by status. */
  answers: Readonly<Record<number, object>>;
  /** The catalogue codes the operation can answer; the document lists exactly these, by status. */
  errors: readonly ErrorCode[];
  /** The services the handler reaches; it is given only these. */
  uses: readonly Uses[];
  /**
   * Reads the request into what the handler acts on (phones parsed, a message's content
   * checked): once on each node that runs the operation, before anything is routed, so that its
   * refusals are the request's 4xx wherever the number's session runs, and nothing after it reads
   * the body again.
   */
  command?(input: OperationInput<Schemas>, services: Pick<OperationServices, Uses>): Command;
  /** Checks made on the node that took the request, before it is handed to the owner. */
  check?(input: CommandInput<Schemas, Command>, services: Pick<OperationServices, Uses>): void | Promise<void>;
  /**
   * The number whose session the operation needs: the dispatch resolves it (a phone is looked up
   * in the key's account, 403 phone_not_owned when it is not there), runs the handler on the node
   * that serves it, and hands the handler the number and its session. Undefined runs it here.
   */
  owner?(
    input: CommandInput<Schemas, Command>,
    services: Pick<OperationServices, Uses>,
  ): E164 | WhatsAppNumber | undefined | Promise<E164 | WhatsAppNumber | undefined>;
  /** An answer this node can give without the owner (a replayed send), asked before forwarding. */
  answerWithoutOwner?(
    input: CommandInput<Schemas, Command> & { number: WhatsAppNumber },
    services: Pick<OperationServices, Uses>,
  ): Promise<Answer | undefined>;
  /** The operation's work; with `owner`, on the node serving the number, `number` and `session` given (OnTheSession). */
  handle(input: CommandInput<Schemas, Command> & Partial<OnTheSession>, services: Pick<OperationServices, Uses>): Promise<Answer>;
  /** Route options of the unprefixed path only: /messages and /numbers share theirs with the dashboard. */
  unprefixedRouteOptions?: Pick<RouteShorthandOptions, 'constraints'>;
}

/**
 * An operation on one number's session: `owner` names the number, and the handler is handed the
 * number and its session, resolved once by the dispatch.
 */
type SessionOperation<Schemas extends RequestSchemas, Uses extends keyof OperationServices, Command> = Omit<
  Operation<Schemas, Uses, Command>,
  'request' | 'uses' | 'owner' | 'handle'
> & {
  owner: NonNullable<Operation<Schemas, Uses, Command>['owner']>;
  handle(input: CommandInput<Schemas, Command> & OnTheSession, services: Pick<OperationServices, Uses>): Promise<Answer>;
};

/** Any declared operation, as the registry holds them (its methods' parameters are checked where it is declared). */
export type AnyOperation = Operation<RequestSchemas, keyof OperationServices, unknown>;

/**
 * What the owner dispatch reads of an operation: how to read, check and route a request, and the
 * work. A public operation is one; so is a number-control operation (number-control.ts), which
 * has no path of its own and is reached only through the dispatch.
 */
export type DispatchedOperation = Pick<
  AnyOperation,
  'operationId' | 'uses' | 'command' | 'check' | 'owner' | 'answerWithoutOwner' | 'handle'
>;

/**
 * Declares an operation in two steps: first its request's schemas and the services it uses, then
 * the rest. The handler's input types are made from the schemas (json-schema-to-ts's FromSchema)
 * once the first step has fixed them, so that the second is typed without inference, which
 * TypeScript could not afford over the larger schemas:
 * `defineOperation({ body: schema }, ['numbers'])({ method, path, …, handle })`.
 *
 * The registry holds operations without their types, and hands each handler only input that
 * Fastify validated against those same schemas (or that the first node validated, for a
 * forwarded call); that is the one place the types are set aside.
 */
export function defineOperation<const Schemas extends RequestSchemas, const Uses extends keyof OperationServices>(
  request: Schemas,
  uses: readonly Uses[],
) {
  return (operation: Omit<Operation<Schemas, Uses>, 'request' | 'uses'>): AnyOperation => declared(request, uses, operation);
}

/** The operation as the registry holds it, with the refusals every operation can answer listed first. */
function declared(
  request: RequestSchemas,
  uses: readonly string[],
  operation: { method: string; errors: readonly ErrorCode[] },
): AnyOperation {
  return {
    ...operation,
    errors: [...new Set([...refusalsBeforeTheOperation(operation.method), ...operation.errors])],
    request,
    uses,
  } as unknown as AnyOperation;
}

/**
 * Declares an operation on a number's session, in the same two steps as `defineOperation`: its
 * `owner` names the number, and its handler is handed the number and the session:
 * `defineSessionOperation({ body }, [])({ …, owner, handle: ({ number, session }) => … })`.
 * An operation that reads its request into a command names the command's type, and its handler
 * gets what `command` made: `defineSessionOperation({ body }, []).reading<SendCommand>()({ …,
 * command, owner, handle: ({ command, number, session }) => … })`. (TypeScript could not afford
 * inferring the command's type over the larger schemas, for the reason given above.)
 */
export function defineSessionOperation<const Schemas extends RequestSchemas, const Uses extends keyof OperationServices>(
  request: Schemas,
  uses: readonly Uses[],
) {
  const define =
    <Command>() =>
    (operation: SessionOperation<Schemas, Uses, Command>): AnyOperation =>
      declared(request, uses, operation);
  return Object.assign(define<undefined>(), { reading: define });
}

/**
 * What the HTTP layer can answer on any route before its operation runs, and so what every
 * operation's errors include: a key without the operation's scope, a URL it cannot read (a broken
 * %-escape), and for a POST a body that is not JSON, too large, or with a field the operation
 * does not take (registry.ts).
 */
function refusalsBeforeTheOperation(method: string): readonly ErrorCode[] {
  return ['missing_scope', ...(method === 'GET' ? ['invalid_request' as const] : REQUEST_ERRORS)];
}

/** A 200 with this body. */
export function ok(body: unknown): Answer {
  return { statusCode: 200, body };
}
