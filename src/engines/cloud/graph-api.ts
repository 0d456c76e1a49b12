/**
 * Meta's Graph API as the Cloud API engine calls it: one origin and version from the config
 * (WAGW_CLOUD_API_URL, WAGW_CLOUD_API_VERSION), the number's access token as a bearer token, and
 * Meta's error body read into a GraphApiError. Ids in paths are Meta's numeric ids, checked when
 * they are set (cloud-credentials.ts), so no caller can steer a request to another path or host.
 */

/** What Meta's Graph API answers on failure: `{error: {message, type, code, error_subcode, error_data, fbtrace_id}}`. */
export class GraphApiError extends Error {
  constructor(
    readonly httpStatus: number,
    readonly code: number | null,
    message: string,
    readonly details: string | null,
    readonly fbtraceId: string | null,
  ) {
    super(message);
    this.name = 'GraphApiError';
  }
}

export interface GraphApiOptions {
  baseUrl: string;
  version: string;
  /** How long one call may take before it is abandoned. */
  timeoutMs?: number;
}

/** The part of a number's settings a call needs: the ids it acts on and the token it acts with. */
export interface GraphAccess {
  phoneNumberId: string;
  businessAccountId: string;
  accessToken: string;
}

/** One approved (or pending, or rejected) message template, as Meta lists it. */
export interface GraphTemplate {
  id: string;
  name: string;
  language: string;
  status: string;
  category: string | null;
  components: readonly Record<string, unknown>[];
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** The hosts Meta serves incoming files from (lookaside.fbsbx.com today). */
const META_FILE_HOSTS = ['.fbsbx.com', '.facebook.com', '.whatsapp.net'];
/** How many templates one page of a listing asks for: Meta pages them (cursors), and 250 keeps most businesses to one call. */
const TEMPLATE_PAGE_LIMIT = 250;
/** The most pages one listing reads: far above Meta's cap of templates per business, a bound should a cursor never end. */
const TEMPLATE_MAX_PAGES = 100;

export class GraphApi {
  private readonly timeoutMs: number;

  constructor(private readonly options: GraphApiOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** POST /{version}/{phone-number-id}/messages; answers the message's WhatsApp id (wamid). */
  async sendMessage(access: GraphAccess, message: Record<string, unknown>): Promise<string> {
    const answer = await this.call(access, 'POST', `${access.phoneNumberId}/messages`, {
      json: { messaging_product: 'whatsapp', recipient_type: 'individual', ...message },
    });
    const id = (answer as { messages?: { id?: unknown }[] }).messages?.[0]?.id;
    if (typeof id !== 'string') throw new GraphApiError(502, null, 'The Cloud API accepted the message without an id.', null, null);
    return id;
  }

  /** Marks an incoming message (and those before it) read; with `typing`, also shows "typing…" for up to 25 s. */
  async markRead(access: GraphAccess, messageId: string, typing = false): Promise<void> {
    await this.call(access, 'POST', `${access.phoneNumberId}/messages`, {
      json: {
        messaging_product: 'whatsapp',
        status: 'read',
        message_id: messageId,
        ...(typing && { typing_indicator: { type: 'text' } }),
      },
    });
  }

  /** POST /{version}/{phone-number-id}/media (multipart); answers the media id a message then names. */
  async uploadMedia(access: GraphAccess, file: { bytes: Buffer; mimeType: string; fileName: string }): Promise<string> {
    const form = new FormData();
    form.set('messaging_product', 'whatsapp');
    form.set('type', file.mimeType);
    form.set('file', new Blob([new Uint8Array(file.bytes)], { type: file.mimeType }), file.fileName);
    const answer = await this.call(access, 'POST', `${access.phoneNumberId}/media`, { form });
    const id = (answer as { id?: unknown }).id;
    if (typeof id !== 'string') throw new GraphApiError(502, null, 'The Cloud API stored the file without an id.', null, null);
    return id;
  }

  /**
   * GET /{version}/{waba-id}/message_templates: the business's templates, every status, page after
   * page. Meta pages the edge with cursors (`paging.cursors.after`) and says there is more only
   * by `paging.next`, whose absence ends the list (a short page does not). The next page is asked
   * for with the cursor at our own origin, not at the URL `next` names, which the token must not follow.
   */
  async listTemplates(access: GraphAccess): Promise<GraphTemplate[]> {
    const templates: GraphTemplate[] = [];
    let after: string | undefined;
    for (let page = 0; page < TEMPLATE_MAX_PAGES; page++) {
      const query = new URLSearchParams({ limit: String(TEMPLATE_PAGE_LIMIT), ...(after !== undefined && { after }) });
      const answer = (await this.call(access, 'GET', `${access.businessAccountId}/message_templates?${query}`, {})) as {
        data?: unknown;
        paging?: { next?: unknown; cursors?: { after?: unknown } };
      };
      if (Array.isArray(answer.data)) templates.push(...answer.data.flatMap(templateOf));
      const cursor = answer.paging?.cursors?.after;
      if (typeof answer.paging?.next !== 'string' || typeof cursor !== 'string' || cursor === after) return templates;
      after = cursor;
    }
    throw new GraphApiError(502, null, `The Cloud API listed more than ${TEMPLATE_MAX_PAGES} pages of templates.`, null, null);
  }

  /** GET /{version}/{media-id}, then the file at the URL it names (which only the token opens). */
  async downloadMedia(access: GraphAccess, mediaId: string): Promise<AsyncIterable<Buffer>> {
    const described = (await this.call(access, 'GET', encodeURIComponent(mediaId), {})) as { url?: unknown };
    if (typeof described.url !== 'string' || !this.isMetaAddress(described.url))
      throw new GraphApiError(502, null, "The Cloud API described the file without a URL on Meta's servers.", null, null);
    const response = await fetch(described.url, {
      headers: { authorization: `Bearer ${access.accessToken}` },
      signal: AbortSignal.timeout(this.timeoutMs),
      redirect: 'error',
    });
    if (!response.ok || response.body === null)
      throw new GraphApiError(response.status, null, `The file answered ${response.status}.`, null, null);
    const { Readable } = await import('node:stream');
    return Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>) as AsyncIterable<Buffer>;
  }

