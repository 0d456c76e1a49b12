import type { Logger } from 'pino';
import { AppError } from '../../domain/errors.ts';
import type { CloudSettings } from '../../domain/cloud-settings.ts';
import type { SessionLease, SessionStatus, WhatsAppNumber } from '../../domain/model.ts';
import type { E164 } from '../../domain/phone.ts';
import type { SecretBox } from '../../secrets/secret-box.ts';
import type { Store } from '../../store/database.ts';
import { findCloudSettings } from '../../store/repositories/cloud-numbers.ts';
import { findLastInbound, recordInbound } from '../../store/repositories/customer-windows.ts';
import { capabilityDeclined } from '../capability-declined.ts';
import {
  EngineSendError,
  isGroupMessage,
  type ChatPresence,
  type IncomingMedia,
  type MessageAction,
  type MessageRef,
  type NewChatQuota,
  type OutgoingMessage,
  type SentMessage,
} from '../engine.ts';
import type { EngineEvents } from '../engine-events.ts';
import type { EngineDescriptor } from '../registry.ts';
import type { PartialEngine } from '../session-binding.ts';
import { cloudSignatureMatches, sameSecret } from './callback-signature.ts';
import { customerWindow, windowClosed } from './customer-window.ts';
import { GraphApiError, type GraphAccess, type GraphApi, type GraphTemplate } from './graph-api.ts';
import { assertTemplateParameters, findApprovedTemplate, type MessageTemplate } from '../../domain/templates.ts';
import { readCloudDelivery, type CloudIncomingMedia } from './inbound-mapper.ts';
import { CLOUD_UNCARRIED, toCloudMessage, toCloudReaction, type CloudMessageBody } from './outbound-mapper.ts';
import { declinedCapabilities } from './declined-capabilities.ts';

/** What the gateway knows of the Cloud API engine: no linking (Meta's ids and token stand for it), no simulation. */
export const CLOUD_ENGINE = {
  kind: 'cloud',
  capabilities: {
    simulatedInbound: false,
    simulatedSessionStatus: false,
    linking: false,
    staggeredStart: false,
    uncarried: CLOUD_UNCARRIED,
  },
  initialStatus: 'connecting',
} as const satisfies EngineDescriptor;

/** Why a cloud number's session failed when it has no settings yet. */
const NO_SETTINGS_REASON = 'no Cloud API settings: the operator sets them (POST /admin/accounts/{id}/numbers/{number_id}/cloud)';

/** How long Meta's throughput limit (130429) holds the number's sends: Meta does not say; its guidance is to back off. */
const THROUGHPUT_PAUSE_MS = 60_000;

/** How long a listing of a business's templates is used for its template sends. */
const TEMPLATE_CACHE_MS = 60_000;

/** Meta's codes for an account it restricted or locked for its policies. */
const ACCOUNT_RESTRICTED_CODES = new Set([368, 131031]);

export interface CloudEngineOptions {
  store: Store;
  secretBox: SecretBox;
  events: EngineEvents;
  graph: GraphApi;
  logger: Logger;
  /** How long Meta's pair rate limit (131056) holds the number's sends (WAGW_CLOUD_PAIR_RATE_PAUSE_MS). */
  pairRatePauseMs: number;
}

interface CloudSession {
  lease: SessionLease;
  status: SessionStatus;
}

/** Meta's callbacks for a cloud number, as the public callback route hands them over (routes/cloud-callbacks.ts). */
export interface CloudCallbacks {
  /** Answers Meta's verification handshake with its challenge; refuses a wrong token or mode. */
  handshake(number: WhatsAppNumber, query: { mode?: string; verifyToken?: string; challenge?: string }): Promise<string>;
  /** Refuses a delivery whose X-Hub-Signature-256 is not that of its bytes with the number's app secret. */
  verify(number: WhatsAppNumber, rawBody: Buffer, signature: string | undefined): Promise<void>;
  /** Checks the delivery's signature, then reports what it carries; resolves once every event is stored. */
  deliver(number: WhatsAppNumber, rawBody: Buffer, signature: string | undefined): Promise<void>;
}

/**
 * Numbers on Meta's WhatsApp Cloud API (docs/cloud-api.md, ADR 0071). There is no connection to
 * keep: a session is "connected" while its settings are stored, every send is one call to the
 * Graph API with the number's token, and what happens on WhatsApp comes back through Meta's
 * signed callbacks. What the Cloud API cannot do is declined with a 422 naming the engine.
 */
