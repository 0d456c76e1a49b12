import type { PageContext } from '../context.ts';
import type { AttemptView, DeliveryView, WebhookDetailView, WebhookRowView } from '../presenters/webhooks.ts';
import { ActionButton, EmptyState, PageHeader, SecretReveal, StatusBadge, Time } from './components.tsx';
import { Layout } from './layout.tsx';
import { EventList, WebhookState } from './webhook-list-page.tsx';

/** The signing secret, when this response shows it: on request, or just after a rotation. */
export type ShownSecret = { kind: 'revealed'; value: string } | { kind: 'rotated'; value: string; previousValidUntil: Date };

export function WebhookDetailPage(props: { context: PageContext; view: WebhookDetailView; secret?: ShownSecret }): JSX.Element {
  const { context, view } = props;
  const path = webhookPath(view.webhook.id);
  return (
    <Layout context={context}>
      <PageHeader title="Webhook">
        {view.canManage ? <WebhookActions webhook={view.webhook} csrfToken={context.csrfToken} /> : ''}
      </PageHeader>
      <p>
        <a href="/webhooks">← All webhooks</a>
      </p>
      <section class="card" aria-labelledby="webhook-facts-heading">
        <h2 id="webhook-facts-heading">Details</h2>
        <dl class="facts">
          <dt>{view.webhook.chatwoot === null ? 'Endpoint URL' : 'Chatwoot base URL'}</dt>
          <dd class="mono text" safe>
            {view.webhook.url}
          </dd>
          {view.webhook.chatwoot === null ? '' : <ChatwootFacts view={view} />}
          <dt>Events</dt>
          <dd>
            <EventList eventTypes={view.webhook.eventTypes} />
          </dd>
          <dt>State</dt>
          <dd>
            <WebhookState webhook={view.webhook} />
          </dd>
          <dt>Created</dt>
          <dd>
            <Time at={view.webhook.createdAt} />
          </dd>
        </dl>
      </section>
      <SecretCard path={path} canManage={view.canManage} csrfToken={context.csrfToken} secret={props.secret} />
      <h2 id="delivery-log">Delivery log</h2>
      <p class="hint">
        Deliveries are sent in the background and retried on failure, so new attempts appear after a moment —{' '}
        <a href={`${path}#delivery-log`}>refresh the log</a>.
      </p>
      {view.deliveries.length === 0 ? (
        <EmptyState
          empty={
            view.canManage
              ? { text: 'No deliveries yet — send a test event with the button above' }
              : { text: 'No deliveries yet. Events are logged here as they are sent.' }
          }
        />
      ) : (
        view.deliveries.map((delivery) => (
          <DeliveryEntry delivery={delivery} path={path} canManage={view.canManage} csrfToken={context.csrfToken} />
        ))
      )}
    </Layout>
  );
}

/** A Chatwoot inbox's ids and number, and for those who manage it the callback URL to paste into Chatwoot. */
function ChatwootFacts(props: { view: WebhookDetailView }): JSX.Element {
  const inbox = props.view.webhook.chatwoot!;
  return (
    <>
      <dt>Chatwoot inbox</dt>
      <dd
        safe
      >{`Account ${inbox.accountId}, inbox ${inbox.inboxId}; ${inbox.number === null ? "all your account's numbers" : `number ${inbox.number}`}`}</dd>
      <dt>Callback URL</dt>
      <dd>
        {props.view.chatwootCallbackUrl === null ? (
          <span class="muted">Shown to owners and admins.</span>
        ) : (
          <>
            <input
              id="chatwoot-callback-url"
              class="mono"
              type="text"
              readonly
              aria-describedby="chatwoot-callback-hint"
              value={props.view.chatwootCallbackUrl}
            />
            <p id="chatwoot-callback-hint" class="hint">
              Paste it as the Webhook URL of the Chatwoot inbox (Settings → Inboxes → the inbox → Configuration), so that agents' replies
              are sent. Use your gateway's public address if Chatwoot reaches it by another one. It holds the inbox's own token: rotating
              the signing secret leaves it as it is.
            </p>
          </>
        )}
      </dd>
    </>
  );
}

function webhookPath(id: string): string {
  return `/webhooks/${encodeURIComponent(id)}`;
}