  /**
   * Where a file Meta describes may be fetched from, with the token: Meta's own hosts over HTTPS,
   * or the configured origin (a stand-in). Anything else would hand the token, and a request from
   * inside our network, to an address the answer chose.
   */
  private isMetaAddress(raw: string): boolean {
    const url = URL.parse(raw);
    if (url === null) return false;
    if (url.origin === new URL(this.options.baseUrl).origin) return true;
    return url.protocol === 'https:' && META_FILE_HOSTS.some((suffix) => url.hostname.endsWith(suffix));
  }

  private async call(
    access: GraphAccess,
    method: 'GET' | 'POST',
    path: string,
    body: { json?: unknown; form?: FormData },
  ): Promise<unknown> {
    const response = await fetch(`${this.options.baseUrl}/${this.options.version}/${path}`, {
      method,
      headers: {
        authorization: `Bearer ${access.accessToken}`,
        ...(body.json !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body.json !== undefined && { body: JSON.stringify(body.json) }),
      ...(body.form !== undefined && { body: body.form }),
      signal: AbortSignal.timeout(this.timeoutMs),
      // Meta's API answers where it is asked; a redirect could only lead the token elsewhere.
      redirect: 'error',
    });
    const text = await response.text();
    const parsed = parseJson(text);
    if (response.ok) return parsed;
    throw graphError(response.status, parsed);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Meta's error body read into a GraphApiError; a body of another shape keeps the HTTP status. */
function graphError(httpStatus: number, body: unknown): GraphApiError {
  const error = (body as { error?: Record<string, unknown> } | undefined)?.error;
  if (error === undefined || typeof error !== 'object' || error === null)
    return new GraphApiError(httpStatus, null, `The Cloud API answered ${httpStatus}.`, null, null);
  const details = (error.error_data as { details?: unknown } | undefined)?.details;
  return new GraphApiError(
    httpStatus,
    typeof error.code === 'number' ? error.code : null,
    typeof error.message === 'string' ? error.message : `The Cloud API answered ${httpStatus}.`,
    typeof details === 'string' ? details : null,
    typeof error.fbtrace_id === 'string' ? error.fbtrace_id : null,
  );
}

function templateOf(raw: unknown): GraphTemplate[] {
  const entry = raw as Record<string, unknown>;
  if (typeof entry?.name !== 'string' || typeof entry.language !== 'string') return [];
  return [
    {
      id: typeof entry.id === 'string' ? entry.id : '',
      name: entry.name,
      language: entry.language,
      status: typeof entry.status === 'string' ? entry.status : 'UNKNOWN',
      category: typeof entry.category === 'string' ? entry.category : null,
      components: Array.isArray(entry.components) ? (entry.components as Record<string, unknown>[]) : [],
    },
  ];
}