export class CloudEngine extends declinedCapabilities() implements PartialEngine, CloudCallbacks {
  readonly kind = CLOUD_ENGINE.kind;
  readonly capabilities = CLOUD_ENGINE.capabilities;
  readonly initialStatus: SessionStatus = CLOUD_ENGINE.initialStatus;
  private readonly sessions = new Map<string, CloudSession>();
  private readonly templates = new Map<string, { at: number; templates: MessageTemplate[] }>();

  constructor(private readonly options: CloudEngineOptions) {
    super();
  }

  async start(number: WhatsAppNumber, lease: SessionLease): Promise<void> {
    const existing = this.sessions.get(number.id);
    if (existing?.lease.epoch === lease.epoch && existing.status === 'connected') return;
    const settings = await this.settingsOf(number);
    const session: CloudSession = { lease, status: settings === undefined ? 'failed' : 'connected' };
    this.sessions.set(number.id, session);
    await this.options.events.sessionStatusChanged({
      lease,
      phone: number.phone,
      status: session.status,
      reason: settings === undefined ? NO_SETTINGS_REASON : 'Cloud API settings stored',
    });
  }

  async stop(number: WhatsAppNumber): Promise<void> {
    this.sessions.delete(number.id);
    this.templates.delete(number.id);
  }

  sessionStatus(number: WhatsAppNumber): SessionStatus {
    return this.sessions.get(number.id)?.status ?? 'disconnected';
  }

  async sendMessage(number: WhatsAppNumber, request: OutgoingMessage): Promise<SentMessage> {
    const { session, access } = await this.ready(number);
    // What the Cloud API cannot carry is declined, and a closed window refused, before Meta is asked.
    toCloudMessage(request, request.media === undefined ? undefined : 'not yet uploaded');
    // A template goes whatever the window, once it is found approved and its parameters fill it (ADR 0071).
    if (request.structured !== undefined && 'template' in request.structured) {
      const send = request.structured.template;
      const template = findApprovedTemplate(await this.templatesOf(number, session, access, false), send);
      assertTemplateParameters(template, send, request.media?.kind);
      // A media header's file goes up to Meta like any file, only once the template is known to take it.
      const headerMediaId = request.media === undefined ? undefined : await this.upload(number, session, access, request.media);
      return this.send(number, session, access, toCloudMessage(request, headerMediaId));
    }
    if (!isGroupMessage(request)) await this.assertWindowOpen(number, request.toPhone);
    const mediaId = request.media === undefined ? undefined : await this.upload(number, session, access, request.media);
    return this.send(number, session, access, toCloudMessage(request, mediaId));
  }

  async sendAction(number: WhatsAppNumber, target: MessageRef, action: MessageAction): Promise<SentMessage> {
    if (action.kind !== 'react') throw capabilityDeclined('cloud', `${action.kind}_message`, `${action.kind} a sent message`);
    const { session, access } = await this.ready(number);
    const reaction = toCloudReaction(target, action.emoji);
    await this.assertWindowOpen(number, target.chatPhone);
    return this.send(number, session, access, reaction);
  }

  async markRead(number: WhatsAppNumber, targets: readonly MessageRef[]): Promise<void> {
    const { session, access } = await this.ready(number);
    // Meta marks the messages before the one named as read too: the newest of the chat is enough.
    const newest = targets.at(-1);
    if (newest !== undefined) await this.graphCall(number, session, () => this.options.graph.markRead(access, newest.engineMessageId));
  }

  /**
   * Meta's typing indicator is shown against the person's newest message (and marks it read),
   * and ends by itself after 25 s or with our reply: "typing…" only.
   */
  async sendPresence(number: WhatsAppNumber, toPhone: E164, state: ChatPresence): Promise<void> {
    if (state !== 'composing') throw capabilityDeclined('cloud', `presence_${state}`, `show "${state}": the Cloud API shows only typing`);
    const { session, access } = await this.ready(number);
    const last = await findLastInbound(this.options.store.db, number.id, toPhone);
    if (last === undefined)
      throw capabilityDeclined('cloud', 'presence_composing', 'show typing to someone who has not written to the number');
    await this.graphCall(number, session, () => this.options.graph.markRead(access, last.engineMessageId, true));
  }

  async downloadAgain(number: WhatsAppNumber, retryToken: string): Promise<AsyncIterable<Buffer>> {
    const { access } = await this.ready(number);
    return this.options.graph.downloadMedia(access, retryToken);
  }

  async listTemplates(number: WhatsAppNumber): Promise<MessageTemplate[]> {
    const { session, access } = await this.ready(number);
    return this.templatesOf(number, session, access, true);
  }

