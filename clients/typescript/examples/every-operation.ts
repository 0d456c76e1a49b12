/**
 * Every public operation of the gateway through the typed client, against a running gateway,
 * and a webhook delivery verified by the client's helper. test/clients/typescript-client.test.ts
 * runs it against a live gateway, and type-checks it with `tsc --strict`: no casts, so every
 * answer's type is the one the document gives.
 *
 *   WAGW_URL=http://127.0.0.1:3000 WAGW_API_KEY=… WAGW_FROM=+1… WAGW_OTHER=+1… \
 *   WAGW_WEBHOOK_SECRET=whsec_… WAGW_RECEIVER_PORT=4000 WAGW_WEBHOOKS_API_KEY=… node --import tsx every-operation.ts
 *
 * WAGW_FROM is a number of the key's account on any engine, and WAGW_OTHER a sandbox number of it
 * that plays the person WAGW_FROM writes to (on Meta's Cloud API, a person who has written in the
 * last 24 hours). What WAGW_FROM's engine lacks (groups and polls on the Cloud API; templates and
 * interactive messages on Baileys) answers the documented 422 `capability_not_supported`, and the program goes on
 * without it. A webhook of the account subscribed to `message` and `number.paused` points at
 * http://127.0.0.1:$WAGW_RECEIVER_PORT/.
 * WAGW_WEBHOOKS_API_KEY is a key of the same account with the `webhooks` scope, which registers a
 * webhook of its own on a local receiver (the gateway must allow 127.0.0.1 as a webhook address).
 * WAGW_OPERATOR_TOKEN is an operator token (`wagw operator-token create`), which reads the audit log.
 */
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { createGatewayClient, createOperatorClient, verifyWebhook, type ApiError, type MessageEvent, type NumberPausedEvent, type QueuedAnswer, type SentMessage, type WebhookEvent } from '../src/index.ts';

function setting(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
}

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`expected: ${what}`);
}

/** The data of a success, or a failure that says which operation answered what. */
function succeeded<T>(what: string, answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.data === undefined) throw new Error(`${what} answered ${answer.response.status}: ${JSON.stringify(answer.error)}`);
  return answer.data;
}

/** Whether `value`, if the engine answered one, passes `test`: a check of what an engine without the operation never answered holds. */
function holds<T>(value: T | undefined, test: (value: T) => boolean): boolean {
  return value === undefined || test(value);
}

/** The operations the sending number's engine lacks, as the gateway named them. */
const lacking: string[] = [];

/**
 * The data of a success, or undefined when the number's engine lacks the operation: the documented
 * 422 `capability_not_supported`, whose meta names the engine. Anything else fails as `succeeded` does.
 */
function unlessLacking<T>(what: string, answer: { data?: T; error?: unknown; response: Response }): T | undefined {
  const error = answer.error;
  if (answer.data === undefined && answer.response.status === 422 && typeof error === 'object' && error !== null && 'error' in error && error.error === 'capability_not_supported') {
    const engine = 'meta' in error && typeof error.meta === 'object' && error.meta !== null && 'engine' in error.meta ? String(error.meta.engine) : 'unnamed';
    lacking.push(`${what} (${engine})`);
    return undefined;
  }
  return succeeded(what, answer);
}

const client = createGatewayClient({ baseUrl: setting('WAGW_URL'), apiKey: setting('WAGW_API_KEY') });
/** A key with the `webhooks` scope only: it manages webhooks, and nothing else. */
const hooksClient = createGatewayClient({ baseUrl: setting('WAGW_URL'), apiKey: setting('WAGW_WEBHOOKS_API_KEY') });
/** The operator's client: the operator API, with an operator token. */
const operatorClient = createOperatorClient({ baseUrl: setting('WAGW_URL'), token: setting('WAGW_OPERATOR_TOKEN') });

/** With WAGW_RECORD_ANSWERS set, every answer is kept, by its documented path, and written there at the end (the test checks each against the document). */
const answers: { method: string; path: string; status: number; contentType: string | null; body: string }[] = [];
if (process.env.WAGW_RECORD_ANSWERS !== undefined)
  for (const each of [client, hooksClient, operatorClient])
    each.use({
      async onResponse({ request, response, schemaPath }) {
        const body = await response.clone().text();
        answers.push({ method: request.method, path: schemaPath, status: response.status, contentType: response.headers.get('content-type'), body });
      },
    });
const from = setting('WAGW_FROM');
const other = setting('WAGW_OTHER');

/** A local receiver of the account's webhook: each delivery verified, then kept. */
function startReceiver(port: number, secret: string): { events: WebhookEvent[]; close(): void } {
  const events: WebhookEvent[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      try {
        events.push(verifyWebhook(secret, Buffer.concat(chunks).toString('utf8'), request.headers));
        response.writeHead(204).end();
      } catch (error) {
        console.error('a delivery failed its verification:', error);
        response.writeHead(400).end();
      }
    });
  });
  server.listen(port, '127.0.0.1');
  return { events, close: () => server.close() };
}

