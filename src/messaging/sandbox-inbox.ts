import { AppError } from '../domain/errors.ts';
import { capabilityDeclined } from '../engines/capability-declined.ts';
import { assertSendableText } from '../domain/message-text.ts';
import type { Message, WhatsAppNumber } from '../domain/model.ts';
import { parseE164, type E164 } from '../domain/phone.ts';
import type { AccountScope, TenantScope } from '../domain/tenant-scope.ts';
import type { SessionSupervisor } from './session-supervisor.ts';
import type { OutgoingMedia } from '../engines/engine.ts';
import type { InboundSimulator, SimulatedIncoming, SimulatedRestriction, SimulatedCall } from '../engines/inbound-simulator.ts';
import { refusedIncoming } from './session-refusals.ts';
import { TokenBuckets } from '../domain/token-buckets.ts';
import type { Store } from '../store/database.ts';
import { findNumberByPhone } from '../store/repositories/numbers.ts';
import { findMessageById } from '../store/repositories/messages.ts';
import { pollOf } from '../domain/structured-content.ts';
import { assertTapAnswers } from '../domain/interactive-taps.ts';
import type { MessageTemplate } from '../domain/templates.ts';
import { rehearsalTemplate, type RehearsalTemplateInput } from '../engines/sandbox/sandbox-templates.ts';
import { findQuotable, type Chat } from './message-actions.ts';
import { roleOf } from '../domain/groups.ts';
import type { GroupService } from './groups.ts';

/** How the inbox finds a number of the caller's scope (accounts/numbers-service.ts's findNumber). */
interface NumberFinder {
  findNumber(scope: TenantScope, phoneOrId: string): Promise<WhatsAppNumber>;
}

/**
 * Simulated incoming messages on an account's sandbox numbers, from the API and from the
 * dashboard's form. The account check lives here rather than in either route, so both ask the
 * same question the same way: is this a sandbox number inside the caller's scope?
 */
export class SandboxInbox {
  /**
   * Simulated messages are free of the monthly volume but each one fans out to every subscribed
   * webhook, so without a bound one tenant could make the gateway a POST reflector.
   */
  private readonly perAccount: TokenBuckets;

  constructor(
    private readonly store: Store,
    private readonly numbers: NumberFinder,
    private readonly supervisor: SessionSupervisor,
    private readonly maxMessageLength: number,
    private readonly perMinute: number,
    private readonly groups: GroupService,
  ) {
    this.perAccount = new TokenBuckets({ ratePerSecond: perMinute / 60, burst: perMinute });
  }

  /**
   * POST /sandbox/receive: the number named by phone. A phone that is no number of the account,
   * or not a sandbox one, gets the same 403 whether or not it exists elsewhere, so nothing about
   * other accounts can be learnt from it.
   */
  async receiveOnPhone(
    scope: AccountScope,
    toPhone: E164,
    incoming: SimulatedIncoming,
    replyTo?: string,
    loadMedia?: () => Promise<OutgoingMedia>,
  ): Promise<Message> {
    this.admit(scope);
    const { number, simulator } = await this.sandboxNumber(scope, toPhone, 'to_phone');
    if (incoming.groupId !== undefined) {
      // A group message comes from a member, to a group the number is in.
      const group = await this.groups.asMember(number, incoming.groupId, 'group_id');
      if (roleOf(group, incoming.fromPhone) === undefined) {
        throw new AppError(
          'invalid_request',
          `from_phone ${incoming.fromPhone} is not a member of group ${group.id}; add it to the group first.`,
          { field: 'from_phone' },
        );
      }
      const stranger = (incoming.mentions ?? []).findIndex((phone) => roleOf(group, phone) === undefined);
      if (stranger >= 0)
        throw new AppError(
          'invalid_mention',
          `mentions[${stranger}] ${incoming.mentions![stranger]} is not a member of group ${group.id}.`,
          { field: `mentions[${stranger}]` },
        );
      await this.assertMaySpeakInGroup(scope, incoming.fromPhone);
    }
    // The simulated phone answers a message of its chat with the number, as a customer would.
    const chat: Chat = incoming.groupId === undefined ? { phone: incoming.fromPhone } : { groupId: incoming.groupId };
    const quoted = replyTo === undefined ? undefined : (await findQuotable(this.store, number, chat, replyTo)).quoted;
    const tap =
      incoming.structured !== undefined && 'interactiveReply' in incoming.structured ? incoming.structured.interactiveReply : undefined;
    if (tap !== undefined) {
      const answered = replyTo === undefined ? undefined : await findMessageById(this.store.db, replyTo);
      assertTapAnswers(answered?.direction === 'outbound' ? answered.structured : null, tap);
    }
    // The file is fetched or read only now, once every check has passed.
    const media = loadMedia === undefined ? undefined : await loadMedia();
    const message = await deliver(simulator, number, {
      ...incoming,
      ...(media !== undefined && { media }),
      ...(quoted !== undefined && { quotedEngineId: quoted.engineMessageId }),
    });
    return quoted === undefined ? message : { ...message, replyTo: quoted };
  }

