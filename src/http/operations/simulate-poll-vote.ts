import { parsePhoneField } from '../message-input.ts';
import { ref } from '../schema-refs.ts';
import { SANDBOX_ERRORS } from './error-responses.ts';
import { defineOperation, ok } from './operation.ts';
import { presentPoll, pollOf } from '../../domain/structured-content.ts';

const pollVoteRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['from_phone', 'to_phone', 'message_id', 'options'],
  properties: {
    from_phone: {
      type: 'string',
      description:
        "The phone that votes: the other side of the poll's chat, or for a group's poll a member outside the gateway (or one of your own " +
        'sandbox numbers).',
    },
    to_phone: { type: 'string', description: 'Your sandbox number whose chat holds the poll.' },
    message_id: {
      type: 'string',
      description: 'The poll: a message of that chat, sent or received.',
      examples: ['msg_01jd0k6x9g8p1b6m3v7t2q4w5e'],
    },
    options: {
      type: 'array',
      maxItems: 12,
      items: { type: 'string' },
      description: "The options chosen, as the poll words them, at most its selectable_count; empty takes the phone's vote back.",
    },
  },
} as const;

const pollVoteResponseSchema = {
  type: 'object',
  required: ['message_id', 'voter_phone', 'options', 'poll'],
  properties: {
    message_id: { type: 'string' },
    voter_phone: { type: 'string' },
    options: { type: 'array', items: { type: 'string' } },
    poll: ref('Poll'),
  },
} as const;

export const simulatePollVote = defineOperation({ body: pollVoteRequestSchema }, ['sandboxInbox', 'polls'])({
  method: 'POST',
  scope: 'send',
  path: '/sandbox/poll_vote',
  operationId: 'simulatePollVote',
  summary: 'Simulate a vote on a poll of a sandbox number',
  description:
    'A simulated phone votes on a poll in its chat with one of your sandbox numbers, as a real voter would: its whole selection, which ' +
    'replaces its earlier vote (an empty one takes it back). The vote is recorded, and webhooks subscribed to poll.vote hear it, with ' +
    'the totals; the answer shows the poll with its tally. Simulated votes share the limit of simulated messages. /sandbox/poll_vote ' +
    'and /api/sandbox/poll_vote are the same operation.',
  tag: 'sandbox',
  answers: { 200: pollVoteResponseSchema },
  errors: [...SANDBOX_ERRORS, 'message_not_found', 'invalid_poll_vote', 'not_group_member', 'group_not_found'],
  handle: async ({ scope, body }, { sandboxInbox, polls }) => {
    const fromPhone = parsePhoneField(body.from_phone, 'from_phone');
    const toPhone = parsePhoneField(body.to_phone, 'to_phone');
    const poll = await sandboxInbox.voteOnPhone(scope, toPhone, { fromPhone, messageId: body.message_id, options: body.options });
    return ok({
      message_id: poll.id,
      voter_phone: fromPhone,
      options: [...new Set(body.options)],
      poll: presentPoll(pollOf(poll.structured)!, await polls.tally(poll)),
    });
  },
});