/** A local receiver that keeps each delivery as it came, to be verified once its webhook's secret is known. */
async function startRecorder(): Promise<{ url: string; deliveries: { body: string; headers: http.IncomingHttpHeaders }[]; close(): void }> {
  const deliveries: { body: string; headers: http.IncomingHttpHeaders }[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      deliveries.push({ body: Buffer.concat(chunks).toString('utf8'), headers: request.headers });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the recorder has no port');
  return { url: `http://127.0.0.1:${address.port}/api-made`, deliveries, close: () => server.close() };
}

/** Waits for a condition of the program's own making; a minute, so that a busy machine is not a failure. */
async function until<T>(probe: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
    const found = await probe();
    if (found !== undefined) return found;
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The first event the receiver kept that the test accepts. */
function delivered<T extends WebhookEvent>(events: WebhookEvent[], accept: (event: WebhookEvent) => event is T): Promise<T> {
  return until(() => events.find(accept), `such a delivery among ${events.length}`);
}

async function main(): Promise<void> {
  const receiver = startReceiver(Number(setting('WAGW_RECEIVER_PORT')), setting('WAGW_WEBHOOK_SECRET'));

  const health = succeeded('GET /health', await client.GET('/health'));
  check(health.ok, 'the gateway is healthy');

  // Numbers.
  const numbers = succeeded('GET /numbers', await client.GET('/numbers'));
  check(numbers.numbers.some((number) => number.phone === from), 'the sending number is listed');
  const updated = succeeded('PATCH /numbers/{id}', await client.PATCH('/numbers/{id}', { params: { path: { id: from } }, body: { auto_read: false } }));
  check(!updated.auto_read, 'auto_read is off');
  // The send governor: a scheduled send waits in the number's queue (202), and is cancelled.
  const policy = succeeded('PATCH /account/send_policy', await client.PATCH('/account/send_policy', { body: { send_policy: 'off' } }));
  check(policy.policy === null, 'the governor is off');
  check(succeeded('GET /account/send_policy', await client.GET('/account/send_policy')).preset === 'off', 'the account policy reads back');
  const scheduled = succeeded('POST /send_message with send_at', await client.POST('/send_message', { body: { from_phone: from, to_phone: other, message: 'Later', send_at: new Date(Date.now() + 3_600_000).toISOString() } }));
  // The exported models hold the client's own answers, and the status tells a waiting message from one that left.
  const answered: SentMessage | QueuedAnswer = scheduled;
  if (answered.status !== 'queued') throw new Error(`a scheduled send is queued, not ${answered.status}`);
  check(answered.wait_reason === 'scheduled' && answered.scheduled_for !== null && Date.parse(answered.scheduled_for) > Date.now(), 'it waits for its time');
  // A queued poll answers what was queued.
  const laterPoll = unlessLacking('POST /send_message a poll with send_at', await client.POST('/send_message', { body: { from_phone: from, to_phone: other, poll: { question: 'Later?', options: ['Yes', 'No'] }, send_at: new Date(Date.now() + 3_600_000).toISOString() } }));
  if (laterPoll !== undefined) {
    check(laterPoll.status === 'queued' && laterPoll.poll?.question === 'Later?', 'the queued poll is answered with its question');
    succeeded('POST /messages/{id}/cancel a queued poll', await client.POST('/messages/{id}/cancel', { params: { path: { id: laterPoll.message_id } } }));
  }
  const queue = succeeded('GET /numbers/{id}/queue', await client.GET('/numbers/{id}/queue', { params: { path: { id: from } } }));
  check(queue.messages.some((message) => message.message_id === scheduled.message_id), 'the queue lists it');
  const cancelled = succeeded('POST /messages/{id}/cancel', await client.POST('/messages/{id}/cancel', { params: { path: { id: scheduled.message_id } } }));
  check(cancelled.status === 'cancelled', 'it is cancelled');
  check(succeeded('DELETE /numbers/{id}/queue', await client.DELETE('/numbers/{id}/queue', { params: { path: { id: from } } })).cancelled === 0, 'nothing is left to clear');
  const checked = unlessLacking('POST /check_numbers', await client.POST('/check_numbers', { body: { from_phone: from, phones: [other] } }));
  check(checked === undefined || checked.results[0]?.on_whatsapp === true, 'a sandbox number is on WhatsApp');
  unlessLacking('POST /typing', await client.POST('/typing', { body: { from_phone: from, to_phone: other, state: 'composing' } }));

  // A pause by hand holds the number's sends until it is resumed; the sandbox rehearses WhatsApp's own.
  const paused = succeeded('POST /numbers/{id}/pause', await client.POST('/numbers/{id}/pause', { params: { path: { id: from } }, body: { reason: 'typed client' } }));
  check(paused.paused?.reason === 'manual' && paused.paused.until === null && !paused.can_send, 'the number is paused');
  const held = await client.POST('/send_message', { body: { from_phone: from, to_phone: other, message: 'held back' } });
  check(held.response.status === 503 && held.error?.error === 'number_paused', 'a send from a paused number is refused');
  const resumed = succeeded('POST /numbers/{id}/resume', await client.POST('/numbers/{id}/resume', { params: { path: { id: from } } }));
  check(resumed.paused === null && resumed.can_send, 'the number is resumed');
  const restricted = succeeded('POST /sandbox/restrict', await client.POST('/sandbox/restrict', { body: { phone: other, kind: 'rate_overlimit', lift_after_seconds: 1 } }));
  check(restricted.kind === 'rate_overlimit' && Date.parse(restricted.until) > Date.now(), 'the rehearsal is set');
  const rehearsal = succeeded('POST /sandbox/templates', await client.POST('/sandbox/templates', { body: { phone: other, name: 'typed_client', language: 'en_US', category: 'UTILITY', body: 'Hello {{1}}' } }));
  check(rehearsal.status === 'APPROVED' && rehearsal.body_parameters === 1, 'a rehearsal template is added to the sandbox number');

  // A send, and the error envelope of one refused.
  const sent = succeeded('POST /send_message', await client.POST('/send_message', { body: { from_phone: from, to_phone: other, message: 'Hello from the typed client' }, headers: { 'idempotency-key': `example-${Date.now()}` } }));
  // openapi-fetch leaves out a property whose only type is null (group here), so `in` tells the kinds of send apart.
  check('to_phone' in sent && sent.to_phone === other, 'a direct send names its recipient');
  const refused = await client.POST('/send_message', { body: { from_phone: from, to_phone: 'not a phone', message: 'hi' } });
  const envelope: ApiError | undefined = refused.error;
  check(refused.response.status === 400 && envelope?.error === 'invalid_phone_number' && typeof envelope.request_id === 'string', 'a bad phone is a 400 in the envelope');

  // The other side answers, rehearsed by the sandbox; its message arrives on the webhook. A number
  // on another engine hears its people from that engine's network, so there the program takes
  // what the other side wrote before it started.
  const rehearsed = unlessLacking('POST /sandbox/receive', await client.POST('/sandbox/receive', { body: { from_phone: other, to_phone: from, message: 'Hello back', reply_to: sent.message_id } }));
  check(rehearsed === undefined || rehearsed.reply_to?.message_id === sent.message_id, 'the answer quotes the send');
  const received =
    rehearsed ??
    (await until(async () => succeeded('GET /messages', await client.GET('/messages', { params: { query: { phone: from, direction: 'inbound', limit: 10 } } })).messages.find((message) => message.from_phone === other), 'a message from the other side'));

  // The account's settings, read.
  const settings = succeeded('PATCH /account/settings', await client.PATCH('/account/settings', { body: {} }));
  check(typeof settings.link_previews === 'boolean', 'the settings are answered');

  // A poll, and a vote on it by the other side.
  const poll = unlessLacking('POST /send_message a poll', await client.POST('/send_message', { body: { from_phone: from, to_phone: other, poll: { question: 'Which day?', options: ['Monday', 'Tuesday'] } } }));
  if (poll !== undefined) {
    const voted = succeeded('POST /sandbox/poll_vote', await client.POST('/sandbox/poll_vote', { body: { from_phone: other, to_phone: from, message_id: poll.message_id, options: ['Tuesday'] } }));
    check(voted.poll.results?.voters === 1, 'the vote is counted');
  }

  // Reading back, and changing what was sent.
  const page = succeeded('GET /messages', await client.GET('/messages', { params: { query: { phone: from, direction: 'inbound', limit: 10 } } }));
  check(page.messages.some((message) => message.message_id === received.message_id), 'the received message is listed');
  const detail = succeeded('GET /messages/{id}', await client.GET('/messages/{id}', { params: { path: { id: sent.message_id } } }));
  check(detail.status_history.length > 0, 'the send has a status history');
  succeeded('POST /send_reaction', await client.POST('/send_reaction', { body: { from_phone: from, message_id: received.message_id, emoji: '👍' } }));
  succeeded('POST /messages/{id}/read', await client.POST('/messages/{id}/read', { params: { path: { id: received.message_id } } }));
  const edited = unlessLacking('POST /messages/{id}/edit', await client.POST('/messages/{id}/edit', { params: { path: { id: sent.message_id } }, body: { message: 'Hello, edited' } }));
  check(edited === undefined || edited.message === 'Hello, edited', 'the edit is answered');
  const revoked = unlessLacking('POST /messages/{id}/revoke', await client.POST('/messages/{id}/revoke', { params: { path: { id: sent.message_id } } }));
  check(revoked === undefined || revoked.revoked_at !== null, 'the revocation is answered');

  // Files: an upload, its download (whole and a range), a signed link, and a send of it.
  const bytes = new TextEncoder().encode('%PDF-1.4\n% a document of the example\n');
  const uploaded = succeeded(
    'POST /media',
    await client.POST('/media', { params: { query: { filename: 'example.pdf' } }, body: new Blob([bytes]), bodySerializer: (body) => body, headers: { 'content-type': 'application/pdf' } }),
  );
  check(uploaded.kind === 'document', 'a PDF is a document');
  const downloaded = succeeded('GET /media/{id}', await client.GET('/media/{id}', { params: { path: { id: uploaded.media_id } }, parseAs: 'arrayBuffer' }));
  check(downloaded.byteLength === bytes.byteLength, 'the download is the upload');
  const partial = await client.GET('/media/{id}', { params: { path: { id: uploaded.media_id }, header: { range: 'bytes=0-3' } }, parseAs: 'text' });
  check(partial.response.status === 206 && partial.data === '%PDF', 'a range is served');
  const link = succeeded('POST /media/{id}/link', await client.POST('/media/{id}/link', { params: { path: { id: uploaded.media_id } }, body: { expires_in_seconds: 600 } }));
  check(link.url.includes('signature='), 'the link is signed');
  succeeded('POST /send_message with media', await client.POST('/send_message', { body: { from_phone: from, to_phone: other, media: { id: uploaded.media_id } } }));

  // Groups, on an engine that has them.
  const group = unlessLacking('POST /groups', await client.POST('/groups', { body: { from_phone: from, subject: 'Typed client', participants: [other] } }));
  const groups = unlessLacking('GET /groups', await client.GET('/groups', { params: { query: { from_phone: from } } }));
  if (group !== undefined && groups !== undefined) {
    check(groups.groups.some((each) => each.id === group.id), 'the new group is listed');
    const fetched = succeeded('GET /groups/{id}', await client.GET('/groups/{id}', { params: { path: { id: group.id }, query: { from_phone: from } } }));
    check(fetched.participants.length === 2, 'both numbers are in it');
    succeeded('PATCH /groups/{id}', await client.PATCH('/groups/{id}', { params: { path: { id: group.id } }, body: { from_phone: from, subject: 'Typed client, renamed' } }));
    const toGroup = succeeded('POST /send_message to a group', await client.POST('/send_message', { body: { from_phone: from, to_group: group.id, message: 'Hello, group' } }));
    check('group' in toGroup && toGroup.group?.id === group.id, 'a group send names its group');
    const invite = succeeded('GET /groups/{id}/invite_link', await client.GET('/groups/{id}/invite_link', { params: { path: { id: group.id }, query: { from_phone: from } } }));
    const renewed = succeeded('POST /groups/{id}/invite_link/revoke', await client.POST('/groups/{id}/invite_link/revoke', { params: { path: { id: group.id } }, body: { from_phone: from } }));
    check(renewed.code !== invite.code, 'a revoked link is replaced');
    const changed = succeeded('POST /groups/{id}/participants', await client.POST('/groups/{id}/participants', { params: { path: { id: group.id } }, body: { from_phone: from, action: 'promote', participants: [other] } }));
    check(changed.results[0]?.outcome === 'done', 'the other number is promoted');
    const left = succeeded('POST /groups/{id}/leave', await client.POST('/groups/{id}/leave', { params: { path: { id: group.id } }, body: { from_phone: other } }));
    check(left.left, 'the other number left');
  }

  // The number's people and chats: the other number is one person and one chat.
  const people = succeeded('GET /contacts', await client.GET('/contacts', { params: { query: { from_phone: from } } }));
  check(people.contacts.some((person) => person.phone === other), 'the other number is a contact');
  const person = succeeded('GET /contacts/{phone_or_lid}', await client.GET('/contacts/{phone_or_lid}', { params: { path: { phone_or_lid: other }, query: { from_phone: from } } }));
  check(person.phone === other, 'a contact is found by phone');
  const chats = succeeded('GET /chats', await client.GET('/chats', { params: { query: { from_phone: from } } }));
  check(chats.chats.some((chat) => chat.chat_id === other), 'the chat with the other number is listed');
  const skipped = succeeded('GET /chats with offset', await client.GET('/chats', { params: { query: { from_phone: from, limit: 1, offset: 1 } } }));
  check(skipped.chats.length <= 1 && skipped.chats[0]?.chat_id !== chats.chats[0]?.chat_id, 'offset skips the first chat');
  const onChat = { params: { path: { chat: other } }, body: { from_phone: from } };
  check(holds(unlessLacking('POST /chats/{chat}/archive', await client.POST('/chats/{chat}/archive', onChat)), (answer) => answer.archived), 'the chat is archived');
  check(holds(unlessLacking('POST /chats/{chat}/unarchive', await client.POST('/chats/{chat}/unarchive', onChat)), (answer) => !answer.archived), 'and back');
  check(holds(unlessLacking('POST /chats/{chat}/pin', await client.POST('/chats/{chat}/pin', onChat)), (answer) => answer.pinned), 'the chat is pinned');
  check(holds(unlessLacking('POST /chats/{chat}/unpin', await client.POST('/chats/{chat}/unpin', onChat)), (answer) => !answer.pinned), 'and unpinned');
  check(holds(unlessLacking('POST /chats/{chat}/mute', await client.POST('/chats/{chat}/mute', onChat)), (answer) => answer.muted), 'the chat is muted');
  check(holds(unlessLacking('POST /chats/{chat}/unmute', await client.POST('/chats/{chat}/unmute', onChat)), (answer) => !answer.muted), 'and unmuted');
  check(holds(unlessLacking('POST /chats/{chat}/mark_unread', await client.POST('/chats/{chat}/mark_unread', onChat)), (answer) => answer.marked_unread), 'the chat is marked unread');
  check(holds(unlessLacking('POST /chats/{chat}/mark_read', await client.POST('/chats/{chat}/mark_read', onChat)), (answer) => answer.unread_count === 0), 'and read');

  // Presence, profiles, the blocklist and a rehearsed call.
  check(holds(unlessLacking('POST /presence/subscribe', await client.POST('/presence/subscribe', { body: { from_phone: from, to_phone: other } })), (answer) => answer.subscribed), 'presence is subscribed');
  // Read back by WhatsApp's chat id, as a client moving from WAHA writes it; the first report may still be on its way (presence null).
  const heard = unlessLacking('GET /presence/{phone_or_lid}', await client.GET('/presence/{phone_or_lid}', { params: { path: { phone_or_lid: `${other.slice(1)}@c.us` }, query: { from_phone: from } } }));
  check(holds(heard, (answer) => answer.phone === other && (answer.presence === null || answer.presence === 'available')), 'the presence heard is the contact\'s');
  const profile = unlessLacking('GET /contacts/{phone}/profile', await client.GET('/contacts/{phone}/profile', { params: { path: { phone: other }, query: { from_phone: from } } }));
  check(holds(profile, (answer) => answer.phone === other), 'the profile is the contact\'s');
  unlessLacking('PATCH /numbers/{id}/profile', await client.PATCH('/numbers/{id}/profile', { params: { path: { id: from } }, body: { about: 'Typed client' } }));
  check(holds(unlessLacking('POST /blocklist', await client.POST('/blocklist', { body: { from_phone: from, phone: other } })), (answer) => answer.blocked), 'the contact is blocked');
  check(holds(unlessLacking('GET /blocklist', await client.GET('/blocklist', { params: { query: { from_phone: from } } })), (answer) => answer.contacts.some((each) => each.phone === other)), 'the blocklist lists it');
  const quota = unlessLacking('GET /new_chat_quota', await client.GET('/new_chat_quota', { params: { query: { from_phone: from } } }));
  check(holds(quota, (answer) => answer.from_phone === from && answer.status === 'none'), 'a sandbox number is never capped');
  // Message templates are Meta's: a Cloud API number lists its business's, a sandbox number its
  // rehearsal ones, reads one and sends it with its parameters; Baileys answers the documented 422
  // naming itself (docs/cloud-api.md).
  const templates = unlessLacking('GET /templates', await client.GET('/templates', { params: { query: { from_phone: from } } }));
  const approved = templates?.templates.find((each) => each.status === 'APPROVED') ?? { name: 'order_ready', language: 'en_US', header_parameters: 0, body_parameters: 0 };
  const template = unlessLacking('GET /templates/{name}', await client.GET('/templates/{name}', { params: { path: { name: approved.name }, query: { from_phone: from, language: approved.language } } }));
  check((templates === undefined) === (template === undefined), 'an engine with templates reads one, and one without reads none');
  if (template !== undefined) {
    const parameters = (count: number) => Array.from({ length: count }, (_, index) => `value ${index + 1}`);
    const templated = { name: template.name, language: template.language, header_parameters: parameters(template.header_parameters), body_parameters: parameters(template.body_parameters) };
    check(succeeded('POST /send_message a template', await client.POST('/send_message', { body: { from_phone: from, to_phone: other, template: templated } })).status !== 'failed', 'the template is sent');
  }
  check(holds(unlessLacking('DELETE /blocklist/{phone}', await client.DELETE('/blocklist/{phone}', { params: { path: { phone: other }, query: { from_phone: from } } })), (answer) => !answer.blocked), 'and unblocked');
  const call = unlessLacking('POST /sandbox/call', await client.POST('/sandbox/call', { body: { from_phone: other, to_phone: from, video: false, rings_for_seconds: 1 } }));
  check(holds(call, (answer) => answer.call_id.length > 0), 'the rehearsed call has an id');

  // Webhooks over the API, with the `webhooks` key: the default key is refused (403 naming the scope).
  const notScoped = await client.GET('/webhooks');
  check(notScoped.response.status === 403 && notScoped.error?.error === 'missing_scope', 'a key made as before cannot manage webhooks');
  const recorder = await startRecorder();
  const made = succeeded('POST /webhooks', await hooksClient.POST('/webhooks', { body: { url: recorder.url, events: ['message.status'], description: 'typed client' } }));
  check(made.secret.startsWith('whsec_') && made.description === 'typed client', 'the new webhook answers its secret once');
  const hooks = succeeded('GET /webhooks', await hooksClient.GET('/webhooks'));
  check(hooks.webhooks.some((each) => each.id === made.id), 'the new webhook is listed');
  check(succeeded('GET /webhooks/{id}', await hooksClient.GET('/webhooks/{id}', { params: { path: { id: made.id } } })).url === recorder.url, 'it reads back');
  const renamed = succeeded('PATCH /webhooks/{id}', await hooksClient.PATCH('/webhooks/{id}', { params: { path: { id: made.id } }, body: { description: 'typed client, renamed' } }));
  check(renamed.description === 'typed client, renamed', 'the change is answered');
  check(succeeded('POST /webhooks/{id}/test', await hooksClient.POST('/webhooks/{id}/test', { params: { path: { id: made.id } } })).event === 'test', 'a test event is queued');
  const tested = await until(() => recorder.deliveries[0], 'the test delivery');
  check(verifyWebhook(made.secret, tested.body, tested.headers).event === 'test', 'the test delivery verifies with the secret shown once');
  const recent = await until(async () => {
    const listed = succeeded('GET /webhooks/{id}/deliveries', await hooksClient.GET('/webhooks/{id}/deliveries', { params: { path: { id: made.id }, query: { limit: 5 } } }));
    return listed.deliveries[0]?.state === 'delivered' ? listed.deliveries : undefined;
  }, 'the test delivery to be recorded');
  const [delivery] = recent;
  if (delivery === undefined) throw new Error('the test delivery is listed');
  check(delivery.attempts[0]?.status_code === 204, 'its attempt is listed');
  const again = succeeded('POST /webhooks/{id}/deliveries/{deliveryId}/redeliver', await hooksClient.POST('/webhooks/{id}/deliveries/{deliveryId}/redeliver', { params: { path: { id: made.id, deliveryId: delivery.id } } }));
  check(again.id === delivery.id, 'the same delivery is sent again');
  await until(() => recorder.deliveries[1], 'the delivery sent again');
  const rotated = succeeded('POST /webhooks/{id}/rotate_secret', await hooksClient.POST('/webhooks/{id}/rotate_secret', { params: { path: { id: made.id } } }));
  check(rotated.secret !== made.secret, 'a rotated secret is new');
  check(succeeded('DELETE /webhooks/{id}', await hooksClient.DELETE('/webhooks/{id}', { params: { path: { id: made.id } } })).id === made.id, 'the webhook is deleted');
  // An event stream is read over a WebSocket; its path, reached as a plain GET, says how far it has got.
  const stream = succeeded('POST /webhooks', await hooksClient.POST('/webhooks', { body: { stream: true, events: ['message'] } }));
  check(stream.url === `/webhooks/${stream.id}/stream`, 'an event stream names the path its client connects to');
  const plain = await hooksClient.GET('/webhooks/{id}/stream', { params: { path: { id: stream.id } } });
  check(succeeded('GET /webhooks/{id}/stream', plain).waiting === 0, 'a new stream has nothing waiting');
  recorder.close();

  // The operator API: the audit log names the key that made the webhook, and an API key is no operator token.
  const audit = succeeded('GET /admin/audit_events', await operatorClient.GET('/admin/audit_events', { params: { query: { limit: 50 } } }));
  const madeRow = audit.events.find((event) => event.action === 'webhook.created' && event.target_id === made.id);
  check(madeRow?.actor.kind === 'api_key', 'the audit log names the key that made the webhook');
  const onboarded = succeeded('POST /admin/accounts', await operatorClient.POST('/admin/accounts', { body: { name: 'Typed client onboarding', plan: 'pro' } }));
  check(onboarded.plan === 'pro' && onboarded.monthly_limit === null, 'the account is made on its plan');
  check(succeeded('GET /admin/accounts', await operatorClient.GET('/admin/accounts')).accounts.some((each) => each.id === onboarded.id), 'the account is listed');
  check(succeeded('GET /admin/accounts/{id}', await operatorClient.GET('/admin/accounts/{id}', { params: { path: { id: onboarded.id } } })).name === onboarded.name, 'it reads back');
  const limited = succeeded('PATCH /admin/accounts/{id}', await operatorClient.PATCH('/admin/accounts/{id}', { params: { path: { id: onboarded.id } }, body: { monthly_limit: 100 } }));
  check(limited.effective_monthly_limit === 100, 'its limit is changed');
  // The new account's key, made over the operator API, shown once, then revoked.
  const onboardedKey = succeeded('POST /admin/accounts/{id}/api_keys', await operatorClient.POST('/admin/accounts/{id}/api_keys', { params: { path: { id: onboarded.id } }, body: { name: 'onboarding', scopes: ['read'] } }));
  check(onboardedKey.key.length > 20 && onboardedKey.scopes.join() === 'read', 'the key is shown once, with its scopes');
  check(succeeded('GET /admin/accounts/{id}/api_keys', await operatorClient.GET('/admin/accounts/{id}/api_keys', { params: { path: { id: onboarded.id } } })).api_keys.some((each) => each.id === onboardedKey.id), 'the key is listed');
  check(succeeded('POST /admin/api_keys/{id}/revoke', await operatorClient.POST('/admin/api_keys/{id}/revoke', { params: { path: { id: onboardedKey.id } }, body: {} })).revoked_at !== null, 'the key is revoked');
  // The new account's people: its owner (with a password the gateway generates, shown once), and a member who is promoted, given a new password and removed.
  const users = { params: { path: { id: onboarded.id } } };
  const owner = succeeded('POST /admin/accounts/{id}/users', await operatorClient.POST('/admin/accounts/{id}/users', { ...users, body: { email: `owner.${Date.now()}@onboarded.example`, role: 'owner' } }));
  check(owner.role === 'owner' && (owner.password ?? '').length >= 12, 'the owner is made, with a generated password shown once');
  const member = succeeded('POST /admin/accounts/{id}/users', await operatorClient.POST('/admin/accounts/{id}/users', { ...users, body: { email: `member.${Date.now()}@onboarded.example`, password: 'violet-Harbor-quantum-47-lantern' } }));
  check(member.role === 'member' && member.password === undefined, 'a password given is not answered back');
  check(succeeded('GET /admin/accounts/{id}/users', await operatorClient.GET('/admin/accounts/{id}/users', users)).users.length === 2, 'both are listed');
  const oneUser = { params: { path: { id: onboarded.id, user_id: member.id } } };
  check(succeeded('GET /admin/accounts/{id}/users/{user_id}', await operatorClient.GET('/admin/accounts/{id}/users/{user_id}', oneUser)).email === member.email, 'the member reads back');
  check(succeeded('PATCH /admin/accounts/{id}/users/{user_id}', await operatorClient.PATCH('/admin/accounts/{id}/users/{user_id}', { ...oneUser, body: { role: 'admin' } })).role === 'admin', 'the member is promoted');
  check(succeeded('POST /admin/accounts/{id}/users/{user_id}/reset_password', await operatorClient.POST('/admin/accounts/{id}/users/{user_id}/reset_password', { ...oneUser, body: {} })).password.length >= 12, 'a new password, shown once');
  const lastOwner = await operatorClient.DELETE('/admin/accounts/{id}/users/{user_id}', { params: { path: { id: onboarded.id, user_id: owner.id } } });
  check(lastOwner.response.status === 409 && lastOwner.error?.error === 'last_owner', 'the only owner stays');
  check(succeeded('DELETE /admin/accounts/{id}/users/{user_id}', await operatorClient.DELETE('/admin/accounts/{id}/users/{user_id}', oneUser)).id === member.id, 'the member is removed');
  // A number for the new account, given to its owner, its calls rejected, moved to a second account and removed there.
  // A mobile range apart from the sandbox numbers the tests seed (+44 7700 9…).
  const onboardedPhone = `+447911${String(Date.now() % 1_000_000).padStart(6, '0')}`;
  const added = succeeded('POST /admin/accounts/{id}/numbers', await operatorClient.POST('/admin/accounts/{id}/numbers', { ...users, body: { phone: onboardedPhone, holder_user_id: owner.id } }));
  check(added.engine === 'sandbox' && added.holder_user_id === owner.id, 'the number is added, held by the owner');
  check(succeeded('GET /admin/accounts/{id}/numbers', await operatorClient.GET('/admin/accounts/{id}/numbers', users)).numbers.some((each) => each.id === added.id), 'the number is listed');
  const oneNumber = { params: { path: { id: onboarded.id, number_id: added.id } } };
  check(succeeded('GET /admin/accounts/{id}/numbers/{number_id}', await operatorClient.GET('/admin/accounts/{id}/numbers/{number_id}', oneNumber)).phone === added.phone, 'the number reads back');
  check(succeeded('PATCH /admin/accounts/{id}/numbers/{number_id}', await operatorClient.PATCH('/admin/accounts/{id}/numbers/{number_id}', { ...oneNumber, body: { reject_calls: true } })).reject_calls, 'its calls are rejected');
  const proxied = succeeded('POST /admin/accounts/{id}/numbers/{number_id}/proxy', await operatorClient.POST('/admin/accounts/{id}/numbers/{number_id}/proxy', { ...oneNumber, body: { url: 'socks5h://user:secret@127.0.0.1:1080' } }));
  check(proxied.proxy === 'socks5h://***@127.0.0.1:1080', 'a proxy is answered redacted');
  check(succeeded('DELETE /admin/accounts/{id}/numbers/{number_id}/proxy', await operatorClient.DELETE('/admin/accounts/{id}/numbers/{number_id}/proxy', oneNumber)).proxy === null, 'and cleared');
  // Its sends held and let go again, and its (empty) queue cleared, as after a ban; each runs on the node that serves it.
  const heldByHand = succeeded('POST /admin/accounts/{id}/numbers/{number_id}/pause', await operatorClient.POST('/admin/accounts/{id}/numbers/{number_id}/pause', { ...oneNumber, body: { reason: 'onboarding checks' } }));
  check(heldByHand.paused?.reason === 'manual', 'the number is paused by hand');
  check(succeeded('POST /admin/accounts/{id}/numbers/{number_id}/resume', await operatorClient.POST('/admin/accounts/{id}/numbers/{number_id}/resume', { ...oneNumber, body: {} })).paused === null, 'and resumed');
  check(succeeded('DELETE /admin/accounts/{id}/numbers/{number_id}/queue', await operatorClient.DELETE('/admin/accounts/{id}/numbers/{number_id}/queue', oneNumber)).cancelled === 0, 'an empty queue is cleared');
  // A number on Meta's Cloud API: its settings set (the token and secrets answered only as ***), read back, cleared, and the number removed.
  const cloudPhone = `+447912${String(Date.now() % 1_000_000).padStart(6, '0')}`;
  const cloudNumber = succeeded('POST /admin/accounts/{id}/numbers a cloud number', await operatorClient.POST('/admin/accounts/{id}/numbers', { ...users, body: { phone: cloudPhone, engine: 'cloud' } }));
  const onCloud = { params: { path: { id: onboarded.id, number_id: cloudNumber.id } } };
  const cloudSet = succeeded('POST /admin/accounts/{id}/numbers/{number_id}/cloud', await operatorClient.POST('/admin/accounts/{id}/numbers/{number_id}/cloud', { ...onCloud, body: { phone_number_id: '106540352242922', business_account_id: '102290129340398', access_token: 'EAAG-example-token', app_secret: 'example-app-secret', verify_token: 'example-verify-token' } }));
  check(cloudSet.access_token === '***' && cloudSet.callback_path === `/cloud/callbacks/${cloudNumber.id}`, 'the token is answered as ***, with the callback path');
  check(succeeded('GET /admin/accounts/{id}/numbers/{number_id}/cloud', await operatorClient.GET('/admin/accounts/{id}/numbers/{number_id}/cloud', onCloud)).phone_number_id === '106540352242922', 'the settings read back');
  check(succeeded('DELETE /admin/accounts/{id}/numbers/{number_id}/cloud', await operatorClient.DELETE('/admin/accounts/{id}/numbers/{number_id}/cloud', onCloud)).phone_number_id === null, 'and are cleared');
  succeeded('DELETE /admin/accounts/{id}/numbers/{number_id} the cloud number', await operatorClient.DELETE('/admin/accounts/{id}/numbers/{number_id}', onCloud));
  const second = succeeded('POST /admin/accounts', await operatorClient.POST('/admin/accounts', { body: { name: 'Typed client second account', plan: 'starter' } }));
  check(succeeded('POST /admin/accounts/{id}/numbers/{number_id}/move', await operatorClient.POST('/admin/accounts/{id}/numbers/{number_id}/move', { ...oneNumber, body: { account_id: second.id } })).account_id === second.id, 'the number is moved');
  const gone = await operatorClient.GET('/admin/accounts/{id}/numbers/{number_id}', oneNumber);
  check(gone.response.status === 404 && gone.error?.error === 'number_not_found', "another account's number is not found");
  check(succeeded('DELETE /admin/accounts/{id}/numbers/{number_id}', await operatorClient.DELETE('/admin/accounts/{id}/numbers/{number_id}', { params: { path: { id: second.id, number_id: added.id } } })).id === added.id, 'the number is removed');
  // A number's session over the operator API, rehearsed on a sandbox number: its phone types the
  // pairing code and then scans the QR through the sandbox's own operation, as a real phone would.
  const session = (query: { qr_version_after?: number; wait_seconds?: number } = {}) =>
    operatorClient.GET('/admin/numbers/{id}/session', { params: { path: { id: other }, query } }).then((answer) => succeeded('GET /admin/numbers/{id}/session', answer));
  succeeded('POST /admin/numbers/{id}/session/link', await operatorClient.POST('/admin/numbers/{id}/session/link', { params: { path: { id: other } }, body: { method: 'pairing_code' } }));
  const code = await until(async () => (await session({ qr_version_after: 0, wait_seconds: 5 })).link?.pairing_code ?? undefined, 'a pairing code');
  check(succeeded('POST /sandbox/link_scan', await client.POST('/sandbox/link_scan', { body: { phone: other, code } })).linked, 'the code typed on the phone links it');
  check((await session()).status === 'connected', 'the number is connected again');
  const notRestartable = await operatorClient.POST('/admin/numbers/{id}/session/restart', { params: { path: { id: other } }, body: {} });
  check(notRestartable.response.status === 409 && notRestartable.error?.error === 'session_action_refused', 'a connected session is not restarted');
  check(succeeded('POST /admin/numbers/{id}/session/logout', await operatorClient.POST('/admin/numbers/{id}/session/logout', { params: { path: { id: other } }, body: {} })).status === 'logged_out', 'the phone is logged out');
  succeeded('POST /admin/numbers/{id}/session/link', await operatorClient.POST('/admin/numbers/{id}/session/link', { params: { path: { id: other } }, body: { method: 'qr' } }));
  const qr = await until(async () => (await session({ qr_version_after: 0, wait_seconds: 5 })).link?.qr ?? undefined, 'a QR');
  check(succeeded('POST /admin/numbers/{id}/session/link/cancel', await operatorClient.POST('/admin/numbers/{id}/session/link/cancel', { params: { path: { id: other } }, body: {} })).link?.active === false, 'linking is cancelled');
  const lateScan = await client.POST('/sandbox/link_scan', { body: { phone: other, code: qr } });
  check(lateScan.response.status === 400 && lateScan.error?.error === 'invalid_request', 'a QR of a cancelled attempt links nothing');
  const notOperator = await client.GET('/admin/audit_events');
  check(notOperator.response.status === 401 && notOperator.error?.error === 'invalid_operator_token', 'an API key is no operator token');

  // The webhook heard the number's pause and the message the sandbox rehearsed, signed; the event's type narrows the payload.
  const isPause = (event: WebhookEvent): event is NumberPausedEvent => event.event === 'number.paused' && event.number === from;
  check((await delivered(receiver.events, isPause)).reason === 'manual', 'the delivery is the pause by hand');
  if (rehearsed !== undefined) {
    const isAnswer = (event: WebhookEvent): event is MessageEvent => event.event === 'message' && event.message_id === rehearsed.message_id;
    const answer = await delivered(receiver.events, isAnswer);
    check(answer.data.message === 'Hello back' && answer.reply_to?.message_id === sent.message_id, 'the delivery is the received message');
  }
  receiver.close();
  if (process.env.WAGW_RECORD_ANSWERS !== undefined) writeFileSync(process.env.WAGW_RECORD_ANSWERS, JSON.stringify(answers));
  console.log(`every operation answered in its documented shape, on Node ${process.version}`);
  console.log(`lacking: ${JSON.stringify(lacking)}`);
}

await main();