function WebhookActions(props: { webhook: WebhookRowView; csrfToken: string }): JSX.Element {
  const path = webhookPath(props.webhook.id);
  return (
    <div class="actions">
      <a class="button small" href={`${path}/edit`}>
        Edit
      </a>
      <ActionButton action={`${path}/test`} csrfToken={props.csrfToken} label="Send test event" />
      {props.webhook.enabled ? (
        <ActionButton action={`${path}/disable`} csrfToken={props.csrfToken} label="Disable" />
      ) : (
        <ActionButton action={`${path}/enable`} csrfToken={props.csrfToken} label="Enable" />
      )}
      <ActionButton
        action={`${path}/delete`}
        csrfToken={props.csrfToken}
        label="Delete"
        danger
        confirm="Delete this webhook? Its pending deliveries and its log are deleted with it."
      />
    </div>
  );
}

function SecretCard(props: { path: string; canManage: boolean; csrfToken: string; secret: ShownSecret | undefined }): JSX.Element {
  const { secret } = props;
  return (
    <section class="card" aria-labelledby="secret-heading">
      <h2 id="secret-heading">Signing secret</h2>
      <p class="muted">
        Every request carries a <code>webhook-signature</code> made with this secret (Standard Webhooks), so your server can check it came
        from this gateway.
      </p>
      {secret === undefined ? (
        ''
      ) : (
        <SecretReveal
          id="webhook-secret"
          label={secret.kind === 'rotated' ? 'Your new signing secret — copy it now' : 'Signing secret'}
          value={secret.value}
        />
      )}
      {secret?.kind === 'rotated' ? (
        <p class="hint">
          The old secret keeps signing too until <Time at={secret.previousValidUntil} /> (24 h), so your server can switch over without
          losing events.
        </p>
      ) : (
        ''
      )}
      {props.canManage ? (
        <div class="actions">
          {secret === undefined ? <ActionButton action={`${props.path}/secret`} csrfToken={props.csrfToken} label="Reveal secret" /> : ''}
          <ActionButton
            action={`${props.path}/rotate-secret`}
            csrfToken={props.csrfToken}
            label="Rotate secret"
            confirm="Rotate the signing secret? The old one keeps signing for 24 hours alongside the new one."
          />
        </div>
      ) : (
        <p class="muted small">Owners and admins can reveal and rotate the secret.</p>
      )}
    </section>
  );
}

function DeliveryEntry(props: { delivery: DeliveryView; path: string; canManage: boolean; csrfToken: string }): JSX.Element {
  const { delivery } = props;
  return (
    <section class="card" aria-label={`Delivery ${delivery.id}`} data-delivery-id={delivery.id}>
      <div class="page-header">
        <h3>
          <code safe>{delivery.eventType}</code> <StatusBadge status={delivery.state} />
        </h3>
        {props.canManage ? (
          <ActionButton
            action={`${props.path}/deliveries/${encodeURIComponent(delivery.id)}/redeliver`}
            csrfToken={props.csrfToken}
            label="Redeliver"
          />
        ) : (
          ''
        )}
      </div>
      <dl class="facts">
        <dt>Created</dt>
        <dd>
          <Time at={delivery.createdAt} />
        </dd>
        <dt>Attempts</dt>
        <dd safe>{String(delivery.attemptCount)}</dd>
        <dt>Next attempt</dt>
        <dd>
          <Time at={delivery.nextAttemptAt} empty="none scheduled" />
        </dd>
        {delivery.lastError === null ? (
          ''
        ) : (
          <>
            <dt>Last error</dt>
            <dd safe>{delivery.lastError}</dd>
          </>
        )}
      </dl>
      <AttemptsTable attempts={delivery.attempts} />
    </section>
  );
}

function AttemptsTable(props: { attempts: AttemptView[] }): JSX.Element {
  if (props.attempts.length === 0) return <p class="muted small">No attempt yet.</p>;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Status code</th>
            <th scope="col">Duration</th>
            <th scope="col">Response</th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {props.attempts.map((attempt) => (
            <tr>
              <td>
                <Time at={attempt.at} />
              </td>
              <td class="mono" safe>
                {attempt.statusCode === null ? '—' : String(attempt.statusCode)}
              </td>
              <td safe>{`${attempt.durationMs} ms`}</td>
              <td class="mono text" title={attempt.fullExcerpt ?? undefined} safe>
                {attempt.excerpt ?? '—'}
              </td>
              <td safe>{attempt.error ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