  /**
   * POST /sandbox/restrict: the network restricts the number (463), rate-limits its sends or caps
   * its new chats (475) until `until`, as WhatsApp would, or its session goes quiet until then; the
   * number behaves as a real one does. Counted with the account's simulated messages, as it makes
   * webhook events too.
   */
  async restrict(scope: AccountScope, phone: E164, restriction: SimulatedRestriction): Promise<WhatsAppNumber> {
    this.admit(scope);
    const { number, simulator } = await this.sandboxNumber(scope, phone, 'phone');
    await simulator.restrict(number, restriction).catch((error: unknown) => refusedIncoming(number, error));
    return number;
  }

  /**
   * POST /sandbox/templates: the number's rehearsal catalogue gains the template, or has the one
   * of that name and language replaced, on the node that runs the number (which sends against it).
   */
  async putTemplate(scope: AccountScope, phone: E164, input: RehearsalTemplateInput): Promise<MessageTemplate> {
    const { number, simulator } = await this.sandboxNumber(scope, phone, 'phone');
    const template = rehearsalTemplate(input);
    simulator.putTemplate(number, template);
    return template;
  }

  /**
   * POST /sandbox/poll_vote: a simulated phone votes on a poll of its chat with the number (or
   * of a group both are in), as a real voter would; the vote reaches the webhooks as poll.vote.
   */
  async voteOnPhone(scope: AccountScope, toPhone: E164, vote: { fromPhone: E164; messageId: string; options: string[] }): Promise<Message> {
    this.admit(scope);
    const { number, simulator } = await this.sandboxNumber(scope, toPhone, 'to_phone');
    const poll = await findMessageById(this.store.db, vote.messageId);
    const inChat = poll !== undefined && poll.accountId === scope.accountId && poll.numberId === number.id && poll.engineMessageId !== null;
    if (!inChat)
      throw new AppError('message_not_found', `There is no poll ${vote.messageId} in a chat of ${toPhone}.`, { field: 'message_id' });
    const shared = pollOf(poll.structured);
    if (shared === undefined)
      throw new AppError('invalid_poll_vote', `${vote.messageId} is a ${poll.contentKind} message, not a poll.`, { field: 'message_id' });
    const unknown = vote.options.findIndex((option) => !shared.options.includes(option));
    if (unknown >= 0)
      throw new AppError('invalid_poll_vote', `options[${unknown}] is not an option of the poll.`, { field: `options[${unknown}]` });
    if (new Set(vote.options).size > shared.selectableCount)
      throw new AppError('invalid_poll_vote', `The poll lets a voter choose ${shared.selectableCount} of its options.`, {
        field: 'options',
      });
    if (poll.group == null) {
      const peer = poll.direction === 'outbound' ? poll.toPhone : poll.fromPhone;
      if (peer !== vote.fromPhone)
        throw new AppError('invalid_poll_vote', `The poll is in the chat with ${peer}; only that phone votes on it.`, {
          field: 'from_phone',
        });
    } else {
      const group = await this.groups.asMember(number, poll.group.id, 'group_id');
      if (roleOf(group, vote.fromPhone) === undefined)
        throw new AppError('invalid_poll_vote', `from_phone ${vote.fromPhone} is not a member of group ${group.id}.`, {
          field: 'from_phone',
        });
      await this.assertMaySpeakInGroup(scope, vote.fromPhone);
    }
    await simulator
      .deliverPollVote(number, {
        fromPhone: vote.fromPhone,
        pollEngineId: poll.engineMessageId!,
        options: [...new Set(vote.options)],
        ...(poll.group != null && { groupId: poll.group.id }),
      })
      .catch((error: unknown) => refusedIncoming(number, error));
    return poll;
  }

  /**
   * The phone as a sandbox number of the account; any other account's phone gets the same 403, so
   * nothing is learnt of other accounts. The account's own number on another engine is told so
   * (422 capability_not_supported naming the engine): its people write from the real network.
   */
  private async sandboxNumber(
    scope: AccountScope,
    phone: E164,
    field: string,
    waitForSession = true,
  ): Promise<{ number: WhatsAppNumber; simulator: InboundSimulator }> {
    const number = await this.numbers.findNumber(scope, phone).catch((error: unknown) => {
      if (error instanceof AppError && error.code === 'number_not_found') return undefined;
      throw error;
    });
    if (number === undefined) throw new AppError('phone_not_owned', `${field} is not a sandbox number of your account.`, { field });
    const simulator = this.supervisor.simulatorFor(number);
    if (simulator === undefined)
      throw capabilityDeclined(
        number.engine,
        'sandbox_rehearsal',
        `rehearse what happens on ${field}: only a sandbox number's network is simulated`,
      );
    // As a send does, a message for a number this node is taking on waits for its session.
    if (waitForSession) await this.supervisor.untilStarted(number);
    return { number, simulator };
  }

