import type { PageContext } from '../context.ts';
import type { OperatorAuditView } from '../presenters/operator-audit.ts';
import { EmptyState, Time } from './components.tsx';
import { AccountLink, OperatorFrame } from './operator-shared.tsx';

/** `/operator/audit`: the newest management actions first, for every account or one. */
export function OperatorAuditPage(props: { context: PageContext; view: OperatorAuditView }): JSX.Element {
  const { view } = props;
  return (
    <OperatorFrame context={props.context} section="audit" title="Audit log">
      <p class="muted">
        Every management action (accounts, users, numbers and their sessions, keys, operator tokens, webhooks, invites), through the
        dashboard, the API, the operator API or the CLI, with who made it and from which address. The newest 200 are shown.
      </p>
      <form method="get" action="/operator/audit" class="row">
        <label for="audit-account">Account</label>
        <select id="audit-account" name="account">
          <option value="">All accounts</option>
          {view.accounts.map((account) => (
            <option value={account.id} selected={account.id === view.accountId} safe>
              {account.name}
            </option>
          ))}
        </select>
        <button type="submit" class="button small">
          Show
        </button>
      </form>
      {view.rows.length === 0 ? (
        <EmptyState empty={{ text: 'No management action recorded yet.' }} />
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Account</th>
                <th scope="col">Who</th>
                <th scope="col">Through</th>
                <th scope="col">From</th>
                <th scope="col">Action</th>
                <th scope="col">Object</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {view.rows.map((row) => (
                <tr>
                  <td>
                    <Time at={row.at} />
                  </td>
                  <td>
                    <AccountLink account={row.account} />
                  </td>
                  <td safe>{row.actor}</td>
                  <td safe>{row.via}</td>
                  <td class="mono" safe>
                    {row.address}
                  </td>
                  <td class="mono" safe>
                    {row.action}
                  </td>
                  <td class="mono breakable" safe>
                    {row.target}
                  </td>
                  <td class="mono small breakable details" safe>
                    {row.details}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </OperatorFrame>
  );
}