  /**
   * The business's templates, read again when asked for (`fresh`) or when the copy is older than a
   * minute: a template send checks against them without a listing per message, and a template
   * approved a moment ago is found within the minute.
   */
  private async templatesOf(
    number: WhatsAppNumber,
    session: CloudSession,
    access: GraphAccess,
    fresh: boolean,
  ): Promise<MessageTemplate[]> {
    const cached = this.templates.get(number.id);
    if (!fresh && cached !== undefined && Date.now() - cached.at < TEMPLATE_CACHE_MS) return cached.templates;
    const listed = await this.graphCall(number, session, () => this.options.graph.listTemplates(access));
    const templates = listed.map(templateFromGraph);
    this.templates.set(number.id, { at: Date.now(), templates });
    return templates;
  }

  async newChatQuota(): Promise<NewChatQuota> {
    throw capabilityDeclined(
      'cloud',
      'new_chat_quota',
      "read WhatsApp's cap on new chats: Meta limits Cloud API numbers by messaging tier",
    );
  }

  async handshake(number: WhatsAppNumber, query: { mode?: string; verifyToken?: string; challenge?: string }): Promise<string> {
    const settings = await this.settingsOf(number);
    if (
      settings === undefined ||
      query.mode !== 'subscribe' ||
      query.challenge === undefined ||
      !sameSecret(query.verifyToken ?? '', settings.verifyToken)
    )
      throw new AppError('invalid_webhook_signature', 'The verification handshake does not name this number’s verify token.');
    return query.challenge;
  }

  async verify(number: WhatsAppNumber, rawBody: Buffer, signature: string | undefined): Promise<void> {
    await this.signedSettings(number, rawBody, signature);
  }

  async deliver(number: WhatsAppNumber, rawBody: Buffer, signature: string | undefined): Promise<void> {
    const settings = await this.signedSettings(number, rawBody, signature);
    const session = this.sessions.get(number.id);
    // Receipts are written under the session's lease: a node that does not run the number has none.
    if (session === undefined)
      throw new EngineSendError('not_connected', `${number.phone} has no Cloud API session on this node.`, 'disconnected');
    const delivery = readCloudDelivery(parseDelivery(rawBody), settings.phoneNumberId);
    const { events, store } = this.options;
    for (const message of delivery.messages) {
      const { media, fromPhone, ...rest } = message;
      await events.incomingMessage({
        ...rest,
        toPhone: number.phone,
        fromPhone,
        fromLid: null,
        ...(media !== undefined && { media: this.incomingMedia(number, media) }),
      });
      await recordInbound(store.db, number.id, fromPhone, { at: message.receivedAt, engineMessageId: message.engineMessageId });
    }
    for (const reaction of delivery.reactions) {
      await events.incomingAction({
        toPhone: number.phone,
        actorPhone: reaction.fromPhone,
        actorLid: null,
        fromMe: false,
        targetEngineId: reaction.targetEngineId,
        action: { kind: 'react', emoji: reaction.emoji },
        at: reaction.at,
      });
    }
    for (const status of delivery.statuses) {
      // `sent` is what the send's answer already recorded.
      if (status.status === 'sent') continue;
      const { status: kind, ...rest } = status;
      await events.receipt({ ...rest, status: kind, lease: session.lease, phone: number.phone });
    }
  }

  /** The number's settings, once the delivery is found signed with its app secret. */
  private async signedSettings(number: WhatsAppNumber, rawBody: Buffer, signature: string | undefined): Promise<CloudSettings> {
    const settings = await this.settingsOf(number);
    if (settings === undefined || !cloudSignatureMatches(settings.appSecret, rawBody, signature))
      throw new AppError(
        'invalid_webhook_signature',
        'X-Hub-Signature-256 is not the signature of this body with the number’s app secret.',
      );
    return settings;
  }

  private incomingMedia(number: WhatsAppNumber, media: CloudIncomingMedia): IncomingMedia {
    return {
      kind: media.kind,
      mimeType: media.mimeType,
      fileName: media.fileName,
      download: () => this.downloadAgain(number, media.mediaId),
      retryToken: media.mediaId,
    };
  }

  /** The number's running session and its settings, or a "not connected" refusal. */
  private async ready(number: WhatsAppNumber): Promise<{ session: CloudSession; access: GraphAccess }> {
    const session = this.sessions.get(number.id);
    const settings = session?.status === 'connected' ? await this.settingsOf(number) : undefined;
    if (session === undefined || settings === undefined)
      throw new EngineSendError('not_connected', `${number.phone} has no Cloud API session here.`, session?.status ?? 'disconnected');
    return { session, access: settings };
  }

