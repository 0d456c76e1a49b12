import type { LightMyRequestResponse } from 'fastify';
import type { TestGateway } from './gateway.ts';

/**
 * A minimal browser over `inject`: it keeps cookies between requests and reads the CSRF token
 * from the last page, so tests can walk the dashboard the way a form-submitting browser does.
 */
export class DashboardClient {
  private readonly cookies = new Map<string, string>();
  /** The CSRF token of the last page that had a form. */
  csrfToken: string | undefined;

  /** `headers` go with every request, e.g. an X-Forwarded-For to act as another client address. */
  constructor(
    private readonly test: TestGateway,
    private readonly headers: Record<string, string> = {},
  ) {}

  async get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    const response = await this.test.inject({ method: 'GET', url, headers: { ...this.headers, ...this.cookieHeader(), ...headers } });
    this.remember(response);
    return response;
  }

  /**
   * Posts a form. The CSRF token of the last page is added unless `csrf: false`, which tests
   * use to prove that a form without one is refused.
   */
  async post(url: string, fields: Record<string, string | string[]>, options: { csrf?: boolean } = {}): Promise<LightMyRequestResponse> {
    const form = new URLSearchParams();
    if (options.csrf !== false && this.csrfToken !== undefined) form.append('_csrf', this.csrfToken);
    for (const [name, value] of Object.entries(fields)) {
      for (const item of Array.isArray(value) ? value : [value]) form.append(name, item);
    }
    const response = await this.test.inject({
      method: 'POST',
      url,
      headers: { ...this.headers, 'content-type': 'application/x-www-form-urlencoded', ...this.cookieHeader() },
      payload: form.toString(),
    });
    this.remember(response);
    return response;
  }

  /**
   * Posts a multipart form, as a browser does for a form with a file input: the body is encoded
   * by the platform's own FormData. The CSRF token goes first, unless `csrf: false`.
   */
  async postMultipart(
    url: string,
    fields: Record<string, string>,
    file?: { name: string; type: string; bytes: Buffer },
    options: { csrf?: boolean } = {},
  ): Promise<LightMyRequestResponse> {
    const form = new FormData();
    if (options.csrf !== false && this.csrfToken !== undefined) form.append('_csrf', this.csrfToken);
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    form.append('file', new Blob([file?.bytes ?? Buffer.alloc(0)], { type: file?.type ?? 'application/octet-stream' }), file?.name ?? '');
    const encoded = new Response(form);
    const response = await this.test.inject({
      method: 'POST',
      url,
      headers: { ...this.headers, 'content-type': encoded.headers.get('content-type')!, ...this.cookieHeader() },
      payload: Buffer.from(await encoded.arrayBuffer()),
    });
    this.remember(response);
    return response;
  }

  /** Loads the page first, so the post carries that page's CSRF token, as a browser would. */
  async submit(pageUrl: string, action: string, fields: Record<string, string | string[]>): Promise<LightMyRequestResponse> {
    await this.get(pageUrl);
    return this.post(action, fields);
  }

  async signIn(email: string, password: string): Promise<LightMyRequestResponse> {
    return this.submit('/login', '/login', { email, password });
  }

  /** Sets a cookie by hand, as an attacker planting one would. */
  setCookie(name: string, value: string): void {
    this.cookies.set(name, value);
  }

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  /** The Cookie header this client sends, for a test that speaks HTTP over a socket of its own. */
  cookieHeader(): Record<string, string> {
    if (this.cookies.size === 0) return {};
    return { cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ') };
  }

  private remember(response: LightMyRequestResponse): void {
    for (const cookie of response.cookies as Array<{ name: string; value: string; maxAge?: number; expires?: Date }>) {
      const expired =
        cookie.maxAge === 0 || (cookie.expires !== undefined && cookie.expires.getTime() <= Date.now()) || cookie.value === '';
      if (expired) this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
    const token = /name="_csrf" value="([^"]+)"/.exec(response.body)?.[1];
    if (token !== undefined) this.csrfToken = token;
  }
}
