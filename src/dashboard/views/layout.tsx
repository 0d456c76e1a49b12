import type { Children } from '@kitajs/html';
import type { NavSection, PageContext } from '../context.ts';

interface NavLink {
  section: NavSection;
  href: string;
  label: string;
}

const ACCOUNT_LINKS: NavLink[] = [
  { section: 'overview', href: '/', label: 'Overview' },
  { section: 'numbers', href: '/numbers', label: 'Numbers' },
  { section: 'chats', href: '/conversations', label: 'Chats' },
  { section: 'messages', href: '/messages', label: 'Messages' },
  { section: 'activity', href: '/activity', label: 'Activity' },
  { section: 'keys', href: '/keys', label: 'API keys' },
  { section: 'webhooks', href: '/webhooks', label: 'Webhooks' },
  { section: 'team', href: '/team', label: 'Team' },
];

/** The frame of every page: head, navigation, the one-time notice, and the page's content. */
export function Layout(props: { context: PageContext; children?: Children }): JSX.Element {
  const { context } = props;
  const viewer = context.viewer;
  return (
    <>
      {'<!doctype html>'}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title safe>{`${context.title} · wa-gateway`}</title>
          <link rel="icon" href="/assets/favicon.svg" type="image/svg+xml" />
          <link rel="stylesheet" href="/assets/app.css" />
          <script src="/assets/app.js" defer></script>
        </head>
        <body>
          <a class="skip-link" href="#main">
            Skip to content
          </a>
          <header class="topbar">
            <a class="brand" href="/">
              wa-gateway
            </a>
            {viewer === null ? (
              ''
            ) : (
              <nav class="nav" aria-label="Main">
                {viewer.account === null
                  ? ''
                  : ACCOUNT_LINKS.map((link) => (
                      <a href={link.href} aria-current={link.section === context.section ? 'page' : undefined} safe>
                        {link.label}
                      </a>
                    ))}
                {viewer.user.isOperator ? (
                  <a href="/operator" class="nav-operator" aria-current={context.section === 'operator' ? 'page' : undefined}>
                    Operator
                  </a>
                ) : (
                  ''
                )}
              </nav>
            )}
            {viewer === null ? (
              ''
            ) : (
              <div class="user-menu">
                <span class="user-email" safe>
                  {viewer.account === null ? viewer.user.email : `${viewer.user.email} · ${viewer.account.name}`}
                </span>
                <a href="/account/password" aria-current={context.section === 'password' ? 'page' : undefined}>
                  Password
                </a>
                <form method="post" action="/logout" class="inline">
                  <input type="hidden" name="_csrf" value={context.csrfToken} />
                  <button type="submit" class="link-button">
                    Sign out
                  </button>
                </form>
              </div>
            )}
          </header>
          <main id="main" class="page">
            {context.notice === undefined ? (
              ''
            ) : (
              <p class="notice" role="status" safe>
                {context.notice}
              </p>
            )}
            {props.children}
          </main>
        </body>
      </html>
    </>
  );
}
