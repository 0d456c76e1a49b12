import type { FastifyHelmetOptions } from '@fastify/helmet';

/**
 * The security headers of every HTML the gateway serves, the dashboard and the API reference at
 * /docs alike: a strict Content-Security-Policy with no inline script or style, no framing, and
 * the rest of helmet's defaults. The JSON API is left without them, exactly as it was.
 */
export const htmlSecurityHeaders: FastifyHelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
      objectSrc: ["'none'"],
    },
  },
  // The older header says what frame-ancestors says (helmet's default is SAMEORIGIN), for the
  // browsers that read only it.
  xFrameOptions: { action: 'deny' },
  // Plain HTTP on a LAN address is a supported setup; forcing HTTPS subresources would break it.
  strictTransportSecurity: false,
};

/**
 * Swagger UI (the /docs page) inserts one <style> element of its own at run time. Rather than
 * allow inline styles, the policy allows that one element by its hash; the browser test of
 * /docs fails if an upgrade of Swagger UI changes it.
 */
const SWAGGER_UI_STYLE_HASH = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";

export const apiReferenceSecurityHeaders: FastifyHelmetOptions = {
  ...htmlSecurityHeaders,
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      ...(htmlSecurityHeaders.contentSecurityPolicy as { directives: Record<string, string[]> }).directives,
      styleSrc: ["'self'", SWAGGER_UI_STYLE_HASH],
    },
  },
};
