import type { PageContext } from '../context.ts';
import type { WebhookListView, WebhookRowView } from '../presenters/webhooks.ts';
import { EmptyState, PageHeader, StatusBadge, Time } from './components.tsx';
import { Layout } from './layout.tsx';

export function WebhookListPage(props: { context: PageContext; view: WebhookListView }): JSX.Element {
  const { context, view } = props;
  return (
    <Layout context={context}>
      <PageHeader title="Webhooks">
        {view.canManage ? (
          <a class="button primary" href="/webhooks/new">
            New webhook
          </a>
        ) : (
          ''
        )}
      </PageHeader>
      <p class="muted">Webhooks tell your server about incoming messages and status changes, as signed HTTP POST requests.</p>
      {view.webhooks.length === 0 ? (
        <EmptyState
          empty={
            view.canManage
              ? { text: 'No webhooks yet', action: { href: '/webhooks/new', label: 'create one' } }
              : { text: 'No webhooks yet. An owner or admin can create one.' }
          }
        />
      ) : (
        <WebhooksTable webhooks={view.webhooks} />
      )}
    </Layout>
  );
}

function WebhooksTable(props: { webhooks: WebhookRowView[] }): JSX.Element {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Endpoint URL</th>
            <th scope="col">Events</th>
            <th scope="col">State</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {props.webhooks.map((webhook) => (
            <tr>
              <td class="mono text">
                <a href={`/webhooks/${encodeURIComponent(webhook.id)}`} safe>
                  {webhook.url}
                </a>
              </td>
              <td>
                <EventList eventTypes={webhook.eventTypes} />
              </td>
              <td>
                <WebhookState webhook={webhook} />
              </td>
              <td>
                <Time at={webhook.createdAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function EventList(props: { eventTypes: string[] }): JSX.Element {
  return (
    <>
      {props.eventTypes.map((type, index) => (
        <>
          {index === 0 ? '' : ', '}
          <code safe>{type}</code>
        </>
      ))}
    </>
  );
}

/** Enabled or disabled, with why it was disabled and since when it has been failing. */
export function WebhookState(props: { webhook: WebhookRowView }): JSX.Element {
  const { webhook } = props;
  return (
    <>
      <StatusBadge status={webhook.enabled ? 'enabled' : 'disabled'} />
      {webhook.disabledReason === null || webhook.enabled ? (
        ''
      ) : (
        <div class="muted small" safe>
          {webhook.disabledReason}
        </div>
      )}
      {webhook.failingSince === null ? (
        ''
      ) : (
        <div class="muted small">
          Failing since <Time at={webhook.failingSince} />
        </div>
      )}
    </>
  );
}
