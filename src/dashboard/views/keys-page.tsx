import { MAX_API_KEY_NAME_LENGTH } from '../../accounts/api-keys-service.ts';
import { apiKeyScopes, DEFAULT_API_KEY_SCOPES, type ApiKeyScope } from '../../domain/api-key-scopes.ts';
import type { PageContext } from '../context.ts';
import type { KeyRowView, KeysView } from '../presenters/keys.ts';
import { ActionButton, EmptyState, ErrorSummary, PageHeader, PostForm, SecretReveal, StatusBadge, Time } from './components.tsx';
import { Layout } from './layout.tsx';

/** What the create form shows: the name typed and scopes ticked and why it failed, or the key just made. */
export interface KeyFormState {
  name: string;
  scopes: readonly string[];
  error: string | undefined;
  /** The full new key, shown on this one response and never again. */
  newKey: string | undefined;
}

export const EMPTY_KEY_FORM: KeyFormState = { name: '', scopes: DEFAULT_API_KEY_SCOPES, error: undefined, newKey: undefined };

/** What each scope lets a key do, as the form explains it. */
const SCOPE_EXPLANATIONS: Readonly<Record<ApiKeyScope, string>> = {
  read: 'read messages, numbers, chats, contacts and groups',
  send: 'send messages and act on them, change numbers and settings',
  webhooks: "manage the account's webhooks",
};

export function KeysPage(props: { context: PageContext; view: KeysView; form: KeyFormState }): JSX.Element {
  const { context, view, form } = props;
  return (
    <Layout context={context}>
      <PageHeader title="API keys" />
      <p class="muted">
        Programs send messages with an API key in the <code>Authorization: Bearer …</code> header. Only a hint of each key is kept here.
      </p>
      {form.newKey === undefined ? (
        ''
      ) : (
        <section class="card" aria-labelledby="new-key-heading">
          <h2 id="new-key-heading">Key created</h2>
          <SecretReveal id="new-api-key" label="Your new API key — copy it now, it is not shown again" value={form.newKey} />
          <p class="hint">Store it where your program reads its settings. If it is lost, create a new key and revoke this one.</p>
        </section>
      )}
      {view.canManage ? <CreateKeyForm context={context} form={form} /> : ''}
      <h2>Keys</h2>
      <KeysTable keys={view.keys} canManage={view.canManage} csrfToken={context.csrfToken} />
    </Layout>
  );
}

function CreateKeyForm(props: { context: PageContext; form: KeyFormState }): JSX.Element {
  return (
    <section class="card" aria-labelledby="create-key-heading">
      <h2 id="create-key-heading">Create a key</h2>
      <ErrorSummary error={props.form.error} />
      <PostForm action="/keys" csrfToken={props.context.csrfToken} class="row">
        <div class="field">
          <label for="key-name">Key name</label>
          <input
            id="key-name"
            name="name"
            type="text"
            maxlength={String(MAX_API_KEY_NAME_LENGTH)}
            placeholder="e.g. Production server"
            aria-describedby="key-name-hint"
            value={props.form.name}
          />
        </div>
        <fieldset>
          <legend>Scopes</legend>
          {apiKeyScopes.map((scope) => (
            <div>
              <label for={`key-scope-${scope}`}>
                <input id={`key-scope-${scope}`} type="checkbox" name="scopes" value={scope} checked={props.form.scopes.includes(scope)} />
                <code>{scope}</code>
                <span class="muted" safe>
                  {` — ${SCOPE_EXPLANATIONS[scope]}`}
                </span>
              </label>
            </div>
          ))}
        </fieldset>
        <button type="submit" class="button primary">
          Create key
        </button>
      </PostForm>
      <p id="key-name-hint" class="hint">
        A name says where the key is used, so that you know which one to revoke. Left blank, it is called “default”. A key can do only what
        its scopes allow; read and send are what every key could do before scopes, and a key's scopes cannot change later.
      </p>
    </section>
  );
}

function KeysTable(props: { keys: KeyRowView[]; canManage: boolean; csrfToken: string }): JSX.Element {
  if (props.keys.length === 0) {
    return (
      <EmptyState
        empty={
          props.canManage
            ? { text: 'No API keys yet', action: { href: '#key-name', label: 'create one' } }
            : { text: 'No API keys yet. An owner or admin can create one.' }
        }
      />
    );
  }
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">Scopes</th>
            <th scope="col">Created</th>
            <th scope="col">Created by</th>
            <th scope="col">Last used</th>
            <th scope="col">Status</th>
            {props.canManage ? (
              <th scope="col">
                <span class="muted">Actions</span>
              </th>
            ) : (
              ''
            )}
          </tr>
        </thead>
        <tbody>
          {props.keys.map((key) => (
            <tr>
              <td safe>{key.name}</td>
              <td class="mono" safe>
                {key.hint}
              </td>
              <td safe>{key.scopes.join(', ')}</td>
              <td>
                <Time at={key.createdAt} />
              </td>
              <td safe>{key.createdBy ?? '—'}</td>
              <td>
                <Time at={key.lastUsedAt} empty="never" />
              </td>
              <td>
                <StatusBadge status={key.revoked ? 'revoked' : 'active'} />
              </td>
              {props.canManage ? (
                <td>
                  {key.revoked ? (
                    ''
                  ) : (
                    <ActionButton
                      action={`/keys/${encodeURIComponent(key.id)}/revoke`}
                      csrfToken={props.csrfToken}
                      label="Revoke"
                      danger
                      confirm="Revoke this key? Requests using it will be refused at once."
                    />
                  )}
                </td>
              ) : (
                ''
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
