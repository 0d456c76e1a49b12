import type { PageContext } from '../context.ts';
import type { LinkPanelView } from '../presenters/number-linking.ts';
import type { AccountRef, OperatorNumberView } from '../presenters/operator.ts';
import type { CloudFormValues, CloudPanelView } from '../presenters/number-cloud.ts';
import { CloudPanel } from './operator-cloud-panel.tsx';
import { ActionButton, EmptyState, ErrorSummary, NumberStatus, PostForm, StatusBadge, Time } from './components.tsx';
import { LinkPanel } from './operator-link-panel.tsx';
import { NumberHealthCards } from './number-health.tsx';
import type { NumberHealthView } from '../presenters/number-health.ts';
import { AccountLink, AccountOptions, OperatorFrame } from './operator-shared.tsx';

interface NumbersPageProps {
  context: PageContext;
  numbers: OperatorNumberView[];
  accounts: AccountRef[];
  statuses: readonly string[];
  error: string | undefined;
  /** Every number's health card, narrowed to `filter` (a status) when one is chosen. */
  health: NumberHealthView[];
  filter: string;
}

export function OperatorNumbersPage(props: NumbersPageProps): JSX.Element {
  const { context } = props;
  return (
    <OperatorFrame context={context} section="numbers" title="Numbers">
      <ErrorSummary error={props.error} />
      {props.numbers.length === 0 ? '' : <HealthSection {...props} />}
      {props.numbers.length === 0 ? (
        <EmptyState
          empty={{
            text: 'No numbers yet. Numbers are added on an account’s page',
            action: { href: '/operator/accounts', label: 'open Accounts' },
          }}
        />
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Number</th>
                <th scope="col">Account</th>
                <th scope="col">Engine</th>
                <th scope="col">Status</th>
                <th scope="col">Manage</th>
              </tr>
            </thead>
            <tbody>
              {props.numbers.map((number) => (
                <NumberRow number={number} accounts={props.accounts} statuses={props.statuses} csrfToken={context.csrfToken} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </OperatorFrame>
  );
}

/** The same health cards as an account's Numbers page, for every number, filtered by status (a GET form: nothing changes). */
function HealthSection(props: NumbersPageProps): JSX.Element {
  return (
    <section aria-labelledby="health-heading">
      <h2 id="health-heading">Health</h2>
      <search aria-label="Filter numbers by status">
        <form method="get" action="/operator/numbers" class="row card">
          <div class="field">
            <label for="health-status">Status</label>
            <select id="health-status" name="status">
              <option value="">Any status</option>
              <option value="paused" selected={props.filter === 'paused'}>
                paused
              </option>
              {props.statuses.map((status) => (
                <option value={status} selected={status === props.filter} safe>
                  {status.replace(/_/g, ' ')}
                </option>
              ))}
            </select>
          </div>
          <button type="submit" class="button">
            Filter
          </button>
          {props.filter === '' ? '' : <a href="/operator/numbers">Show all</a>}
        </form>
      </search>
      {props.health.length === 0 ? (
        <EmptyState empty={{ text: 'No number has this status', action: { href: '/operator/numbers', label: 'show all' } }} />
      ) : (
        <NumberHealthCards cards={props.health} csrfToken={props.context.csrfToken} />
      )}
    </section>
  );
}

function NumberRow(props: {
  number: OperatorNumberView;
  accounts: AccountRef[];
  statuses: readonly string[];
  csrfToken: string;
}): JSX.Element {
  const { number, csrfToken } = props;
  const base = `/operator/numbers/${encodeURIComponent(number.id)}`;
  return (
    <tr>
      <td class="mono">
        <a href={base} safe>
          {number.phone}
        </a>
      </td>
      <td>
        <AccountLink account={number.account} />
      </td>
      <td safe>{number.engine}</td>
      <td>
        <NumberStatus id={number.id} status={number.status} reason={number.statusReason} />
      </td>
      <td>
        <div class="actions">
          <PostForm action={`${base}/reassign`} csrfToken={csrfToken} class="inline">
            <select name="account_id" aria-label={`Account for ${number.phone}`}>
              <AccountOptions accounts={props.accounts} selected={number.account.id} />
            </select>{' '}
            <button type="submit" class="button small">
              Reassign
            </button>
          </PostForm>
          {number.canSetStatus ? (
            <PostForm action={`${base}/status`} csrfToken={csrfToken} class="inline">
              <select name="status" aria-label={`Simulated status for ${number.phone}`}>
                {props.statuses.map((status) => (
                  <option value={status} selected={status === number.status} safe>
                    {status.replace(/_/g, ' ')}
                  </option>
                ))}
              </select>{' '}
              <button type="submit" class="button small">
                Set status
              </button>
            </PostForm>
          ) : (
            ''
          )}
          <ActionButton
            action={`${base}/remove`}
            csrfToken={csrfToken}
            label="Remove"
            danger
            confirm={`Remove ${number.phone}? It stops sending and receiving; its message history stays with the account.`}
          />
        </div>
      </td>
    </tr>
  );
}

export function OperatorNumberPage(props: {
  context: PageContext;
  number: OperatorNumberView;
  panel: LinkPanelView;
  /** The Cloud API panel of a `cloud` number; null on other engines, which are linked instead. */
  cloud: CloudPanelView | null;
  /** The ids a refused Cloud API form had. */
  cloudForm?: CloudFormValues | undefined;
  error?: string;
}): JSX.Element {
  const { number } = props;
  return (
    <OperatorFrame context={props.context} section="numbers" title={number.phone}>
      <p>
        <a href="/operator/numbers">← All numbers</a>
      </p>
      <ErrorSummary error={props.error} />
      <section class="card" aria-label="Number facts">
        <dl class="facts">
          <dt>Id</dt>
          <dd class="mono" safe>
            {number.id}
          </dd>
          <dt>Account</dt>
          <dd>
            <AccountLink account={number.account} />
          </dd>
          <dt>Engine</dt>
          <dd safe>{number.engine}</dd>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={number.status} id={number.id} />
            {number.statusReason === null ? '' : <span class="muted small" safe>{` ${number.statusReason}`}</span>}
          </dd>
          <dt>Holder</dt>
          <dd safe>{number.holder ?? '—'}</dd>
          <dt>Proxy</dt>
          <dd class="mono" safe>
            {number.proxy ?? 'none: connects directly'}
          </dd>
          <dt>Added</dt>
          <dd>
            <Time at={number.createdAt} />
          </dd>
          <dt>Updated</dt>
          <dd>
            <Time at={number.updatedAt} />
          </dd>
        </dl>
      </section>
      {props.cloud === null ? (
        <>
          <h2 id="link-heading">Link to WhatsApp</h2>
          <LinkPanel panel={props.panel} csrfToken={props.context.csrfToken} />
        </>
      ) : (
        <CloudPanel cloud={props.cloud} form={props.cloudForm} csrfToken={props.context.csrfToken} />
      )}
      <ProxyForm number={number} csrfToken={props.context.csrfToken} />
    </OperatorFrame>
  );
}

/**
 * The number's proxy (ADR 0063). The field is never filled in with the stored URL, which the
 * page does not have: a new one is typed whole, and the redacted one is shown above it.
 */
function ProxyForm(props: { number: OperatorNumberView; csrfToken: string }): JSX.Element {
  const base = `/operator/numbers/${encodeURIComponent(props.number.id)}/proxy`;
  return (
    <section class="card" aria-labelledby="proxy-heading">
      <h2 id="proxy-heading">Proxy</h2>
      <p class="muted small">
        Its WhatsApp connection, media uploads and downloads go through this HTTP(S) or SOCKS5 proxy. A connected, failed or backing-off
        session reconnects through it at once.
      </p>
      <PostForm action={base} csrfToken={props.csrfToken} class="row">
        <div class="field">
          <label for="proxy-url">Proxy URL</label>
          <input
            id="proxy-url"
            name="url"
            type="text"
            required
            autocomplete="off"
            spellcheck="false"
            class="mono"
            placeholder="socks5h://user:password@proxy.example:1080"
          />
        </div>
        <button type="submit" class="button primary">
          {props.number.proxy === null ? 'Set proxy' : 'Replace proxy'}
        </button>
      </PostForm>
      {props.number.proxy === null ? (
        ''
      ) : (
        <ActionButton
          action={`${base}/clear`}
          csrfToken={props.csrfToken}
          label="Clear proxy"
          confirm={`Connect ${props.number.phone} to WhatsApp directly again?`}
        />
      )}
    </section>
  );
}
