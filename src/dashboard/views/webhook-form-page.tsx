import type { PageContext } from '../context.ts';
import { messageScopeOptions, type WebhookFormView } from '../presenters/webhooks.ts';
import { ErrorSummary, PageHeader, PostForm, TextField } from './components.tsx';
import { Layout } from './layout.tsx';

/** One of Chatwoot's numeric ids, described by the fieldset's hint. */
function ChatwootIdField(props: { id: string; name: string; label: string; placeholder: string; value: string }): JSX.Element {
  return <TextField {...props} inputmode="numeric" maxlength={20} describedBy="chatwoot-hint" />;
}

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
      <ChatwootIdField
        id="chatwoot-account-id"
        name="chatwoot_account_id"
        label="Chatwoot account id"
        placeholder="1"
        value={view.chatwootAccountId}
      />
      <ChatwootIdField id="chatwoot-inbox-id" name="chatwoot_inbox_id" label="Inbox id" placeholder="4" value={view.chatwootInboxId} />
      <TextField
        id="chatwoot-number"
        name="chatwoot_number"
        label="Number (optional)"
        maxlength={32}
        placeholder="+447700900123"
        hint="One of your numbers, for an inbox of that number's chats only; blank takes all your numbers' chats."
        value={view.chatwootNumber}
      />
      <TextField
        id="chatwoot-token"
        name="chatwoot_api_access_token"
        label="API access token"
        type="password"
        autocomplete="off"
        maxlength={512}
        hint={
          view.chatwootTokenStored
            ? 'Stored encrypted and never shown. Leave blank to keep it; a new base URL needs it typed again.'
            : 'The access token of a Chatwoot agent or bot of the inbox (Profile settings → Access token). Stored encrypted, never shown again.'
        }
        value=""
      />
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
              <TextField
                id="webhook-url"
                name="url"
                label="Endpoint URL"
                type="url"
                placeholder="https://example.com/whatsapp/webhook"
                hint={
                  "Your server's address for the POST requests, http:// or https://, or a RabbitMQ broker's amqp:// or amqps:// URL for " +
                  'a sink. It must be reachable from the internet, not a private address.'
                }
                value={view.url}
              />
              <fieldset>
                <legend>RabbitMQ sink (amqp:// and amqps:// URLs only)</legend>
                <TextField
                  id="rabbitmq-exchange"
                  name="rabbitmq_exchange"
                  label="Exchange"
                  maxlength={255}
                  placeholder="wagw.events"
                  describedBy="rabbitmq-hint"
                  value={view.rabbitmqExchange}
                />
                <TextField
                  id="rabbitmq-routing-key"
                  name="rabbitmq_routing_key"
                  label="Routing key"
                  maxlength={255}
                  placeholder="{event}.{number}"
                  describedBy="rabbitmq-hint"
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