  /** The window must be open for anything but a template: refused here, before Meta is asked (ADR 0072). */
  private async assertWindowOpen(number: WhatsAppNumber, toPhone: E164): Promise<void> {
    const window = customerWindow(await findLastInbound(this.options.store.db, number.id, toPhone), new Date());
    if (!window.open) throw windowClosed(toPhone, window.closedAt);
  }

  private async upload(
    number: WhatsAppNumber,
    session: CloudSession,
    access: GraphAccess,
    media: NonNullable<OutgoingMessage['media']>,
  ): Promise<string> {
    const bytes = await media.read();
    const fileName = media.fileName ?? `${media.kind}`;
    return this.graphCall(number, session, () => this.options.graph.uploadMedia(access, { bytes, mimeType: media.mimeType, fileName }));
  }

  private async send(number: WhatsAppNumber, session: CloudSession, access: GraphAccess, body: CloudMessageBody): Promise<SentMessage> {
    const engineMessageId = await this.graphCall(number, session, () => this.options.graph.sendMessage(access, body));
    return { engineMessageId, lease: session.lease };
  }

  /** A Graph API call, with Meta's refusals turned into the gateway's: limits pause the number as 429 and 463 do on Baileys. */
  private async graphCall<T>(number: WhatsAppNumber, session: CloudSession, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof GraphApiError)) {
        this.options.logger.warn({ err: error, phone: number.phone }, 'the Cloud API could not be reached');
        throw new EngineSendError('not_connected', `Meta's Cloud API could not be reached for ${number.phone}.`, 'connected');
      }
      throw await this.refusal(number, session, error);
    }
  }

  private async refusal(number: WhatsAppNumber, session: CloudSession, error: GraphApiError): Promise<Error> {
    const restricted = (reason: 'rate_limited' | 'restricted', pauseMs: number | null, detail: string) =>
      this.options.events.numberRestricted({
        lease: session.lease,
        phone: number.phone,
        reason,
        until: pauseMs === null ? null : new Date(Date.now() + pauseMs),
        detail,
      });
    switch (error.code) {
      case 130429:
        await restricted('rate_limited', THROUGHPUT_PAUSE_MS, `Meta's throughput limit (130429): ${error.message}`);
        return new EngineSendError('rate_limited', error.message);
      case 131056:
        await restricted('rate_limited', this.options.pairRatePauseMs, `Meta's pair rate limit (131056): ${error.message}`);
        return new EngineSendError('rate_limited', error.message);
      case 131047:
        return windowClosed(undefined, null, `Meta refused it outside the 24-hour window (131047): ${error.message}`);
      case 131026:
        return new EngineSendError('recipient_not_on_whatsapp', error.message);
      default:
        if (error.code !== null && ACCOUNT_RESTRICTED_CODES.has(error.code)) {
          await restricted('restricted', null, `Meta restricted the account (${error.code}): ${error.message}`);
          return new EngineSendError('restricted', error.message);
        }
        return new AppError('cloud_api_refused', `Meta's Cloud API refused it: ${error.details ?? error.message}`, {
          graph_code: error.code,
          fbtrace_id: error.fbtraceId,
        });
    }
  }

  private async settingsOf(number: WhatsAppNumber): Promise<CloudSettings | undefined> {
    const row = await findCloudSettings(this.options.store.db, number.id);
    if (row === undefined) return undefined;
    const { secretBox } = this.options;
    return {
      phoneNumberId: row.phone_number_id,
      businessAccountId: row.business_account_id,
      accessToken: secretBox.open(row.access_token_ciphertext),
      appSecret: secretBox.open(row.app_secret_ciphertext),
      verifyToken: secretBox.open(row.verify_token_ciphertext),
    };
  }
}

function parseDelivery(rawBody: Buffer): unknown {
  try {
    return JSON.parse(rawBody.toString('utf8')) as unknown;
  } catch {
    throw new AppError('invalid_json', 'The delivery is signed but is not JSON.');
  }
}

/** Meta's template as the domain keeps it: each component's type, header format and text. */
function templateFromGraph(template: GraphTemplate): MessageTemplate {
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  return {
    name: template.name,
    language: template.language,
    status: template.status,
    category: template.category,
    components: template.components.map((component) => ({
      type: text(component.type) ?? 'UNKNOWN',
      format: text(component.format),
      text: text(component.text),
      buttons: (Array.isArray(component.buttons) ? (component.buttons as Record<string, unknown>[]) : []).map((button) => ({
        type: text(button.type) ?? 'UNKNOWN',
        text: text(button.text),
        url: text(button.url),
      })),
    })),
  };
}