  /**
   * POST /sandbox/link_scan: the number's simulated phone scans the QR its linking attempt shows
   * now, or types its pairing code, as the phone's owner does to link a real number. Refused for
   * anything else: a QR already replaced, a code of another attempt, or no attempt at all. The
   * number is off the network while it links, so its session is not waited for.
   */
  async scanLink(scope: AccountScope, phone: E164, code: string): Promise<WhatsAppNumber> {
    this.admit(scope);
    const { number, simulator } = await this.sandboxNumber(scope, phone, 'phone', false);
    if (!(await simulator.confirmLink(number, code)))
      throw new AppError(
        'invalid_request',
        `code is not the QR or pairing code that ${phone} shows now: a QR is replaced every 20 s, and an attempt ends after six; read ` +
          `the current one from GET /admin/numbers/{id}/session.`,
        { field: 'code' },
      );
    return number;
  }

  /**
   * POST /sandbox/call: a simulated phone rings one of the account's sandbox numbers, refused
   * as a simulated message is; a group call comes from a member, in a group the number is in.
   */
  async callOnPhone(scope: AccountScope, toPhone: E164, call: SimulatedCall): Promise<string> {
    this.admit(scope);
    const { number, simulator } = await this.sandboxNumber(scope, toPhone, 'to_phone');
    if (call.groupId !== undefined) {
      const group = await this.groups.asMember(number, call.groupId, 'group_id');
      if (roleOf(group, call.fromPhone) === undefined) {
        throw new AppError(
          'invalid_request',
          `from_phone ${call.fromPhone} is not a member of group ${group.id}; add it to the group first.`,
          { field: 'from_phone' },
        );
      }
    }
    return simulator.placeCall(number, call).catch((error: unknown) => refusedIncoming(number, error));
  }

  /** The dashboard's form: the number by id (another account's is not found), the rest as typed, with an optional file. */
  async receiveOnNumber(
    scope: AccountScope,
    numberId: string,
    rawFromPhone: string,
    text: string,
    media?: () => Promise<OutgoingMedia>,
  ): Promise<Message> {
    this.admit(scope);
    const number = await this.numbers.findNumber(scope, numberId);
    const simulator = this.supervisor.simulatorFor(number);
    if (simulator === undefined) {
      throw new AppError(
        'invalid_argument',
        `${number.phone} is a ${number.engine} number; only sandbox numbers can simulate incoming messages.`,
      );
    }
    const fromPhone = parseE164(rawFromPhone);
    if (fromPhone === undefined) {
      throw new AppError(
        'invalid_phone_number',
        'From phone is not a valid international phone number; include the country code, e.g. +447700900123.',
        { field: 'from_phone' },
      );
    }
    // A file's caption may be empty; a message without a file may not.
    assertSendableText(text, this.maxMessageLength, media !== undefined);
    // The file is read only once the number is known to be the account's own.
    return deliver(simulator, number, { fromPhone, text, ...(media !== undefined && { media: await media() }) });
  }

  /**
   * A simulated group message reaches every member, other accounts' numbers among them, as
   * genuine. So it may come only from a phone outside the gateway, or from one of the caller's
   * own sandbox numbers, which the caller could send from anyway.
   */
  private async assertMaySpeakInGroup(scope: AccountScope, fromPhone: E164): Promise<void> {
    const sender = await findNumberByPhone(this.store.db, fromPhone);
    if (sender === undefined || (sender.accountId === scope.accountId && this.supervisor.simulatorFor(sender) !== undefined)) return;
    throw new AppError(
      'phone_not_owned',
      `from_phone ${fromPhone} is a number of this gateway but not a sandbox number of your account; a simulated group message comes ` +
        `from a phone outside the gateway or from one of your own sandbox numbers.`,
      { field: 'from_phone' },
    );
  }

  /** Refuses a simulated message past the account's rate, saying when the next one may come. */
  private admit(scope: AccountScope): void {
    const now = Date.now();
    if (this.perAccount.tryTake(scope.accountId, now)) return;
    const retryAfterSeconds = Math.max(1, Math.ceil((this.perAccount.nextTokenAt(scope.accountId, now) - now) / 1000));
    throw new AppError(
      'rate_limited',
      `Your account may simulate ${this.perMinute} incoming messages a minute; try again in ${retryAfterSeconds} s.`,
      {
        limit_per_minute: this.perMinute,
        retry_after_seconds: retryAfterSeconds,
      },
    );
  }
}

function deliver(simulator: InboundSimulator, number: WhatsAppNumber, incoming: SimulatedIncoming): Promise<Message> {
  return simulator.deliverIncoming(number, incoming).catch((error: unknown) => refusedIncoming(number, error));
}
