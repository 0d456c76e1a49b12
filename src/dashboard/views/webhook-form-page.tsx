import type { PageContext } from '../context.ts';
import { messageScopeOptions, type WebhookFormView } from '../presenters/webhooks.ts';
import { ErrorSummary, PageHeader, PostForm } from './components.tsx';
import { Layout } from './layout.tsx';

/**
 * A Chatwoot inbox's fields (docs/integrations.md, Chatwoot): filled-in ids make the webhook an
 * inbox, whose URL is Chatwoot's base URL. The access token is write-only: never shown, and left
 * blank on an edit to keep the stored one.
 */
function ChatwootFields(props: { view: WebhookFormView }): JSX.Element {
  const { view } = props;
  return (
    <fieldset>
      <legend>Chatwoot inbox (an API channel inbox of your Chatwoot)</legend>
      <p id="chatwoot-hint" class="hint">
        Fill these in to post your numbers' chats into Chatwoot instead, with the Chatwoot address (https://chatwoot.example.com) as the URL
        above. The inbox takes message and message.status events whatever is ticked below; the callback URL to paste into Chatwoot is on the
        webhook's page once it is saved.
      </p>
      <label for="chatwoot-account-id">Chatwoot account id</label>
      <input
        id="chatwoot-account-id"
        name="chatwoot_account_id"
        type="text"
        inputmode="numeric"
        maxlength={20}
        placeholder="1"
        aria-describedby="chatwoot-hint"
        value={view.chatwootAccountId}
      />
      <label for="chatwoot-inbox-id">Inbox id</label>
      <input
        id="chatwoot-inbox-id"
        name="chatwoot_inbox_id"
        type="text"
        inputmode="numeric"
        maxlength={20}
        placeholder="4"
        aria-describedby="chatwoot-hint"
        value={view.chatwootInboxId}
      />
      <label for="chatwoot-number">Number (optional)</label>
      <input
        id="chatwoot-number"
        name="chatwoot_number"
        type="text"
        maxlength={32}
        placeholder="+447700900123"
        aria-describedby="chatwoot-number-hint"
        value={view.chatwootNumber}
      />
      <p id="chatwoot-number-hint" class="hint">
        One of your numbers, for an inbox of that number's chats only; blank takes all your numbers' chats.
      </p>
      <label for="chatwoot-token">API access token</label>
      <input
        id="chatwoot-token"
        name="chatwoot_api_access_token"
        type="password"
        autocomplete="off"
        maxlength={512}
        aria-describedby="chatwoot-token-hint"
        value=""
      />
      <p id="chatwoot-token-hint" class="hint">
        {view.chatwootTokenStored
          ? 'Stored encrypted and never shown. Leave blank to keep it; a new base URL needs it typed again.'
          : 'The access token of a Chatwoot agent or bot of the inbox (Profile settings → Access token). Stored encrypted, never shown again.'}
      </p>
      {view.chatwootTokenStored ? <input type="hidden" name="chatwoot_token_stored" value="yes" /> : ''}
    </fieldset>
  );
}

/** Creating a webhook and editing one share this form. */
export function WebhookFormPage(props: { context: PageContext; view: WebhookFormView }): JSX.Element {
  const { context, view } = props;
  const isNew = view.webhookId === null;
  const webhookPath = view.webhookId === null ? '/webhooks' : `/webhooks/${encodeURIComponent(view.webhookId)}`;
  return (
    <Layout context={context}>
      <PageHeader title={isNew ? 'New webhook' : 'Edit webhook'} />
      <section class="card">
        <ErrorSummary error={view.error} />
        <PostForm action={webhookPath} csrfToken={context.csrfToken} class="stack">
          {view.stream && !isNew ? (
            <p>
              An event stream: its client connects to <code safe>{view.url}</code> over a WebSocket (docs/webhooks.md, "Event streams").
              <input type="hidden" name="stream" value="on" />
            </p>
          ) : (
            <>
              <label for="webhook-url">Endpoint URL</label>
              <input
                id="webhook-url"
                name="url"
                type="url"
                placeholder="https://example.com/whatsapp/webhook"
                aria-describedby="webhook-url-hint"
                value={view.url}
              />
              <p id="webhook-url-hint" class="hint">
                Your server's address for the POST requests, http:// or https://, or a RabbitMQ broker's amqp:// or amqps:// URL for a sink.
                It must be reachable from the internet, not a private address.
              </p>
              <fieldset>
                <legend>RabbitMQ sink (amqp:// and amqps:// URLs only)</legend>
                <label for="rabbitmq-exchange">Exchange</label>
                <input
                  id="rabbitmq-exchange"
                  name="rabbitmq_exchange"
                  type="text"
                  maxlength={255}
                  placeholder="wagw.events"
                  aria-describedby="rabbitmq-hint"
                  value={view.rabbitmqExchange}
                />
                <label for="rabbitmq-routing-key">Routing key</label>
                <input
                  id="rabbitmq-routing-key"
                  name="rabbitmq_routing_key"
                  type="text"
                  maxlength={255}
                  placeholder="{event}.{number}"
                  aria-describedby="rabbitmq-hint"
                  value={view.rabbitmqRoutingKey}
                />
                <p id="rabbitmq-hint" class="hint">
                  Each event is published, persistent and confirmed, to this exchange with this routing key; {'{event}'} and {'{number}'}{' '}
                  are filled in per event. Leave both blank for an http(s) webhook.
                </p>
              </fieldset>
              <ChatwootFields view={view} />
              {isNew && (
                <label for="webhook-stream">
                  <input id="webhook-stream" type="checkbox" name="stream" checked={view.stream} />
                  An event stream instead: no URL, your client reads the events over a WebSocket and resumes after the last one it saw.
                </label>
              )}
            </>
          )}
          <fieldset>
            <legend>Events</legend>
            {view.options.map((option) => {
              const id = `event-${option.type.replace(/\./g, '-')}`;
              return (
                <div>
                  <label for={id}>
                    <input id={id} type="checkbox" name="event_types" value={option.type} checked={view.eventTypes.includes(option.type)} />
                    <code>{option.type}</code>
                    <span class="muted" safe>
                      {`— ${option.explanation}`}
                    </span>
                  </label>
                </div>
              );
            })}
          </fieldset>
          <fieldset>
            <legend>Message events from</legend>
            {messageScopeOptions.map((option) => (
              <div>
                <label for={`scope-${option.scope}`}>
                  <input
                    id={`scope-${option.scope}`}
                    type="radio"
                    name="message_scope"
                    value={option.scope}
                    checked={view.messageScope === option.scope}
                  />
                  <span safe>{option.label}</span>
                </label>
              </div>
            ))}
            <p class="hint">
              Which chats' message, status, reaction, edit and revocation events this webhook receives. Group changes come with
              group.updated whatever is chosen here.
            </p>
          </fieldset>
          <button type="submit" class="button primary">
            {isNew ? 'Create webhook' : 'Save webhook'}
          </button>
        </PostForm>
        <p>
          <a href={isNew ? '/webhooks' : webhookPath}>Cancel</a>
        </p>
      </section>
    </Layout>
  );
}
